"""``SchemaRetriever``: question + schema -> ``SchemaSelection``.

Pipeline per question (everything per database is prepared once and cached):

1. encode the question into token vectors (the encoder seam);
2. late-interaction MaxSim against every table and column document;
3. value search when the database file is available;
4. features -> calibrated probabilities for columns, then tables;
5. selection: tables above the table threshold (at least the best one) and
   tables the question names (their words in a row, any ending),
   their columns above the column threshold, their name-like columns and
   primary keys, columns whose values the question mentions, a top-k floor;
6. join-path completion so the sub-schema is always joinable.

Calibration (the logistic models of step 4 and the thresholds of step 5)
comes from the shipped ``kgsql/retrieve/calibration.json`` (``CALIBRATION_FILE``,
fitted on Spider train) unless another file is named: the ``calibration=``
argument of ``SchemaRetriever`` (a path or a ``Calibration``) first, else the
environment variable ``KGSQL_CALIBRATION`` (a path). New files come from
``python -m kgsql.lab.calibrate --out PATH``, which never writes into the
package. ``SchemaRetriever.choose`` re-runs step 5-6 alone on given
evidence (calibration and threshold sweeps use it).
"""
from __future__ import annotations

import json
import os
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from kgsql.retrieve.documents import FIELD_NAMES, Document, schema_documents
from kgsql.text.encoder import Encoder, TokenEmbeddings, get_encoder
from kgsql.retrieve.features import COLUMN_FEATURES, LogisticModel, SchemaFacts, column_features, table_features
from kgsql.retrieve.index import IndexStore, TokenIndex
from kgsql.schema.joins import FKGraph, complete_joins, fk_graph
from kgsql.retrieve.late_interaction import FirstStage, LateInteractionScores, late_interaction
from kgsql.retrieve.selection import (
    REASON_DESCRIPTION, REASON_JOIN, REASON_NAME, REASON_PRIMARY_KEY, REASON_TABLE, REASON_TOP_K, REASON_VALUE,
    ColumnChoice, SchemaSelection,
)
from kgsql.retrieve.values import ValueIndex, ValueLimits, ValueMatch
from kgsql.schema.model import DatabaseSchema
from kgsql.text.words import names_said

#: The shipped calibration (Spider train); read unless another file is named.
CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
#: Environment variable naming a calibration file to use instead of ``CALIBRATION_FILE``.
ENV_CALIBRATION = "KGSQL_CALIBRATION"
#: Column of the feature matrix: the share of a column's name words the question says.
LEX_COLUMN = COLUMN_FEATURES.index("lex_column")
#: Prepared databases (and value indexes) kept in memory per retriever, least recently used dropped.
MAX_PREPARED = 64


@dataclass(frozen=True)
class SelectionConfig:
    """Selection thresholds; defaults come from calibration.json (Spider train)."""

    table_threshold: float = 0.05
    column_threshold: float = 0.02
    top_k_floor: int = 3
    value_threshold: float = 0.85
    include_primary_keys: bool = True
    include_name_columns: bool = True
    include_named_tables: bool = True  # a table the question names (text.words.names_said) is chosen
    complete_joins: bool = True
    #: Above this many tables both thresholds shrink by (wide_tables / tables) ** 2: on one schema of all 163
    #: Spider databases (838 tables) the calibrated probabilities of the right tables fall to ~1e-3 and the
    #: thresholds fitted on single databases kept 50 % perfect recall (docs/retrieval.md, session 23).
    wide_tables: int = 80
    #: ... and then at most this many tables and columns pass the thresholds, the likeliest first (a wide schema
    #: of flatter probabilities, bench_wide's 1,000 tables, otherwise passes thousands of columns).
    wide_max_tables: int = 30
    wide_max_columns: int = 150

    def scale(self, tables: int) -> float:
        """The factor on both thresholds for a schema of ``tables`` tables (1 up to ``wide_tables``)."""
        return 1.0 if tables <= self.wide_tables or self.wide_tables <= 0 else (self.wide_tables / tables) ** 2


@dataclass
class Calibration:
    """The logistic models and thresholds fitted by ``kgsql.lab.calibrate``."""

    column_model: LogisticModel
    table_model: LogisticModel
    config: SelectionConfig
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> "Calibration":
        """The calibration in ``path``; default: ``calibration_file()`` (``$KGSQL_CALIBRATION`` or the shipped one)."""
        path = calibration_file() if path is None else path
        try:
            with open(path, encoding="utf-8") as fh:
                d = json.load(fh)
            return cls(LogisticModel.from_dict(d["column_model"]), LogisticModel.from_dict(d["table_model"]),
                       SelectionConfig(**d.get("config", {})), d.get("info", {}))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            from kgsql.errors import InputError

            raise InputError(f"cannot read calibration file {os.fspath(path)}: {exc}") from exc

    def save(self, path: str | os.PathLike[str]) -> None:
        from dataclasses import asdict

        Path(path).write_text(json.dumps({
            "column_model": self.column_model.to_dict(), "table_model": self.table_model.to_dict(),
            "config": asdict(self.config), "info": self.info,
        }, indent=1) + "\n", encoding="utf-8")


