"""The service's web page in a real headless browser (Debian's Chromium + ChromeDriver, via Selenium).

Load the page, draw databases of 11 and 55 tables (every table on screen, no two boxes overlapping),
search, ask with the scripted model, see the selected subgraph highlighted and the result table, keep
the answer as an example, ask a follow-up in the same conversation and start a new one; screenshots are
taken and checked (size, not blank).
"""
from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any, Iterator

import pytest

import web_browser  # skips this module where Chromium, ChromeDriver or Selenium is missing
from selenium.webdriver.common.by import By  # noqa: E402

from kgsql.llm.scripted import ScriptedLM  # noqa: E402
from kgsql.serve.http import WEB, ApiServer  # noqa: E402

ANSWER_SQL = "SELECT name FROM t03 ORDER BY id LIMIT 3"
NO_COLOUR = "What is the colour of each t03 item?"  # no table has a colour: the model reaches for one


CHECKED = "What are the names of the first three t03 items?"  # with "check": its readings rank the other way
OTHER_READING = "SELECT name FROM t03 ORDER BY id DESC LIMIT 3"


def scripted_answer(messages: list[dict[str, Any]], step: str | None, params: dict[str, Any]) -> str:
    """ANSWER_SQL, except a query on a column no table has for the unanswerable question, and another
    reading of CHECKED when it is asked again to check the answer."""
    if NO_COLOUR in messages[-1]["content"]:
        return "SELECT colour FROM t03"
    return OTHER_READING if step == "sql_opinion" and CHECKED in messages[-1]["content"] else ANSWER_SQL


def wide_database(path: Path, n: int) -> Path:
    """``n`` tables t00..: each with a few columns, a foreign key to an earlier table (a tree) and rows."""
    conn = sqlite3.connect(path)
    for i in range(n):
        parent = f", parent_id INTEGER REFERENCES t{(i - 1) // 2:02d}(id)" if i else ""
        conn.execute(f"CREATE TABLE t{i:02d} (id INTEGER PRIMARY KEY, name TEXT, amount REAL, "
                     f"code_{i} TEXT{parent})")
        conn.executemany(f"INSERT INTO t{i:02d} (id, name, amount, code_{i}) VALUES (?, ?, ?, ?)",
                         [(k, f"item {i}-{k}", k * 1.5, f"c{k}") for k in range(1, 6)])
    conn.commit()
    conn.close()
    return path


@pytest.fixture(scope="module")
def page_server(schema_graph, serve_graph, tmp_path_factory) -> ApiServer:  # type: ignore[no-untyped-def]
    if not (WEB / "vendor" / "cytoscape.min.js").exists():
        pytest.skip("the page's graph library is not installed (./run install copies it with npm)")
    folder = tmp_path_factory.mktemp("web")
    for n in (11, 55):
        schema_graph.ingest(wide_database(folder / f"web{n}.sqlite", n), name=f"web{n}", force=True)
    return serve_graph(ScriptedLM(scripted_answer))


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    yield from web_browser.chromium(tmp_path_factory.mktemp('chrome'))


def wait(driver: Any, script: str, timeout: float = 120) -> Any:
    return web_browser.wait(driver, script, timeout)


def check_screenshot(driver: Any, path: Path, min_ink: float = 0.015) -> None:
    """The page as a PNG: full size, and the graph area really drawn (its share of dark pixels)."""
    from PIL import Image

    wait(driver, "return window.kgsql.drawn === true")
    assert driver.save_screenshot(str(path))
    image = Image.open(path).convert("L")
    assert image.size[0] >= 1000 and image.size[1] >= 600
    graph = driver.find_element(By.ID, "graph").rect
    area = image.crop((int(graph["x"]), int(graph["y"]), int(graph["x"] + graph["width"]),
                       int(graph["y"] + graph["height"])))
    ink = sum(area.histogram()[:245]) / (area.size[0] * area.size[1])  # share of non-white pixels
    keep = os.environ.get("KGSQL_SCREENSHOTS")  # a folder to keep them in, to look at
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    assert ink > min_ink, f"graph area nearly blank ({ink:.4f} dark)"


