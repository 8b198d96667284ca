"""Honest refusals: a question that needs a column (or table) the database lacks gets "cannot answer", not SQL.

The signal rides on what the model already wrote, so an answerable question pays nothing for it (no
extra call): asked for something the schema lacks, a small model writes the name it wishes existed
(``weight``, ``gender``, ``LifeExpectancy``), the query fails, and the correction loop then settles on
some other column that runs, an answer that looks right and is not. A refusal is made when a query of
the answer names a column or table that does not exist, the question asks for it in its own words, no
name, description or stored value of the schema holds those words, and the retriever matches the word
nowhere well (else the schema holds it under another name: "cost" for ``price``): the notion is missing,
not misspelt or renamed. The closest columns are named so the user can ask again.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from kgsql.correct.opinions import doubted
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.dialects import dialect_of, sqlglot_name
from kgsql.sql.names import SchemaNames, analyse, parse_sql
from kgsql.text.words import ABBREVIATIONS, STOPWORDS, split_identifier, stem, words

__all__ = ["QUESTION_FORM_WORDS", "UNIT_WORDS", "Refusal", "apply_refusal", "refusal_for", "schema_words",
           "unsupported_words"]

#: Endings by which a question's word and a name's word still mean one thing ("weigh"/"weight",
#: "named"/"name", "older"/"old"); "count"/"country" differ by more.
_ENDINGS = ("s", "es", "d", "ed", "ing", "t", "er", "ers", "ly")
#: Name words too general to stand for a notion of their own.
_GENERIC = frozenset({"id", "ids", "number", "count", "total", "type", "value", "code",
                      "detail", "details", "info", "other", "data", "date", "year"})


#: Words that shape a question (how to count, sort, compare, what to show) rather than name a notion
#: the database must hold: never "missing", however weakly the schema matches them.
QUESTION_FORM_WORDS = frozenset("""
    number numbers order orders ordered ordering sort sorts sorted sorting distinct count counts counting
    average averages different differ unique ascending descending alphabetical alphabetically reverse
    reversed lexicographical one two three four five six seven eight nine ten first second third last
    total totals sum combined maximum minimum max min mean median highest lowest top bottom greatest
    largest smallest biggest least fewest most common either exactly across without except often among
    corresponding correspond correspondingly respective respectively higher lower larger smaller bigger
    greater fewer longest shortest oldest newest earliest latest recent recently
    within near nearby nearest closest around inside outside beyond away
    information info data details detail record records result results whose list lists show shows
    give find return returns name names id ids value values amount amounts times time percent
    percentage ratio proportion along together ever never always same like including include includes
    contain contains containing exist exists existing well full made make makes get gets got put
    """.split())
#: Units of length and area: how a question measures ("within 10 kilometers"), which the query converts
#: (``Distance(a, b, 1) <= 10 * 1000``); no database stores a notion named by them. Session 35: 5 of the
#: spatial benchmark's 10 kilometre questions were refused for "kilometers" or "within" (the answer had failed
#: or come back empty); with these words and the relation words above, 2 (for the "East" of a station's
#: English name, stored in Chinese).
UNIT_WORDS = frozenset("""
    kilometer kilometers kilometre kilometres km kms meter meters metre metres mile miles feet foot ft
    yard yards centimeter centimeters centimetre centimetres cm millimeter millimeters millimetre
    millimetres mm hectare hectares acre acres square sq
    """.split())
#: A question word the whole schema matches below this (its best late-interaction similarity over
#: every table and column document) names nothing in it. Set on questions of Spider's training split
#: (docs/eval.md, issue 34), never on the dev questions the refusal set is built from.
SUPPORT_THRESHOLD = 0.3
#: A word a query reached for is not refused when the retriever matches it this well somewhere: the schema
#: holds the notion under another name ("cost" -> ``price`` 0.56, "gender" -> ``Sex`` 0.67, "phone" ->
#: ``cell_mobile_number`` 0.51, where hidden columns' words score 0.15-0.48; docs/eval.md, issue 34).
SYNONYM_SUPPORT = 0.5


@dataclass(frozen=True)
class Refusal:
    """Why a question cannot be answered: the ``wanted`` name the model reached for, the question's
    ``missing`` words (as the question says them) no schema element holds, and the ``closest`` columns."""

    wanted: str
    missing: tuple[str, ...]
    closest: tuple[str, ...] = ()
    signal: str = "query"  # "query": a query named what is missing; "words": the retrieval's word support

    @property
    def text(self) -> str:
        near = f" (closest: {', '.join(self.closest)})" if self.closest else ""
        return f"cannot answer: the database has nothing for {' '.join(self.missing)!r}{near}"

    def to_dict(self) -> dict[str, object]:
        return {"wanted": self.wanted, "missing": list(self.missing), "closest": list(self.closest),
                "signal": self.signal, "text": self.text}


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 3 and long_.startswith(short) and long_[len(short):] in _ENDINGS


def _name_words(name: str) -> list[str]:
    out = []
    for w in split_identifier(name):
        out.append(stem(w))
        out += [stem(x) for x in ABBREVIATIONS.get(w, "").split()]
    return out


def schema_words(schema: DatabaseSchema) -> set[str]:
    """Every word the schema knows a notion by: names (split, abbreviations expanded), readable names,
    descriptions, value meanings and stored value examples, stemmed."""
    found: set[str] = set()
    for table in schema.tables:
        found.update(_name_words(table.name))
        found.update(stem(w) for w in words(table.description))
        for col in table.columns:
            found.update(_name_words(col.name))
            texts = [col.readable_name, col.description, col.value_explanation, *col.value_examples,
                     *col.stats.sample]
            found.update(stem(w) for text in texts for w in words(str(text)))
    return found


def _asked(name: str, question_words: Sequence[str]) -> list[str]:
    """The words of ``name`` the question asks for (its own words, any ending; ``lifeexpectancy`` for
    "life expectancy"), general words left out."""
    joined = {stem(a + b) for a, b in zip(question_words, question_words[1:])}
    out = []
    for w in split_identifier(name):
        s = stem(w)
        if s in _GENERIC or w in STOPWORDS or w in UNIT_WORDS or len(s) < 3 or w.isdigit():
            continue
        if any(_same(s, q) for q in question_words) or s in joined:
            out.append(s)
    return list(dict.fromkeys(out))


def _closest(name: str, tables: Sequence[str], schema: DatabaseSchema, n: int = 3) -> tuple[str, ...]:
    """The columns most like ``name`` (by their words), from ``tables`` when the query sought it there;
    keys are left out: what a user may ask for instead."""
    keys = {(fk.table.lower(), fk.column.lower()) for fk in schema.foreign_keys}
    wanted = {t.lower() for t in tables}
    pool = {f"{t.name}.{c.name}": " ".join(split_identifier(c.name)) for t in schema.tables
            if not wanted or t.name.lower() in wanted
            for c in t.columns if not c.is_primary_key and (t.name.lower(), c.name.lower()) not in keys}
    target = " ".join(split_identifier(name))
    ranked = sorted(pool, key=lambda k: (-difflib.SequenceMatcher(None, target, pool[k]).ratio(), k))
    return tuple(ranked[:n])


def _unknown_names(sql: str, names: SchemaNames, dialect: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each column or table a query names that the schema lacks, with the tables it was sought in."""
    tree = parse_sql(sql, dialect)
    if tree is None:
        return []
    return [(p.name, p.tables) for p in analyse(tree, names) if p.kind in ("no_such_column", "no_such_table")]


