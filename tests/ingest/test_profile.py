"""Ingestion profiles: strict YAML validation and merging into a DatabaseSchema."""
from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from benchdata import DATA
from kgsql.db.connect import open_database
from kgsql.errors import ProfileError
from kgsql.ingest.descriptions import ColumnDescription
from kgsql.ingest.profile import ColumnProfile, DerivedExpression, Profile, TableProfile, load_profile
from kgsql.ingest.profile_apply import apply_profile, bundled_profiles, find_bundled_profile
from kgsql.schema.model import Column, DatabaseSchema, Table

SPATIAL = DATA / "spatial"
README = Path(__file__).resolve().parents[2] / "profiles" / "README.md"


def schools() -> DatabaseSchema:
    return DatabaseSchema(
        name="california_schools",
        tables=[
            Table(
                name="frpm",
                columns=[
                    Column("CDSCode", "TEXT", is_primary_key=True),
                    Column("Charter School (Y/N)", "INTEGER"),
                    Column("Free Meal Count (K-12)", "REAL"),
                    Column("Enrollment (K-12)", "REAL"),
                ],
            ),
            Table(name="schools", columns=[Column("CDSCode", "TEXT"), Column("County", "TEXT", description="old")]),
        ],
    )


def write(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(ProfileError) as info:
        load_profile(write(tmp_path, text))
    return str(info.value)


# ---------------------------------------------------------------- loading


def test_full_profile_loads(tmp_path: Path) -> None:
    (tmp_path / "desc").mkdir()
    (tmp_path / "regions.table.csv").write_text("name,description_EN\nfrpm,California\n")
    path = write(
        tmp_path,
        """
version: 1
database: california_schools
description: Schools in California.
descriptions_dir: desc
region_csv: regions.table.csv
language: zh
tables:
  FRPM:
    description: meals
    geo_description: California, USA
    columns:
      "Charter School (Y/N)":
        description: charter flag
        value_explanation: 1 = charter
        data_format: integer
        value_examples: [0, 1]
      CDSCode: the school code
  schools: {}
derived:
  - name: eligible free rate
    expression: frpm."Free Meal Count (K-12)" / frpm."Enrollment (K-12)"
    description: share eligible for free meals
""",
    )
    profile = load_profile(path)
    assert profile == Profile(
        database="california_schools",
        description="Schools in California.",
        descriptions_dir=tmp_path / "desc",
        region_csv=tmp_path / "regions.table.csv",
        language="zh",
        tables={
            "FRPM": TableProfile(
                name="FRPM",
                description="meals",
                geo_description="California, USA",
                columns={
                    "Charter School (Y/N)": ColumnProfile(
                        "Charter School (Y/N)", "charter flag", "1 = charter", "integer", ("0", "1")
                    ),
                    "CDSCode": ColumnProfile("CDSCode", "the school code"),
                },
            ),
            "schools": TableProfile(name="schools"),
        },
        derived=(
            DerivedExpression(
                "eligible free rate",
                'frpm."Free Meal Count (K-12)" / frpm."Enrollment (K-12)"',
                "share eligible for free meals",
            ),
        ),
        path=path,
    )


def test_minimal_profile_and_env_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("KGSQL_TEST_DATA", str(tmp_path / "data"))
    profile = load_profile(write(tmp_path, "database: x\ndescriptions_dir: $KGSQL_TEST_DATA\n"))
    assert profile.descriptions_dir == tmp_path / "data"
    assert profile.language == "en" and profile.tables == {} and profile.derived == ()


def test_numeric_table_name_is_a_name(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, "database: x\ntables:\n  2020: {description: year table}\n"))
    assert "2020" in profile.tables


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # YAML syntax errors carry line and column
        ("database: x\ntables:\n  roads: {description: 'unclosed\n", r"p\.yaml:\d+:\d+: invalid YAML"),
        ("database: x\n  bad indent: 1\n", r"p\.yaml:2:\d+: invalid YAML"),
        ("database: x\ntables: [\n", r"invalid YAML"),
        # structure
        ("", r"must be a YAML mapping, got nothing"),
        ("- a\n- b\n", r"must be a YAML mapping, got a list"),
        ("description: no name\n", r"missing required key 'database'"),
        ("database: x\ntabels: {}\n", r"p\.yaml:2: tabels: unknown key \(did you mean 'tables'\?\)"),
        ("database: x\ntables:\n  roads:\n    descripton: y\n",
         r"p\.yaml:4: tables\.roads\.descripton: unknown key \(did you mean 'description'\?\)"),
        ("database: x\ntables:\n  roads:\n    columns:\n      name: {explanation: z}\n",
         r"p\.yaml:5: tables\.roads\.columns\.name\.explanation: unknown key"),
        # types
        ("database: x\ndescription: 42\n", r"p\.yaml:2: description: expected a string, got a number \(42\)"),
        ("database: x\ntables:\n  roads:\n    description: yes\n",
         r"p\.yaml:4: tables\.roads\.description: expected a string, got a boolean"),
        ("database: x\ntables: [roads]\n", r"p\.yaml:2: tables: expected a mapping, got a list"),
        ("database: x\ntables:\n  roads: just text\n", r"tables\.roads: expected a mapping, got str"),
        ("database: x\ntables:\n  r:\n    columns:\n      c: {value_examples: 5}\n",
         r"tables\.r\.columns\.c\.value_examples: expected a list of plain values"),
        ("database: x\nlanguage: fr\n", r"p\.yaml:2: language: must be one of en, zh"),
        ("database: x\nversion: 2\n", r"unsupported profile version 2"),
        # duplicates
        ("database: x\ndatabase: y\n", r"p\.yaml:2: duplicate key 'database' \(first at line 1\)"),
        ("database: x\ntables:\n  roads: {}\n  Roads: {}\n", r"p\.yaml:4: tables\.Roads: same table as 'roads'"),
        ("database: x\ntables:\n  r:\n    columns:\n      a: x\n      A: y\n", r"tables\.r\.columns\.A: same column as 'a'"),
        # derived
        ("database: x\nderived: {name: a}\n", r"p\.yaml:2: derived: expected a list"),
        ("database: x\nderived:\n  - name: a\n", r"derived\[0\]: missing required key 'expression'"),
        ("database: x\nderived:\n  - {name: a, expression: 'x +* (', description: d}\n",
         r"derived\[0\]\.expression: not a valid SQL expression"),
        ("database: x\nderived:\n  - {name: a, expression: '1'}\n  - {name: A, expression: '2'}\n",
         r"p\.yaml:4: derived\[1\]\.name: derived name 'A' is used twice"),
        # paths
        ("database: x\ndescriptions_dir: nowhere\n", r"p\.yaml:2: descriptions_dir: folder not found: .*nowhere"),
        ("database: x\nregion_csv: nothing.csv\n", r"region_csv: file not found"),
    ],
)
def test_malformed_profiles(tmp_path: Path, text: str, expected: str) -> None:
    message = error_of(tmp_path, text)
    assert re.search(expected, message), message


