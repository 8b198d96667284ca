"""DAIL-SQL's masked questions: domain words out, question skeleton left.

"How many singers are from France?" and "How many pilots are older than 30?"
share the intent ``How many <mask> are ... <unk>``; their raw embeddings are
dominated by the domain words instead. Masking replaces words that name a
table or column with ``<mask>`` and values with ``<unk>`` (runs collapse to
one), so similarity measures what kind of SQL is asked for, across domains.

What counts as a name: the words of every table and column identifier (and
readable name) of the question's own database (``singer_id`` -> "singer id";
plurals folded). What counts as a value: quoted spans, numbers, and the
``values`` the caller knows (a pool example's SQL literals; the target
database's value examples or matched cell values).
"""
from __future__ import annotations

import re
from typing import Iterable

from kgsql.text.words import STOPWORDS, split_identifier
from kgsql.schema.model import DatabaseSchema

MASK = "<mask>"
UNK = "<unk>"
MASK_VERSION = "m1"  # bump when masking changes: it keys the embedding cache
MAX_NGRAM = 6

_QUOTED_SPAN = re.compile(r"(?<![\w])([\"“'‘])(.+?)([\"”'’])(?![\w])")
_TOKEN = re.compile(r"<unk>|[^\W_]+(?:['’][^\W_]+)?|\S")
_NUMBER = re.compile(r"^[-+]?\d+(?:[.,]\d+)*(?:st|nd|rd|th)?$")


def norm_word(word: str) -> str:
    """Lower-case, possessive and plural folded: "Singers'" / "singer's" -> "singer"."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.strip("'")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _phrase(text: str) -> tuple[str, ...]:
    return tuple(norm_word(w) for w in split_identifier(text))


class SchemaVocabulary:
    """The name phrases and name words of one database, for masking."""

    def __init__(self, schema: DatabaseSchema | None) -> None:
        self.phrases: set[tuple[str, ...]] = set()
        self.words: set[str] = set()
        if schema is None:
            return
        names: list[str] = []
        for t in schema.tables:
            names.append(t.name)
            for c in t.columns:
                names.append(c.name)
                if c.readable_name:
                    names.append(c.readable_name)
        for name in names:
            phrase = _phrase(name)
            if phrase:
                self.phrases.add(phrase)
                self.words.update(w for w in phrase if len(w) > 1 and w not in STOPWORDS and not w.isdigit())


def _value_phrases(values: Iterable[str]) -> set[tuple[str, ...]]:
    out = set()
    for v in values:
        words = tuple(norm_word(w) for w in re.findall(r"[^\W_]+", str(v)))
        if not words or len(words) > MAX_NGRAM:
            continue
        if len(words) == 1 and (len(words[0]) < 3 or words[0] in STOPWORDS):
            continue  # "1", "y", "the": too weak to call a value
        out.add(words)
    return out


def mask_question(question: str, schema: DatabaseSchema | SchemaVocabulary | None = None, *,
                  values: Iterable[str] = ()) -> str:
    """``question`` with schema names as ``<mask>`` and values as ``<unk>``, lower-cased."""
    vocab = schema if isinstance(schema, SchemaVocabulary) else SchemaVocabulary(schema)
    value_phrases = _value_phrases(values)
    text = _QUOTED_SPAN.sub(f" {UNK} ", question)
    tokens = _TOKEN.findall(text)
    normed = [norm_word(t) for t in tokens]
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == UNK or _NUMBER.match(tok):
            out.append(UNK)
            i += 1
            continue
        step, mark = 1, None
        for n in range(min(MAX_NGRAM, len(tokens) - i), 0, -1):
            gram = tuple(normed[i:i + n])
            if gram in value_phrases:
                step, mark = n, UNK
                break
            if gram in vocab.phrases and (n > 1 or gram[0] not in STOPWORDS):
                step, mark = n, MASK
                break
        if mark is None and normed[i] in vocab.words:
            mark = MASK
        if mark is None:
            out.append(tok.lower())
        elif not out or out[-1] != mark:
            out.append(mark)
        i += step
    return " ".join(out)