def _missing(asked: Sequence[str], known: set[str]) -> tuple[str, ...]:
    return tuple(w for w in asked if not any(_same(w, k) for k in known))


def unsupported_words(question: str, known: set[str], word_support: dict[str, float],
                      values: Iterable[str] = (), threshold: float = SUPPORT_THRESHOLD) -> tuple[str, ...]:
    """The question's words that name something (not how to ask: :data:`QUESTION_FORM_WORDS`, not a unit:
    :data:`UNIT_WORDS`, not a verb's "-ed"/"-ing" form) that no schema word holds, no matched stored value
    holds, and the retriever matched below ``threshold`` everywhere (``word_support``: the selection's)."""
    in_values = {stem(w) for value in values for w in words(str(value))}
    out = []
    for word in dict.fromkeys(words(question)):
        support = word_support.get(word)
        if support is None or support >= threshold or len(word) < 3 or word.isdigit():
            continue
        if word in STOPWORDS or word in QUESTION_FORM_WORDS or word in UNIT_WORDS \
                or word.endswith(("ed", "ing")):
            continue
        s = stem(word)
        if s in in_values or any(_same(s, k) for k in known):
            continue
        out.append(word)
    return tuple(out)


def _parts(word: str, question_words: Sequence[str]) -> list[str]:
    """The question's own words a missing ``word`` (a stem, or two words run together) stands for."""
    for w in question_words:
        if _same(stem(w), word):
            return [w]
    for a, b in zip(question_words, question_words[1:]):
        if stem(a + b) == word:
            return [a, b]
    return []


