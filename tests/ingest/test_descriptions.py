"""Description CSV loaders: hand-made quirky files always, the real benchmark files when present."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchdata import DATA
from kgsql.errors import ProfileError
from kgsql.ingest.descriptions import (
    ColumnDescription,
    decode_bytes,
    load_description_dir,
    load_description_file,
    load_table_region_csv,
)

SHARED = DATA
BIRD_DIRS = sorted((SHARED / "bird" / "dev_databases_descriptions").glob("*/database_description"))
SPATIAL_DIRS = sorted((SHARED / "spatial").glob("dataset*/*/database_description"))
REGION_CSVS = sorted((SHARED / "spatial").glob("dataset*/*/*.table.csv"))

HEADER = "original_column_name,column_name,column_description,data_format,value_description"


def write(path: Path, text: str, encoding: str = "utf-8", newline: str = "\r\n") -> Path:
    path.write_bytes(text.replace("\n", newline).encode(encoding))
    return path


# ---------------------------------------------------------------- encodings


def test_cp1252_bullets_and_quotes(tmp_path: Path) -> None:
    text = (
        f"{HEADER}\n"
        'speedClass,speed class,A team\u2019s speed,text,"commonsense reasoning: \n\u2022 Slow: 1-33\n\u2022 Fast: 66-100"\n'
        "gp,grand prix,short-form Grand Prix \u2013 one race,text,\n"
    )
    cols = load_description_file(write(tmp_path / "Team.csv", text, "cp1252"))
    assert cols["speedclass"].description == "A team\u2019s speed"
    # CRLF inside quoted cells becomes \n; inner spaces are kept, outer ones stripped
    assert cols["speedclass"].value_description == "commonsense reasoning: \n\u2022 Slow: 1-33\n\u2022 Fast: 66-100"
    assert "\u2013" in cols["gp"].description


def test_utf8_bom_and_chinese(tmp_path: Path) -> None:
    text = (
        f"{HEADER},column_description_CN,value_description_CN\n"
        'Name,Name,"The field ""Name"" records the name",TEXT,,"字段""Name""记录名字",\n'
    )
    cols = load_description_file(write(tmp_path / "roads.csv", text, "utf-8-sig", "\n"))
    assert cols == {
        "name": ColumnDescription(
            original_name="Name",
            readable_name="Name",
            description='The field "Name" records the name',
            data_format="TEXT",
            description_zh='字段"Name"记录名字',
        )
    }


def test_utf16_with_bom(tmp_path: Path) -> None:
    cols = load_description_file(write(tmp_path / "t.csv", f"{HEADER}\nid,identifier,the id,integer,\n", "utf-16"))
    assert cols["id"].readable_name == "identifier"


def test_latin1_fallback_for_bytes_cp1252_lacks() -> None:
    # 0x81 and 0x8d are undefined in cp1252: only latin-1 decodes them
    assert decode_bytes(b"a\x81b\x8dc") == "a\x81b\x8dc"
    assert decode_bytes(b"\xef\xbb\xbfplain") == "plain"
    assert decode_bytes("caf\u00e9".encode("cp1252")) == "caf\u00e9"


# ---------------------------------------------------------------- layout quirks


def test_whitespace_trailing_header_cell_and_blank_lines(tmp_path: Path) -> None:
    text = (
        f"{HEADER},\n"
        "School Code ,school code, the code ,integer ,,\n"
        "\n"
        " Percent (%) Eligible Free (Ages 5-17),,,real,\n"
        ",,,,,\n"
    )
    cols = load_description_file(write(tmp_path / "frpm.csv", text))
    assert set(cols) == {"school code", "percent (%) eligible free (ages 5-17)"}
    assert cols["school code"] == ColumnDescription("School Code", "school code", "the code", "integer", "")


def test_short_rows_are_padded(tmp_path: Path) -> None:
    cols = load_description_file(write(tmp_path / "t.csv", f"{HEADER}\nid,identifier\n"))
    assert cols["id"].description == "" and cols["id"].readable_name == "identifier"


def test_dir_lowercases_table_names_and_ignores_other_files(tmp_path: Path) -> None:
    write(tmp_path / "Player_Attributes.csv", f"{HEADER}\nid,id,the id,integer,\n")
    write(tmp_path / "notes.txt", "not a csv")
    write(tmp_path / ".hidden.csv", "garbage")
    (tmp_path / "sub").mkdir()
    tables = load_description_dir(tmp_path)
    assert list(tables) == ["player_attributes"]
    assert tables["player_attributes"]["id"].description == "the id"


def test_identical_duplicate_rows_are_tolerated(tmp_path: Path) -> None:
    cols = load_description_file(write(tmp_path / "t.csv", f"{HEADER}\nid,id,x,,\nID,id,x,,\n"))
    assert len(cols) == 1


# ---------------------------------------------------------------- malformed files


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "empty file"),
        ("name,description\nid,x\n", "original_column_name"),
        (f"{HEADER}\n,readable only,desc,,\n", "record 2 has no original_column_name"),
        (f"{HEADER}\nid,id,a,,,surplus\n", "record 2 has 6 fields"),
        (f"{HEADER}\nid,id,one,,\nid,id,two,,\n", "described twice"),
        (f"{HEADER}\nid\x00,id,,,\n", "NUL"),
    ],
)
def test_malformed_description_files(tmp_path: Path, content: str, problem: str) -> None:
    path = write(tmp_path / "bad.csv", content)
    with pytest.raises(ProfileError) as info:
        load_description_file(path)
    assert problem in str(info.value)
    assert "bad.csv" in str(info.value)


def test_unreadable_and_missing(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="not found"):
        load_description_dir(tmp_path / "nope")
    with pytest.raises(ProfileError, match="cannot read"):
        load_description_file(tmp_path / "nope.csv")


def test_a_broken_file_costs_only_its_own_table(tmp_path: Path) -> None:
    """BIRD-style folders in the wild hold a broken file now and then: the others still load, and the
    broken one is one warning line naming it and its problem (ingest and eval never fail on it)."""
    write(tmp_path / "member.csv", f"{HEADER}\nmember_id,member id,unique id of member,text,\n")
    write(tmp_path / "budget.csv", "")                                           # empty
    write(tmp_path / "event.csv", "event_id,event id\n")                          # no header it knows
    (tmp_path / "zip.csv").write_bytes(b"original_column_name\x00\x00")           # binary
    warnings: list[str] = []
    loaded = load_description_dir(tmp_path, on_error=warnings.append)
    assert list(loaded) == ["member"] and loaded["member"]["member_id"].description == "unique id of member"
    assert len(warnings) == 3 and all(w.startswith("description file skipped: ") for w in warnings)
    assert [w.split(": ")[1].rsplit("/", 1)[-1] for w in warnings] == ["budget.csv", "event.csv", "zip.csv"]
    with pytest.raises(ProfileError, match="budget.csv: empty file"):
        load_description_dir(tmp_path)                                            # a caller that wants to know


def test_ingest_with_a_broken_description_file_warns_and_keeps_the_rest(tmp_path: Path, make_sqlite) -> None:  # type: ignore[no-untyped-def]
    from kgsql.ingest.knowledge import enrich
    from kgsql.ingest.reader import read_database

    db = make_sqlite("club", "CREATE TABLE member (member_id TEXT PRIMARY KEY); CREATE TABLE budget (spent REAL);")
    folder = tmp_path / "database_description"
    folder.mkdir()
    write(folder / "member.csv", f"{HEADER}\nmember_id,member id,unique id of member,text,\n")
    write(folder / "budget.csv", f"{HEADER}\nspent,,,real,,one too many,and another\n")
    warnings: list[str] = []
    schema = enrich(read_database(db), db, descriptions_dir=folder, use_shipped_profiles=False, warn=warnings.append)
    assert schema.table("member").column("member_id").description == "unique id of member"
    assert len(warnings) == 1 and "budget.csv" in warnings[0]


def test_two_files_for_one_table(tmp_path: Path) -> None:
    write(tmp_path / "Users.csv", f"{HEADER}\nid,id,,,\n")
    write(tmp_path / "users.csv", f"{HEADER}\nid,id,,,\n")
    if len(list(tmp_path.iterdir())) < 2:
        pytest.skip("case-insensitive file system")
    with pytest.raises(ProfileError, match="same table"):
        load_description_dir(tmp_path)


# ---------------------------------------------------------------- region CSV


def test_region_csv(tmp_path: Path) -> None:
    text = (
        "name,description_CN,description_EN\n"
        'roads,"表""roads""记录南京市内各段道路的信息","The table ""roads"" records road segments in Nanjing"\n'
        "Rivers,,Water systems\n"
    )
    regions = load_table_region_csv(write(tmp_path / "traffic.table.csv", text, "utf-8", "\n"))
    assert regions == {
        "roads": {"zh": '表"roads"记录南京市内各段道路的信息', "en": 'The table "roads" records road segments in Nanjing'},
        "rivers": {"en": "Water systems"},
    }


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "empty file"),
        ("table,description_EN\nx,y\n", "no 'name' column"),
        ("name,comment\nx,y\n", "description_<language>"),
        ("name,description_EN\n,orphan\n", "no table name"),
        ("name,description_EN\nx,a\nX,b\n", "appears twice"),
        ("name,description_EN\nx,a,extra\n", "3 fields"),
    ],
)
def test_malformed_region_csv(tmp_path: Path, content: str, problem: str) -> None:
    with pytest.raises(ProfileError, match=problem.replace("(", r"\(")):
        load_table_region_csv(write(tmp_path / "x.table.csv", content))


# ---------------------------------------------------------------- the real benchmark files


@pytest.mark.skipif(not BIRD_DIRS, reason="BIRD description CSVs not present")
@pytest.mark.parametrize("folder", BIRD_DIRS, ids=lambda p: p.parent.name)
def test_every_bird_description_csv_loads(folder: Path) -> None:
    tables = load_description_dir(folder)
    assert set(tables) == {p.stem.lower() for p in folder.glob("*.csv")}
    for table, columns in tables.items():
        assert columns, f"{folder.parent.name}/{table}.csv has no columns"
        # a replacement character may only come from the file itself (student_club/zip_code.csv has 3)
        raw = next(p for p in folder.glob("*.csv") if p.stem.lower() == table).read_bytes()
        replacements = sum((c.description + c.value_description).count("\ufffd") for c in columns.values())
        assert replacements <= raw.count("\ufffd".encode())
        for key, desc in columns.items():
            assert key == desc.original_name.lower() == key.strip().lower()


@pytest.mark.skipif(not BIRD_DIRS, reason="BIRD description CSVs not present")
def test_bird_cp1252_files_decode_to_the_right_characters() -> None:
    root = SHARED / "bird" / "dev_databases_descriptions"
    team = load_description_dir(root / "european_football_2" / "database_description")["team_attributes"]
    assert "\u2022 Slow: 1-33" in team["buildupplayspeedclass"].value_description
    quali = load_description_dir(root / "formula_1" / "database_description")["qualifying"]
    assert any("Grand Prix \u2013 a race" in c.value_description + c.description for c in quali.values())
    frpm = load_description_dir(root / "california_schools" / "database_description")["frpm"]
    assert "percent (%) eligible free (ages 5-17)" in frpm  # leading space stripped


@pytest.mark.skipif(not SPATIAL_DIRS, reason="spatial benchmark data not present")
@pytest.mark.parametrize("folder", SPATIAL_DIRS, ids=lambda p: f"{p.parents[1].name}-{p.parent.name}")
def test_every_spatial_description_csv_loads(folder: Path) -> None:
    tables = load_description_dir(folder)
    assert set(tables) == {p.stem.lower() for p in folder.glob("*.csv")}
    assert any(c.description_zh for cols in tables.values() for c in cols.values())


@pytest.mark.skipif(not REGION_CSVS, reason="spatial benchmark data not present")
@pytest.mark.parametrize("path", REGION_CSVS, ids=lambda p: f"{p.parents[1].name}-{p.name}")
def test_every_region_csv_loads(path: Path) -> None:
    regions = load_table_region_csv(path)
    assert regions
    for table, texts in regions.items():
        assert set(texts) == {"en", "zh"}
        assert table in texts["en"].lower()