def test_missing_profile_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="profile not found"):
        load_profile(tmp_path / "none.yaml")


# ---------------------------------------------------------------- applying


def test_apply_merges_with_precedence_and_does_not_mutate(tmp_path: Path) -> None:
    schema = schools()
    profile = load_profile(
        write(
            tmp_path,
            """
database: California_Schools
tables:
  FRPM:
    description: meals per school
    columns:
      charter school (y/n): {value_explanation: "1 = charter", value_examples: [0, 1]}
""",
        )
    )
    descriptions = {
        "frpm": {
            "charter school (y/n)": ColumnDescription(
                "Charter School (Y/N)", "charter", "whether charter", "integer", "0 / 1"
            ),
            "cdscode": ColumnDescription("CDSCode", "CDS code"),  # no description: readable name is used
        },
        "schools": {"county": ColumnDescription("County", "county", "", "", "")},  # empty: keeps 'old'
    }
    regions = {"frpm": {"en": "California", "zh": "加利福尼亚"}}
    merged = apply_profile(schema, profile, descriptions=descriptions, regions=regions)

    frpm = merged.table("frpm")
    assert frpm.description == "meals per school"
    assert frpm.geo_description == "California"
    charter = frpm.column("Charter School (Y/N)")
    assert charter.description == "whether charter"  # CSV
    assert charter.value_explanation == "1 = charter"  # profile beats CSV's "0 / 1"
    assert charter.data_format == "integer"
    assert charter.value_examples == ["0", "1"]
    assert frpm.column("CDSCode").description == "CDS code"
    assert merged.table("schools").column("County").description == "old"
    # the input is untouched
    assert schema.table("frpm").description == "" and schema.table("frpm").column("CDSCode").description == ""


def test_apply_in_chinese_falls_back_to_english() -> None:
    schema = DatabaseSchema(name="traffic", tables=[Table("roads", [Column("Name"), Column("kind")])])
    profile = Profile(database="traffic", language="zh")
    merged = apply_profile(
        schema,
        profile,
        descriptions={
            "roads": {
                "name": ColumnDescription("Name", "Name", "road name", description_zh="道路名字"),
                "kind": ColumnDescription("kind", "kind", "road kind"),
            }
        },
        regions={"roads": {"en": "Roads in Nanjing", "zh": "南京市道路"}},
    )
    roads = merged.table("roads")
    assert roads.column("Name").description == "道路名字"
    assert roads.column("kind").description == "road kind"
    assert roads.geo_description == "南京市道路"


