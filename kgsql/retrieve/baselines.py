"""Baseline column rankers the benchmark compares against: BM25 and dense top-k.

Both rank the same column documents kgsql uses. BM25 (bm25s) scores the
words of each document, identifiers split; dense ranks by the cosine between
the pooled MiniLM sentence vectors of question and document (the
SearchColumn tool of Interactive-T2S). They return a full ranking so a caller
can cut it at a fixed k or at a token budget.
"""
from __future__ import annotations

import numpy as np

from kgsql.retrieve.documents import Document
from kgsql.text.encoder import Encoder
from kgsql.retrieve.index import TokenIndex
from kgsql.text.words import STOPWORDS, words


class BM25Ranker:
    """BM25 over the column documents of one database."""

    def __init__(self, docs: list[Document]) -> None:
        import bm25s

        self.keys = [(d.table, d.column) for d in docs if d.column is not None]
        corpus = [[w for w in words(d.text) if w not in STOPWORDS] or [""] for d in docs if d.column is not None]
        self.bm25 = bm25s.BM25()
        self.bm25.index(corpus, show_progress=False)

    def rank(self, question: str) -> list[tuple[str, str]]:
        q = [w for w in words(question) if w not in STOPWORDS] or words(question)
        scores = np.asarray(self.bm25.get_scores(q), dtype=np.float64)
        order = np.argsort(-scores, kind="stable")
        return [self.keys[i] for i in order]


class DenseRanker:
    """Cosine of pooled question and column-document vectors (already in the token index)."""

    def __init__(self, encoder: Encoder, index: TokenIndex) -> None:
        self.encoder = encoder
        cols = [i for i, (_t, c) in enumerate(index.doc_keys) if c is not None]
        self.keys = [index.doc_keys[i] for i in cols]
        self.pooled = index.pooled[cols]

    def rank(self, question: str) -> list[tuple[str, str]]:
        q = self.encoder.encode_pooled([question], is_query=True)[0]
        order = np.argsort(-(self.pooled @ q), kind="stable")
        return [self.keys[i] for i in order]  # type: ignore[misc]
