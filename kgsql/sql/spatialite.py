"""SDBMS knowledge (SSpa §3.2): which spatial functions (SpatiaLite, PostGIS) to tell the model about.

Spatial function names differ between systems (SQL Server's ``STArea`` is
SpatiaLite's ``Area``) and parameterisations change results (``GLength(c)``
is in degrees, ``GLength(c, 1)`` in metres), so the prompt names the SDBMS and
explains a few functions. SSpa used a fixed list; here the functions are
chosen per question (their stated future work): similarity between the
question and each function's documentation (MiniLM pooled embeddings when the
retrieval encoder is importable, keyword overlap always), boosted by the
geometry types of the selected schema. Each dialect's knowledge base is a
YAML file shipped as package data (``knowledge/spatialite_functions.yaml``,
``knowledge/postgis_functions.yaml``); a file may carry its own
``type_boosts`` (geometry type -> function names), else :data:`TYPE_BOOSTS`
(SpatiaLite's names) applies.
"""
from __future__ import annotations

import difflib
import re
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Any, Iterable, Mapping, Sequence

import yaml

from kgsql.errors import UnknownNameError
from kgsql.schema.model import Column, DatabaseSchema, Table

__all__ = ["Function", "SpatialKnowledge", "TYPE_BOOSTS", "geometry_types"]

#: Dialect name -> KB file under kgsql/sql/knowledge/.
_KB_FILES: dict[str, str] = {"spatialite": "spatialite_functions.yaml", "postgis": "postgis_functions.yaml"}
#: Other names of a dialect -> the name in _KB_FILES.
_DIALECT_SYNONYMS: dict[str, str] = {"postgres": "postgis", "postgresql": "postgis"}

#: Functions a geometry type makes likely (SSpa's commonly used set, per type), for a KB
#: whose YAML has no ``type_boosts`` (SpatiaLite's).
TYPE_BOOSTS: dict[str, tuple[str, ...]] = {
    "POINT": ("Distance", "PtDistWithin", "Within", "X", "Y"),
    "MULTIPOINT": ("Distance", "PtDistWithin", "Within", "X", "Y"),
    "LINESTRING": ("GLength", "Intersects", "Crosses"),
    "MULTILINESTRING": ("GLength", "Intersects", "Crosses"),
    "POLYGON": ("Area", "Within", "Contains", "Touches", "Centroid", "Intersection"),
    "MULTIPOLYGON": ("Area", "Within", "Contains", "Touches", "Centroid", "Intersection"),
}
_GEOMETRY_NAMES = frozenset(TYPE_BOOSTS) | {"GEOMETRY", "GEOMETRYCOLLECTION"}

# Scoring weights: a matched keyword phrase outweighs embedding similarity,
# which mostly breaks ties and catches paraphrases; the type boost lifts the
# functions the schema can actually use.
_W_KEYWORD = 1.0
_W_EMBED = 1.5
_W_TYPE = 0.35
#: Keywords so common in questions that they barely indicate anything.
_WEAK_KEYWORDS = frozenset({"in", "has", "end", "start", "point", "size", "long", "close", "type"})


@dataclass(frozen=True)
class Function:
    """One spatial function as the prompt describes it."""

    name: str
    signature: str
    returns: str
    description: str
    aliases: tuple[str, ...] = ()
    native_aliases: tuple[str, ...] = ()  # aliases the dialect itself also defines
    keywords: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """The prompt sentence, e.g. "The function GLength(c Curve, 1) returns ..."."""
        return self.description

    @property
    def document(self) -> str:
        """Text embedded for similarity with a question."""
        return f"{self.name}: {self.description} Returns {self.returns}. Used for: {', '.join(self.keywords)}."


