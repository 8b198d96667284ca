"""ColBERT-style late interaction over table and column documents.

``score(q, d) = Σ_i max_j q_i · d_j`` over L2-normalised token vectors (the
paper's Eq. 1), computed for every document of a database at once: one
``q @ E.T`` against the packed token matrix, then ``np.maximum.reduceat``
over document segments. Scores are divided by the number of query tokens so
one threshold works for short and long questions.

Very wide databases (more token rows than ``exact_limit``) are first narrowed
to candidate documents by the mean-token vectors (one small product) and the
exact MaxSim runs on those only, keeping latency bounded. That first stage is
a seam: a graph server with a vector index answers it instead
(``kgsql.graph.vectors``), the re-rank on top stays the same.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol

import numpy as np

from kgsql.retrieve.index import TokenIndex


def maxsim_all(q: np.ndarray, index: TokenIndex) -> np.ndarray:
    """``[n_query_tokens, n_docs]``: each query token's best similarity in each document."""
    if index.n_docs == 0:
        return np.zeros((len(q), 0), dtype=np.float32)
    sim = q @ index.emb32.T
    return np.maximum.reduceat(sim, index.offsets[:-1], axis=1)


def segment_rows(offsets: np.ndarray, doc_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Token rows of ``doc_ids`` (concatenated) and the start of each doc in that list."""
    starts = offsets[doc_ids]
    lengths = offsets[doc_ids + 1] - starts
    local_starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    rows = np.repeat(starts - local_starts, lengths) + np.arange(int(lengths.sum()))
    return rows, local_starts


def maxsim_subset(q: np.ndarray, index: TokenIndex, doc_ids: np.ndarray) -> np.ndarray:
    """``maxsim_all`` restricted to ``doc_ids`` (columns in that order)."""
    if len(doc_ids) == 0:
        return np.zeros((len(q), 0), dtype=np.float32)
    rows, local_starts = segment_rows(index.offsets, doc_ids)
    sim = q @ index.rows32(rows).T
    return np.maximum.reduceat(sim, local_starts, axis=1)


@dataclass
class LateInteractionScores:
    """Per-document late-interaction evidence for one question.

    ``per_token[i, d]`` is query token i's best match in document d (NaN for
    documents pruned away on very wide schemas); ``score`` is its mean over
    query tokens (the normalised MaxSim).
    """

    per_token: np.ndarray
    query_tokens: tuple[str, ...]

    @property
    def score(self) -> np.ndarray:
        return np.nanmean(self.per_token, axis=0) if self.per_token.size else np.zeros(self.per_token.shape[1])


#: A first stage bound to one database: (query token vectors, candidates wanted) -> document ids of its
#: index, or None when it cannot answer (the mean-token stage below runs instead).
Nearest = Callable[[np.ndarray, int], Optional[np.ndarray]]


class FirstStage(Protocol):
    """A first stage that holds the documents of many databases (a graph server's vector index)."""

    def candidates(self, database: str, index: TokenIndex, q: np.ndarray, k: int) -> np.ndarray | None:
        """About ``k`` document ids of ``index`` near ``q``'s token vectors, or None when it cannot tell."""


def mean_token_candidates(q: np.ndarray, index: TokenIndex, candidates: int) -> np.ndarray:
    """The best documents by mean-token vector: per query token its ``candidates / len(q)``, and the
    ``candidates`` best by the question's mean similarity."""
    coarse = q @ index.mean_tok.T  # [nq, n_docs]
    per_tok = max(1, candidates // max(1, len(q)))
    cand = np.unique(np.argpartition(-coarse, per_tok - 1, axis=1)[:, :per_tok].ravel())
    overall = np.argpartition(-coarse.mean(axis=0), min(candidates, index.n_docs) - 1)[:candidates]
    return np.union1d(cand, overall)


def late_interaction(q: np.ndarray, index: TokenIndex, query_tokens: tuple[str, ...] = (), *,
                     exact_limit: int = 400_000, candidates: int = 2_000,
                     always: np.ndarray | None = None, nearest: Nearest | None = None) -> LateInteractionScores:
    """Normalised MaxSim of ``q`` against every document (pruned past ``exact_limit`` rows to the
    candidates ``nearest`` names, else the mean-token vectors', plus ``always``)."""
    if len(index.emb) <= exact_limit or index.n_docs <= candidates:
        return LateInteractionScores(maxsim_all(q, index), query_tokens)
    cand = nearest(q, candidates) if nearest is not None else None
    if cand is None:
        cand = mean_token_candidates(q, index, candidates)
    cand = np.unique(np.asarray(cand, dtype=np.int64))
    if always is not None and len(always):
        cand = np.union1d(cand, always)
    out = np.full((len(q), index.n_docs), np.nan, dtype=np.float32)
    out[:, cand] = maxsim_subset(q, index, cand)
    return LateInteractionScores(out, query_tokens)
