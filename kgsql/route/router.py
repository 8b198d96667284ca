"""Question -> ranked databases: the first stage of answering with no database named.

Three signals score every database of the index (``kgsql.route.index``), and a fourth where databases
were taught questions:

* ``dense``: cosine between the question's MiniLM vector and each table sentence, a database
  scoring as its best table (a question is about a table or two, not a whole database);
* ``bm25``: BM25 over each database's words (names split, plurals folded, descriptions, values);
* ``exact``: names and values of the database the question repeats word for word, each
  weighted by how few databases share it (``Aberdeen`` points at one, ``name`` at none);
* ``history``: cosine between the question and the closest question a database was asked before
  (``kgsql.route.history``), when there is a log.

``fused`` (the default) adds them after scaling each to its spread over the databases
(z-scores, weights measured on Spider dev: docs/retrieval.md); then a name the question says that one of the
first three databases stores and the first does not ("Port Chelsea") gives the answer to that one
(``kgsql.route.named``). The second stage, selection,
is the usual schema retrieval on the routed database. When the first two databases are
within ``margin`` of each other the routing is *close*: the answer names both. When neither BM25 nor
the exact matches found anything, the routing is by meaning alone and says so (``matched`` false).
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from kgsql.route.documents import fold
from kgsql.route.history import QuestionLog, log_scores
from kgsql.route.index import DatabaseIndex
from kgsql.route.named import WITHIN, NamedValues
from kgsql.text.encoder import Encoder
from kgsql.text.words import STOPWORDS

#: Weight of a database's past questions (``kgsql.route.history``) in ``fused``.
HISTORY_WEIGHT = 1.5
MODES = ("fused", "dense", "bm25", "exact", "history")
#: Signal weights of ``fused`` (z-scores), and per kind of exactly matched phrase. ``history`` counts only
#: where databases were taught questions (docs/retrieval.md, "Routing").
WEIGHTS = {"dense": 1.0, "bm25": 1.0, "exact": 0.5, "history": HISTORY_WEIGHT}
KIND_WEIGHTS = {"table": 1.0, "column": 0.6, "value": 1.0}
#: Fused score gap (in z units) under which the top two are reported as a close call.
DEFAULT_MARGIN = 0.5
MAX_PHRASE_WORDS = 4


@dataclass(frozen=True)
class Route:
    """One candidate database and its score (higher is likelier)."""

    db: str
    score: float


@dataclass(frozen=True)
class PassedOver:
    """A likelier database whose answer said nothing (``kgsql.route.fallback``): why, and the SQL it tried."""

    db: str
    why: str
    sql: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Routing:
    """The ranked databases for one question; ``close`` when the first two are within the margin."""

    question: str
    ranked: list[Route]
    margin: float
    mode: str
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: False when no word of the question is a word, name or value of any database (routed by meaning alone).
    matched: bool = True
    #: The databases tried first whose answers said nothing, each with why (``kgsql.route.fallback``).
    passed_over: tuple[PassedOver, ...] = ()
    #: The next databases were asked too and said nothing either: the first choice's answer stands.
    also_tried: tuple[PassedOver, ...] = ()
    #: A name the question says that the first database stores and the one its words fit better does not
    #: (``kgsql.route.named``): it chose the first, so the call is not close (and the scores are not in order).
    named: str = ""

    @property
    def db(self) -> str:
        """The database the answer is from: the first choice, unless its answer said nothing (the databases
        are asked in rank order, so the answer is from the one after those passed over)."""
        return self.ranked[len(self.passed_over)].db

    @property
    def gap(self) -> float:
        return self.ranked[0].score - self.ranked[1].score if len(self.ranked) > 1 else math.inf

    @property
    def close(self) -> bool:
        return not self.named and self.gap < self.margin

    @property
    def chosen_by(self) -> str:
        """The name that chose the database the answer is from ("" when none did, or when the fallback passed
        the named database over)."""
        return "" if self.passed_over else self.named

    @property
    def tied_with(self) -> str | None:
        """The runner-up when the call is close and the answer is the first choice's, else None."""
        return self.ranked[1].db if self.close and not self.passed_over and not self.also_tried else None

    def to_dict(self, top: int = 3) -> dict[str, Any]:
        return {"db": self.db, "close": self.close, "tied_with": self.tied_with,
                "gap": None if math.isinf(self.gap) or self.named else round(self.gap, 4), "margin": self.margin,
                "mode": self.mode, "matched": self.matched, "named": self.chosen_by or None, "notes": self.notes(),
                "passed_over": [p.to_dict() for p in self.passed_over],
                "also_tried": [p.to_dict() for p in self.also_tried],
                "candidates": [{"db": r.db, "score": round(r.score, 4)} for r in self.ranked[:top]]}

    def notes(self) -> list[str]:
        """Why the answer is from this database, in words (the name that chose it; the databases the fallback
        asked whose answers said nothing), the one wording of the CLI, the page and the MCP tool."""
        out = []
        if self.chosen_by:
            line = f"it stores '{self.named}', which the question names"
            out.append(line + (f"; '{self.ranked[1].db}' fit its words better" if len(self.ranked) > 1 else ""))
        for p in self.passed_over:
            named = self.named and p.db == self.ranked[0].db  # chosen by the name, not by its words
            why = f"stores '{self.named}', which the question names," if named else "was likelier,"
            out.append(f"'{p.db}' {why} and its answer {p.why}")
        return out + [f"'{p.db}' was asked too, and its answer {p.why}" for p in self.also_tried]

    def note(self) -> str:
        """One line for a person: which database, why, and the runner-up when the call was close."""
        line = f"routed to database '{self.db}'" + "".join(f" ({n})" for n in self.notes())
        if self.tied_with is not None:
            line += (f" (close call: '{self.tied_with}' was nearly as likely; answered on '{self.db}', "
                     f"name the database to ask the other)")
        if not self.matched:
            line += "; no database's words, names or values are in the question: routed by meaning alone"
        return line