def test_unknown_csv_names_are_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="kgsql.ingest.profile_apply")
    merged = apply_profile(
        schools(),
        Profile(database="california_schools"),
        descriptions={
            "frpm": {"wins": ColumnDescription("wins", "wins", "not a column here")},
            "ghost": {"x": ColumnDescription("x")},
        },
        regions={"ghost": {"en": "nowhere"}},
    )
    assert merged == schools()
    assert "frpm.wins" in caplog.text and "'ghost'" in caplog.text


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        (Profile(database="other"), "profile is for database 'other', not 'california_schools'"),
        (Profile(database="california_schools", tables={"frmp": TableProfile("frmp")}),
         "tables.frmp: no table 'frmp' in database 'california_schools'; did you mean 'frpm'?"),
        (Profile(database="california_schools",
                 tables={"frpm": TableProfile("frpm", columns={"CDSCod": ColumnProfile("CDSCod")})}),
         "tables.frpm.columns.CDSCod: no column 'CDSCod' in table 'frpm'; did you mean 'CDSCode'?"),
        (Profile(database="california_schools",
                 derived=(DerivedExpression("rate", 'frpm."Free Meal Count (K12)" / 2'),)),
         "derived[0] 'rate': no column 'Free Meal Count (K12)' in table 'frpm'; did you mean 'Free Meal Count (K-12)'?"),
        (Profile(database="california_schools", derived=(DerivedExpression("rate", "frpms.CDSCode"),)),
         "no table 'frpms' in database 'california_schools'; did you mean 'frpm'?"),
        (Profile(database="california_schools", derived=(DerivedExpression("c", "upper(Countyy)"),)),
         "no column 'Countyy' in any table of 'california_schools'; did you mean 'County'?"),
    ],
)
def test_unknown_profile_names_raise(profile: Profile, expected: str) -> None:
    with pytest.raises(ProfileError) as info:
        apply_profile(schools(), profile)
    assert expected in str(info.value)


def test_derived_with_subquery_aliases_is_accepted() -> None:
    expr = "(SELECT count(*) FROM schools AS s WHERE s.CDSCode = frpm.CDSCode) + Area(0)"
    profile = Profile(database="california_schools", derived=(DerivedExpression("n", expr),))
    merged = apply_profile(schools(), profile)
    assert merged.derived == [DerivedExpression("n", expr)]
    merged.derived = []
    assert merged == schools()


def test_profile_paths_are_loaded_when_not_passed(tmp_path: Path) -> None:
    (tmp_path / "desc").mkdir()
    (tmp_path / "desc" / "FRPM.csv").write_bytes(
        "original_column_name,column_name,column_description,data_format,value_description\r\n"
        "CDSCode ,CDS code,the school\u2019s code,text,\r\n".encode("cp1252")
    )
    (tmp_path / "r.table.csv").write_text("name,description_CN,description_EN\nschools,加州,California\n", encoding="utf-8")
    profile = load_profile(
        write(tmp_path, "database: california_schools\ndescriptions_dir: desc\nregion_csv: r.table.csv\n")
    )
    merged = apply_profile(schools(), profile)
    assert merged.table("frpm").column("cdscode").description == "the school\u2019s code"
    assert merged.table("schools").geo_description == "California"


# ---------------------------------------------------------------- shipped profiles and docs


def test_bundled_profiles_load() -> None:
    paths = bundled_profiles()
    assert {p.name for p in paths} >= {"traffic.yaml", "tourism.yaml"}
    for path in paths:
        profile = load_profile(path)
        assert profile.descriptions_dir is None and profile.region_csv is None  # no data is shipped
        if path.parent.name == "spatial":  # the spatial dataset's profiles carry region texts
            assert all(t.geo_description for t in profile.tables.values())
    assert find_bundled_profile("TRAFFIC") == next(p for p in paths if p.name == "traffic.yaml")
    assert find_bundled_profile("no_such_db") is None


def test_readme_example_is_valid(tmp_path: Path) -> None:
    block = re.search(r"## Format\s+```yaml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block, "profiles/README.md lost its format example"
    text = "\n".join(l for l in block.group(1).splitlines() if not l.startswith(("descriptions_dir", "region_csv")))
    profile = load_profile(write(tmp_path, text))
    merged = apply_profile(schools(), profile)
    assert merged.table("frpm").column("Charter School (Y/N)").value_examples == ["0", "1"]


def _schema_from_file(path: Path, name: str) -> DatabaseSchema:
    conn = open_database(path, spatial=False)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        )]
        tables = [
            Table(t, [Column(c[1], c[2]) for c in conn.execute(f'PRAGMA table_info("{t}")')]) for t in names
        ]
    finally:
        conn.close()
    return DatabaseSchema(name=name, tables=tables, is_spatial=True)


