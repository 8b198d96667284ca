"""Where pool embeddings and auto-CoT strings are cached: ``$KGSQL_CACHE_DIR/examples``
(or the platform's user cache dir, ``~/.cache/kgsql/fewshot`` on Linux).

Embedding a 7000-question pool takes minutes on a CPU, and auto-CoT encodes
every phrase of every question, so both are computed once per (pool content,
encoder, format version) and reused by every later run.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from kgsql.paths import cache_root, write_private


def cache_dir() -> Path:
    return cache_root() / "examples"


def cache_file(*parts: str, suffix: str) -> Path:
    """A file name from key parts, made filesystem-safe."""
    name = "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", p).strip("_") for p in parts if p)
    return cache_dir() / f"{name[:180]}{suffix}"


def _atomic_write(path: Path, write: Any) -> None:
    """Replace ``path`` atomically with a private (0600) file: cached pool data is the user's own."""
    write_private(path, write)


def load_array(path: Path, rows: int) -> np.ndarray | None:
    """A cached matrix with ``rows`` rows, or None (missing, unreadable or stale)."""
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    return arr if arr.ndim == 2 and arr.shape[0] == rows else None


def save_array(path: Path, arr: np.ndarray) -> None:
    _atomic_write(path, lambda fh: np.save(fh, arr, allow_pickle=False))


def load_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_json(path: Path, data: dict[str, Any]) -> None:
    payload = json.dumps(data, ensure_ascii=False, sort_keys=True).encode("utf-8")
    _atomic_write(path, lambda fh: fh.write(payload))
