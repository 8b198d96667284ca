"""Per-question evidence for every column and table, as numeric features.

Raw MaxSim scores are not comparable across questions or databases (a long
question with many concepts gives every column a middling mean). The
selector therefore turns the late-interaction matrix into normalised
features (MaxSim relative to the best column, per-query-token z-scores,
rank, the table's own score), adds cheap lexical and structural facts (name
words in the question, primary/foreign key, name-like column) and value
matches, and a logistic model calibrated on Spider train maps them to a
probability. One threshold on that probability then means the same thing on
every database.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kgsql.text.words import STOPWORDS, split_identifier, stem, words
from kgsql.schema.model import DatabaseSchema

COLUMN_FEATURES = (
    "mean", "c_rel", "z1", "z2", "zw", "t_rel", "tb_rel", "logrank", "lex_column", "lex_table",
    "primary_key", "foreign_key", "name_like", "log_columns", "value",
)
TABLE_FEATURES = ("p_max", "p_top3", "log_columns", "t_rel", "tb_rel", "lex_table", "z1_max", "lex_max", "log_tables")
NAME_WORDS = frozenset({"name", "title", "names"})


def word_weights(tokens: tuple[str, ...]) -> np.ndarray:
    """Weights over query token rows so each word counts once, however many pieces it has."""
    n = len(tokens)
    w = np.ones(n, dtype=np.float64)
    i = 0
    while i < n:
        j = i
        while j + 1 < n and tokens[j + 1] == tokens[i] and tokens[i] != "":
            j += 1
        w[i : j + 1] = 1.0 / (j - i + 1)
        i = j + 1
    return w / w.sum() if n else w


@dataclass
class SchemaFacts:
    """Question-independent facts of a schema, computed once per database."""

    column_keys: list[tuple[str, str]]
    table_names: list[str]
    table_of_column: np.ndarray  # index into table_names
    column_words: list[list[str]]
    table_words: list[list[str]]
    is_pk: np.ndarray
    is_fk: np.ndarray
    name_like: np.ndarray
    _column_inv: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    _table_inv: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._column_inv = _inverted(self.column_words)
        self._table_inv = _inverted(self.table_words)
        self._column_len = np.array([len(ws) for ws in self.column_words], dtype=np.float64)
        self._table_len = np.array([len(ws) for ws in self.table_words], dtype=np.float64)

    def column_coverage(self, qset: set[str]) -> np.ndarray:
        """Per column: share of its name words that occur in the question."""
        return _coverage_all(self._column_inv, self._column_len, qset)

    def table_coverage(self, qset: set[str]) -> np.ndarray:
        return _coverage_all(self._table_inv, self._table_len, qset)

    @classmethod
    def from_schema(cls, schema: DatabaseSchema) -> "SchemaFacts":
        tables = [t.name for t in schema.tables]
        t_index = {t: i for i, t in enumerate(tables)}
        keys = [(t.name, c.name) for t in schema.tables for c in t.columns]
        pks = {(t.name, c) for t in schema.tables for c in t.primary_key}
        fks = {(f.table, f.column) for f in schema.foreign_keys} | {(f.ref_table, f.ref_column) for f in schema.foreign_keys}
        name_like = []
        for t, c in keys:
            cl, parts = c.lower(), split_identifier(c)
            name_like.append(cl in NAME_WORDS or "name" in parts or cl == t.lower()
                             or cl.rstrip("s") == t.lower().rstrip("s"))
        return cls(
            column_keys=keys,
            table_names=tables,
            table_of_column=np.array([t_index[t] for t, _ in keys], dtype=np.int64),
            column_words=[[stem(w) for w in split_identifier(c) if w not in STOPWORDS and w != "id"] for _, c in keys],
            table_words=[[stem(w) for w in split_identifier(t) if w not in STOPWORDS] for t in tables],
            is_pk=np.array([k in pks for k in keys], dtype=np.float64),
            is_fk=np.array([k in fks for k in keys], dtype=np.float64),
            name_like=np.array(name_like, dtype=np.float64),
        )


def _inverted(word_lists: list[list[str]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """word -> (item ids, occurrences in each item)."""
    inv: dict[str, dict[int, int]] = {}
    for i, ws in enumerate(word_lists):
        for w in ws:
            inv.setdefault(w, {})
            inv[w][i] = inv[w].get(i, 0) + 1
    return {w: (np.fromiter(d.keys(), np.int64), np.fromiter(d.values(), np.float64)) for w, d in inv.items()}


def _coverage_all(inv: dict[str, tuple[np.ndarray, np.ndarray]], lengths: np.ndarray, qset: set[str]) -> np.ndarray:
    """``sum(w in qset for w in words) / len(words)`` for every item, via the inverted index."""
    hits = np.zeros(len(lengths))
    for w in qset:
        entry = inv.get(w)
        if entry is not None:
            hits[entry[0]] += entry[1]
    return np.divide(hits, lengths, out=np.zeros_like(hits), where=lengths > 0)


def column_features(per_token: np.ndarray, query_tokens: tuple[str, ...], question: str, facts: SchemaFacts,
                    value_scores: np.ndarray | None = None) -> np.ndarray:
    """``[n_columns, len(COLUMN_FEATURES)]`` from the MaxSim matrix (tables first, then columns).

    Documents pruned on very wide schemas (NaN) get the lowest evidence.
    """
    nt, nc = len(facts.table_names), len(facts.column_keys)
    M = np.nan_to_num(per_token.astype(np.float64), nan=-1.0)
    Mt, Mc = M[:, :nt], M[:, nt:]
    w = word_weights(query_tokens) if len(query_tokens) == len(M) else np.full(len(M), 1.0 / max(1, len(M)))
    mean_c = w @ Mc
    mu, sd = Mc.mean(1, keepdims=True), Mc.std(1, keepdims=True) + 0.02
    Z = (Mc - mu) / sd
    if len(Z) >= 2:
        top2 = -np.partition(-Z, 1, axis=0)[:2]
        z1, z2 = top2[0], top2[1]
    else:
        z1 = z2 = Z[0]
    zw = w @ np.clip(Z, 0, None)
    mean_t = w @ Mt
    tix = facts.table_of_column
    t_rel = mean_t[tix] - mean_t.max()
    tbest = np.full(nt, -9.0)
    np.maximum.at(tbest, tix, mean_c)
    tb_rel = tbest[tix] - mean_c.max()
    rank = np.empty(nc)
    rank[np.argsort(-mean_c, kind="stable")] = np.arange(nc)
    qset = {stem(x) for x in words(question) if x not in STOPWORDS}
    lex_t = facts.table_coverage(qset)
    lex_c = facts.column_coverage(qset)
    vals = value_scores if value_scores is not None else np.zeros(nc)
    return np.stack([
        mean_c, mean_c - mean_c.max(), z1, z2, zw, t_rel, tb_rel, np.log1p(rank), lex_c, lex_t[tix],
        facts.is_pk, facts.is_fk, facts.name_like, np.full(nc, np.log(max(nc, 1))), vals,
    ], axis=1)


def table_features(col_feats: np.ndarray, p_col: np.ndarray, facts: SchemaFacts) -> np.ndarray:
    """``[n_tables, len(TABLE_FEATURES)]``: a table is as relevant as its best columns and its name.

    Vectorised over tables (columns are grouped by table in schema order), so
    it stays cheap on schemas with thousands of tables.
    """
    nt = len(facts.table_names)
    out = np.zeros((nt, len(TABLE_FEATURES)))
    out[:] = [0, 0, 0, -1, -1, 0, -5, 0, np.log(max(nt, 1))]  # tables without columns
    tix = facts.table_of_column
    if len(tix) == 0:
        return out
    present, starts, counts = np.unique(tix, return_index=True, return_counts=True)
    order = np.lexsort((-p_col, tix))  # by table, best column first
    rank = np.arange(len(tix)) - np.repeat(starts, counts)
    top3 = np.zeros(nt)
    keep = rank < 3
    np.add.at(top3, tix[order][keep], p_col[order][keep])
    out[present, 0] = np.maximum.reduceat(p_col, starts)
    out[present, 1] = top3[present]
    out[present, 2] = np.log1p(counts)
    first = col_feats[starts]
    out[present, 3], out[present, 4], out[present, 5] = first[:, 5], first[:, 6], first[:, 9]
    out[present, 6] = np.maximum.reduceat(col_feats[:, 2], starts)
    out[present, 7] = np.maximum.reduceat(col_feats[:, 8], starts)
    return out


def table_features_reference(col_feats: np.ndarray, p_col: np.ndarray, facts: SchemaFacts) -> np.ndarray:
    """Loop version of ``table_features`` (the definition; tests check they agree)."""
    nt = len(facts.table_names)
    out = np.zeros((nt, len(TABLE_FEATURES)))
    tix = facts.table_of_column
    for t in range(nt):
        idx = np.flatnonzero(tix == t)
        if len(idx) == 0:
            out[t] = [0, 0, 0, -1, -1, 0, -5, 0, np.log(max(nt, 1))]
            continue
        ps = -np.sort(-p_col[idx])
        f = col_feats[idx[0]]
        out[t] = [ps[0], ps[:3].sum(), np.log1p(len(idx)), f[5], f[6], f[9],
                  col_feats[idx, 2].max(), col_feats[idx, 8].max(), np.log(nt)]
    return out


@dataclass(frozen=True)
class LogisticModel:
    """Standardise, then a logistic regression; parameters live in calibration.json."""

    weights: tuple[float, ...]  # one per feature, then the bias
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    def predict(self, X: np.ndarray) -> np.ndarray:
        w = np.asarray(self.weights)
        z = ((X - np.asarray(self.mean)) / np.asarray(self.scale)) @ w[:-1] + w[-1]
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray, *, l2: float = 0.1, iters: int = 30) -> "LogisticModel":
        """Newton's method with a small L2 penalty (deterministic, numpy only)."""
        mu, sd = X.mean(0), X.std(0) + 1e-6
        Xn = np.c_[(X - mu) / sd, np.ones(len(X))]
        w = np.zeros(Xn.shape[1])
        for _ in range(iters):
            p = 1.0 / (1.0 + np.exp(-np.clip(Xn @ w, -30, 30)))
            g = Xn.T @ (p - y) + l2 * w
            H = (Xn * (p * (1 - p))[:, None]).T @ Xn + l2 * np.eye(len(w))
            w = w - np.linalg.solve(H, g)
        return cls(tuple(float(x) for x in w), tuple(float(x) for x in mu), tuple(float(x) for x in sd))

    def to_dict(self) -> dict[str, list[float]]:
        return {"weights": list(self.weights), "mean": list(self.mean), "scale": list(self.scale)}

    @classmethod
    def from_dict(cls, d: dict[str, list[float]]) -> "LogisticModel":
        return cls(tuple(d["weights"]), tuple(d["mean"]), tuple(d["scale"]))
