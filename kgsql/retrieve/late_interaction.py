"""ColBERT-style late interaction over table and column documents.

``score(q, d) = Σ_i max_j q_i · d_j`` over L2-normalised token vectors (the
paper's Eq. 1), computed for every document of a database at once: one
``q @ E.T`` against the packed token matrix, then ``np.maximum.reduceat``
over document segments. Scores are divided by the number of query tokens so
one threshold works for short and long questions.

Very wide databases (more token rows than ``exact_limit``) are first narrowed
to candidate documents by the mean-token vectors (one small product) and the
exact MaxSim runs on those only, keeping latency bounded.
"""
from __future__ import annotations

from dataclasses import dataclass

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


def late_interaction(q: np.ndarray, index: TokenIndex, query_tokens: tuple[str, ...] = (), *,
                     exact_limit: int = 400_000, candidates: int = 2_000,
                     always: np.ndarray | None = None) -> LateInteractionScores:
    """Normalised MaxSim of ``q`` against every document (pruned past ``exact_limit`` rows)."""
    if len(index.emb) <= exact_limit or index.n_docs <= candidates:
        return LateInteractionScores(maxsim_all(q, index), query_tokens)
    # Candidate generation: per query token, best documents by mean-token vector.
    coarse = q @ index.mean_tok.T  # [nq, n_docs]
    per_tok = max(1, candidates // max(1, len(q)))
    cand = np.unique(np.argpartition(-coarse, per_tok - 1, axis=1)[:, :per_tok].ravel())
    overall = np.argpartition(-coarse.mean(axis=0), min(candidates, index.n_docs) - 1)[:candidates]
    cand = np.union1d(cand, overall)
    if always is not None and len(always):
        cand = np.union1d(cand, always)
    out = np.full((len(q), index.n_docs), np.nan, dtype=np.float32)
    out[:, cand] = maxsim_subset(q, index, cand)
    return LateInteractionScores(out, query_tokens)