LAYOUT_CHECK = """
const cy = window.kgsql.cy; const w = cy.width(), h = cy.height();
const boxes = cy.nodes().map(n => n.renderedBoundingBox());
const inside = boxes.every(b => b.x1 >= -1 && b.y1 >= -1 && b.x2 <= w + 1 && b.y2 <= h + 1);
let overlaps = 0;
for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
  const a = boxes[i], b = boxes[j];
  if (a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2) overlaps++;
}
return {n: boxes.length, inside, overlaps, font: parseFloat(cy.nodes()[0].renderedStyle('font-size'))};
"""


@pytest.mark.parametrize("tables", [11, 55])
def test_the_schema_graph_is_readable(page_server: ApiServer, browser: Any, tables: int, tmp_path: Path) -> None:
    browser.get(f"{page_server.url}/?db=web{tables}")
    wait(browser, f"return window.kgsql.cy && window.kgsql.cy.nodes().length === {tables}")
    check_screenshot(browser, tmp_path / f"graph-{tables}.png")
    layout = browser.execute_script(LAYOUT_CHECK)
    assert layout["n"] == tables and layout["overlaps"] == 0 and layout["font"] >= 10, layout  # readable
    if tables <= 11:
        assert layout["inside"], layout  # a small database fits on screen
    else:
        assert "Drag to pan, scroll to zoom, or search." in browser.find_element(By.ID, "status").text
    assert browser.execute_script("return window.kgsql.cy.edges().length") == tables - 1
    box = browser.find_element(By.ID, "search")
    box.send_keys("code_7")
    assert wait(browser, "return window.kgsql.cy.nodes('.match').map(n => n.id()).join()") == "t07"


def test_ask_highlights_the_selection_and_shows_the_result(page_server: ApiServer, browser: Any,
                                                           tmp_path: Path) -> None:
    browser.get(f"{page_server.url}/?db=web11")
    wait(browser, "return window.kgsql.cy && window.kgsql.cy.nodes().length === 11")
    browser.find_element(By.ID, "question").send_keys("What are the names of the first three items of t03?")
    browser.find_element(By.ID, "go").click()
    assert wait(browser, "return document.getElementById('sql').textContent", timeout=300) == ANSWER_SQL
    rows = browser.find_elements(By.CSS_SELECTOR, "#result tr")
    assert [r.text for r in rows] == ["name", "item 3-1", "item 3-2", "item 3-3"]
    # a cell as `kgsql ask` shows it: a real to 15 significant digits (an AVG's 11.350000000000001 reads 11.35)
    cells = browser.execute_script("return [11.350000000000001, 0.1 + 0.2, 3, 1e21, null, 'x'].map(shownValue)")
    assert cells == ["11.35", "0.3", "3", "1e+21", "NULL", "x"]
    selected = browser.execute_script("return window.kgsql.cy.nodes('.selected').map(n => n.id())")
    assert selected == ["t03"]  # the table the SQL uses, not every table retrieval selected (issue 30, item 3)
    assert browser.execute_script("return window.kgsql.cy.nodes('.faded').length") == 10
    assert "t03:" in browser.find_element(By.ID, "selected").text
    hints = browser.find_element(By.ID, "hints").text.splitlines()
    assert hints and all(h.startswith("If the query needs several of these tables") or " is a value of " in h for h in hints)
    check_screenshot(browser, tmp_path / "answer.png")
    browser.find_element(By.ID, "right").click()
    assert wait(browser, "return document.getElementById('taught').textContent") == "kept: 1 example(s) for web11"
    assert [e["sql"] for e in page_server.service.graph.examples("web11")] == [ANSWER_SQL]

    # an answer without rows cannot be kept as right (its joins would be learnt unchecked)
    browser.execute_script("showAnswer(Object.assign({}, window.kgsql.answer, {rows: []}))")
    assert browser.find_element(By.ID, "right").get_attribute("disabled") is not None
    # another database: nothing of this one's question, answer or kept note stays on the page
    browser.execute_script("const s = document.getElementById('db'); s.value = 'web55'; "
                           "s.dispatchEvent(new Event('change'))")
    wait(browser, "return window.kgsql.cy && window.kgsql.cy.nodes().length === 55")
    assert browser.execute_script("return [document.getElementById('answer').hidden, "
                                  "document.getElementById('question').value, "
                                  "document.getElementById('taught').textContent, "
                                  "document.getElementById('sql').textContent, window.kgsql.answer]") == \
        [True, "", "", "", None]


TURNS = "return [...document.querySelectorAll('#turns li')].map(li => li.textContent)"


