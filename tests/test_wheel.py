"""A wheel built from a clean checkout carries the web page's graph and chart libraries (issues 30 and 34)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NODE_MODULES = REPO / "tools" / "web" / "node_modules"


def test_a_wheel_from_a_clean_checkout_ships_the_page_library(tmp_path: Path) -> None:
    if not all((NODE_MODULES / name).is_dir() for name in ("cytoscape", "vega", "vega-lite", "vega-embed")):
        pytest.skip("tools/web/node_modules not installed (./run install runs npm ci)")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    src = tmp_path / "src"
    for name in filter(None, tracked.decode().split("\0")):
        if (REPO / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    assert not (src / "kgsql" / "serve" / "web" / "vendor").exists()  # not in the repository: npm's
    (src / "tools" / "web" / "node_modules").symlink_to(NODE_MODULES)  # no network needed for the test
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("kgsql-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    libraries = ("cytoscape", "vega", "vega-lite", "vega-embed")
    assert {f"kgsql/serve/web/vendor/{name}.min.js" for name in libraries} <= names
    assert "kgsql/serve/web/chart.js" in names
    assert {"kgsql/serve/web/index.html", "kgsql/fewshot/default_examples.json", "kgsql/cypher/constraints.cypher"} <= names
