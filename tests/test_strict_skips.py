"""The strict switch of .ci/run: a skip for a missing install fails; a skip for absent data stays a skip."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = '''
import pytest

def test_needs_a_browser():
    pytest.skip("chromium/chromedriver not installed (./run test installs them as root)")

def test_needs_benchmark_data():
    pytest.skip("spatial benchmark data not present")

def test_runs():
    assert True
'''


MODULE_PROBE = (
    "import pytest\n"
    "pytest.skip('PostgreSQL server binaries not installed (Debian: postgresql-15)', allow_module_level=True)\n"
    "def test_never_collected():\n"
    "    assert False\n"
)


def run(tmp_path: Path, strict: bool, probe: str = PROBE) -> subprocess.CompletedProcess:
    (tmp_path / "test_probe.py").write_text(probe)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent), "KGSQL_STRICT_TESTS": "1" if strict else "0"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "strict_skips", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_probe.py")],
                          capture_output=True, text=True, env=env, timeout=120)


def test_strict_mode_fails_install_skips_only(tmp_path: Path) -> None:
    relaxed = run(tmp_path, strict=False)
    assert relaxed.returncode == 0 and "1 passed, 2 skipped" in relaxed.stdout, relaxed.stdout
    strict = run(tmp_path, strict=True)
    assert strict.returncode == 1 and "1 failed, 1 passed, 1 skipped" in strict.stdout, strict.stdout
    assert "skipped for a missing install" in strict.stdout and "test_needs_a_browser" in strict.stdout
    module = run(tmp_path, strict=True, probe=MODULE_PROBE)  # a whole module skipped at collection
    assert module.returncode != 0 and "skipped for a missing install" in module.stdout, module.stdout
    assert run(tmp_path, strict=False, probe=MODULE_PROBE).returncode == 5  # pytest: nothing ran, nothing failed


def test_ci_runs_the_tests_strictly() -> None:
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert "KGSQL_STRICT_TESTS=1" in ci