def ask_on_page(browser: Any, question: str, turns: int) -> list[str]:
    """Type ``question``, ask, and wait until the conversation lists ``turns`` turns (their texts)."""
    browser.find_element(By.ID, "question").send_keys(question)
    browser.find_element(By.ID, "go").click()
    wait(browser, f"return document.querySelectorAll('#turns li').length === {turns} "
                  f"&& document.getElementById('go').disabled === false", timeout=300)
    return browser.execute_script(TURNS)


def test_a_follow_up_joins_the_conversation_and_new_conversation_clears_it(page_server: ApiServer,
                                                                           browser: Any) -> None:
    """Issue 32: a thread per database; the follow-up is read with the earlier question; the button and
    another database start a new thread."""
    lm = page_server.service.lm()
    browser.get(f"{page_server.url}/?db=web11")
    wait(browser, "return window.kgsql.cy && window.kgsql.cy.nodes().length === 11")
    assert browser.find_element(By.ID, "thread").get_attribute("hidden") is not None
    first, follow = "Which items are in t03?", "Only the first three"
    assert ask_on_page(browser, first, 1) == [first]
    assert ask_on_page(browser, follow, 2) == [first, follow]
    assert browser.find_element(By.ID, "thread").is_displayed()
    assert browser.find_element(By.ID, "sql").text == ANSWER_SQL
    sql_calls = [c.messages[-1]["content"] for c in lm.calls if c.step == "sql"]  # the default context=history
    assert f"Question 1: {first}\nSQL 1: {ANSWER_SQL}" in sql_calls[-1] and follow in sql_calls[-1]
    browser.find_element(By.ID, "new-thread").click()
    assert browser.execute_script(TURNS) == [] and not browser.find_element(By.ID, "thread").is_displayed()
    assert browser.execute_script("return document.getElementById('answer').hidden") is True
    calls = len(lm.calls)
    assert ask_on_page(browser, follow, 1) == [follow]  # a new thread: nothing earlier to read it with
    assert not [c for c in lm.calls[calls:] if "Question 1:" in c.messages[-1]["content"]]
    browser.execute_script("const s = document.getElementById('db'); s.value = 'web55'; "
                           "s.dispatchEvent(new Event('change'))")
    wait(browser, "return window.kgsql.cy && window.kgsql.cy.nodes().length === 55")
    assert browser.execute_script(TURNS) == [] and not browser.find_element(By.ID, "thread").is_displayed()


def test_flags_show_under_the_sql_and_the_explanation_opens(page_server: ApiServer, browser: Any,
                                                            tmp_path: Path) -> None:
    """Issue 34: a question whose literal the query leaves out carries a flag under the SQL; the
    collapsible block says what the query does, from the SQL and the graph."""
    browser.get(f"{page_server.url}/?db=web11")
    wait(browser, "return window.kgsql.cy && window.kgsql.cy.nodes().length === 11")
    browser.find_element(By.ID, "new-thread").click()
    browser.find_element(By.ID, "question").send_keys("Which items of t03 have the code 'c9'?")
    browser.find_element(By.ID, "go").click()
    wait(browser, "return document.querySelectorAll('#flags li').length > 0", timeout=300)
    flags = browser.find_elements(By.CSS_SELECTOR, "#flags li.flag")
    assert [f.get_attribute("data-code") for f in flags] == ["unused-literal"]
    assert flags[0].is_displayed() and "'c9'" in flags[0].text
    assert browser.find_element(By.ID, "status").text == "Answered, with 1 warning(s): see under the SQL."
    sql, flag = browser.find_element(By.ID, "sql").rect, flags[0].rect
    assert 0 <= flag["y"] - (sql["y"] + sql["height"]) < 40  # right under the SQL
    explanation = browser.find_element(By.ID, "explanation")
    assert not explanation.is_displayed()  # collapsed until opened
    browser.find_element(By.CSS_SELECTOR, "#explained summary").click()
    lines = explanation.text.splitlines()
    assert lines[0] == "Reads t03" and "Keeps the 3 row(s) with the lowest t03.id" in lines
    check_screenshot(browser, tmp_path / "flagged.png")


