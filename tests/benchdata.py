"""Where the benchmark data is, for the few tests that read it (they skip without it).

One place: ``$KGSQL_DATA_DIR`` if set, else ``../shared/data`` beside the
checkout. Module-level so that parametrization and ``skipif`` can use it;
tests/conftest.py offers the same path as the ``bench_data`` fixture.
Importable from any test folder (pytest puts tests/ on sys.path for conftest.py).
"""
from __future__ import annotations

import os
from pathlib import Path

ENV_DATA_DIR = "KGSQL_DATA_DIR"


def data_dir() -> Path:
    """The benchmark data folder (it may not exist)."""
    given = os.environ.get(ENV_DATA_DIR, "").strip()
    return Path(given) if given else Path(__file__).resolve().parents[2] / "shared" / "data"


DATA = data_dir()
