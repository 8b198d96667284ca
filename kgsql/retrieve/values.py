"""Find the cell values a question mentions: exactly, partly or misspelt.

Questions say "Alameda County" or "Sprngfield"; the SQL needs
``WHERE county = 'Alameda'``. The value index holds distinct text values per
column and answers in two passes:

1. BM25 (bm25s) over the words of each value finds values sharing words with
   the question (verified by containment and word coverage);
2. BM25 over character trigrams of each value catches misspellings and
   partial words that share no whole word; its best few candidates also get
   an edit-distance check (the expensive part, so it is kept to those).

Candidates from both are verified against the question text (whole-value
containment, word coverage, or an edit-distance ratio against question
windows of similar length) and that verification is the returned score.

A value with Chinese characters is also searched by the ways an English
question writes it (``kgsql.retrieve.romanise``: ``东风路`` as "dongfeng road"
and "dongfeng"); such a match has kind ``romanised`` and still names the
stored value.

Memory and build time are bounded for big databases: per column only the
``per_column`` most frequent text values are kept (``GROUP BY ... ORDER BY
count(*) DESC LIMIT``) over at most ``scan_rows`` rows, values longer than
``max_chars`` are skipped (free text, not filter values), and spatial/BLOB
columns are never read. The extracted values are cached as JSON keyed by the
file's path, size and mtime plus these limits.
"""
from __future__ import annotations

import difflib
import gzip
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from kgsql.errors import QueryExecutionError
from kgsql.paths import write_private
from kgsql.retrieve.index import default_cache_dir
from kgsql.retrieve.romanise import romanised_forms
from kgsql.text.words import STOPWORDS, words
from kgsql.schema.model import DatabaseSchema

_NUMERIC = re.compile(r"^[-+]?\d+([.,]\d+)?$")
#: A romanised form without some of the value's endings ("dongfeng" for 东风路) counts a little less than
#: the whole form, so "Dongfeng Road" prefers 东风路 to 东风大道; still above the hints' 0.95 bar.
SHORTENED = 0.96


@dataclass(frozen=True)
class ValueMatch:
    """A cell value the question mentions, and where it lives; ``kind`` is exact, partial, fuzzy or romanised.
    The one type for it from the value index through the question's state to the hints and evidence."""

    table: str
    column: str
    value: str
    score: float = 1.0
    kind: str = "exact"


@dataclass(frozen=True)
class ValueLimits:
    per_column: int = 1000
    scan_rows: int = 200_000
    max_chars: int = 80
    max_values: int = 500_000


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def extract_values(db_path: str | os.PathLike[str], schema: DatabaseSchema | None = None,
                   limits: ValueLimits = ValueLimits()) -> list[tuple[str, str, str]]:
    """(table, column, value) for the most frequent short text values of each column."""
    from kgsql.db.connect import open_database
    from kgsql.db.engines import engine_of

    if engine_of(db_path) != "sqlite":
        return _engine_values(db_path, schema, limits)
    conn = open_database(db_path, spatial=False)
    out: list[tuple[str, str, str]] = []
    try:
        if schema is not None:
            cols = [(t.name, c.name) for t in schema.tables for c in t.columns if c.spatial is None]
        else:
            cols = []
            for (tname,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            ).fetchall():
                cols += [(tname, r[1]) for r in conn.execute(f"PRAGMA table_info({_q(tname)})").fetchall()]
        for tname, cname in cols:
            if len(out) >= limits.max_values:
                break
            sql = (
                f"SELECT v, count(*) AS n FROM (SELECT {_q(cname)} AS v FROM {_q(tname)} LIMIT {int(limits.scan_rows)}) "
                f"WHERE typeof(v) = 'text' AND length(v) BETWEEN 1 AND {int(limits.max_chars)} "
                f"GROUP BY v ORDER BY n DESC, v LIMIT {int(limits.per_column)}"
            )
            try:
                rows = conn.execute(sql).fetchall()
            except Exception:  # noqa: BLE001 - a broken view/column should not stop indexing
                continue
            for v, _n in rows:
                v = str(v).strip()
                if v and not _NUMERIC.match(v):
                    out.append((tname, cname, v))
    finally:
        conn.close()
    return out[: limits.max_values]