class DatabaseRouter:
    """Ranks the databases of a ``DatabaseIndex`` for a question (see module doc)."""

    def __init__(self, index: DatabaseIndex, encoder: Encoder, *, mode: str = "fused",
                 margin: float = DEFAULT_MARGIN, weights: dict[str, float] | None = None,
                 history: QuestionLog | None = None) -> None:
        if mode not in MODES:
            from kgsql.errors import InputError

            raise InputError(f"unknown routing mode '{mode}' (choose from {', '.join(MODES)})")
        self.index, self.encoder, self.mode, self.margin = index, encoder, mode, margin
        self.history = history if history is not None and len(history) else None
        self.weights = dict(WEIGHTS, **(weights or {}))
        n = len(index.documents)
        self._bm25 = _bm25(index) if n else None
        df: dict[str, set[int]] = defaultdict(set)
        for i, doc in enumerate(index.documents):
            for phrase in doc.phrases:
                df[phrase].add(i)
        self._phrases = {p: (sorted(owners), math.log(1 + n / len(owners))) for p, owners in df.items()}
        self.named = NamedValues([doc.values for doc in index.documents])
        self._position = {doc.name: i for i, doc in enumerate(index.documents)}

    # ------------------------------------------------------------------ signals

    def _vector(self, question: str) -> np.ndarray:
        return self.encoder.encode_pooled([question], is_query=True)[0]

    def dense(self, question: str, vector: np.ndarray | None = None) -> np.ndarray:
        """Per database: the best cosine between the question and one of its table sentences."""
        out = np.full(len(self.index.documents), -1.0)
        if len(self.index.table_vectors):
            q = self._vector(question) if vector is None else vector
            np.maximum.at(out, self.index.table_owner, self.index.table_vectors @ q)
        return out

    def history_signal(self, question: str, vector: np.ndarray | None = None) -> np.ndarray:
        """Per database: the best cosine between the question and one of its past questions (NaN without one)."""
        if self.history is None:
            return np.full(len(self.index.documents), np.nan)
        q = self._vector(question) if vector is None else vector
        return self.history.best(q / max(float(np.linalg.norm(q)), 1e-12), len(self.index.documents))

    def bm25(self, question: str) -> np.ndarray:
        terms = [w for w in fold(question) if w not in STOPWORDS]
        if self._bm25 is None or not terms:
            return np.zeros(len(self.index.documents))
        return np.asarray(self._bm25.get_scores(terms), dtype=np.float64)

    def exact(self, question: str) -> np.ndarray:
        """Sum over the names and values the question repeats: kind weight x log(1 + N / databases holding it)."""
        out = np.zeros(len(self.index.documents))
        ws = fold(question)
        seen: set[str] = set()
        for size in range(1, MAX_PHRASE_WORDS + 1):
            for i in range(len(ws) - size + 1):
                phrase = " ".join(ws[i:i + size])
                if phrase in seen or phrase not in self._phrases:
                    continue
                seen.add(phrase)
                owners, idf = self._phrases[phrase]
                for o in owners:
                    kind = self.index.documents[o].phrases[phrase]
                    out[o] += KIND_WEIGHTS.get(kind, 1.0) * idf
        return out

    def signals(self, question: str) -> dict[str, np.ndarray]:
        """Every signal for ``question`` (the question encoded once); ``history`` only with a question log."""
        vector = self._vector(question) if len(self.index.table_vectors) or self.history is not None else None
        out = {"dense": self.dense(question, vector), "bm25": self.bm25(question), "exact": self.exact(question)}
        if self.history is not None:
            out["history"] = self.history_signal(question, vector)
        return out

    def signal(self, question: str, mode: str) -> np.ndarray:
        """One signal (``history``: on the fused scale, :func:`kgsql.route.history.log_scores`)."""
        return log_scores(self.history_signal(question)) if mode == "history" else getattr(self, mode)(question)

    # ------------------------------------------------------------------ ranking

    def combine(self, signals: dict[str, np.ndarray], mode: str | None = None) -> np.ndarray:
        """One score per database from ``signals`` under ``mode`` (fused: weighted z-scores)."""
        mode = mode or self.mode
        if mode != "fused":
            return signals[mode]
        weighted = [self.weights[k] * (log_scores(v) if k == "history" else _z(v))
                    for k, v in signals.items() if self.weights.get(k)]
        return np.sum(weighted, axis=0) if weighted else np.zeros(len(self.index.documents))

    def route(self, question: str, *, top: int | None = None) -> Routing:
        """The databases ranked for ``question`` (all of them, or the first ``top``)."""
        if not self.index.documents:
            from kgsql.errors import InputError

            raise InputError("no database to route to: the graph is empty (run kgsql ingest first)")
        if self.mode == "history" and self.history is None:
            from kgsql.errors import InputError

            raise InputError("routing mode 'history' needs a question log: no database was taught questions "
                             "(ingest --history or learn)")
        t0 = time.perf_counter()
        signals = self.signals(question) if self.mode == "fused" else {self.mode: self.signal(question, self.mode)}
        scores = self.combine(signals)
        routing = self.ranking(question, scores, top=None if top is None else max(top, WITHIN))
        if self.mode == "fused":
            self._prefer_named(routing)
        routing.ranked = routing.ranked[:top]
        routing.timings_ms["route"] = round((time.perf_counter() - t0) * 1000, 2)
        routing.matched = any(bool(np.any(signals[k] > 0)) for k in ("bm25", "exact") if k in signals) \
            or not ({"bm25", "exact"} & set(signals))
        return routing

    def _prefer_named(self, routing: Routing) -> None:
        """Put first the database storing a name the question says, when the first stores none
        (``kgsql.route.named``)."""
        choice = self.named.choose(routing.question, [self._position[r.db] for r in routing.ranked[:WITHIN]])
        if choice is not None:
            at, routing.named = choice
            routing.ranked.insert(0, routing.ranked.pop(at))

    def ranking(self, question: str, scores: np.ndarray, *, top: int | None = None,
                mode: str | None = None) -> Routing:
        order = np.argsort(-scores, kind="stable")[:top]
        names = self.index.names
        ranked = [Route(names[i], float(scores[i])) for i in order]
        margin = self.margin if (mode or self.mode) == "fused" else 0.0
        return Routing(question, ranked, margin, mode or self.mode)


def _z(values: np.ndarray) -> np.ndarray:
    std = float(values.std())
    return (values - values.mean()) / std if std > 1e-9 else np.zeros_like(values, dtype=np.float64)


def _bm25(index: DatabaseIndex) -> Any:
    import bm25s

    model = bm25s.BM25()
    model.index([doc.terms or [""] for doc in index.documents], show_progress=False)
    return model
