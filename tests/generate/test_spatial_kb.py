"""The SpatiaLite function KB against the installed SpatiaLite, and per-question selection."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import pytest

from kgsql.errors import UnknownNameError
from kgsql.schema.model import Column, DatabaseSchema, SpatialInfo, Table
from kgsql.sql.spatialite import Function, SpatialKnowledge, geometry_types

PREAMBLE = "You are an expert in the SpatiaLite spatial database and highly skilled in writing SQL queries."


@pytest.fixture(scope="module")
def kb() -> SpatialKnowledge:
    return SpatialKnowledge.load("spatialite")


@pytest.fixture(scope="module")
def conn(example_db: Path) -> Iterator[Any]:
    from kgsql.db.connect import open_database

    c = open_database(example_db)  # read-only, SpatiaLite loaded
    yield c
    c.close()


@pytest.fixture(scope="module")
def geo_schema(example_db: Path) -> DatabaseSchema:
    from kgsql.ingest.reader import read_database

    return read_database(example_db)


# ---------------------------------------------------------------------------- the KB file


def test_load(kb: SpatialKnowledge) -> None:
    assert kb.dialect == "spatialite"
    assert kb.preamble == PREAMBLE
    assert len(kb.functions) >= 48
    names = [f.name.lower() for f in kb.functions]
    assert len(names) == len(set(names))
    assert SpatialKnowledge.load() is kb  # read once per process


def test_unknown_dialect() -> None:
    with pytest.raises(UnknownNameError, match="known: postgis, spatialite"):
        SpatialKnowledge.load("oracle")


@pytest.mark.parametrize("function", SpatialKnowledge.load().functions, ids=lambda f: f.name)
def test_entry_is_complete(function: Function) -> None:
    assert function.signature.startswith(function.name + "(")
    assert function.description.startswith(("The function", "The aggregate function"))
    assert function.returns and function.keywords
    assert set(a.lower() for a in function.native_aliases) <= set(a.lower() for a in function.aliases)


def test_sspa_sentence(kb: SpatialKnowledge) -> None:
    glength = kb.function("GLength")
    assert glength is not None
    assert glength.line == "The function GLength(c Curve, 1) returns the length of curve c, measured in meters."


# ---------------------------------------------------------------------------- against SpatiaLite


def probe(conn: Any, name: str) -> str:
    """'exists' / 'missing' / 'other: ...' by calling ``name`` with 9 arguments (no KB function takes 9)."""
    try:
        conn.execute(f"SELECT {name}({', '.join(['NULL'] * 9)})").fetchall()
    except Exception as exc:  # noqa: BLE001 - sqlite3 / pysqlite3 OperationalError
        msg = str(exc)
        if msg.startswith("wrong number of arguments"):
            return "exists"
        if msg.startswith("no such function"):
            return "missing"
        return "other: " + msg
    return "other: accepted 9 arguments"


@pytest.mark.parametrize("function", SpatialKnowledge.load().functions, ids=lambda f: f.name)
def test_function_exists_in_spatialite(conn: Any, function: Function) -> None:
    assert probe(conn, function.name) == "exists"


def test_probe_tells_missing_from_existing(conn: Any) -> None:
    assert probe(conn, "STArea") == "missing"
    assert probe(conn, "Extent") == "exists"  # an aggregate: arity is checked when the statement compiles
    assert probe(conn, "Union").startswith("other")  # a keyword, never a function


P1 = "(SELECT Shape FROM provinces WHERE province_id = 1)"
P2 = "(SELECT Shape FROM provinces WHERE province_id = 2)"
R1 = "(SELECT Shape FROM rivers WHERE river_id = 1)"
C1 = "(SELECT Location FROM cities WHERE city_id = 1)"
C2 = "(SELECT Location FROM cities WHERE city_id = 2)"
_BY_NAME = {"radius": "50000.0", "tolerance": "0.01", "fraction": "0.5", "x": "10.0", "y": "51.0",
            "srid": "4326", "wkt": "'POINT(10 51)'", "pattern": "'T********'"}


def sample_arguments(signature: str) -> list[str]:
    """SQL expressions for each parameter of the KB signature, from the example database."""
    params = re.match(r"\w+\(([^)]*)\)", signature)
    assert params, signature
    out: list[str] = []
    geometries = iter([P1, P2])
    points = iter([C1, C2])
    for param in (p.strip() for p in params.group(1).split(",") if p.strip()):
        words = param.split()
        if len(words) == 1:  # a literal such as the 1 of GLength(c Curve, 1)
            out.append(words[0])
        elif words[0] in _BY_NAME:
            out.append(_BY_NAME[words[0]])
        elif words[-1] in ("Curve", "LineString"):
            out.append(R1)
        elif words[-1] == "Point":
            out.append(next(points))
        else:  # Geometry, GeometryCollection
            out.append(next(geometries))
    return out


def call(conn: Any, name: str, args: Sequence[str], *, aggregate: bool = False) -> Any:
    if aggregate:
        return conn.execute(f"SELECT quote({name}(Shape)) FROM provinces").fetchone()[0]
    return conn.execute(f"SELECT quote({name}({', '.join(args)}))").fetchone()[0]


def is_aggregate(function: Function) -> bool:
    return "as an aggregate" in function.signature and "or" not in function.signature


@pytest.mark.parametrize("function", SpatialKnowledge.load().functions, ids=lambda f: f.name)
def test_signature_is_callable(conn: Any, function: Function) -> None:
    """The call the prompt recommends compiles and runs on the example data."""
    call(conn, function.name, sample_arguments(function.signature), aggregate=is_aggregate(function))


def test_native_aliases_are_exactly_the_aliases_spatialite_defines(conn: Any, kb: SpatialKnowledge) -> None:
    documented = {a for f in kb.functions for a in f.native_aliases}
    existing = {a for f in kb.functions for a in f.aliases if probe(conn, a) == "exists"}
    assert documented == existing
    assert {"ST_Area", "ST_Length", "ST_Distance", "Length"} <= existing
    assert not {"STArea", "ST_DWithin", "STLength"} & existing


@pytest.mark.parametrize(
    ("function", "alias"),
    [(f, a) for f in SpatialKnowledge.load().functions for a in f.native_aliases],
    ids=lambda v: v.name if isinstance(v, Function) else v,
)
def test_native_alias_behaves_like_the_function_or_is_documented(conn: Any, kb: SpatialKnowledge,
                                                                  function: Function, alias: str) -> None:
    """An alias SpatiaLite also defines either gives the same result as the KB call, or has a note saying how not."""
    args = sample_arguments(function.signature)
    agg = is_aggregate(function)
    expected = call(conn, function.name, args, aggregate=agg)
    try:
        got = call(conn, alias, args, aggregate=agg)
    except Exception:  # noqa: BLE001 - e.g. ST_Point has no SRID argument
        got = "<error>"
    if alias in kb.alias_notes:
        assert got != expected, f"{alias} is documented as different but behaves like {function.name}"
    else:
        assert got == expected


def test_alias_notes_name_native_aliases(kb: SpatialKnowledge) -> None:
    native = {a for f in kb.functions for a in f.native_aliases}
    assert set(kb.alias_notes) <= native
    assert set(kb.alias_notes) == {"Length", "GeodesicLength", "ST_Point"}


# ---------------------------------------------------------------------------- lookup


def test_function_lookup(kb: SpatialKnowledge) -> None:
    assert kb.function("glength").name == "GLength"  # type: ignore[union-attr]
    assert kb.function("ST_AREA").name == "Area"  # type: ignore[union-attr]
    assert kb.function("STDistance").name == "Distance"  # type: ignore[union-attr]
    assert kb.function("NoSuchThing") is None


@pytest.mark.parametrize(
    ("wrong", "right"),
    [("STArea", "Area"), ("ST_DWithin", "PtDistWithin"), ("st_length", "GLength"), ("ST_StartPoint", "StartPoint"),
     ("STX", "X"), ("ST_LineInterpolatePoint", "Line_Interpolate_Point"), ("GLenght", "GLength"),
     ("Intersect", "Intersects"), ("st_touches", "Touches")],
)
def test_suggest(kb: SpatialKnowledge, wrong: str, right: str) -> None:
    f = kb.suggest(wrong)
    assert f is not None and f.name == right


def test_suggest_nothing_for_unrelated_names(kb: SpatialKnowledge) -> None:
    assert kb.suggest("foo") is None
    assert kb.suggest("") is None


# ---------------------------------------------------------------------------- selection


QUESTIONS = [
    ("What is the total length of the Silver River in metres?", ["GLength"]),
    ("Which cities lie in Northmark?", ["Within", "Contains"]),
    ("Which provinces border Eastvale?", ["Touches"]),
    ("How far apart are Harbourg and Oster?", ["Distance"]),
    ("Which rivers cross Southreach?", ["Crosses", "Intersects"]),
    ("What is the area of each province in square kilometres?", ["Area"]),
]


@pytest.mark.parametrize(("question", "expected"), QUESTIONS)
def test_select_keywords(kb: SpatialKnowledge, geo_schema: DatabaseSchema, question: str, expected: list[str]) -> None:
    chosen = [f.name for f in kb.select(question, geo_schema, k=6, encoder=None)]
    assert len(chosen) == 6
    assert chosen[0] in expected
    assert set(expected) <= set(chosen)


@pytest.fixture(scope="module")
def minilm() -> Any:
    from kgsql.text.encoder import EncoderUnavailableError, get_encoder

    try:
        return get_encoder("minilm")
    except EncoderUnavailableError as exc:  # pragma: no cover - install without the embed extra
        pytest.skip(str(exc))


@pytest.mark.parametrize(("question", "expected"), QUESTIONS)
def test_select_with_minilm(kb: SpatialKnowledge, geo_schema: DatabaseSchema, minilm: Any,
                            question: str, expected: list[str]) -> None:
    chosen = [f.name for f in kb.select(question, geo_schema, k=6, encoder=minilm)]
    assert chosen[0] in expected


class CountingEncoder:
    """A tiny deterministic encoder that records what it was asked to embed."""

    name = "counting-test:v1"
    dim = 8

    def __init__(self) -> None:
        self.calls: list[int] = []

    def encode_pooled(self, texts: Sequence[str], *, is_query: bool = False) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] = 1.0
        return out


def test_function_embeddings_are_cached(geo_schema: DatabaseSchema) -> None:
    kb = SpatialKnowledge.from_dict({"preamble": PREAMBLE, "functions": [
        {"name": "Area", "signature": "Area(g Geometry, 1)", "description": "The function Area.", "keywords": ["area"]},
        {"name": "GLength", "signature": "GLength(c Curve, 1)", "description": "The function GLength.",
         "keywords": ["length"]},
    ]})
    enc = CountingEncoder()
    kb.select("area of Eastvale", geo_schema, k=2, encoder=enc)
    kb.select("length of the Silver River", geo_schema, k=2, encoder=enc)
    assert enc.calls == [2, 1, 1]  # the function documents once, then one question per call


def test_broken_encoder_falls_back_to_keywords(kb: SpatialKnowledge, geo_schema: DatabaseSchema) -> None:
    class Broken:
        name = "broken"

        def encode_pooled(self, texts: Sequence[str], *, is_query: bool = False) -> np.ndarray:
            raise RuntimeError("no model")

    chosen = kb.select("Which provinces border Eastvale?", geo_schema, encoder=Broken())
    assert chosen[0].name == "Touches"
    assert kb.select("Which provinces border Eastvale?", geo_schema, encoder="no-such-encoder")[0].name == "Touches"


def _schema(*types: str) -> DatabaseSchema:
    cols = [Column("id", "INTEGER", is_primary_key=True)]
    cols += [Column(f"g{i}", t, spatial=SpatialInfo(t, 4326)) for i, t in enumerate(types)]
    return DatabaseSchema("s", [Table("t", cols)], is_spatial=bool(types))


def test_no_spatial_column_no_functions(kb: SpatialKnowledge) -> None:
    assert kb.select("What is the area of each province?", _schema(), encoder=None) == []
    assert kb.select("What is the area?", [Column("name", "TEXT")], encoder=None) == []


@pytest.mark.parametrize(
    ("geometry", "boosted"),
    [("POINT", {"Distance", "PtDistWithin", "Within", "X", "Y"}),
     ("MULTILINESTRING", {"GLength", "Intersects", "Crosses"}),
     ("MULTIPOLYGON", {"Area", "Within", "Contains", "Touches", "Centroid", "Intersection"})],
)
def test_geometry_types_boost(kb: SpatialKnowledge, geometry: str, boosted: set[str]) -> None:
    """With no telling words in the question, the schema's geometry types decide."""
    chosen = {f.name for f in kb.select("Tell me about them.", _schema(geometry), k=len(boosted), encoder=None)}
    assert chosen == boosted


def test_geometry_types_accepts_many_shapes(geo_schema: DatabaseSchema) -> None:
    assert geometry_types(geo_schema) == {"POINT", "LINESTRING", "POLYGON"}
    assert geometry_types(geo_schema.table("rivers")) == {"LINESTRING"}
    assert geometry_types([geo_schema.table("cities").column("Location")]) == {"POINT"}
    assert geometry_types(["multipolygon", "TEXT"]) == {"MULTIPOLYGON"}
    assert geometry_types([Column("g", "POINT")]) == {"POINT"}  # declared type without metadata


def test_render(kb: SpatialKnowledge) -> None:
    functions = [kb.function("GLength"), kb.function("Area")]
    text = kb.render(functions)  # type: ignore[arg-type]
    lines = text.split("\n")
    assert lines[0] == PREAMBLE
    assert lines[1] == "The function GLength(c Curve, 1) returns the length of curve c, measured in meters."
    assert lines[2].startswith("The function Area(g Geometry, 1) returns")
    bare = kb.render(functions, preamble=False)  # type: ignore[arg-type]
    assert bare.split("\n")[0].startswith("The function GLength")
    assert kb.render([]) == PREAMBLE
