"""Packaging hook: a built wheel carries the web page's graph library (cytoscape), copied in at build time.

Everything else is declared in pyproject.toml. The page loads
``kgsql/serve/web/vendor/cytoscape.min.js``, which is not in the repository: it
comes from npm, pinned in ``tools/web/package-lock.json``. An editable install
(``./run install``) copies it itself; a wheel build gets it here, with npm if
``tools/web/node_modules`` is not there yet, and fails with one line without it,
so no wheel ships a page that cannot draw its graph.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
WEB_TOOLS = ROOT / "tools" / "web"
VENDORED = ROOT / "kgsql" / "serve" / "web" / "vendor" / "cytoscape.min.js"
FROM_NPM = WEB_TOOLS / "node_modules" / "cytoscape" / "dist" / "cytoscape.min.js"


def vendor_page_library() -> None:
    """Copy cytoscape into the package, installing the pinned npm package first when needed."""
    if VENDORED.is_file():
        return
    if not FROM_NPM.is_file():
        npm = shutil.which("npm")
        if npm is None or subprocess.run([npm, "ci", "--prefix", str(WEB_TOOLS), "--no-audit", "--no-fund"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            raise SystemExit("error: building a kgsql wheel needs the web page's graph library: install npm, or "
                             "run `npm ci --prefix tools/web` (tools/web/package-lock.json pins it)")
    VENDORED.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FROM_NPM, VENDORED)


class BuildWithPageLibrary(build_py):
    """``build_py`` that vendors the page's graph library first (not for editable installs: ./run does it)."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            vendor_page_library()
        super().run()


setup(cmdclass={"build_py": BuildWithPageLibrary})
