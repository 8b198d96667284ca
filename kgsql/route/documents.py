"""A database as routing text: what its tables, columns, descriptions and values are called.

Routing asks "which database is this question about?" before any schema is chosen, so each
database is summarised once from what the graph already holds:

* ``tables``: one sentence per table (its name, description, column names and a few text
  values) for the sentence encoder. A whole database does not fit the encoder's 256 word
  pieces, and a question is about a table or two, so a database scores as its best tables.
* ``terms``: the words of all of that (names split, plurals folded) for BM25.
* ``phrases``: the names and values a question may repeat exactly (``flights``,
  ``home town``, ``Aberdeen``), matched as whole word sequences.
* ``values``: the short text values the database itself stores, read from it once
  (``kgsql.route.named``): the names a question says ("Port Chelsea") that no sample holds.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.text.words import STOPWORDS, identifier_words, split_identifier, stem, words

#: Bump when the documents change, so cached vectors are rebuilt.
DOCUMENT_FORMAT = 3
MAX_TABLE_VALUES = 6
MAX_VALUE_CHARS = 30
MAX_DESCRIPTION_CHARS = 200
_SUFFIXES = ("er", "ers", "s", "es", "ing")
_NUMERIC = re.compile(r"^[-+]?[\d.,:/ ]+$")
#: Names too generic to point at one database ("id", "name", "date").
GENERIC_NAMES = frozenset("id name names date type code number count year time value description title "
                          "other details status".split())


@dataclass
class DatabaseDocument:
    """The routing text of one database (see module doc); plain data, cached as JSON."""

    name: str
    digest: str
    tables: list[str]
    terms: list[str]
    phrases: dict[str, str] = field(default_factory=dict)  # phrase (folded words) -> kind: table|column|value
    #: Stored text values, folded (``kgsql.route.named``); None: the database could not be read when indexed.
    values: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "digest": self.digest, "tables": self.tables, "terms": self.terms,
                "phrases": self.phrases, "values": self.values}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DatabaseDocument":
        values = d.get("values")
        return cls(d["name"], d["digest"], list(d["tables"]), list(d["terms"]), dict(d["phrases"]),
                   None if values is None else list(values))


def segment(word: str, vocabulary: frozenset[str]) -> list[str]:
    """A lower-case compound split into known words (``countrylanguage`` -> country language,
    ``highschooler`` -> high schooler): names written without separators hide their words from
    BM25 and from exact matches. A word the vocabulary knows, or one no split explains, stays whole."""
    if len(word) < 7 or word in vocabulary or not word.isalpha():
        return [word]
    longest_head, longest_tail = range(len(word) - 3, 2, -1), range(4, len(word) - 2)
    for cuts, known in ((longest_head, lambda h, r: h in vocabulary and _known(r, vocabulary)),  # school+er
                        (longest_tail, lambda h, r: r in vocabulary),  # a known tail: indep year
                        (longest_head, lambda h, r: h in vocabulary and len(h) >= 4 and len(r) >= 5)):
        for cut in cuts:
            if known(word[:cut], word[cut:]):
                return [word[:cut], word[cut:]]
    return [word]


def _known(word: str, vocabulary: frozenset[str]) -> bool:
    return word in vocabulary or any(word.endswith(x) and word[:-len(x)] in vocabulary for x in _SUFFIXES)


def name_words(name: str, vocabulary: frozenset[str] = frozenset()) -> list[str]:
    """An identifier's words, compounds segmented (see ``segment``)."""
    return [part for w in split_identifier(name) for part in segment(w, vocabulary)]


def fold(text: str) -> list[str]:
    """Lower-case words with plurals folded: the form questions and names are compared in."""
    return [stem(w) for w in words(text)]


def _values(col: Column) -> list[str]:
    """Text values the graph holds for ``col`` (examples, then the sample), numbers and long text left out."""
    out: list[str] = []
    for v in [*col.value_examples, *col.stats.sample]:
        v = " ".join(str(v).split())
        if v and len(v) <= MAX_VALUE_CHARS and not _NUMERIC.match(v) and v not in out:
            out.append(v)
    return out


def _readable(name: str, vocabulary: frozenset[str]) -> str:
    return identifier_words(" ".join(name_words(name, vocabulary)))


def _table_sentence(table: Table, vocabulary: frozenset[str]) -> str:
    cols = ", ".join(_readable(c.name, vocabulary) for c in table.columns)
    text = _readable(table.name, vocabulary)
    if table.description:
        text += f": {' '.join(table.description.split())[:MAX_DESCRIPTION_CHARS]}"
    text += f"; with {cols}" if cols else ""
    values = [v for c in table.columns for v in _values(c)[:2]][:MAX_TABLE_VALUES]
    if values:
        text += "; such as " + ", ".join(values)
    return text


def phrase(text: str) -> str:
    """A name or value as routing compares them: lower-case words, plurals folded, one space apart."""
    return " ".join(fold(text))


def database_document(schema: DatabaseSchema, digest: str, vocabulary: frozenset[str] = frozenset(),
                      values: list[str] | None = None) -> DatabaseDocument:
    """The routing document of ``schema`` (``digest``: its content hash, which keys the cache;
    ``vocabulary``: known words, for segmenting compound names; ``values``: its stored text values, folded, or
    None when they could not be read)."""
    tables = [_table_sentence(t, vocabulary) for t in schema.tables]
    parts = [_readable(schema.name, vocabulary), schema.description]
    phrases: dict[str, str] = {}
    for t in schema.tables:
        parts += [_readable(t.name, vocabulary), t.description]
        phrases.setdefault(phrase(" ".join(name_words(t.name, vocabulary))), "table")
        for c in t.columns:
            parts += [_readable(c.name, vocabulary), c.readable_name, c.description]
            name = phrase(" ".join(name_words(c.name, vocabulary)))
            if name not in GENERIC_NAMES:
                phrases.setdefault(name, "column")
            for v in _values(c):
                parts.append(v)
                phrases.setdefault(phrase(v), "value")
    phrases = {p: k for p, k in phrases.items()
               if p and not (len(p) < 3 or all(w in STOPWORDS or w.isdigit() for w in p.split()))}
    terms = [w for w in fold(" ".join(x for x in parts if x)) if w not in STOPWORDS]
    return DatabaseDocument(schema.name, digest, tables, terms, phrases, values)
