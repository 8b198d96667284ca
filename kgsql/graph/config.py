"""Where the graph is: a Bolt URI and credentials, or the embedded default.

Resolution order: explicit arguments, then environment variables
(``KGSQL_GRAPH_URI``, ``KGSQL_GRAPH_USER``, ``KGSQL_GRAPH_PASSWORD``,
``KGSQL_GRAPH_DATABASE``; Neo4j's usual ``NEO4J_URI`` / ``NEO4J_USERNAME`` /
``NEO4J_PASSWORD`` / ``NEO4J_DATABASE`` are accepted too), then a YAML config
file (``KGSQL_CONFIG`` or ``~/.config/kgsql/config.yaml``, section
``graph:``), and finally the embedded ArcadeDB server.

Whatever names a server must be a Bolt URI (:data:`BOLT_SCHEMES`): kgsql
speaks Bolt, and the driver's other schemes (``http://``) need packages kgsql
does not install, so any other URI is refused in one line before connecting.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from kgsql.errors import GraphUnavailableError, ProfileError

EMBEDDED = "embedded"
#: The URI schemes of Neo4j's Bolt protocol (+s: TLS, +ssc: TLS with a self-signed certificate).
BOLT_SCHEMES: Final = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def check_graph_uri(uri: str) -> str:
    """``uri`` when it is a Bolt URI with a host; GraphUnavailableError naming the accepted schemes
    otherwise (the class the driver's own "invalid URI" error had, so callers catch one)."""
    from kgsql.secrets import redact_uri

    shown = redact_uri(uri) if "@" in uri or "?" in uri else uri  # as written, but never a password
    try:
        parts = urlsplit(uri)
        _ = parts.port
    except ValueError as exc:
        raise GraphUnavailableError(f"invalid graph URI '{shown}': {exc}") from None
    if parts.scheme.lower() not in BOLT_SCHEMES:
        schemes = ", ".join(f"{s}://" for s in BOLT_SCHEMES)
        raise GraphUnavailableError(f"invalid graph URI '{shown}': not a Bolt URI; kgsql speaks Bolt: use "
                                    f"{schemes} (e.g. bolt://localhost:7687)")
    if not parts.hostname:
        raise GraphUnavailableError(f"invalid graph URI '{shown}': no host; write e.g. bolt://localhost:7687")
    return uri


def graph_uri_argument(text: str) -> str:
    """The argparse type of ``--graph``: :func:`check_graph_uri` while parsing, so a wrong URI is one
    ``prog: error:`` line before anything is read or connected."""
    import argparse

    try:
        return check_graph_uri(text)
    except GraphUnavailableError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


@dataclass(frozen=True)
class GraphConfig:
    uri: str = EMBEDDED
    user: str | None = None
    password: str | None = None
    database: str | None = None

    @property
    def is_embedded(self) -> bool:
        return self.uri == EMBEDDED

    def __repr__(self) -> str:  # the password never shows
        return f"GraphConfig(uri={self.uri!r}, user={self.user!r}, database={self.database!r})"


def _config_file() -> dict[str, Any]:
    path = Path(os.environ.get("KGSQL_CONFIG", "~/.config/kgsql/config.yaml")).expanduser()
    if not path.exists():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ProfileError(f"malformed config file {path}: {exc}") from exc
    graph = data.get("graph", {}) if isinstance(data, dict) else {}
    if not isinstance(graph, dict):
        raise ProfileError(f"config file {path}: 'graph' must be a mapping")
    return graph


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def resolve_config(
    uri: str | None = None,
    user: str | None = None,
    password: str | None = None,
    database: str | None = None,
) -> GraphConfig:
    """Merge arguments, environment and config file into one GraphConfig."""
    file_cfg = _config_file()
    chosen = uri or _env("KGSQL_GRAPH_URI", "NEO4J_URI") or file_cfg.get("uri") or EMBEDDED
    if chosen != EMBEDDED:
        try:
            check_graph_uri(str(chosen))
        except GraphUnavailableError as exc:
            origin = ("the graph argument" if uri else next(
                (name for name in ("KGSQL_GRAPH_URI", "NEO4J_URI") if os.environ.get(name)), "the config file"))
            raise GraphUnavailableError(f"{exc} (from {origin})") from None
    return GraphConfig(
        uri=chosen,
        user=user or _env("KGSQL_GRAPH_USER", "NEO4J_USERNAME", "NEO4J_USER") or file_cfg.get("user"),
        password=password or _env("KGSQL_GRAPH_PASSWORD", "NEO4J_PASSWORD") or file_cfg.get("password"),
        database=database or _env("KGSQL_GRAPH_DATABASE", "NEO4J_DATABASE") or file_cfg.get("database"),
    )
