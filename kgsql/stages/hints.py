"""Graph-derived hints: what the graph knows that the question's words do not say.

No model call. Four kinds, each a line of the prompt's "Hints from the
database" block:

* value hints: a cell value the question names, and the column that holds it
  (``'Africa' is a value of country.Continent``). A 1.5B model that sees the
  value's column stops filtering a look-alike column (country.Region);
* join hints: the key conditions that connect the tables retrieval found
  relevant (foreign keys of their Steiner tree in the FK graph), so the model
  joins on keys instead of on look-alike names; said as a condition ("if the
  query needs several of these tables"), and never for a pair of tables
  linked by two keys, whose choice only the question can make. Not on a
  spatial database (``spatial_join_hints``): there tables relate by location
  more than by key, and a key join of two tables retrieval half-chose
  (``subwaystations.adcode = districts.administrative_division_code`` for
  "government institutions in each district") was copied into answers about
  other tables (docs/eval.md, session 20);
* meaning hints: a coded column whose documented meaning the question uses
  (``client.gender: 'F' = female, 'M' = male`` for "female clients"), from the
  structured value meanings (:mod:`kgsql.schema.meanings`);
* key hints (``key_hints``, being measured): a key the question names by its
  concept ("eye colour" names ``superhero.eye_colour_id``), with the table it
  leads to and that table's label (``eye colour: join colour on
  superhero.eye_colour_id = colour.id and read colour.colour``) -- exactly the
  choice the join hints leave out when one lookup table has several keys;
* spatial hints (``spatial_hints``): how the relevant geometry
  tables that share no key relate by location (``airports inside cities:
  Within(airports.Location, cities.Shape) = 1``), from their geometry types
  (:mod:`kgsql.generate.spatial_relations`); on by default since session 20,
  where on a spatial database they replace the key join line (docs/eval.md).

This replaces LLM-written evidence as the default: with small models that
evidence misled the SQL (docs/eval.md); it stays an option for strong endpoints.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from kgsql.errors import UnknownNameError
from kgsql.generate.render import column_ref, table_ref
from kgsql.generate.spatial_relations import relations_between
from kgsql.schema.joins import complete_joins
from kgsql.schema.model import DatabaseSchema
from kgsql.retrieve.values import ValueMatch
from kgsql.stages.state import QuestionState

_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def named_values(values: list[ValueMatch], text: str, *, limit: int = 4) -> list[ValueMatch]:
    """Value hits whose whole value occurs in ``text`` (word-aligned, case-insensitive), best first.

    Numbers are left out: "older than 30" names a threshold, not the value 30 of a column. A Chinese
    value the question writes in pinyin (a whole ``romanised`` match: "Dongfeng Road" for ``东风路``) counts
    as named, the best of such matches in its column only (``东风路`` over ``东风大道`` for "Dongfeng Road")."""
    words = f" {_norm(text)} "
    best: dict[tuple[str, str], float] = {}
    for v in values:
        if v.kind == "romanised":
            best[(v.table, v.column)] = max(best.get((v.table, v.column), 0.0), v.score)
    chosen: list[ValueMatch] = []
    for v in sorted(values, key=lambda v: -v.score):
        norm = _norm(v.value)
        named = f" {norm} " in words or (v.kind == "romanised" and v.score >= max(0.95, best[(v.table, v.column)]))
        if len(norm) < 2 or _NUMBER.match(v.value.strip()) or not named:
            continue
        if any((c.table, c.column, c.value) == (v.table, v.column, v.value) for c in chosen):
            continue
        chosen.append(v)
        if len(chosen) >= limit:
            break
    return chosen


def value_lines(values: list[ValueMatch]) -> list[str]:
    """One line per value: ``'Africa' is a value of country.Continent`` (several columns: joined with 'or')."""
    by_value: dict[str, list[str]] = {}
    for v in values:
        by_value.setdefault(v.value, []).append(f"{table_ref(v.table)}.{column_ref(v.column)}")
    lines = []
    for value, columns in by_value.items():
        quoted = "'" + value.replace("'", "''") + "'"
        lines.append(f"{quoted} is a value of {' or '.join(dict.fromkeys(columns))}.")
    return lines


_SPELLING = (("our", "or"), ("ise", "ize"))
_KEY_WORDS = {"id", "code", "key", "fk", "no"}


def _stems(text: str) -> list[str]:
    """Lower-case words, plural -s dropped, British spellings folded to American (colours -> color)."""
    words = re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower().replace("_", " "))
    out = []
    for word in words:
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]  # eye colours -> eye colour
        for british, american in _SPELLING:
            if word.endswith(british):
                word = word[: -len(british)] + american
        out.append(word)
    return out


def key_lines(schema: DatabaseSchema, question: str, *, limit: int = 3) -> list[str]:
    """Keys the question names by their concept, each with the join and the label it leads to.

    A key column named as one (``eye_colour_id``, not ``Country``), without its
    key word ("eye colour"), must occur in the question as consecutive words, and the referenced table
    must have one label column (:func:`kgsql.correct.lookup.label_column`)."""
    from kgsql.correct.lookup import label_column

    asked = f" {' '.join(_stems(question))} "
    lines: list[str] = []
    for fk in schema.foreign_keys:
        stems = _stems(fk.column)
        words = [w for w in stems if w not in _KEY_WORDS]
        if not words or len(words) == len(stems) or f" {' '.join(words)} " not in asked:
            continue  # only a key named as one (eye_colour_id), and only when the question names its concept
        try:
            label = label_column(schema, schema.table(fk.ref_table))
        except UnknownNameError:
            continue
        if label is None or " ".join(words) == " ".join(_stems(fk.ref_table)):
            continue  # gender_id -> gender: the join hints and the table's name already say it
        lines.append(f"{' '.join(w for w in fk.column.replace('_', ' ').split() if w.lower() not in _KEY_WORDS)}: "
                     f"join {table_ref(fk.ref_table)} on {table_ref(fk.table)}.{column_ref(fk.column)} = "
                     f"{table_ref(fk.ref_table)}.{column_ref(fk.ref_column)} and read "
                     f"{table_ref(fk.ref_table)}.{column_ref(label.name)}.")
        if len(lines) >= limit:
            break
    return lines


#: Words of a code's meaning that say nothing about which code a question wants.
_GENERIC = {"is", "not", "has", "have", "had", "doesn", "don", "t", "the", "a", "an", "of", "can", "be", "been",
            "found", "it", "means", "that", "this", "with", "and", "or", "to", "in", "no", "yes", "one", "which"}


def meaning_lines(schema: DatabaseSchema, question: str, *, limit: int = 2) -> list[str]:
    """A coded column whose documented meanings the question uses (``female`` -> ``'F' = female``).

    Only short codes (a number, a sign, up to four letters): a readable stored value is found by
    the value hints. The whole code table of the column is given, so the model picks the code."""
    asked = set(_stems(question))
    lines: list[str] = []
    for table in schema.tables:
        for column in table.columns:
            codes = column.value_meaning.codes
            if not codes or not all(len(code) <= 4 for code, _ in codes):
                continue
            if not any((words := set(_stems(meaning)) - _GENERIC) and words <= asked for _, meaning in codes):
                continue
            lines.append(f"{table_ref(table.name)}.{column_ref(column.name)}: {column.value_meaning.summary()}.")
            if len(lines) >= limit:
                return lines
    return lines


def join_lines(schema: DatabaseSchema, tables: list[str], *, max_tables: int = 4) -> list[str]:
    """Key conditions joining ``tables`` (and the tables between them), from the FK graph.

    A pair of tables linked by more than one key (``Friend.student_id`` and
    ``Friend.friend_id``, both to ``Highschooler.ID``) gets no hint: which key is
    meant depends on the question, and naming both read as one join on both
    (measured, issue 12: the 1.5B then took the wrong one). The line is
    conditional because retrieval's tables are candidates, not a plan: an
    unconditional "join these" made the model join tables nobody asked for."""
    known = {t.name for t in schema.tables}
    wanted = [t for t in dict.fromkeys(tables) if t in known]
    if not 2 <= len(wanted) <= max_tables:
        return []
    pairs = Counter(frozenset((fk.table, fk.ref_table)) for fk in schema.foreign_keys)
    lines = []
    for fk in complete_joins(schema, wanted).foreign_keys:
        if pairs[frozenset((fk.table, fk.ref_table))] > 1:
            continue
        line = (f"{table_ref(fk.table)}.{column_ref(fk.column)} = "
                f"{table_ref(fk.ref_table)}.{column_ref(fk.ref_column)}")
        if line not in lines:
            lines.append(line)
    return [f"If the query needs several of these tables, join them on {' and '.join(lines)}."] if lines else []


#: Words of a question that asks how far apart things are (only then are distance relations worth a line).
_DISTANCE_WORDS = re.compile(r"\b(distance|distances|far|near|nearest|nearby|closest|close to|within|around|"
                             r"km|kilometers?|kilometres?|meters?|metres?|miles?|radius)\b", re.I)


def spatial_lines(schema: DatabaseSchema, tables: list[str], question: str = "", values: list[ValueMatch] = (),
                  *, max_tables: int = 4) -> list[str]:
    """How the relevant geometry tables that share no key relate by location, in one conditional line.

    The tables of the values the question names come first (``Beijing`` names ``cities``), then the
    selection's; distance relations only when the question asks how far ("within 5 km", "nearest")."""
    named = [v.table for v in named_values(list(values), question)] if question else []
    chosen = list(dict.fromkeys([*named, *tables]))[:max_tables]
    relations = relations_between(schema, chosen, distances=bool(_DISTANCE_WORDS.search(question)) or not question)
    if not relations:
        return []
    return ["If the query relates these tables by location: " + "; ".join(r.sentence() for r in relations) + "."]


@dataclass
class GraphHints:
    """Writes ``state.hints`` from the value hits and focus tables of the selection stage."""

    values: bool = True
    joins: bool = True
    spatial_joins: bool = False  # the join hints on a database with geometry too
    keys: bool = False
    meanings: bool = True
    spatial: bool = False
    max_values: int = 4
    name: str = "hints"

    def run(self, state: QuestionState) -> None:
        hints: list[str] = []
        if self.values:
            text = " ".join(p for p in (state.question, state.user_evidence) if p)
            hints += value_lines(named_values(state.values, text, limit=self.max_values))
        if self.joins and (self.spatial_joins or not state.full.is_spatial):
            hints += join_lines(state.full, state.focus_tables)
        if self.keys:
            hints += key_lines(state.full, state.question)
        if self.meanings:
            hints += meaning_lines(state.full, state.question)
        if self.spatial:
            hints += spatial_lines(state.full, state.focus_tables, state.question, state.values)
        state.hints = hints