def _engine_values(db: str | os.PathLike[str], schema: DatabaseSchema | None,
                   limits: ValueLimits) -> list[tuple[str, str, str]]:
    """:func:`extract_values` for a PostgreSQL/DuckDB database: its text columns, by the schema's types.
    Raises QueryExecutionError when the database cannot be reached at all (asked once, before any column)."""
    from kgsql.db import engines
    from kgsql.db.engines.base import is_text_type
    from kgsql.db.target import parse_target

    try:
        engines.engine_for(db).run("SELECT 1")  # a server that is down costs one attempt, not one per column
    except Exception as exc:  # noqa: BLE001 - each driver says "down" its own way
        shown = parse_target(os.fspath(db)).display  # the password masked
        raise QueryExecutionError(f"cannot read the values of {shown}: {exc}") from None
    if schema is None:
        target = parse_target(os.fspath(db))
        schema = engines.read_schema(target, sample_rows=1, value_examples=0, with_stats=False)
    out: list[tuple[str, str, str]] = []
    for table in schema.tables:
        for column in table.columns:
            if len(out) >= limits.max_values or column.spatial is not None or not is_text_type(column.type):
                continue
            try:
                values = engines.text_values(db, table.name, column.name, scan_rows=limits.scan_rows,
                                             max_chars=limits.max_chars, limit=limits.per_column)
            except Exception:  # noqa: BLE001 - a broken view/column should not stop indexing
                continue
            out += [(table.name, column.name, v.strip()) for v in values if v.strip() and not _NUMERIC.match(v.strip())]
    return out[: limits.max_values]


def _trigrams(word: str) -> list[str]:
    w = f" {word} "
    return [w[i : i + 3] for i in range(len(w) - 2)]


def _norm(text: str) -> str:
    return " ".join(words(text))