@pytest.mark.skipif(not SPATIAL.exists(), reason="spatial benchmark data not present")
@pytest.mark.parametrize("dataset", ["dataset1", "dataset2"])
@pytest.mark.parametrize("database", ["traffic", "tourism"])
def test_bundled_profiles_fit_the_real_databases(dataset: str, database: str) -> None:
    folder = SPATIAL / dataset / database
    schema = _schema_from_file(folder / f"{database}.sqlite", database)
    profile = load_profile(find_bundled_profile(database))  # type: ignore[arg-type]
    from kgsql.ingest.descriptions import load_description_dir, load_table_region_csv

    merged = apply_profile(
        schema,
        profile,
        descriptions=load_description_dir(folder / "database_description"),
        regions=load_table_region_csv(folder / f"{database}.table.csv"),
    )
    regions = load_table_region_csv(folder / f"{database}.table.csv")
    for key, texts in regions.items():
        assert merged.table(key).geo_description == texts["en"]
    described = [c for t in merged.tables for c in t.columns if c.description]
    assert len(described) >= 10


# ---------------------------------------------------------------- shipped profiles meet other databases

SPIDER_GEO = DATA / "spider" / "database" / "geo" / "geo.sqlite"
SPIDER_LIKE_GEO = (
    "CREATE TABLE state (state_name TEXT PRIMARY KEY, population INTEGER);"
    "CREATE TABLE city (city_name TEXT, population INTEGER, state_name TEXT REFERENCES state(state_name));"
)


def _spider_folder(tmp_path: Path, make_sqlite) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path / "database"
    for name, script in (("geo", SPIDER_LIKE_GEO), ("other", "CREATE TABLE t (x INTEGER);")):
        (folder / name).mkdir(parents=True)
        make_sqlite(name, script).rename(folder / name / f"{name}.sqlite")
    return folder


def test_shipped_profile_is_skipped_for_an_unrelated_database_of_the_same_name(tmp_path, make_sqlite) -> None:
    from kgsql.ingest.pipeline import IngestReport, read_sources

    report = IngestReport()
    schemas = read_sources(_spider_folder(tmp_path, make_sqlite), report=report, keep_going=True)
    assert [s.name for s in schemas] == ["geo", "other"]  # the other database is not lost
    assert schemas[0].description == "" and not schemas[0].derived  # nothing of the example's profile
    assert len(report.warnings) == 1 and not report.errors
    warning = report.warnings[0]
    assert "\n" not in warning
    assert "geo.yaml" in warning and "skipped" in warning and "no table 'cities'" in warning


def test_library_ingest_logs_the_skipped_profile(tmp_path, make_sqlite, caplog) -> None:
    from kgsql.ingest.pipeline import read_sources

    with caplog.at_level(logging.WARNING, logger="kgsql.ingest"):
        schemas = read_sources(_spider_folder(tmp_path, make_sqlite))
    assert len(schemas) == 2
    assert [r.getMessage() for r in caplog.records if "geo.yaml" in r.getMessage()]


@pytest.mark.skipif(not SPIDER_GEO.exists(), reason="Spider data not present")
def test_spiders_geo_is_not_given_the_example_geo_profile() -> None:
    from kgsql.ingest.pipeline import IngestReport, read_sources

    report = IngestReport()
    [schema] = read_sources(SPIDER_GEO, report=report)
    assert schema.table("border_info") is not None and schema.description == ""
    assert len(report.warnings) == 1 and "geo.yaml" in report.warnings[0]


def test_shipped_profile_still_applies_to_its_own_database(example_db) -> None:
    from kgsql.ingest.pipeline import IngestReport, read_sources

    report = IngestReport()
    [schema] = read_sources(example_db, report=report)
    assert not report.warnings
    assert schema.description.startswith("A made-up country")
    assert schema.table("cities").column("is_capital").value_explanation.startswith("1 = capital")


def test_profile_mismatch_reasons() -> None:
    from kgsql.ingest.profile_apply import profile_mismatch

    assert profile_mismatch(schools(), Profile(database="california_schools", description="x")) == (
        "it names no tables to recognise the database by")
    wrong = Profile(database="california_schools", tables={"frmp": TableProfile("frmp")})
    assert "no table 'frmp'" in profile_mismatch(schools(), wrong)  # type: ignore[operator]
    right = Profile(database="california_schools", tables={"FRPM": TableProfile("FRPM")})
    assert profile_mismatch(schools(), right) is None


def test_no_shipped_profiles_reads_the_database_alone(example_db) -> None:
    """What a user's own database gets (issue 29: every spatial number also without the shipped profiles)."""
    from kgsql.ingest.pipeline import read_sources

    [schema] = read_sources(example_db, shipped_profiles=False)
    assert schema.description == "" and not schema.derived  # the profile's
    assert schema.table("cities").column("is_capital").value_explanation.startswith("1 = capital")  # files beside it
    assert schema.table("cities").column("Location").spatial.srid == 4326  # the database's own metadata stays
