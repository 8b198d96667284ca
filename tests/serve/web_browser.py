"""The headless Chromium the page tests drive (Debian's Chromium + ChromeDriver, via Selenium).

Importing this module skips the importing test module when either binary or Selenium is missing
(under CI's strict switch such a skip fails the run)."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.skip("chromium/chromedriver not installed (./run test installs them as root)", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

from selenium.webdriver.chrome.service import Service as ChromeService  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,900")


def chromium(profile: Path, *extra: str) -> Iterator[Any]:
    """A driver with a fresh profile folder (``extra``: more Chromium flags), quit when the generator closes."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, *extra, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=ChromeService(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def wait(driver: Any, script: str, timeout: float) -> Any:
    """The first truthy value of ``script`` in the page, polled until ``timeout`` seconds."""
    return WebDriverWait(driver, timeout, poll_frequency=0.2).until(lambda d: d.execute_script(script))