class ValueIndex:
    """BM25 over words and character trigrams of distinct column values. ``reachable`` is False for the empty
    index of a server that was down: nothing is kept of it, so the values are read when it is back."""

    def __init__(self, entries: list[tuple[str, str, str]], *, reachable: bool = True) -> None:
        import bm25s

        self.entries = entries
        self.reachable = reachable
        texts: list[str] = []
        self._entry: list[int] = []         # the entry each searchable text stands for
        self._romanised: list[float] = []   # 0: the stored value; else a romanised form's weight
        for i, (_t, _c, value) in enumerate(entries):
            for text, weight in ((value, 0.0), *((form, 1.0 if whole else SHORTENED) for form, whole
                                                 in romanised_forms(value))):
                texts.append(text)
                self._entry.append(i)
                self._romanised.append(weight)
        self._norm = [_norm(text) for text in texts]
        self._words = [n.split() for n in self._norm]
        self._word_bm25 = bm25s.BM25()
        self._tri_bm25 = bm25s.BM25()
        if entries:
            self._word_bm25.index([w or [""] for w in self._words], show_progress=False)
            self._tri_bm25.index([[g for w in ws for g in _trigrams(w)] or [""] for ws in self._words], show_progress=False)

    def __len__(self) -> int:
        return len(self.entries)

    # ------------------------------------------------------------------ build / cache

    @classmethod
    def for_database(cls, db_path: str | os.PathLike[str], schema: DatabaseSchema | None = None, *,
                     limits: ValueLimits = ValueLimits(), cache_dir: str | os.PathLike[str] | None = None,
                     use_cache: bool = True, memo: dict[str, "ValueIndex"] | None = None) -> "ValueIndex":
        """Extract (or load cached) values of ``db_path`` and index them.

        ``memo`` (cache key -> index) lets a caller reuse built BM25 indexes in memory.
        """
        from kgsql.db.engines import engine_class

        cols = "" if schema is None else ",".join(f"{t.name}.{c.name}" for t in schema.tables for c in t.columns)
        if engine_class(db_path).in_process:  # a file kgsql opens itself: its size and mtime are its version
            p: str | Path = Path(db_path).resolve()
            st = p.stat()
            version, stem = f"{st.st_size}|{st.st_mtime_ns}", p.stem
        else:  # a server's data has no mtime: the row counts of the ingested schema stand for its version
            p = os.fspath(db_path)
            version = "" if schema is None else ",".join(str(t.row_count) for t in schema.tables)
            stem = re.sub(r"\W+", "_", schema.name if schema is not None else "db")
        key = hashlib.sha256(f"v1|{p}|{version}|{limits}|{cols}".encode()).hexdigest()[:20]
        if memo is not None and key in memo:
            return memo[key]
        cache = (Path(cache_dir) if cache_dir else default_cache_dir()) / f"values-{stem[:40]}-{key}.json.gz"
        entries: list[tuple[str, str, str]] | None = None
        if use_cache and cache.exists():
            try:
                with gzip.open(cache, "rt", encoding="utf-8") as fh:
                    entries = [tuple(e) for e in json.load(fh)]  # type: ignore[misc]
            except (OSError, ValueError):
                entries = None
        if entries is None:
            try:
                entries = extract_values(p, schema, limits)
            except QueryExecutionError:  # a server down now: no values this time, and none cached for later
                return cls([], reachable=False)
            if use_cache:
                try:  # cell values: a 0600 file in a 0700 folder, replaced atomically
                    write_private(cache, gzip.compress(json.dumps(entries).encode("utf-8")))
                except OSError:
                    pass
        index = cls(entries)
        if memo is not None:
            memo[key] = index
        return index

    # ------------------------------------------------------------------ search

    def search(self, question: str, *, top_k: int = 20, min_score: float = 0.75,
               candidates: int = 32, fuzzy_candidates: int = 16) -> list[ValueMatch]:
        """Values mentioned in ``question``, best first (ties broken by table, column, value)."""
        if not self.entries:
            return []
        q_words = words(question)
        content = [w for w in q_words if w not in STOPWORDS]
        if not content:
            return []
        q_norm = " " + " ".join(q_words) + " "
        k = min(candidates, len(self._norm))
        # Values sharing whole words: verified by containment / coverage only.
        cand: dict[int, bool] = {}
        docs, scores = self._word_bm25.retrieve([content], k=k, show_progress=False)
        for d, sc in zip(docs[0], scores[0]):
            if sc > 0:
                cand[int(d)] = False
        # Values sharing character trigrams (misspellings): the best few also get the edit ratio.
        tri = [g for w in content if len(w) >= 4 for g in _trigrams(w)]
        if tri:
            kt = min(fuzzy_candidates, len(self._norm))
            docs, scores = self._tri_bm25.retrieve([tri], k=kt, show_progress=False)
            for d, sc in zip(docs[0], scores[0]):
                if sc > 0:
                    cand[int(d)] = True
        q_set = set(q_words)
        windows: dict[int, list[str]] = {}  # question word n-grams, built once per search
        for size in range(1, 8):
            windows[size] = [" ".join(q_words[i : i + size]) for i in range(0, max(1, len(q_words) - size + 1))]
        found: dict[tuple[str, str, str], ValueMatch] = {}
        for i, fuzzy in sorted(cand.items()):
            score, kind = self._verify(self._norm[i], self._words[i], q_norm, windows, q_set, min_score, fuzzy)
            if score >= min_score:
                t, c, v = self.entries[self._entry[i]]
                weight = self._romanised[i]
                m = ValueMatch(t, c, v, round(score * (weight or 1.0), 4), "romanised" if weight else kind)
                if (t, c, v) not in found or found[(t, c, v)].score < m.score:
                    found[(t, c, v)] = m
        ranked = sorted(found.values(), key=lambda m: (-m.score, m.table, m.column, m.value))
        return ranked[:top_k]

    @staticmethod
    def _verify(norm: str, vwords: list[str], q_norm: str, windows: dict[int, list[str]], q_set: set[str],
                min_score: float = 0.0, fuzzy: bool = True) -> tuple[float, str]:
        """How surely the question mentions this value: 1.0 verbatim, less when partial or misspelt.

        Scores below ``min_score`` are not computed exactly (quick upper
        bounds skip most edit-distance work); they are dropped anyway.
        """
        content = [w for w in vwords if w not in STOPWORDS]
        if not content or len(norm) < 2:
            return 0.0, ""
        if f" {norm} " in q_norm:
            # A whole single short word like "a" or "no" matches too easily.
            return (1.0 if len(norm) >= 3 else 0.5), "exact"
        covered = sum(len(w) for w in content if w in q_set)
        total = sum(len(w) for w in content)
        partial = covered / total if total else 0.0
        # Partial mentions ("Alameda" for "Alameda County Office") count less than whole ones.
        part = 0.95 if partial >= 1.0 else 0.9 * partial
        best = 0.0
        if fuzzy and len(norm) >= 4 and part < 0.95:
            # Edit-distance ratio against question windows with about as many words as the value.
            need = max(min_score, part) / 0.95
            sm = difflib.SequenceMatcher(None, autojunk=False)
            sm.set_seq2(norm)
            n = len(vwords)
            slack = max(3, len(norm) // 3)
            for size in sorted({max(1, n - 1), n, n + 1}):
                for window in windows.get(size, ()):
                    if abs(len(window) - len(norm)) > slack:
                        continue
                    sm.set_seq1(window)
                    floor = max(need, best)
                    if sm.real_quick_ratio() < floor or sm.quick_ratio() < floor:
                        continue
                    best = max(best, sm.ratio())
        fuzzy = 0.95 * best
        return max(part, fuzzy), ("partial" if covered else "fuzzy")

    def columns_scores(self, matches: list[ValueMatch]) -> dict[tuple[str, str], float]:
        """Best match score per (table, column)."""
        out: dict[tuple[str, str], float] = {}
        for m in matches:
            key = (m.table, m.column)
            out[key] = max(out.get(key, 0.0), m.score)
        return out