@dataclass
class PreparedDatabase:
    """Everything question-independent about one database."""

    schema: DatabaseSchema
    docs: list[Document]
    index: TokenIndex
    facts: SchemaFacts
    graph: FKGraph
    values: ValueIndex | None
    n_columns: int
    build_ms: float
    column_pos: dict[tuple[str, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.column_pos = {k: i for i, k in enumerate(self.facts.column_keys)}


@dataclass
class SelectionScores:
    """Scores behind a selection; the benchmark and calibration read it."""

    query: TokenEmbeddings
    late: LateInteractionScores
    features: np.ndarray
    p_column: np.ndarray
    p_table: np.ndarray
    values: list[ValueMatch]
    value_scores: np.ndarray
    timings_ms: dict[str, float]


class SchemaRetriever:
    """Selects the tables and columns a question needs (see module doc)."""

    def __init__(self, encoder: Encoder | str | None = None, *, config: SelectionConfig | None = None,
                 calibration: Calibration | str | os.PathLike[str] | None = None,
                 cache_dir: str | os.PathLike[str] | None = None, use_cache: bool = True,
                 value_limits: ValueLimits = ValueLimits(), exact_limit: int = 20_000,
                 candidates: int = 400, first_stage: FirstStage | None = None) -> None:
        self.encoder = get_encoder(encoder) if isinstance(encoder, str) else (encoder or get_encoder())
        if isinstance(calibration, Calibration):
            self.calibration = calibration
        else:
            self.calibration = Calibration.load(calibration)
        self.config = config or self.calibration.config
        self.cache_dir = cache_dir
        self.use_cache = use_cache
        self.store = IndexStore(self.encoder, cache_dir, use_disk=use_cache)
        self.value_limits = value_limits
        self.exact_limit = exact_limit
        self.candidates = candidates
        #: Where a database past ``exact_limit`` token rows gets its candidates (a graph server's vector
        #: index, ``kgsql.graph.vectors``); None: the index's own mean-token vectors.
        self.first_stage = first_stage
        self._prepared: OrderedDict[int, tuple[weakref.ref, str | None, int, PreparedDatabase]] = OrderedDict()
        self._values: OrderedDict[str, ValueIndex] = OrderedDict()

    # ------------------------------------------------------------------ per database

    def prepare(self, schema: DatabaseSchema, *, db_path: str | os.PathLike[str] | None = None) -> PreparedDatabase:
        """Index ``schema`` (cached in memory by object, on disk by content) and its values."""
        path = _database_file(schema, db_path)
        hit = self._prepared.get(id(schema))
        if hit is not None and hit[0]() is schema and hit[1] == path and hit[2] == schema.column_count:
            self._prepared.move_to_end(id(schema))
            return hit[3]
        t0 = time.perf_counter()
        docs = schema_documents(schema)
        index = self.store.get(schema.name, docs)
        values = None
        if path is not None:
            values = ValueIndex.for_database(path, schema, limits=self.value_limits, cache_dir=self.cache_dir,
                                             use_cache=self.use_cache, memo=self._values)
            while len(self._values) > MAX_PREPARED:
                self._values.popitem(last=False)
        prepared = PreparedDatabase(schema, docs, index, SchemaFacts.from_schema(schema), fk_graph(schema), values,
                                    schema.column_count, (time.perf_counter() - t0) * 1000)
        if values is not None and not values.reachable:
            return prepared  # its server was down: prepared again next time, when it may be back
        self._prepared[id(schema)] = (weakref.ref(schema), path, schema.column_count, prepared)
        while len(self._prepared) > MAX_PREPARED:  # callers that build a new schema object per call
            self._prepared.popitem(last=False)
        return prepared

    def forget(self, schema: DatabaseSchema) -> None:
        """Drop what ``prepare`` kept for ``schema`` (call after editing it in place).

        Prepared databases are reused by object identity; the on-disk caches
        are keyed by content, so a changed schema re-encodes only what changed.
        """
        self._prepared.pop(id(schema), None)

    # ------------------------------------------------------------------ per question

    def encode_question(self, question: str) -> TokenEmbeddings:
        return self.encoder.encode_tokens([question], is_query=True)[0]

    def scores(self, schema: DatabaseSchema, question: str, *, db_path: str | os.PathLike[str] | None = None,
                 prepared: PreparedDatabase | None = None) -> SelectionScores:
        """Late-interaction scores, value matches, features and probabilities for ``question``."""
        prep = prepared or self.prepare(schema, db_path=db_path)
        timings: dict[str, float] = {}
        t = time.perf_counter()
        q = self.encode_question(question)
        timings["encode"] = _ms(t)
        t = time.perf_counter()
        values = prep.values.search(question) if prep.values is not None else []
        value_scores = np.zeros(prep.n_columns)
        for m in values:
            i = prep.column_pos.get((m.table, m.column))
            if i is not None:
                value_scores[i] = max(value_scores[i], m.score)
        timings["values"] = _ms(t)
        t = time.perf_counter()
        n_tables = len(prep.facts.table_names)
        always = np.flatnonzero(value_scores > 0) + n_tables
        stage = self.first_stage
        nearest = None if stage is None else (lambda v, k: stage.candidates(prep.schema.name, prep.index, v, k))
        late = late_interaction(q.vectors, prep.index, q.tokens, exact_limit=self.exact_limit,
                                candidates=self.candidates, always=np.r_[np.arange(n_tables), always], nearest=nearest)
        timings["maxsim"] = _ms(t)
        t = time.perf_counter()
        feats = column_features(late.per_token, q.tokens, question, prep.facts, value_scores)
        p_col = self.calibration.column_model.predict(feats)
        p_tab = self.calibration.table_model.predict(table_features(feats, p_col, prep.facts))
        timings["features"] = _ms(t)
        return SelectionScores(q, late, feats, p_col, p_tab, values, value_scores, timings)

    def select(self, schema: DatabaseSchema, question: str, *,
               db_path: str | os.PathLike[str] | None = None) -> SchemaSelection:
        """The sub-schema ``question`` needs, with a score and reasons per column."""
        t_all = time.perf_counter()
        if not question.strip():
            from kgsql.errors import InputError

            raise InputError("empty question")
        prep = self.prepare(schema, db_path=db_path)
        if prep.n_columns == 0:
            return SchemaSelection(schema.name, question)
        ev = self.scores(schema, question, prepared=prep)
        t = time.perf_counter()
        sel = self.choose(prep, question, ev)
        sel.timings_ms = dict(ev.timings_ms, select=_ms(t), total=_ms(t_all))
        return sel

    # ------------------------------------------------------------------ selection

    def choose(self, prepared: PreparedDatabase, question: str, scores: SelectionScores) -> SchemaSelection:
        """The selection (steps 5-6) from ``scores`` under this retriever's thresholds.

        No encoding or scoring happens here: calibration and threshold sweeps compute
        ``scores`` once per question and call this per threshold pair (``with_config``).
        """
        return self._choose(prepared, question, scores)

    def _choose(self, prep: PreparedDatabase, question: str, ev: SelectionScores) -> SchemaSelection:
        cfg, facts = self.config, prep.facts
        keys, p, tix = facts.column_keys, ev.p_column, facts.table_of_column
        reasons: dict[int, list[str]] = {}

        def add(i: int, reason: str) -> None:
            r = reasons.setdefault(i, [])
            if reason not in r:
                r.append(reason)

        scale = cfg.scale(len(facts.table_names))
        passed = np.flatnonzero(ev.p_table >= cfg.table_threshold * scale)
        if scale < 1.0 and len(passed) > cfg.wide_max_tables:
            passed = passed[np.argsort(-ev.p_table[passed], kind="stable")[: cfg.wide_max_tables]]
        tables = set(passed.tolist())
        if len(ev.p_table):
            tables.add(int(np.argmax(ev.p_table)))  # first max: deterministic
        named = set(names_said(question, facts.table_names)) if cfg.include_named_tables else set()
        order = np.argsort(-p, kind="stable")
        for i in order[: cfg.top_k_floor]:
            add(int(i), REASON_TOP_K)
        for i in np.flatnonzero(ev.value_scores >= cfg.value_threshold):
            add(int(i), REASON_VALUE)
        in_tables = np.isin(tix, list(tables))
        hits = np.flatnonzero(in_tables & (p >= cfg.column_threshold * scale))
        if scale < 1.0 and len(hits) > cfg.wide_max_columns:
            hits = np.sort(hits[np.argsort(-p[hits], kind="stable")[: cfg.wide_max_columns]])
        for i, reason in zip(hits, self._match_reasons(prep, ev, hits)):
            add(int(i), reason)
        if cfg.include_name_columns:
            for i in np.flatnonzero(in_tables & (facts.name_like > 0)):
                add(int(i), REASON_TABLE)
        chosen_tables = {facts.table_names[tix[i]] for i in reasons} | named  # "the name of the event": `event`
        join_tables: list[str] = []
        disconnected = False
        if cfg.complete_joins:
            jc = complete_joins(prep.schema, chosen_tables, prep.graph)
            join_tables, disconnected = jc.added_tables, jc.disconnected
            chosen_tables |= set(jc.added_tables)
            for key in jc.key_columns:
                if key in prep.column_pos:
                    add(prep.column_pos[key], REASON_JOIN)
        if cfg.include_name_columns:  # every chosen table's name column, not only the likeliest tables'
            chosen = np.isin(tix, [i for i, t in enumerate(facts.table_names) if t in chosen_tables])
            for i in np.flatnonzero(chosen & (facts.name_like > 0)):  # ("Who is the dumbest hero?": its name)
                add(int(i), REASON_TABLE)
        if cfg.include_primary_keys:
            for i in np.flatnonzero(facts.is_pk > 0):
                if facts.table_names[tix[i]] in chosen_tables:
                    add(int(i), REASON_PRIMARY_KEY)
        # Top-k reasons are only informative when nothing better explains the column.
        for i, r in reasons.items():
            if len(r) > 1 and REASON_TOP_K in r:
                r.remove(REASON_TOP_K)
        columns = [ColumnChoice(keys[i][0], keys[i][1], round(float(p[i]), 6), tuple(reasons[i]))
                   for i in sorted(reasons)]
        table_order = [t for t in facts.table_names if t in chosen_tables]
        return SchemaSelection(prep.schema.name, question, table_order, columns, list(ev.values),
                               join_tables, disconnected, word_support=word_support(ev.late))

    @staticmethod
    def _match_reasons(prep: PreparedDatabase, ev: SelectionScores, cols: np.ndarray) -> list[str]:
        """Which part of each column's document the question matched best (name, description, value)."""
        if len(cols) == 0:
            return []
        nt = len(prep.facts.table_names)
        M = np.nan_to_num(ev.late.per_token[:, nt:], nan=-1.0)
        z = (M[:, cols] - M.mean(1, keepdims=True)) / (M.std(1, keepdims=True) + 0.02)
        index = prep.index
        out = []
        for j, i in enumerate(cols):
            if ev.value_scores[i] > 0:
                out.append(REASON_VALUE)
            elif ev.features[i, LEX_COLUMN] > 0 or M.size == 0:  # lexical name overlap
                out.append(REASON_NAME)
            else:
                # The query token that singles this column out most, and the document row it matched.
                qi = int(np.argmax(z[:, j]))
                lo, hi = index.offsets[nt + i], index.offsets[nt + i + 1]
                row = lo + int(np.argmax(index.rows32(slice(lo, hi)) @ ev.query.vectors[qi]))
                out.append(_FIELD_REASON.get(FIELD_NAMES[int(index.fields[row])], REASON_NAME))
        return out

    def with_config(self, **changes: Any) -> "SchemaRetriever":
        """A retriever sharing this one's encoder and caches, with other thresholds."""
        other = object.__new__(SchemaRetriever)
        other.__dict__.update(self.__dict__)
        other.config = replace(self.config, **changes)
        return other


_FIELD_REASON = {"name": REASON_NAME, "table": REASON_TABLE, "description": REASON_DESCRIPTION, "value": REASON_VALUE}


def word_support(late: LateInteractionScores) -> dict[str, float]:
    """Each query word's best match over every document (its pieces' best; documents pruned away on
    very wide schemas do not count): a word the whole schema matches weakly names nothing in it."""
    if late.per_token.size == 0:
        return {}
    best = np.nan_to_num(late.per_token, nan=-1.0).max(axis=1)
    out: dict[str, float] = {}
    for word, score in zip(late.query_tokens, best.tolist()):
        if word:
            out[word] = max(out.get(word, -1.0), round(float(score), 4))
    return out


def calibration_file() -> Path:
    """``$KGSQL_CALIBRATION`` when set (a path), else the shipped ``CALIBRATION_FILE``."""
    env = os.environ.get(ENV_CALIBRATION)
    return Path(env).expanduser() if env else CALIBRATION_FILE


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def _database_file(schema: DatabaseSchema, db_path: str | os.PathLike[str] | None) -> str | None:
    """The database to read values from: ``db_path``, else the schema's own path, if it is there (or a URL)."""
    from kgsql.db.target import available

    return available(db_path if db_path is not None else schema.path)
