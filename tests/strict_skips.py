"""A pytest plugin: under ``KGSQL_STRICT_TESTS=1`` (set by ``.ci/run``) a test that skips because something
was not installed fails instead, so a broken install step cannot hide behind a green run.

Skips for data that may rightly be absent (``../shared`` benchmark data: "not present") or for what a
machine cannot do (no IPv6 loopback, a case-insensitive file system) stay skips.
"""
from __future__ import annotations

import os
import re
from typing import Any

import pytest

STRICT_ENV = "KGSQL_STRICT_TESTS"
#: Skip reasons that mean an install step failed (PostgreSQL/PostGIS, Chromium, npm's libraries, a model,
#: an extra's package).
INSTALL_SKIP = re.compile(r"not installed|not pulled|not loadable|could not import|xllamacpp installed", re.I)


def strict() -> bool:
    return os.environ.get(STRICT_ENV) == "1"


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    return str(longrepr[-1]) if isinstance(longrepr, tuple) else str(longrepr)


def _fail_install_skip(report: Any) -> None:
    if strict() and report.skipped:
        reason = _reason(report)
        if INSTALL_SKIP.search(reason):
            report.outcome = "failed"
            report.longrepr = f"strict tests ({STRICT_ENV}=1): skipped for a missing install: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    _fail_install_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: Any) -> Any:
    outcome = yield
    _fail_install_skip(outcome.get_result())