def _stem(word: str) -> str:
    """Crude plural/3rd-person folding so "borders"/"border", "lies"/"lie" meet."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _tokens(text: str) -> list[str]:
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def _squash(name: str) -> str:
    """Name key that ignores case, underscores and an ST/ST_ prefix: ST_Area == STArea == area."""
    bare = re.sub(r"^(?:ST_|st_|St_|ST(?=[A-Z]))", "", name.strip())
    return re.sub(r"[^a-z0-9]", "", bare.lower())


def geometry_types(schema_or_columns: Any) -> set[str]:
    """Upper-case geometry types of the spatial columns in a schema, tables, columns or type names."""
    found: set[str] = set()

    def visit(obj: Any) -> None:
        if isinstance(obj, DatabaseSchema):
            for t in obj.tables:
                visit(t)
        elif isinstance(obj, Table):
            for c in obj.columns:
                visit(c)
        elif isinstance(obj, Column):
            if obj.spatial is not None:
                found.add(obj.spatial.geometry_type.upper())
            elif obj.type.upper() in _GEOMETRY_NAMES:
                found.add(obj.type.upper())
        elif isinstance(obj, str):
            if obj.upper() in _GEOMETRY_NAMES:
                found.add(obj.upper())
        elif isinstance(obj, Iterable):
            for item in obj:
                visit(item)

    visit(schema_or_columns)
    return found


class SpatialKnowledge:
    """The function knowledge base of one spatial dialect; load with :meth:`load`."""

    _cache: dict[str, "SpatialKnowledge"] = {}
    _cache_lock = threading.Lock()

    def __init__(self, dialect: str, preamble: str, functions: list[Function],
                 alias_notes: Mapping[str, str] | None = None,
                 type_boosts: Mapping[str, Sequence[str]] | None = None) -> None:
        self.dialect = dialect
        self.preamble = preamble
        self.functions = list(functions)
        self.alias_notes = dict(alias_notes or {})
        #: geometry type (upper case) -> names of the functions a column of that type makes likely
        self.type_boosts: dict[str, tuple[str, ...]] = (
            dict(TYPE_BOOSTS) if type_boosts is None
            else {str(t).upper(): tuple(str(n) for n in names or ()) for t, names in type_boosts.items()})
        self._by_name: dict[str, Function] = {}
        for f in self.functions:  # names win over aliases; first definition wins
            self._by_name.setdefault(f.name.lower(), f)
        for f in self.functions:
            for a in f.aliases:
                self._by_name.setdefault(a.lower(), f)
        self._by_squash: dict[str, Function] = {}
        for f in self.functions:
            for n in (f.name, *f.aliases):
                self._by_squash.setdefault(_squash(n), f)
        self._embeddings: dict[str, Any] = {}  # encoder name -> [n_functions, dim]
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ loading

    @classmethod
    def load(cls, dialect: str = "spatialite") -> "SpatialKnowledge":
        """The KB of ``dialect`` (read once per process from package data); "postgres" means "postgis"."""
        key = dialect.strip().lower()
        key = _DIALECT_SYNONYMS.get(key, key)
        with cls._cache_lock:
            if key not in cls._cache:
                if key not in _KB_FILES:
                    raise UnknownNameError(
                        f"no spatial function knowledge for dialect '{dialect}'; known: {', '.join(sorted(_KB_FILES))}"
                    )
                kb_file = resources.files("kgsql.sql").joinpath("knowledge").joinpath(_KB_FILES[key])
                text = kb_file.read_text("utf-8")
                cls._cache[key] = cls.from_dict(yaml.safe_load(text))
            return cls._cache[key]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SpatialKnowledge":
        """Build from the YAML structure (``dialect``, ``preamble``, ``functions``, ``alias_notes``,
        optional ``type_boosts``)."""
        functions = [
            Function(
                name=str(f["name"]),
                signature=str(f["signature"]),
                returns=str(f.get("returns", "")),
                description=str(f["description"]),
                aliases=tuple(str(a) for a in f.get("aliases") or ()),
                native_aliases=tuple(str(a) for a in f.get("native_aliases") or ()),
                keywords=tuple(str(k) for k in f.get("keywords") or ()),
            )
            for f in data.get("functions") or ()
        ]
        return cls(str(data.get("dialect", "spatialite")), str(data.get("preamble", "")).strip(),
                   functions, data.get("alias_notes") or {}, data.get("type_boosts"))

    # ------------------------------------------------------------------ lookup

    def function(self, name: str) -> Function | None:
        """The function called ``name`` or having it as an alias (case-insensitive)."""
        return self._by_name.get(name.strip().lower())

    def suggest(self, name: str) -> Function | None:
        """The KB function a wrong name most likely meant (alias, ST_ spelling, or a near name)."""
        exact = self.function(name)
        if exact is not None:
            return exact
        key = _squash(name)
        if not key:
            return None
        if key in self._by_squash:
            return self._by_squash[key]
        close = difflib.get_close_matches(key, list(self._by_squash), n=1, cutoff=0.8)
        return self._by_squash[close[0]] if close else None

    # ------------------------------------------------------------------ selection

    def select(self, question: str, schema_or_columns: Any, k: int = 6, *,
               encoder: Any = "minilm") -> list[Function]:
        """The ``k`` functions most relevant to ``question`` over the given schema.

        ``schema_or_columns``: a DatabaseSchema, Table(s), Column(s) or geometry
        type names. No spatial column means no functions. ``encoder`` is a
        retrieval encoder name or instance; None (or an encoder that cannot
        load) leaves keyword overlap and the type boost.
        """
        types = geometry_types(schema_or_columns)
        if not types or k <= 0:
            return []
        scores = [_W_KEYWORD * self._keyword_score(question, f) for f in self.functions]
        sims = self._similarities(question, encoder)
        if sims is not None:
            scores = [s + _W_EMBED * max(0.0, float(x)) for s, x in zip(scores, sims)]
        boosted = self._likely_names(types)
        scores = [s + (_W_TYPE if f.name in boosted else 0.0) for s, f in zip(scores, self.functions)]
        order = sorted(range(len(self.functions)), key=lambda i: (-scores[i], i))
        return [self.functions[i] for i in order[:k]]

    def likely(self, schema_or_columns: Any) -> list[Function]:
        """Every function the schema's geometry types make likely (``type_boosts``), in the KB's order: one
        list for all the questions of a database, which a prefix-caching server reads once."""
        names = self._likely_names(geometry_types(schema_or_columns))
        return [f for f in self.functions if f.name in names]

    def _likely_names(self, types: set[str]) -> set[str]:
        names = {n for t in types for n in self.type_boosts.get(t, ())}
        if "GEOMETRY" in types or "GEOMETRYCOLLECTION" in types:  # unknown shape: all are plausible
            names |= {n for boosted in self.type_boosts.values() for n in boosted}
        return names

    def _keyword_score(self, question: str, function: Function) -> float:
        q = " " + " ".join(_tokens(question)) + " "
        score = 0.0
        for phrase in (*function.keywords, function.name):
            toks = _tokens(phrase)
            if toks and f" {' '.join(toks)} " in q:
                weight = 1.0 + 0.5 * (len(toks) - 1)
                score += weight * (0.25 if phrase.lower() in _WEAK_KEYWORDS else 1.0)
        return score

    def _similarities(self, question: str, encoder: Any) -> Any:
        """Cosine similarity of the question to each function document, or None without an encoder."""
        if encoder is None:
            return None
        try:
            if isinstance(encoder, str):
                from kgsql.text.encoder import get_encoder

                encoder = get_encoder(encoder)
            with self._lock:
                docs = self._embeddings.get(encoder.name)
                if docs is None:
                    docs = encoder.encode_pooled([f.document for f in self.functions])
                    self._embeddings[encoder.name] = docs
            q = encoder.encode_pooled([question], is_query=True)[0]
        except Exception:  # noqa: BLE001 - no torch/model/retrieve package: keyword scoring only
            return None
        return docs @ q

    # ------------------------------------------------------------------ rendering

    def render(self, functions: Iterable[Function], *, preamble: bool = True) -> str:
        """The SDBMS-knowledge prompt text: preamble, then one sentence per function."""
        lines = [self.preamble] if preamble and self.preamble else []
        lines += [f.line for f in functions]
        return "\n".join(lines)

    def call_hint(self, function: Function) -> str:
        """"Area(g Geometry, 1) returns area in ..." for tips about a wrong call."""
        returns = function.returns.rstrip(".")
        return f"{function.signature} returns {returns}." if returns else f"{function.signature}."


def spatial_notes(question: str, schema: Any, *, k: int = 6, fixed: Sequence[str] = (),
                  dialect: str = "spatialite", per_database: bool = False) -> tuple[str, str]:
    """(SDBMS preamble, explanations of the functions this question needs) for a spatial schema.

    ``fixed`` names a constant function list (SSpa's) instead of the per-question choice
    (a name another dialect uses is mapped through the KB's aliases); ``per_database``: every
    function the schema's geometry makes likely, whatever the question; ``dialect`` picks
    the KB ("spatialite", "postgis"); ("", "") for a database without geometry."""
    if not getattr(schema, "is_spatial", False):
        return "", ""
    kb = SpatialKnowledge.load(dialect)
    if fixed:
        functions = [f for f in (kb.function(n) for n in fixed) if f is not None]
    elif per_database:
        functions = kb.likely(schema)
    else:
        functions = kb.select(question, schema, k=k)
    return kb.preamble, kb.render(functions, preamble=False) if functions else ""
