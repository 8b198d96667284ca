"""Schema size in prompt tokens: plain ``CREATE TABLE`` text and a token counter.

The linking benchmark compares methods by how much schema text they would put
in a prompt. Every method's sub-schema is rendered the same simple way (names,
types, primary and foreign keys; no descriptions or examples) and counted with
the all-MiniLM-L6-v2 WordPiece tokenizer from the bundled model (no torch
needed; ``tokenizers`` only). Its counts run close to GPT-style BPE counts on
SQL DDL, and it is always available offline. Absolute numbers are therefore
indicative; ratios between methods are what matter.
"""
from __future__ import annotations

import functools
import re

from kgsql.schema.model import DatabaseSchema, Table

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def quote(name: str) -> str:
    """Quote an identifier only when SQLite needs it."""
    return name if _PLAIN.match(name) else '"' + name.replace('"', '""') + '"'


def render_table(schema: DatabaseSchema, table: Table) -> str:
    cols = [f"  {quote(c.name)} {c.type}".rstrip() for c in table.columns]
    names = {c.name for c in table.columns}
    pk = [c for c in table.primary_key if c in names]
    if pk:
        cols.append("  PRIMARY KEY (" + ", ".join(quote(c) for c in pk) + ")")
    for fk in schema.foreign_keys:
        if fk.table == table.name and fk.column in names:
            cols.append(f"  FOREIGN KEY ({quote(fk.column)}) REFERENCES {quote(fk.ref_table)}({quote(fk.ref_column)})")
    return f"CREATE TABLE {quote(table.name)} (\n" + ",\n".join(cols) + "\n);"


def render_ddl(schema: DatabaseSchema) -> str:
    """The whole schema as ``CREATE TABLE`` statements (tables without columns are skipped)."""
    return "\n\n".join(render_table(schema, t) for t in schema.tables if t.columns)


@functools.lru_cache(maxsize=1)
def _minilm_tokenizer():  # noqa: ANN202 - tokenizers.Tokenizer
    from tokenizers import Tokenizer

    from kgsql.text.encoder import minilm_model_path

    tok = Tokenizer.from_file(f"{minilm_model_path()}/tokenizer.json")
    tok.no_truncation()  # the shipped tokenizer.json pads/truncates to 128: we want true counts
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    """WordPiece tokens of ``text`` (MiniLM tokenizer, no special tokens, no truncation)."""
    tok = _minilm_tokenizer()
    return len(tok.encode(text, add_special_tokens=False).ids)


def schema_tokens(schema: DatabaseSchema) -> int:
    return count_tokens(render_ddl(schema))