def test_check_asks_again_and_flags_an_answer_no_reading_returns(page_server: ApiServer, browser: Any,
                                                                 tmp_path: Path) -> None:
    """Issue 34: "check" sends the method option opinions; readings that return other rows flag the answer,
    and the cost line says how many agreed. Another method has no readings: the box is off for it."""
    browser.get(f"{page_server.url}/?db=web11")
    wait(browser, "return window.kgsql.cy && window.kgsql.cy.nodes().length === 11")
    browser.find_element(By.ID, "new-thread").click()
    box = browser.find_element(By.ID, "check")
    assert box.is_displayed() and not box.is_selected() and box.is_enabled()
    browser.execute_script("const m = document.getElementById('method'); m.value = 'dail-sql'; "
                           "m.dispatchEvent(new Event('change'))")
    assert not box.is_enabled()
    browser.execute_script("const m = document.getElementById('method'); m.value = 'kgsql'; "
                           "m.dispatchEvent(new Event('change'))")
    box.click()
    browser.find_element(By.ID, "question").send_keys(CHECKED)
    browser.find_element(By.ID, "go").click()
    wait(browser, "return document.querySelectorAll('#flags li').length > 0", timeout=300)
    assert [f.get_attribute("data-code") for f in browser.find_elements(By.CSS_SELECTOR, "#flags li.flag")] \
        == ["other-reading"]
    assert browser.find_element(By.ID, "sql").text == ANSWER_SQL  # readings check the answer, never change it
    assert browser.execute_script("return window.kgsql.answer.opinions.map((o) => o.sql)") == [OTHER_READING] * 3
    assert browser.find_element(By.ID, "cost").text.endswith("checked: 0 of 3 reading(s) returned these rows")
    check_screenshot(browser, tmp_path / "checked.png")
    box.click()  # unchecked: the next question is answered without readings


def test_a_refusal_replaces_the_rows_and_says_why(page_server: ApiServer, browser: Any) -> None:
    """Issue 34: a question the database cannot answer shows "cannot answer" where the rows would be."""
    browser.get(f"{page_server.url}/?db=web11")
    wait(browser, "return window.kgsql.cy && window.kgsql.cy.nodes().length === 11")
    browser.find_element(By.ID, "new-thread").click()
    browser.find_element(By.ID, "question").send_keys(NO_COLOUR)
    browser.find_element(By.ID, "go").click()
    wait(browser, "return document.querySelectorAll('#rows .refusal').length > 0", timeout=300)
    refusal = browser.find_element(By.CSS_SELECTOR, "#rows .refusal")
    assert refusal.is_displayed() and refusal.text.startswith("cannot answer: the database has nothing for 'colour'")
    assert browser.find_element(By.ID, "sql").text == "(no SQL)"
    assert browser.find_element(By.ID, "status").text == "Not answered: the database lacks what the question needs."


def test_auto_routes_the_question_and_says_where(page_server: ApiServer, browser: Any) -> None:
    """Issue 33: the database choice 'auto' sends no database; the answer's database is drawn and named."""
    browser.get(f"{page_server.url}/?db=web11")
    wait(browser, "return window.kgsql.cy && window.kgsql.cy.nodes().length === 11")
    browser.execute_script("const s = document.getElementById('db'); s.value = ''; "
                           "s.dispatchEvent(new Event('change'))")
    assert browser.find_element(By.ID, "status").text.startswith("auto: each question goes to the database")
    browser.find_element(By.ID, "question").send_keys("What are the names of the first three items of t03?")
    browser.find_element(By.ID, "go").click()
    assert wait(browser, "return document.getElementById('sql').textContent", timeout=300) == ANSWER_SQL
    routing = browser.execute_script("return window.kgsql.answer.routing")
    assert routing["db"] in {"web11", "web55"} and browser.execute_script("return window.kgsql.answer.db") == routing["db"]
    status = browser.find_element(By.ID, "status").text
    assert status.startswith(f"Routed to {routing['db']}") and status.endswith("Answered.")
    assert ("close call" in status) == bool(routing["tied_with"])
    assert isinstance(routing["notes"], list) and all(note in status for note in routing["notes"])  # worded once
    said = browser.execute_script("return routedNote(arguments[0])", {  # the service's words, as sent
        "db": "web11", "tied_with": None, "notes": ["it stores 'Alton', which the question names"]})
    assert said == "Routed to web11 (it stores 'Alton', which the question names). "
    tables = 11 if routing["db"] == "web11" else 55
    assert browser.execute_script("return window.kgsql.cy.nodes().length") == tables  # the routed database drawn
    assert browser.execute_script("return window.kgsql.cy.nodes('.selected').map(n => n.id())") == ["t03"]
