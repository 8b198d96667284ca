"""An answer's chart on the service's page, in a real headless browser (issue 34).

The shipped SpatiaLite example is asked two questions by the scripted model:
one answered with a name and a number (bars), one with provinces, rivers and
cities (their geometries on a plain map). The chart's SVG marks are counted and
a screenshot is checked for the drawn chart: the marks' colours inside the
chart's box.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import web_browser  # skips this module where Chromium, ChromeDriver or Selenium is missing
from selenium.webdriver.common.by import By  # noqa: E402

from kgsql.llm.scripted import ScriptedLM  # noqa: E402
from kgsql.serve.http import WEB, ApiServer  # noqa: E402

BARS_QUESTION = "How many people live in each city?"
BARS_SQL = "SELECT name, population FROM cities ORDER BY population DESC"
MAP_QUESTION = "Where are the provinces, the rivers and the cities?"
MAP_SQL = ("SELECT name, shape FROM provinces UNION ALL SELECT name, shape FROM rivers "
           "UNION ALL SELECT name, Location FROM cities")
LIST_QUESTION = "What are the names of the rivers?"
LIST_SQL = "SELECT name FROM rivers"
ANSWERS = {BARS_QUESTION: BARS_SQL, MAP_QUESTION: MAP_SQL, LIST_QUESTION: LIST_SQL}
LIBRARIES = ("cytoscape", "vega", "vega-lite", "vega-embed")


def answer(messages: list[dict[str, Any]], step: str, params: dict[str, Any]) -> str:
    """The scripted model: the SQL of the test question the prompt asks last (a follow-up's rewrite: that
    question itself, standing alone)."""
    text = "\n".join(str(m.get("content", "")) for m in messages)
    asked = max(ANSWERS, key=text.rfind)
    return asked if step == "rewrite" else ANSWERS[asked]


@pytest.fixture(scope="module")
def page_server(schema_graph, serve_graph, example_db) -> ApiServer:  # type: ignore[no-untyped-def]
    if not all((WEB / "vendor" / f"{name}.min.js").exists() for name in LIBRARIES):
        pytest.skip("the page's libraries are not installed (./run install copies them with npm)")
    schema_graph.ingest(example_db, name="geochart", force=True)
    return serve_graph(ScriptedLM(answer))


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    yield from web_browser.chromium(tmp_path_factory.mktemp('chrome'), "--force-device-scale-factor=1")


def wait(driver: Any, script: str, timeout: float = 300) -> Any:
    return web_browser.wait(driver, script, timeout)


def ask(browser: Any, url: str, question: str) -> None:
    """A fresh page on the example database, the question asked, its answer shown."""
    browser.get(f"{url}/?db=geochart")
    wait(browser, "return window.kgsql.cy && window.kgsql.cy.nodes().length > 0")
    browser.find_element(By.ID, "question").send_keys(question)
    browser.find_element(By.ID, "go").click()
    wait(browser, "return window.kgsql.answer && document.getElementById('go').disabled === false")


def marks(browser: Any, kind: str) -> int:
    """How many SVG items the chart draws in Vega's marks of ``kind`` (rect, shape, symbol, text)."""
    return browser.execute_script(f"return document.querySelectorAll('#chart svg .mark-{kind} path, "
                                  f"#chart svg .mark-{kind} text').length")


def chart_pixels(browser: Any, path: Path) -> Any:
    """A screenshot's pixels inside the chart's box (kept in $KGSQL_SCREENSHOTS when set)."""
    from PIL import Image

    browser.execute_script("document.getElementById('chart').scrollIntoView({block: 'start'})")
    box = browser.execute_script("const r = document.getElementById('chart').getBoundingClientRect(); "
                                 "return [r.left, r.top, r.right, r.bottom]")
    assert browser.save_screenshot(str(path))
    keep = os.environ.get("KGSQL_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    image = Image.open(path).convert("RGB")
    left, top, right, bottom = (int(v) for v in box)
    assert right - left >= 300 and bottom - top >= 200, box  # a chart-sized box
    assert browser.execute_script("const c = document.getElementById('chart'); "
                                  "return c.scrollWidth <= c.clientWidth")  # fits the panel, labels and all
    area = image.crop((left, top, min(right, image.size[0]), min(bottom, image.size[1])))
    return np.asarray(area, dtype=int).reshape(-1, 3)


def near(pixels: Any, colour: str, within: int = 24) -> int:
    """How many pixels are within ``within`` of ``colour`` (#rrggbb) in every channel."""
    target = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels - target) <= within).all(axis=1).sum())


def test_a_name_and_a_number_are_drawn_as_bars(page_server: ApiServer, browser: Any, tmp_path: Path) -> None:
    ask(browser, page_server.url, BARS_QUESTION)
    assert browser.find_element(By.ID, "sql").text == BARS_SQL
    wait(browser, "return window.kgsql.chart !== null")
    assert browser.execute_script("return window.kgsql.answer.chart.usermeta.kgsql.chart") == "bar"
    assert marks(browser, "rect") == 12  # a bar per city
    pixels = chart_pixels(browser, tmp_path / "bars.png")
    assert near(pixels, "#4c78a8") > 2000  # Vega-Lite's bar blue fills a real share of the box
    assert [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#result tr")][:2] == \
        ["name population", "Sudstadt 1020000"]  # the rows stay below the chart


def test_a_spatial_answer_shows_its_geometries_on_a_map(page_server: ApiServer, browser: Any,
                                                        tmp_path: Path) -> None:
    ask(browser, page_server.url, MAP_QUESTION)
    wait(browser, "return window.kgsql.chart !== null")
    assert browser.execute_script("return window.kgsql.answer.chart.usermeta.kgsql.chart") == "map"
    assert marks(browser, "shape") == 4 + 3  # the provinces' areas and the rivers' lines
    assert marks(browser, "symbol") == 12 and marks(browser, "text") >= 12  # each city a point, named
    pixels = chart_pixels(browser, tmp_path / "map.png")
    assert near(pixels, "#dbe7f5", 6) > 5000  # the provinces' fill
    assert near(pixels, "#c0392b", 30) > 100  # the cities' points
    assert near(pixels, "#2b7bb9", 40) > 50  # the rivers
    cells = browser.execute_script("return [...document.querySelectorAll('#result td')].map(td => td.textContent)")
    assert '{"type":"Point","coordinates":[10.9,53.1]}' in cells  # geometries in the table as GeoJSON


def test_no_chart_where_none_fits_and_a_new_answer_replaces_the_chart(page_server: ApiServer,
                                                                      browser: Any) -> None:
    ask(browser, page_server.url, BARS_QUESTION)
    wait(browser, "return window.kgsql.chart !== null")
    browser.find_element(By.ID, "question").send_keys(LIST_QUESTION)  # a follow-up in the same thread
    browser.find_element(By.ID, "go").click()
    wait(browser, "return document.getElementById('sql').textContent === "
                  f"{LIST_SQL!r} && document.getElementById('go').disabled === false")
    assert browser.execute_script("return [window.kgsql.chart, document.getElementById('chart').hidden, "
                                  "document.querySelectorAll('#chart svg').length]") == [None, True, 0]
