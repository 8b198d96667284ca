"""Schema -> retrieval documents: one per table and one per column.

A column document reads like the sentence an analyst would write about it
("a column named free meal count k 12 in table frpm about ...; such as ...")
so a sentence encoder sees prose, not identifiers. Each document also lists
which words came from which field (column name, table name, description,
value examples) so a match can be explained ("matched by description").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from kgsql.text.words import identifier_words, split_identifier, words
from kgsql.schema.model import Column, DatabaseSchema, Table

#: Field ids, in priority order when a word belongs to several fields.
FIELD_COLUMN, FIELD_TABLE, FIELD_DESCRIPTION, FIELD_VALUE = 0, 1, 2, 3
FIELD_NAMES = ("name", "table", "description", "value")

MAX_DESCRIPTION_CHARS = 300
MAX_EXAMPLES = 3
MAX_EXAMPLE_CHARS = 40
_NUMERIC = re.compile(r"^[-+]?\d+([.,]\d+)?$")


@dataclass(frozen=True)
class Document:
    """Text to encode for one table (``column is None``) or one column."""

    table: str
    column: str | None
    text: str
    field_words: tuple[frozenset[str], ...]  # words of each FIELD_* part

    def field_of(self, word: str) -> int:
        """The first field whose words contain ``word`` (description when unknown)."""
        w = word.lower()
        for i, ws in enumerate(self.field_words):
            if w in ws:
                return i
        return FIELD_DESCRIPTION


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0]


def _readable_name(name: str, readable_name: str, description: str) -> str:
    """Identifier words, plus a different readable name when a description file gave one."""
    base = identifier_words(name)
    readable = " ".join(readable_name.split())
    if readable and readable.lower() not in {name.lower(), base.lower()} and readable.lower() not in description.lower():
        return f"{base} ({readable})"
    return base


def _examples(values: tuple[str, ...]) -> list[str]:
    """Text value examples worth embedding (numbers and long strings say little)."""
    out: list[str] = []
    for v in values:
        v = v.strip()
        if not v or _NUMERIC.match(v) or len(v) > MAX_EXAMPLE_CHARS:
            continue
        out.append(v)
        if len(out) >= MAX_EXAMPLES:
            break
    return out


def column_document(table: Table, col: Column) -> Document:
    """The sentence describing one column, with its words grouped by field."""
    return _column_document(table.name, col.name, col.readable_name or "", col.description,
                            col.value_explanation, tuple(str(v) for v in col.value_examples))


@lru_cache(maxsize=1 << 17)  # re-indexing a wide schema after one table changed rebuilds the others' documents
def _column_document(table: str, column: str, readable_name: str, description: str, value_explanation: str,
                     value_examples: tuple[str, ...]) -> Document:
    name = _readable_name(column, readable_name, description)
    table_words = identifier_words(table)
    text = f"a column named {name} in table {table_words}"
    desc = _clip(description, MAX_DESCRIPTION_CHARS) if description else ""
    if desc and desc.lower() not in {column.lower(), name.lower()}:
        text += f" about {desc}"
    if value_explanation:
        text += f"; {_clip(value_explanation, MAX_DESCRIPTION_CHARS)}"
    ex = _examples(value_examples)
    if ex:
        text += "; such as " + ", ".join(ex)
    fields = (
        frozenset(words(name)) | frozenset(split_identifier(column)),
        frozenset(words(table_words)),
        frozenset(words(desc + " " + value_explanation)),
        frozenset(w for e in ex for w in words(e)),
    )
    return Document(table, column, text, fields)


def table_document(table: Table) -> Document:
    """The sentence describing one table: its name, description and column names."""
    table_words = identifier_words(table.name)
    text = f"table {table_words}"
    desc = " ".join(x for x in (table.description, getattr(table, "geo_description", "") or "") if x)
    if desc:
        text += f" about {_clip(desc, MAX_DESCRIPTION_CHARS)}"
    fields = (frozenset(), frozenset(words(table_words)), frozenset(words(desc)), frozenset())
    return Document(table.name, None, text, fields)


def schema_documents(schema: DatabaseSchema) -> list[Document]:
    """Table documents first (schema order), then column documents (schema order)."""
    docs = [table_document(t) for t in schema.tables]
    for t in schema.tables:
        docs.extend(column_document(t, c) for c in t.columns)
    return docs
