"""A database's past questions as routing evidence: the questions it was taught.

A warehouse has query logs. The pairs a database was taught (``ingest --history``, ``SchemaGraph.learn``)
are kept in the graph as its examples; a new question close in meaning to one a database answered before is
likely about that database, even when its words fit several schemas ("How many singers do we have?" is
``singer`` or ``concert_singer`` by the schemas, the one whose log asks about singers by the log). The
``history`` signal of :class:`kgsql.route.router.DatabaseRouter` is, per database, the best cosine between
the question and one of its past questions, as z-scores among the databases with a log; a database with no
log scores 0 (no log says nothing either way). The questions' vectors are cached privately, one file per
database holding each question with its vector, so a log that grows encodes only its new questions.
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from kgsql.route.index import default_cache_dir, load_entry, save_vectors
from kgsql.text.encoder import Encoder

__all__ = ["QuestionLog", "build_log", "graph_log_digest", "graph_questions", "log_scores"]

#: The least spread (in cosine) the log's z-scores are taken over: it matters where few databases have a log;
#: with all 163 of Spider's logged it left routing as it was (docs/eval.md, session 29).
MIN_SPREAD = 0.05


@dataclass
class QuestionLog:
    """Past questions' vectors (rows L2-normalised) and the database (an index into the router's) of each."""

    vectors: np.ndarray
    owner: np.ndarray

    def __len__(self) -> int:
        return int(len(self.owner))

    def best(self, question_vector: np.ndarray, databases: int) -> np.ndarray:
        """Per database, the best cosine of the question with one of its past questions; NaN where a database
        has none (:func:`log_scores` turns that into "says nothing")."""
        out = np.full(databases, np.nan)
        if len(self):
            np.fmax.at(out, self.owner, self.vectors @ question_vector)
        return out


def log_scores(best: np.ndarray) -> np.ndarray:
    """The log's signal on the fused scale: z-scores among the databases that have a log, 0 for those without
    (no log says nothing either way). The spread is at least :data:`MIN_SPREAD`: two logged databases whose
    best questions differ by 0.001 in cosine must not become +1 and -1."""
    known = best[~np.isnan(best)]
    if known.size < 2:
        return np.zeros_like(best)
    z = (best - known.mean()) / max(float(known.std()), MIN_SPREAD)
    return np.nan_to_num(z, nan=0.0)


def graph_questions(store: Any) -> dict[str, list[str]]:
    """Every database's taught questions (a ``GraphStore``'s examples), in a stable order."""
    out: dict[str, list[str]] = defaultdict(list)
    for row in store.run("examples_questions"):
        out[row["database"]].append(row["question"])
    return dict(out)


def graph_log_digest(store: Any) -> list[tuple[str, int, str]]:
    """(database, examples, latest added) per database: changes when a log grows or shrinks, or an example is
    removed and another added (``added`` is written to the microsecond)."""
    return [(r["database"], int(r["examples"]), str(r["latest"])) for r in store.run("examples_digest")]


def _entry(folder: Path, encoder: Encoder, database: str) -> Path:
    key = hashlib.sha256(json.dumps([encoder.name, database], ensure_ascii=False).encode()).hexdigest()[:20]
    return folder / f"{key}.npz"


def _database_vectors(encoder: Encoder, asked: list[str], path: Path, use_cache: bool) -> np.ndarray:
    """The vectors of one database's questions: those the cache holds are read, only new ones encoded (a
    ``learn`` of one pair encodes one question, not the whole log), and the cache is rewritten when any were."""
    entry = load_entry(path) if use_cache else None
    known: dict[str, np.ndarray] = {}
    if entry is not None and entry[0].shape[1] == encoder.dim and len(entry[0]) == len(entry[1].get("questions", ())):
        known = dict(zip(entry[1]["questions"], entry[0]))
    fresh = list(dict.fromkeys(q for q in asked if q not in known))
    if fresh:
        vectors = encoder.encode_pooled(fresh, is_query=True).astype(np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        known.update(zip(fresh, vectors.astype(np.float16).astype(np.float32)))  # as the cache keeps them
    out = np.stack([known[q] for q in asked])
    if use_cache and (fresh or entry is None or len(known) != len(set(asked))):
        kept = list(dict.fromkeys(asked))
        save_vectors(path, np.stack([known[q] for q in kept]), meta={"questions": kept})
    return out


def build_log(encoder: Encoder, names: Sequence[str], questions: Mapping[str, Iterable[str]], *,
              cache_dir: Path | None = None, use_cache: bool = True) -> QuestionLog:
    """The question log of the databases ``names`` (in the router's order); a question already cached for its
    database is read back, only new ones are encoded."""
    folder = (cache_dir or default_cache_dir()) / "log"
    blocks: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    for i, name in enumerate(names):
        asked = [" ".join(q.split()) for q in questions.get(name, ()) if q and q.strip()]
        if not asked:
            continue
        vectors = _database_vectors(encoder, asked, _entry(folder, encoder, name), use_cache)
        blocks.append(vectors)
        owners.append(np.full(len(vectors), i, dtype=np.int64))
    if not blocks:
        return QuestionLog(np.zeros((0, encoder.dim), np.float32), np.zeros(0, np.int64))
    return QuestionLog(np.concatenate(blocks), np.concatenate(owners))
