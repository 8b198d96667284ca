"""Schema prompt styles: exact text per style, with and without example rows (golden files)."""
from __future__ import annotations

from pathlib import Path

import pytest

from golden import assert_golden
from kgsql.errors import UnknownNameError
from kgsql.generate.rows import display_value, render_rows, sample_rows
from kgsql.generate.styles import available_styles, get_style, render_schema, spider_type
from kgsql.ingest.reader import read_database

FIXTURES = Path(__file__).parent / "fixtures" / "styles"

CONCERT = """
CREATE TABLE stadium (
    Stadium_ID INTEGER PRIMARY KEY,
    Location TEXT,
    Name TEXT NOT NULL,
    Capacity INT,
    Opened DATE
);
CREATE TABLE singer (
    Singer_ID INTEGER PRIMARY KEY,
    Name varchar(40) NOT NULL,
    Country TEXT,
    Is_male BOOLEAN,
    Bio TEXT
);
CREATE TABLE "singer in concert" (
    concert_ID INTEGER,
    Singer_ID INTEGER REFERENCES singer(Singer_ID),
    Stadium_ID INTEGER REFERENCES stadium(Stadium_ID),
    PRIMARY KEY (concert_ID, Singer_ID)
);
INSERT INTO stadium VALUES (1, 'Raith Rovers', 'Stark''s Park', 10104, '1990-05-01'),
                           (2, 'Ayr United', 'Somerset Park', 11998, NULL),
                           (3, 'East Fife', 'Bayview Stadium', 2000, '1998-01-01'),
                           (4, 'Queen''s Park', 'Hampden Park', 52500, '1903-10-31');
INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands', 1, 'Sings
on two lines'),
                          (2, 'Timbaland', 'United States', 1, 'A producer with a very long biography that keeps going well past the eighty character cut of the prompt'),
                          (3, 'Justin Brown', 'France', 0, NULL);
INSERT INTO "singer in concert" VALUES (1, 1, 1), (1, 2, 1);
"""


