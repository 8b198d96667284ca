"""ACT-SQL's automatically generated chain-of-thought for pool examples (§7.4).

For a (question, gold SQL) pair: split the question into every contiguous
phrase, embed the phrases and each table/column the SQL uses, link each
schema item to its most similar phrase, and write the links as the
reasoning that leads to the SQL. The output has the paper's Table 13 form::

    Let's think step by step.
    According to "TV channel that has high definition TV", columns [TV_Channel.Hight_definition_TV] may be used.
    According to "package choice and series name", columns [TV_Channel.Package_Option] and [TV_Channel.series_name] may be used.
    Values ['yes'] may be used.
    So the final answer is:
    SELECT package_option , series_name FROM TV_Channel WHERE hight_definition_TV = "yes"

Details kept from ACT-SQL's ``cot.py``: tables and columns are sorted, a table
is listed only when none of its columns is, phrases appear in the order of
their first linked item, the final SQL is the gold query with whitespace
collapsed and the trailing ``;`` removed. Values are written as SQL literals.
CoTs are cached per pool (``$KGSQL_CACHE_DIR/examples/cot-*.json``) and made
lazily: a 7000-question pool has ~1M phrases, so only selected examples are
explained unless ``precompute`` is asked to do them all.
"""
from __future__ import annotations

import re
import threading
from itertools import combinations
from typing import Any, Iterable, Sequence

import numpy as np

from kgsql.fewshot.cache import cache_file, load_json, save_json
from kgsql.fewshot.embed import resolve_encoder
from kgsql.fewshot.pool import ExamplePool, PoolExample
from kgsql.fewshot.sqlparts import sql_literal, sql_values
from kgsql.text.words import split_identifier
from kgsql.schema.model import DatabaseSchema

COT_VERSION = "c1"
COT_START = "Let's think step by step."
COT_END = "So the final answer is:"
MAX_WORDS = 40  # 820 phrases; longer questions keep their first 40 words for linking

_WORD = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")


def question_words(question: str) -> list[str]:
    """Words and punctuation marks, roughly NLTK's ``word_tokenize``."""
    return _WORD.findall(question)


def question_phrases(question: str) -> list[str]:
    """Every contiguous phrase (i, j) of the question, in ACT-SQL's order."""
    words = question_words(question)[:MAX_WORDS]
    return [" ".join(words[a:b]) for a, b in combinations(range(len(words) + 1), 2)]


def _joined(items: Sequence[str]) -> str:
    """``[a]``, ``[a] and [b]``, ``[a], [b] and [c]`` (Table 13)."""
    boxed = [f"[{x}]" for x in items]
    return boxed[0] if len(boxed) == 1 else ", ".join(boxed[:-1]) + " and " + boxed[-1]


def schema_items(sql: str, schema: DatabaseSchema | None) -> list[tuple[str, str]]:
    """(``Table`` or ``Table.Column``, kind) the SQL uses: uncovered tables first, then columns."""
    if schema is None:
        return []
    from kgsql.sql.gold_schema import gold_schema

    try:
        gold = gold_schema(sql, schema)
    except Exception:  # noqa: BLE001 - an example whose SQL cannot be resolved still gets its answer
        return []
    columns = sorted(f"{t}.{c}" for t, c in gold.columns)
    covered = {t for t, _ in gold.columns}
    items = [(t, "table") for t in sorted(gold.tables) if t not in covered]
    return items + [(c, "column") for c in columns]


def item_text(item: str) -> str:
    """What is embedded for a schema item: the words of its own name (``TV_Channel.Package_Option``
    -> "package option"). The table's words are left out of a column's text: with them every
    column of a table drifts towards the phrase naming the table."""
    return " ".join(split_identifier(item.rsplit(".", 1)[-1]))


def build_cot(question: str, sql: str, schema: DatabaseSchema | None, encoder: Any) -> str:
    """The auto-CoT text for one example (see module doc)."""
    items = schema_items(sql, schema)
    links: dict[str, dict[str, list[str]]] = {}
    phrases = question_phrases(question)
    if items and phrases:
        vecs = np.asarray(encoder.encode_pooled([*phrases, *(item_text(i) for i, _ in items)]), dtype=np.float32)
        pv, iv = vecs[: len(phrases)], vecs[len(phrases):]
        for (item, kind), vec in zip(items, iv):
            phrase = phrases[int(np.argmax(pv @ vec))]
            links.setdefault(phrase, {"table": [], "column": []})[kind].append(item)
    lines = [COT_START]
    for phrase, found in links.items():
        parts = []
        if found["table"]:
            parts.append(f"tables {_joined(found['table'])}")
        if found["column"]:
            parts.append(f"columns {_joined(found['column'])}")
        lines.append(f'According to "{phrase}", {" and ".join(parts)} may be used.')
    values = sql_values(sql)
    if values:
        lines.append(f"Values [{', '.join(sql_literal(v, sql) for v in values)}] may be used.")
    lines.append(COT_END)
    lines.append(" ".join(sql.strip("\t ;").split()))
    return "\n".join(lines)


class AutoCoT:
    """Auto-CoT strings of a pool's examples, computed on demand and cached on disk."""

    def __init__(self, pool: ExamplePool, encoder: Any = None, *, use_cache: bool = True) -> None:
        self.pool = pool
        self.encoder = resolve_encoder(encoder)
        self.use_cache = use_cache
        self._lock = threading.Lock()
        self._cot: dict[str, str] = load_json(self.cache_path) if use_cache else {}
        self._dirty = 0

    @property
    def cache_path(self):  # type: ignore[no-untyped-def]
        return cache_file("cot", self.pool.name, self.pool.fingerprint, self.encoder.name, COT_VERSION,
                          suffix=".json")

    def _schema(self, db_id: str) -> DatabaseSchema | None:
        try:
            return self.pool.schema(db_id)
        except Exception:  # noqa: BLE001 - no schema: a CoT with values and the answer only
            return None

    def cot(self, example: PoolExample) -> str:
        with self._lock:
            if example.id in self._cot:
                return self._cot[example.id]
        text = build_cot(example.question, example.sql, self._schema(example.db_id), self.encoder)
        with self._lock:
            self._cot[example.id] = text
            self._dirty += 1
        if self.use_cache:
            self.save()
        return text

    def precompute(self, examples: Iterable[PoolExample] | None = None, *, save_every: int = 100) -> int:
        """Explain ``examples`` (default: the whole pool); returns how many were new."""
        new = 0
        saved_flag, self.use_cache = self.use_cache, False
        try:
            for ex in examples if examples is not None else self.pool:
                if ex.id not in self._cot:
                    self.cot(ex)
                    new += 1
                    if saved_flag and new % save_every == 0:
                        self.save()
        finally:
            self.use_cache = saved_flag
        if saved_flag:
            self.save()
        return new

    def save(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            data = dict(self._cot)
            self._dirty = 0
        merged = {**load_json(self.cache_path), **data}  # another process may have added some
        save_json(self.cache_path, merged)
