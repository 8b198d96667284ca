"""Packaging hook: a built wheel carries the web page's libraries, copied in at build time.

Everything else is declared in pyproject.toml. The page loads its graph library
(cytoscape) and its chart libraries (vega, vega-lite, vega-embed) from
``kgsql/serve/web/vendor/``, which is not in the repository: they come from npm,
pinned in ``tools/web/package-lock.json``. An editable install (``./run
install``) copies them itself; a wheel build gets them here, with npm if
``tools/web/node_modules`` is not there yet, and fails with one line without
them, so no wheel ships a page that cannot draw its graph or its charts.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
WEB_TOOLS = ROOT / "tools" / "web"
VENDOR = ROOT / "kgsql" / "serve" / "web" / "vendor"
#: file in the package's vendor folder -> where npm puts it under tools/web/node_modules
LIBRARIES = {"cytoscape.min.js": "cytoscape/dist/cytoscape.min.js", "vega.min.js": "vega/build/vega.min.js",
             "vega-lite.min.js": "vega-lite/build/vega-lite.min.js",
             "vega-embed.min.js": "vega-embed/build/vega-embed.min.js"}


def vendor_page_library() -> None:
    """Copy the page's libraries into the package, installing the pinned npm packages first when needed."""
    missing = [name for name in LIBRARIES if not (VENDOR / name).is_file()]
    if not missing:
        return
    modules = WEB_TOOLS / "node_modules"
    if not all((modules / LIBRARIES[name]).is_file() for name in missing):
        npm = shutil.which("npm")
        if npm is None or subprocess.run([npm, "ci", "--prefix", str(WEB_TOOLS), "--no-audit", "--no-fund"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            raise SystemExit("error: building a kgsql wheel needs the web page's libraries: install npm, or "
                             "run `npm ci --prefix tools/web` (tools/web/package-lock.json pins them)")
    VENDOR.mkdir(parents=True, exist_ok=True)
    for name in missing:
        shutil.copyfile(modules / LIBRARIES[name], VENDOR / name)


class BuildWithPageLibrary(build_py):
    """``build_py`` that vendors the page's libraries first (not for editable installs: ./run does it)."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            vendor_page_library()
        super().run()


setup(cmdclass={"build_py": BuildWithPageLibrary})
