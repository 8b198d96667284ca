"""The PostGIS question benchmark's scoring and its bad input (the model run itself is a benchmark)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from kgsql.errors import KgsqlError
from kgsql.lab.postgis_questions import chosen_databases, main, paired_totals, same_rows


def test_results_compare_across_engines_to_four_significant_digits() -> None:
    assert same_rows([("874路", 36373.2224)], [("874路", 36373.22238248243)], ordered=True)
    assert not same_rows([("874路", 36.36543)], [("874路", 36373.22)], ordered=True)  # km vs m: wrong
    assert same_rows([(1,), (2,)], [(2.0,), (1,)], ordered=False)
    assert not same_rows([(1,), (2,)], [(2,), (1,)], ordered=True)
    assert same_rows([(None, "a")], [(None, "a")], ordered=True)


def test_a_missing_dataset_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kgsql.lab.postgis_questions: error: ") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.json").exists()


def _split(**files: str) -> SimpleNamespace:
    """A split as the benchmark reads it: questions of ``tourism`` and ``traffic``; the given database files."""
    questions = [SimpleNamespace(id=f"{db}{i}", db_id=db) for db in ("tourism", "traffic") for i in (1, 2)]
    return SimpleNamespace(questions=questions, split="dataset1", db_files={k: Path(v) for k, v in files.items()})


def test_all_the_splits_databases_or_those_named() -> None:
    data = _split(tourism="t.sqlite", traffic="r.sqlite")
    assert chosen_databases("all", data) == ["tourism", "traffic"]
    assert chosen_databases(" traffic , tourism", data) == ["traffic", "tourism"]
    with pytest.raises(KgsqlError, match="'hotels'"):
        chosen_databases("traffic,hotels", data)  # no questions of that name
    with pytest.raises(KgsqlError, match="'traffic'"):
        chosen_databases("all", _split(tourism="t.sqlite"))  # questions but no file


def test_totals_pair_postgis_with_spatialite_per_question() -> None:
    def record(lite: bool, pg: bool) -> dict[str, dict[str, bool]]:
        return {"spatialite": {"correct": lite}, "postgis": {"correct": pg}}

    totals = paired_totals([record(True, True), record(True, False), record(False, True), record(False, True),
                      record(False, False)])
    assert totals == {"questions": 5, "correct_spatialite": 2, "correct_postgis": 3, "postgis_wins": 2,
                      "postgis_losses": 1, "mcnemar_p": 1.0}


def test_the_postgis_copy_gets_the_descriptions_beside_the_file(pg_cluster, schema_graph, example_db: Path,
                                                                 tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The copy is described as the file is (as a user passes --descriptions and --regions), so the two
    engines' prompts carry the same knowledge: without it PostGIS answered 10 of 100 against SpatiaLite's
    25 (session 22)."""
    from kgsql.lab.postgis_questions import _load_and_ingest

    folder = tmp_path / "geo"
    (folder / "database_description").mkdir(parents=True)
    shutil.copy(example_db, folder / "geo.sqlite")
    (folder / "database_description" / "rivers.csv").write_text(
        "original_column_name,column_name,column_description,data_format,value_description\n"
        "name,name,the river's name as the map labels it,TEXT,\n", encoding="utf-8")
    (folder / "geo.table.csv").write_text("name,description_EN\nrivers,Rivers of the example region\n",
                                          encoding="utf-8")
    targets, _ = _load_and_ingest(schema_graph, pg_cluster, "geo_described", folder / "geo.sqlite", profiles=False)
    for engine, name, _db in targets:
        rivers = schema_graph.table(name, "rivers")
        described = {c.name.lower(): c.description for c in rivers.columns}
        assert described["name"] == "the river's name as the map labels it", engine
        assert rivers.geo_description == "Rivers of the example region", engine


