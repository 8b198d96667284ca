"""Keep credentials out of logs, error messages, reports and prompts.

Anything kgsql prints or stores that may contain configuration (graph URIs,
LLM endpoints, exception text) goes through :func:`redact` first. Two nets:
the actual secret values kgsql knows about (environment variables plus any
the caller passes), and patterns that look like credentials whatever their
value (``sk-...`` API keys, ``user:password@`` in URIs, ``password=...``
settings, ``Bearer`` tokens, credentials in a URL's query or fragment:
``?key=``, ``?api_key=``, ``?token=``, ``&access_token=``, ``&sig=``...).

A password given on a command line is visible to every local user in the
process list, so :func:`add_graph_password_arguments` adds
``--graph-password-file`` (a 0600 file, like ``~/.pgpass``) next to a
``--graph-password`` that warns when used; ``KGSQL_GRAPH_PASSWORD`` stays
the other safe way.
"""
from __future__ import annotations

import argparse
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from kgsql.errors import InputError

__all__ = [
    "MASK", "SECRET_ENV_VARS", "add_graph_password_arguments", "known_secrets", "read_secret_file",
    "redact", "redact_uri",
]

MASK: Final = "***"
SECRET_ENV_VARS: Final = ("KGSQL_LLM_API_KEY", "OPENAI_API_KEY", "KGSQL_GRAPH_PASSWORD", "NEO4J_PASSWORD")
#: Values shorter than this are not replaced verbatim: masking every "neo4j"
#: or "abc" in a text would destroy it while protecting nothing.
MIN_SECRET_LENGTH: Final = 4

#: Setting names whose value is a credential, with any prefix: ``password``,
#: ``KGSQL_GRAPH_PASSWORD``, ``neo4j.password``, ``api_key``, ``auth_token``...
_SENSITIVE_KEYS = (
    r"(?:[A-Za-z0-9]+[_.\-])*(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key)"
)
#: Parameter names in a URL's query or fragment whose value is a credential:
#: the names above, plus ``key`` (Google APIs), ``sig``/``signature`` (Azure
#: SAS, S3/GCS signed URLs), ``auth`` and ``credential``, with any prefix.
_URL_PARAM_KEYS = (
    r"(?:" + _SENSITIVE_KEYS + r"|(?:[A-Za-z0-9]+[_.\-])*(?:key|sig|signature|auth|credentials?))"
)
_PATTERNS: Final[tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...]] = (
    # OpenAI-style keys: sk-..., sk-proj-...
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), MASK),
    # scheme://user:password@host: the password runs to the last '@' of the
    # authority (which ends at '/', '?', '#' or whitespace), so 'p@ss' is masked whole
    (re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/?#:]*:)[^\s/?#]+(?=@)"), r"\g<head>" + MASK),
    # ...?key=..., &sig=..., #access_token=... in a URL's query or fragment
    (re.compile(r"(?P<head>[?&;#]" + _URL_PARAM_KEYS + r"=)[^\s&#;\"'<>]+", re.IGNORECASE),
     r"\g<head>" + MASK),
    # password=..., api_key: "...", token='...'
    (
        re.compile(
            r"(?P<key>\b" + _SENSITIVE_KEYS + r"\b[\"']?\s*[=:]\s*)"
            r"(?:(?P<q>[\"'])(?!\*\*\*(?P=q))[^\"'\n]*(?P=q)|(?!\*\*\*)[^\s\"'&,;]+)",
            re.IGNORECASE,
        ),
        lambda m: m.group("key") + (m.group("q") or "") + MASK + (m.group("q") or ""),
    ),
    # Authorization: Bearer <token>
    (re.compile(r"(?P<head>\bBearer\s+)[A-Za-z0-9._~+/=\-]+", re.IGNORECASE), r"\g<head>" + MASK),
)


def known_secrets(extra: Iterable[str | None] | None = None) -> list[str]:
    """Secret values from the environment and ``extra``, longest first (so a
    secret containing another is masked whole)."""
    values = {os.environ.get(name, "") for name in SECRET_ENV_VARS}
    values.update(v for v in (extra or ()) if v)
    return sorted((v for v in values if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None] | None = None) -> str:
    """``text`` with known secret values and credential-looking parts replaced by ``***``."""
    if not text:
        return text
    out = str(text)
    for value in known_secrets(secrets):
        out = out.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def redact_uri(uri: str) -> str:
    """``uri`` with the password of its user-info and credential query/fragment values masked.

    ``bolt://neo4j:hunter2@localhost:7687`` -> ``bolt://neo4j:***@localhost:7687``,
    ``https://h/v1?key=abc&alt=json`` -> ``https://h/v1?key=***&alt=json``; the
    rest of the URI is kept as written. Falls back to :func:`redact` for
    strings that are not parseable URIs.
    """
    try:
        parts = urlsplit(uri)
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError:
        return redact(uri)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:{MASK}@{host}"
    # query and fragment parameters: the URL pattern of redact()
    return redact(urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)))


# --------------------------------------------------------------------------- passwords on the command line

ENV_GRAPH_PASSWORD: Final = "KGSQL_GRAPH_PASSWORD"


def read_secret_file(path: str | os.PathLike[str]) -> str:
    """The first line of ``path``, a file only its owner may access (0600 or 0400).

    Like ``~/.pgpass``: a file that group or others can access is refused,
    with one line saying how to fix it. Raises :class:`InputError`.
    """
    p = Path(path).expanduser()
    try:
        with open(p, encoding="utf-8") as fh:
            mode = stat.S_IMODE(os.fstat(fh.fileno()).st_mode)
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise InputError(f"password file {p} is readable by group/others (mode {mode:04o}); "
                                 f"run 'chmod 600 {p}'")
            first = fh.readline().rstrip("\r\n")
    except OSError as exc:
        raise InputError(f"cannot read password file {p}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"password file {p} is not UTF-8 text") from exc
    if not first:
        raise InputError(f"password file {p} is empty (the password is its first line)")
    return first


class _PasswordFileAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        try:
            setattr(namespace, self.dest, read_secret_file(values))
        except InputError as exc:
            parser.exit(2, f"{parser.prog}: error: {exc}\n")


class _VisiblePasswordAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"{parser.prog}: warning: {option_string} is visible to other users in the process list; "
              f"use {ENV_GRAPH_PASSWORD} or {option_string}-file", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_graph_password_arguments(parser: argparse.ArgumentParser, dest: str = "graph_password") -> None:
    """Add ``--graph-password`` (warns: the process list shows it) and
    ``--graph-password-file PATH`` (a 0600 file), both filling ``args.<dest>``.

    Neither given: ``args.<dest>`` is None and the graph configuration falls
    back to ``KGSQL_GRAPH_PASSWORD``.
    """
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--graph-password", dest=dest, action=_VisiblePasswordAction, metavar="PASSWORD",
        help="graph password; visible to other users in the process list, so prefer "
             f"{ENV_GRAPH_PASSWORD} or --graph-password-file")
    group.add_argument(
        "--graph-password-file", dest=dest, action=_PasswordFileAction, metavar="PATH",
        help="read the graph password from the first line of PATH, a file only you can read (chmod 600)")