@pytest.fixture(scope="module")
def concert(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import sqlite3

    path = tmp_path_factory.mktemp("styles") / "concert.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(CONCERT)
    conn.commit()
    conn.close()
    return read_database(path, name="concert")


@pytest.mark.parametrize("style", ["table-column", "create", "create-eoc", "create-eot", "code", "code-values",
                                   "code-knowledge", "code-measures", "kg"])
@pytest.mark.parametrize("rows", [0, 3])
def test_style_golden(concert, style: str, rows: int) -> None:  # type: ignore[no-untyped-def]
    text = render_schema(style, concert, example_rows=rows)
    assert_golden(FIXTURES / f"concert-{style}-rows{rows}.txt", text + "\n")


@pytest.mark.parametrize("style", ["create-eot", "code", "code-measures"])
def test_spatial_rows_show_wkt(example_db: Path, style: str) -> None:
    schema = read_database(example_db, name="geo")
    text = render_schema(style, schema, example_rows=2)
    assert "POINT(" in text and "POLYGON((" in text  # geometry as WKT, never raw BLOBs
    assert_golden(FIXTURES / f"geo-{style}-rows2.txt", text + "\n")


def test_every_registered_style_has_a_golden_test() -> None:
    assert set(available_styles()) == {"table-column", "create", "create-eoc", "create-eot", "code", "code-values",
                                       "code-knowledge", "code-measures", "kg"}


def test_aliases_and_unknown_style() -> None:
    assert get_style("api-doc").name == "table-column"
    assert get_style("CR").name == "code"
    with pytest.raises(UnknownNameError, match="known: code"):
        get_style("nope")


def test_rows_of_selected_columns_only(concert) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    singer = concert.table("singer")
    narrow = replace(singer, columns=[singer.column("Name"), singer.column("Country")])
    sample = sample_rows(concert, narrow, 2)
    assert sample is not None and sample.columns == ("Name", "Country")
    assert render_rows(sample) == ("/*\n2 example rows from table singer:\nName\tCountry\n"
                                   "Joe Sharp\tNetherlands\nTimbaland\tUnited States\n*/")


def test_rows_skipped_without_database_file(concert) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    assert render_schema("create", replace(concert, path=""), example_rows=3) == render_schema("create", concert)


def test_display_value() -> None:
    assert display_value(None) == "NULL"
    assert display_value(b"\x00\x01") == "<blob>"
    assert display_value("a\tb\nc") == "a b c"
    assert display_value("x" * 100, 10) == "x" * 9 + "…"
    assert display_value(2.5) == "2.5"


@pytest.mark.parametrize("declared,expected", [
    ("INTEGER", "number"), ("int(11)", "number"), ("REAL", "number"), ("NUMERIC(10,2)", "number"),
    ("varchar(40)", "text"), ("TEXT", "text"), ("DATE", "time"), ("datetime", "time"),
    ("BOOLEAN", "boolean"), ("bool", "boolean"), ("", "others"), ("BLOB", "others"),
])
def test_spider_types(declared: str, expected: str) -> None:
    assert spider_type(declared) == expected


# --------------------------------------------------------------------------- code-knowledge (issue 28)

#: Lines as BIRD's description CSVs write them (superhero, student_club, card_games).
HERO_CSV = (
    "original_column_name,column_name,column_description,data_format,value_description\n"
    "id,,the unique identifier of the superhero,integer,\n"
    "superhero_name,superhero name,superhero name,text,\n"
    "eye_colour_id,eye colour id,the id of the superhero's eye color,integer,\n"
    "height_cm,height cm,the height of the superhero,integer,\"commonsense evidence: The unit of height is "
    "centimeter. If the height_cm is NULL or 0, it means the height of the superhero is missing. \"\n"
    "status,,,text,\"\u2022 Closed: the event is closed \u2022 Open: the event is opened\"\n"
)


@pytest.fixture(scope="module")
def heroes(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import sqlite3

    from kgsql.ingest.knowledge import enrich

    folder = tmp_path_factory.mktemp("heroes")
    path = folder / "heroes.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE colour (id INTEGER PRIMARY KEY, colour TEXT);
        CREATE TABLE superhero (id INTEGER PRIMARY KEY, superhero_name TEXT,
            eye_colour_id INTEGER REFERENCES colour(id), height_cm INTEGER, status TEXT);
        INSERT INTO colour VALUES (1, 'Blue'), (2, 'Amber');
        INSERT INTO superhero VALUES (1, 'A-Bomb', 1, 203, 'Open'), (2, 'Abe Sapien', 2, 191, 'Closed');
    """)
    conn.commit()
    conn.close()
    desc = folder / "database_description"
    desc.mkdir()
    (desc / "superhero.csv").write_text(HERO_CSV, encoding="utf-8")
    return enrich(read_database(path, name="heroes"), path, descriptions_dir=desc, use_shipped_profiles=False)


def test_code_knowledge_writes_descriptions_and_value_meanings_next_to_their_column(heroes) -> None:  # type: ignore[no-untyped-def]
    text = render_schema("code-knowledge", heroes)
    assert_golden(FIXTURES / "heroes-code-knowledge.txt", text + "\n")
    lines = {line.strip().split()[0]: line for line in text.splitlines() if " -- " in line}
    assert "unit: centimeter; NULL or 0 = missing" in lines["height_cm"]  # structured, where the model needs it
    assert "The unit of height" not in lines["height_cm"]  # the prose it came from is not repeated
    assert "commonsense evidence" not in text and "\u2022" not in text  # the writers' labels and bullets go
    assert lines["superhero_name"].endswith("-- values: 'A-Bomb', 'Abe Sapien'")  # "superhero name" repeats the name
    assert lines["status"].endswith("'Closed' = the event is closed, 'Open' = the event is opened; values: 'Closed', 'Open'")


def test_code_knowledge_is_code_values_where_the_graph_has_no_descriptions(concert) -> None:  # type: ignore[no-untyped-def]
    assert render_schema("code-knowledge", concert) == render_schema("code-values", concert)


def test_a_long_note_is_cut_at_a_word(heroes) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from kgsql.generate.styles import NOTE_CHARS

    table = heroes.table("superhero")
    long = replace(table.column("height_cm"), value_explanation="centimeters " * 60)
    schema = replace(heroes, tables=[replace(table, columns=[long])])
    line = render_schema("code-knowledge", schema).splitlines()[1]
    note = line.split(" -- ", 1)[1]
    assert len(note) <= NOTE_CHARS and note.endswith("...") and "centimet..." not in note
