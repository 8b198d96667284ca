"""Pooled question embeddings of an example pool, masked (DAIL-SQL) or plain, cached on disk.

The retrieval encoder's pooled MiniLM vectors are reused (``kgsql.text.encoder``),
so example selection needs no second model. Vectors are L2-normalised, so a
dot product is the cosine similarity.
"""
from __future__ import annotations

import threading
from typing import Any, Iterable, Sequence

import numpy as np

from kgsql.fewshot.cache import cache_file, load_array
from kgsql.fewshot.mask import MASK_VERSION, SchemaVocabulary, mask_question
from kgsql.fewshot.pool import ExamplePool
from kgsql.paths import write_private
from kgsql.fewshot.sqlparts import sql_values
from kgsql.schema.model import DatabaseSchema

EMBED_VERSION = "e1"


def resolve_encoder(encoder: Any = None) -> Any:
    """An Encoder instance from an instance, a registered name, or None (the default, MiniLM)."""
    if encoder is None or isinstance(encoder, str):
        from kgsql.text.encoder import DEFAULT_ENCODER, get_encoder

        return get_encoder(encoder or DEFAULT_ENCODER)
    return encoder


def schema_values(schema: DatabaseSchema | None, limit_per_column: int = 10) -> list[str]:
    """Text values the graph holds for a schema (value examples, samples): what masking can
    recognise as a value in a question about that database."""
    if schema is None:
        return []
    out: list[str] = []
    for t in schema.tables:
        for c in t.columns:
            for v in [*c.value_examples, *c.stats.sample][:limit_per_column]:
                if isinstance(v, str) and not v.replace(".", "", 1).isdigit():
                    out.append(v)
    return out


class PoolEmbeddings:
    """The pool's question vectors (one row per example, pool order)."""

    def __init__(self, pool: ExamplePool, encoder: Any = None, *, masked: bool = True,
                 use_cache: bool = True) -> None:
        self.pool = pool
        self.encoder = resolve_encoder(encoder)
        self.masked = masked
        self.use_cache = use_cache
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()

    @property
    def cache_path(self):  # type: ignore[no-untyped-def]
        kind = f"masked-{MASK_VERSION}" if self.masked else "plain"
        return cache_file("emb", self.pool.name, self.pool.fingerprint, self.encoder.name, kind, EMBED_VERSION,
                          suffix=".npy")

    def texts(self) -> list[str]:
        """What is embedded: masked questions (each with its own database's names) or questions."""
        if not self.masked:
            return [e.question for e in self.pool]
        vocab: dict[str, SchemaVocabulary] = {}
        out = []
        for e in self.pool:
            if e.db_id not in vocab:
                try:
                    vocab[e.db_id] = SchemaVocabulary(self.pool.schema(e.db_id))
                except Exception:  # noqa: BLE001 - no schema: mask values only
                    vocab[e.db_id] = SchemaVocabulary(None)
            out.append(mask_question(e.question, vocab[e.db_id], values=sql_values(e.sql)))
        return out

    @property
    def vectors(self) -> np.ndarray:
        with self._lock:
            if self._vectors is None:
                self._vectors = self._load_or_compute()
            return self._vectors

    def _load_or_compute(self) -> np.ndarray:
        path = self.cache_path
        if self.use_cache:
            cached = load_array(path, len(self.pool))
            if cached is not None:
                return cached
        if len(self.pool) == 0:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        vectors = np.asarray(self.encoder.encode_pooled(self.texts()), dtype=np.float32)
        if self.use_cache:  # private: 0600 in a 0700 folder (the questions' embeddings)
            write_private(path, lambda fh: np.save(fh, vectors, allow_pickle=False))
        return vectors

    def query_text(self, question: str, schema: DatabaseSchema | None = None,
                   values: Iterable[str] = ()) -> str:
        if not self.masked:
            return question
        return mask_question(question, schema, values=[*values, *schema_values(schema)])

    def encode_query(self, question: str, schema: DatabaseSchema | None = None,
                     values: Sequence[str] = ()) -> np.ndarray:
        """The query's vector, masked the same way as the pool's."""
        return np.asarray(self.encoder.encode_pooled([self.query_text(question, schema, values)])[0],
                          dtype=np.float32)

    def similarities(self, question: str, schema: DatabaseSchema | None = None,
                     values: Sequence[str] = ()) -> np.ndarray:
        """Cosine similarity of the query with every pool example."""
        if len(self.pool) == 0:
            return np.zeros(0, dtype=np.float32)
        return self.vectors @ self.encode_query(question, schema, values)


_SHARED: dict[tuple[int, str, str, bool], PoolEmbeddings] = {}
_SHARED_LOCK = threading.Lock()


def pool_embeddings(pool: ExamplePool, encoder: Any = None, *, masked: bool = True) -> PoolEmbeddings:
    """One PoolEmbeddings per (pool, encoder, masking) per process, so selectors share vectors."""
    enc = resolve_encoder(encoder)
    key = (id(pool), pool.fingerprint, enc.name, masked)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = PoolEmbeddings(pool, enc, masked=masked)
        return _SHARED[key]
