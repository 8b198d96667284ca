"""The agent's tools on the shipped example database, through the real graph: exact observations."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.agent.tools import AGENT_TOOLS, TOOL_SPECS, DatabaseTools, ToolArgumentError, list_databases


@pytest.fixture(scope="module")
def tools(schema_graph, example_db: Path) -> DatabaseTools:  # type: ignore[no-untyped-def]
    schema_graph.ingest(example_db, name="agent_geo")
    return DatabaseTools(schema_graph, "agent_geo", max_rows=3)


def test_signatures_and_schemas_come_from_one_registry() -> None:
    assert [TOOL_SPECS[n].signature for n in AGENT_TOOLS] == [
        "SearchColumn(semantic)", "SearchValue(value, table=None, column=None)", "FindShortestPath(start, end)",
        "ExecuteSQL(sql)", "Done(sql)"]
    schema = TOOL_SPECS["SearchValue"].json_schema()
    assert schema["required"] == ["value"] and set(schema["properties"]) == {"value", "table", "column"}
    assert TOOL_SPECS["ExecuteSQL"].function()["function"]["name"] == "ExecuteSQL"
    spec = TOOL_SPECS["SearchValue"]
    assert spec.bind(("x",), {"column": "c"}) == {"value": "x", "column": "c"}
    for args, kwargs, message in [((), {}, "needs 'value'"), (("a", "b", "c", "d"), {}, "at most 3"),
                                  (("x",), {"colour": "c"}, "no argument 'colour'"),
                                  (("x",), {"value": "y"}, "got 'value' twice"), (("  ",), {}, "is empty")]:
        with pytest.raises(ToolArgumentError, match=message):
            spec.bind(args, kwargs)


def test_search_column_ranks_the_columns_a_description_names(tools: DatabaseTools) -> None:
    text = tools.call("SearchColumn", {"semantic": "length of a river"}).text
    lines = text.splitlines()
    assert len(lines) == 5
    assert lines[0] == "1. rivers.length_km (REAL): length of the river in kilometres; min 96.0, max 412.0"
    assert "rivers.name (TEXT): name of the river; values 'Amber River', 'Little Fen', 'Silver River'" in text


def test_search_value_finds_the_column_of_a_value_exactly_fuzzily_and_by_containment(tools: DatabaseTools) -> None:
    assert tools.call("SearchValue", {"value": "eastvale"}).text == "'Eastvale' in provinces.name (exact)"
    assert "'Eastvale' in provinces.name" in tools.call("SearchValue", {"value": "Eastvail"}).text
    contained = tools.call("SearchValue", {"value": "vale", "table": "provinces", "column": "name"}).text
    assert contained == "'Eastvale' in provinces.name (contains)"
    assert tools.call("SearchValue", {"value": "Atlantis", "table": "cities"}).text == \
        "No value like 'Atlantis' found in cities."
    assert "give the table of column 'name'" in tools.call("SearchValue", {"value": "x", "column": "name"}).text


def test_find_shortest_path_returns_the_join_conditions_over_the_graph(tools: DatabaseTools) -> None:
    assert tools.call("FindShortestPath", {"start": "rivers.name", "end": "provinces.name"}).text == (
        "Path: rivers -> river_cities -> cities -> provinces\n"
        "Join on: river_cities.river_id = rivers.river_id AND river_cities.city_id = cities.city_id "
        "AND cities.province_id = provinces.province_id")
    assert "both in table cities" in tools.call("FindShortestPath", {"start": "cities.name", "end": "founded"}).text
    assert tools.call("FindShortestPath", {"start": "rivers.nme", "end": "provinces"}).text == \
        "Error: no column 'nme' in table 'rivers'; did you mean 'name'? (its columns: river_id, name, length_km, Shape)"


def test_execute_sql_is_guarded_and_bounded(tools: DatabaseTools, example_db: Path) -> None:
    before = example_db.stat().st_mtime_ns
    ran = tools.call("ExecuteSQL", {"sql": "SELECT name FROM cities ORDER BY population DESC"})
    assert ran.text == "name\nSudstadt\nHarbourg\nOster\n(12 rows, first 3 shown)"
    assert ran.result is not None and ran.result.row_count == 12
    refused = tools.call("ExecuteSQL", {"sql": "DELETE FROM cities"})
    assert refused.error and refused.text.startswith("Error: SQL rejected: not a read-only query")
    assert tools.call("ExecuteSQL", {"sql": "SELECT nope FROM cities"}).text.startswith("Error:")
    misplaced = tools.call("ExecuteSQL", {"sql": "SELECT T1.name, T2.length_km FROM cities AS T1 "
                                                 "JOIN provinces AS T2 ON T1.province_id = T2.province_id"}).text
    assert misplaced.splitlines()[1:] == [  # the correction rules say where the column is
        "Tip: The column 'length_km' does not exist in the table 'provinces' and should not be used.",
        "Tip: Did you mean 'rivers.length_km'?"]
    assert example_db.stat().st_mtime_ns == before
    long = tools.call("ExecuteSQL", {"sql": "SELECT group_concat(name, ' ') || printf('%.2000c', 'x') FROM cities"})
    assert len(long.text) <= 1500


def test_without_the_database_file_the_tools_say_so(schema_graph, example_db: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "gone.sqlite"
    copy.write_bytes(example_db.read_bytes())
    schema_graph.ingest(copy, name="agent_gone")
    copy.unlink()
    tools = DatabaseTools(schema_graph, "agent_gone")
    assert tools.call("SearchValue", {"value": "Eastvale"}).text.startswith(
        "Error: the file of database 'agent_gone' is not available")
    assert tools.call("ExecuteSQL", {"sql": "SELECT 1"}).text.startswith("Error: the file of database 'agent_gone'")


def test_describe_table_and_list_databases(tools: DatabaseTools, schema_graph) -> None:  # type: ignore[no-untyped-def]
    text = tools.call("DescribeTable", {"table": "cities"}).text
    assert text.splitlines()[0] == "Table cities (12 rows)"
    assert "- Location (POINT, SRID 4326): position of the city centre" in text
    assert "Join: cities.province_id = provinces.province_id" in text
    assert "agent_geo (4 tables)" in list_databases(schema_graph).splitlines()
    assert tools.call("Nope", {}).text.startswith("Error: there is no tool 'Nope'")
