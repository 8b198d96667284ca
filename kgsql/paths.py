"""Where kgsql keeps derived state on disk: one cache root that every stage nests under.

``$KGSQL_CACHE_DIR`` first (CI and tests point it at a scratch folder), else the
platform's per-user cache dir (``~/.cache/kgsql`` on Linux). Each stage keeps
its own subfolder: ``retrieve/`` (token indexes, value lists), ``examples/``
(pool embeddings, auto-CoT), the LLM response cache and pulled models. The
embedded graph server has its own variable (``KGSQL_GRAPH_DIR``): a database,
not a cache.

All of it is private to the user (cell values, prompts, the graph's password):
state folders are created 0700 and files 0600 (:func:`private_dir`,
:func:`open_private`, :func:`write_private`). As PostgreSQL does for its data
directory, an existing state folder that group or others can access is
checked when kgsql starts using it: kgsql tightens it to 0700 and says so once
on stderr, or, when it cannot (someone else's folder), refuses with one line.
A secret kept in a file an older kgsql wrote world-readable (the graph's
password) gets the same treatment when kgsql next reads it
(:func:`private_file`).
"""
from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, BinaryIO

from kgsql.errors import KgsqlError

ENV_CACHE_DIR = "KGSQL_CACHE_DIR"
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_OTHERS = stat.S_IRWXG | stat.S_IRWXO  # 0o077: any access by group or others
_announced: set[str] = set()


class PrivateStateError(KgsqlError):
    """A state folder is open to other users and kgsql cannot make it private."""


def cache_root() -> Path:
    """``$KGSQL_CACHE_DIR`` or the per-user cache dir (~/.cache/kgsql)."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser()
    try:  # platformdirs is a declared dependency; the fallback keeps the CLIs usable without it
        import platformdirs
    except ImportError:  # pragma: no cover
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(xdg) / "kgsql"
    return Path(platformdirs.user_cache_dir("kgsql"))


def private_dir(path: str | Path) -> Path:
    """``path`` as a folder only its owner can enter: created 0700 (with any
    missing parents), or checked and tightened when it already exists.

    An existing folder with group/other permission bits is chmod-ed to 0700
    and one line says so on stderr (once per folder per process); when the
    chmod fails (another user's folder) :class:`PrivateStateError` is raised.
    A folder inside :func:`cache_root` also has the root checked, so files an
    older kgsql left readable below it are covered from the first use on.
    """
    path = Path(path).expanduser()
    missing: list[Path] = []
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR_MODE)
        except FileExistsError:  # created meanwhile by another process: checked below
            continue
        os.chmod(folder, PRIVATE_DIR_MODE)  # whatever the umask took away or left
    _ensure_private(path)
    root = cache_root()
    if path != root and path.is_relative_to(root):
        _ensure_private(root)
    return path


def _ensure_private(folder: Path) -> None:
    try:
        st = os.stat(folder)
    except OSError as exc:
        raise PrivateStateError(f"cannot use state folder {folder}: {exc.strerror}") from exc
    if not stat.S_ISDIR(st.st_mode):
        raise PrivateStateError(f"state folder {folder} exists and is not a folder")
    current = stat.S_IMODE(st.st_mode)
    if not current & _OTHERS:
        return
    try:
        os.chmod(folder, PRIVATE_DIR_MODE)
    except OSError as exc:
        raise PrivateStateError(
            f"state folder {folder} is open to other users (mode {current:04o}) and kgsql cannot "
            f"make it private ({exc.strerror}); run 'chmod 700 {folder}' as its owner or choose "
            "another folder") from exc
    if str(folder) not in _announced:
        _announced.add(str(folder))
        print(f"kgsql: state folder {folder} was open to other users (mode {current:04o}); "
              f"made it private (0700)", file=sys.stderr)


def private_file(path: str | Path) -> Path:
    """``path``, an existing file, made 0600 if group or others could access it (one line on stderr
    says so, once per file per process); PrivateStateError when that fails. A missing file is left
    missing: writers create theirs 0600 (:func:`open_private`, :func:`write_private`)."""
    path = Path(path)
    try:
        current = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise PrivateStateError(f"cannot use state file {path}: {exc.strerror}") from exc
    if not current & _OTHERS:
        return path
    try:
        os.chmod(path, PRIVATE_FILE_MODE)
    except OSError as exc:
        raise PrivateStateError(
            f"state file {path} is open to other users (mode {current:04o}) and kgsql cannot make it "
            f"private ({exc.strerror}); run 'chmod 600 {path}' as its owner") from exc
    if str(path) not in _announced:
        _announced.add(str(path))
        print(f"kgsql: state file {path} was open to other users (mode {current:04o}); made it private (0600)",
              file=sys.stderr)
    return path


def open_private(path: str | Path, mode: str = "w", **kwargs: Any) -> IO[Any]:
    """``open(path, mode)`` for writing (``w``/``a``, text or binary) that creates
    the file 0600 and takes group/other bits off an existing one."""
    kind = mode.replace("b", "").replace("t", "")
    if kind not in {"w", "a"}:
        raise ValueError(f"open_private writes only ('w' or 'a' modes), not {mode!r}")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if kind == "w" else os.O_APPEND)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) & _OTHERS:
            os.fchmod(fd, PRIVATE_FILE_MODE)
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def write_private(path: str | Path, content: bytes | Callable[[BinaryIO], object]) -> None:
    """Replace ``path`` atomically with a 0600 file in a private folder.

    ``content`` is the bytes, or a function that writes them to a binary file
    object. The data goes to a temporary file next to ``path`` (mkstemp
    creates it 0600) that is renamed over ``path``, so readers see the old or
    the new file, never half of one, and the rename keeps the 0600 mode.
    """
    target = Path(path)
    folder = private_dir(target.parent)
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{target.name[:80]}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            if isinstance(content, (bytes, bytearray, memoryview)):
                out.write(content)
            else:
                content(out)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
