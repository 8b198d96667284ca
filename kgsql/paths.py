"""Where kgsql keeps derived state on disk: one cache root that every stage nests under.

``$KGSQL_CACHE_DIR`` first (CI and tests point it at a scratch folder), else the
platform's per-user cache dir (``~/.cache/kgsql`` on Linux). Each stage keeps
its own subfolder: ``retrieve/`` (token indexes, value lists), ``examples/``
(pool embeddings, auto-CoT), the LLM response cache and pulled models. The
embedded graph server has its own variable (``KGSQL_GRAPH_DIR``): a database,
not a cache.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV_CACHE_DIR = "KGSQL_CACHE_DIR"


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
