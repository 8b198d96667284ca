"""Where the graph is: a Bolt URI and credentials, or the embedded default.

Resolution order: explicit arguments, then environment variables
(``KGSQL_GRAPH_URI``, ``KGSQL_GRAPH_USER``, ``KGSQL_GRAPH_PASSWORD``,
``KGSQL_GRAPH_DATABASE``; Neo4j's usual ``NEO4J_URI`` / ``NEO4J_USERNAME`` /
``NEO4J_PASSWORD`` / ``NEO4J_DATABASE`` are accepted too), then a YAML config
file (``KGSQL_CONFIG`` or ``~/.config/kgsql/config.yaml``, section
``graph:``), and finally the embedded ArcadeDB server.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgsql.errors import ProfileError

EMBEDDED = "embedded"


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
    return GraphConfig(
        uri=uri or _env("KGSQL_GRAPH_URI", "NEO4J_URI") or file_cfg.get("uri") or EMBEDDED,
        user=user or _env("KGSQL_GRAPH_USER", "NEO4J_USERNAME", "NEO4J_USER") or file_cfg.get("user"),
        password=password or _env("KGSQL_GRAPH_PASSWORD", "NEO4J_PASSWORD") or file_cfg.get("password"),
        database=database or _env("KGSQL_GRAPH_DATABASE", "NEO4J_DATABASE") or file_cfg.get("database"),
    )