def _support(parts: Sequence[str], word_support: dict[str, float]) -> float:
    """The retrieval's best support among a missing word's question words (0 when unknown)."""
    return max((word_support.get(w, 0.0) for w in parts), default=0.0)


def refusal_for(question: str, schema: DatabaseSchema, queries: Iterable[str], *,
                word_support: dict[str, float] | None = None, values: Iterable[str] = (),
                words_signal: bool = False) -> Refusal | None:
    """A refusal when one of ``queries`` (the answer's candidates, first to last) names a column or table
    that does not exist for words the question asks for and the schema holds nowhere (not even under
    another name, when the retrieval's ``word_support`` is given: :data:`SYNONYM_SUPPORT`), or (with
    ``words_signal``) when a word of the question names nothing in the schema; else None."""
    plain = [w for w in words(question) if w not in STOPWORDS]
    question_words = [stem(w) for w in plain]
    known: set[str] | None = None  # the schema's words: read only once something is missing (rarely)
    names = SchemaNames(schema)
    dialect = sqlglot_name(dialect_of(schema))
    support = word_support or {}
    for sql in queries:
        for name, tables in _unknown_names(sql, names, dialect):
            asked = _asked(name, question_words)
            if not asked:
                continue
            known = schema_words(schema) if known is None else known
            said = [_parts(w, plain) for w in _missing(asked, known)]
            missing = tuple(" ".join(p) for p in said if p and _support(p, support) < SYNONYM_SUPPORT)
            if missing:
                return Refusal(wanted=name, missing=missing, closest=_closest(name, tables, schema))
    if words_signal and support:
        missing = unsupported_words(question, schema_words(schema) if known is None else known, support, values)
        if missing:
            return Refusal(wanted=missing[0], missing=missing, closest=_closest(missing[0], (), schema),
                           signal="words")
    return None


def unsure(answer: Any) -> bool:
    """Whether an answer says nothing sure: it failed, has no rows, or its readings doubt it."""
    return answer.error is not None or not answer.rows or doubted(answer.opinions or ())


def apply_refusal(answer: Any, schema: DatabaseSchema, question: str | None = None, *,
                  words_signal: bool = False, unsure_words: bool = False) -> Refusal | None:
    """Turn ``answer`` into a refusal when :func:`refusal_for` finds one: ``answer.refusal`` says why,
    the SQL and rows are cleared (the queries tried stay in ``answer.candidates``). Reads the answer's
    own candidates and selection only: no model call, no query. ``words_signal``: the retrieval's word
    support counts too (off by default: on BIRD's wordier questions it refuses one answerable question
    in seven, docs/eval.md); ``unsure_words``: it counts where the answer is unsure, with no rows (it
    failed or came back empty) or doubted by its readings (``kgsql.correct.opinions``), where a
    question word held nowhere is likelier the reason than a way of asking (docs/eval.md, session 34)."""
    selection = answer.selection or {}
    if not selection.get("word_support") and answer.sql and answer.error is None:
        return None  # no retrieval to tell another name from a missing notion: a query that ran stands
    queries = list(answer.candidates) or ([answer.sql] if answer.sql else [])
    found = refusal_for(question or answer.standalone or answer.question, schema, queries,
                        word_support=selection.get("word_support") or None,
                        values=[v.get("value", "") for v in selection.get("values") or []],
                        words_signal=words_signal or (unsure_words and unsure(answer)))
    if found is not None:
        answer.refusal = found.text
        answer.sql, answer.rows, answer.columns, answer.truncated = "", [], [], False
        answer.error = None
    return found