def test_with_no_pool_each_copy_shows_the_examples_it_derives(pg_cluster, schema_graph, example_db: Path,
                                                              tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``--pool own`` (what a user with a new database has): no examples are given, so the SpatiaLite file
    and its PostGIS copy each show examples derived from their own geometry tables, in their own forms."""
    from kgsql.lab.postgis_questions import _engine_methods, _load_and_ingest
    from kgsql.llm.scripted import ScriptedLM

    folder = tmp_path / "geo"
    folder.mkdir()
    shutil.copy(example_db, folder / "geo.sqlite")
    targets, _ = _load_and_ingest(schema_graph, pg_cluster, "geo_own_pool", folder / "geo.sqlite", profiles=False)
    lm = ScriptedLM(default="SELECT name FROM rivers")
    methods = _engine_methods(None, "geo", schema_graph, lm, "own")  # type: ignore[arg-type]  # no dataset read
    for engine, name, _db in targets:
        answer = methods[engine].ask("What is the length of Amber River?", db=name)
        prompt = lm.calls[0].prompt if engine == "spatialite" else lm.calls[-1].prompt
        assert answer.example_source == "derived", engine
        form = ("Distance(rivers.Shape, cities.Location, 1)" if engine == "spatialite"  # the copy folds names
                else "ST_Distance(rivers.shape::geography, cities.location::geography)")
        assert form in prompt, engine  # "Which city is closest to Amber River?" in each copy's names and forms


def test_an_unknown_option_is_one_line_before_anything_starts(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert main(["--data-dir", str(tmp_path), "--set", "spatial_chioce=database", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "spatial_chioce: unknown method option" in err and len(err.strip().splitlines()) == 1


def test_options_reach_both_engines_methods() -> None:
    from kgsql.lab.postgis_questions import _engine_methods
    from kgsql.llm.scripted import ScriptedLM

    options = {"spatial_choice": "database"}
    methods = _engine_methods(None, "geo", None, ScriptedLM(), "own", options)  # type: ignore[arg-type]
    assert [m.options.spatial_choice for m in methods.values()] == ["database", "database"]


def test_a_run_replays_its_model_calls_and_names_a_changed_prompt(  # type: ignore[no-untyped-def]
        pg_cluster, schema_graph, example_db: Path, tmp_path: Path) -> None:
    """Each engine's model calls are recorded; ``--replay`` answers them from the records, so a change to
    the checks and rewrites is measured on the same generations; a question whose prompt changed is named
    not replayable and kept out of the totals."""
    from kgsql.lab.postgis_questions import _engine_methods, _load_and_ingest, _question_record, replay_lm
    from kgsql.llm.scripted import ScriptedLM

    if not pg_cluster.postgis:
        pytest.skip("PostGIS not installed (Debian: postgresql-15-postgis-3)")
    folder = tmp_path / "geo"
    folder.mkdir()
    shutil.copy(example_db, folder / "geo.sqlite")
    targets, _ = _load_and_ingest(schema_graph, pg_cluster, "geo_replay", folder / "geo.sqlite", profiles=False)
    item = SimpleNamespace(id="geo1", db_id="geo", question="Which rivers are there?", evidence="", hints="",
                           gold=["SELECT name FROM rivers"])
    live = ScriptedLM(default="SELECT name FROM rivers")
    record = _question_record(item, _engine_methods(None, "geo", schema_graph, live, "own"),  # type: ignore[arg-type]
                              targets, folder / "geo.sqlite", 30.0)
    assert record["spatialite"]["correct"] and record["postgis"]["correct"]
    assert [c["output"] for c in record["postgis"]["calls"]] == ["SELECT name FROM rivers"]
    recorded = tmp_path / "old.jsonl"
    recorded.write_text(json.dumps(record) + "\n", encoding="utf-8")

    replay = replay_lm(recorded)
    methods = _engine_methods(None, "geo", schema_graph, replay, "own")  # type: ignore[arg-type]
    again = _question_record(item, methods, targets, folder / "geo.sqlite", 30.0, replay)
    assert "not_replayable" not in again
    assert [again[e]["sql"] for e in ("spatialite", "postgis")] == [record[e]["sql"] for e in ("spatialite", "postgis")]

    reworded = SimpleNamespace(**{**vars(item), "question": "Name every river."})  # another prompt, same id
    changed = _question_record(reworded, methods, targets, folder / "geo.sqlite", 30.0, replay)
    assert "another prompt" in changed["not_replayable"]
    assert paired_totals([again, changed])["questions"] == 1


def test_replaying_a_run_without_recorded_calls_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"id": "q1", "spatialite": {"sql": "SELECT 1"}, "postgis": {"sql": "SELECT 1"}}) + "\n",
                   encoding="utf-8")
    out = tmp_path / "r.json"
    assert main(["--data-dir", str(tmp_path), "--replay", str(old), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kgsql.lab.postgis_questions: error: ") and len(err.strip().splitlines()) == 1
    assert "holds no records with model calls" in err
    assert not out.exists()


def test_an_unknown_question_id_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``--ids`` names questions of the split; one it lacks is named before any server starts."""
    import kgsql.eval.datasets.spatial as spatial

    split = _split(tourism=str(tmp_path / "t.sqlite"), traffic=str(tmp_path / "r.sqlite"))
    monkeypatch.setattr(spatial, "load_spatial", lambda *_args, **_kw: split)
    out = tmp_path / "r.json"
    assert main(["--data-dir", str(tmp_path), "--ids", "tourism1,tourism9", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "--ids: no question 'tourism9' in split 'dataset1'" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_replaying_into_its_own_progress_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--replay X.jsonl --out X.json`` would find every question done and replay nothing: one line instead."""
    old = tmp_path / "run.jsonl"
    old.write_text(json.dumps({"id": "q1", "spatialite": {"calls": []}, "postgis": {"calls": []}}) + "\n",
                   encoding="utf-8")
    assert main(["--data-dir", str(tmp_path), "--replay", str(old), "--out", str(tmp_path / "run.json")]) == 1
    err = capsys.readouterr().err
    assert "is this run's own progress file" in err and len(err.strip().splitlines()) == 1
    assert old.read_text(encoding="utf-8").count("\n") == 1  # nothing written
