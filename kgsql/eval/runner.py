"""Ask a method every question of a plan, score each answer, log it, resume.

The unit of work is a ``Group``: questions that share one example pool (all
questions of a plain Spider run; one test fold of a cross-fold run; one
database of a leave-one-database-out run). Groups of a run write into one
append-only ``RecordLog``, so a killed run picks up where it stopped.

A question whose model call produced nothing at all (no SQL, no tokens: the
LLM server is down, a request timed out) is *not* logged, so the next run
retries it; a few such failures in a row stop the run instead of filling the log with zeros."""
from __future__ import annotations

import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from kgsql.errors import InputError, KgsqlError
from kgsql.eval.datasets import Dataset, GoldQuestion
from kgsql.eval.interactions import check_earlier_turns, earlier_sql, interaction_chains, whole_interactions
from kgsql.eval.metric_registry import default_metric, metrics_for, zero_scores
from kgsql.eval.pooled import ask_pooled, route_fields
from kgsql.eval.records import Record, RecordLog
from kgsql.eval.replay import NOT_REPLAYABLE, NotReplayable, prompt_fingerprint
from kgsql.eval.verdict import evaluate_prediction
from kgsql.route.fallback import DEFAULT_TRIES

MAX_CONSECUTIVE_FAILURES = 3
MISSING_DB = "database file missing"


class RunAborted(KgsqlError):
    """The method failed several questions in a row without producing anything."""


@dataclass
class Group:
    """Benchmark questions answered with one few-shot pool; ``tag`` goes into each record's ``extra``."""

    questions: list[GoldQuestion]
    pool: Any = None
    tag: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunSpec:
    """How to answer and score: the method and its knobs."""

    method: str
    shots: int | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 30.0
    concurrency: int = 1
    metric: str = field(default_factory=default_metric)
    #: Ask with what the benchmark gives beside the question (BIRD's evidence); False: the question alone,
    #: so whatever knowledge the answer needs must come from the graph.
    with_evidence: bool = True
    #: The pooled setting (``--pool-databases``): question -> a ``kgsql.route`` Routing over the run's databases;
    #: the question is answered on the routed database, never told its own. None: its own database.
    route: Callable[[str], Any] | None = None
    #: Routed databases asked at most while each answer says nothing (``kgsql.route.fallback``; 1: the first only).
    route_tries: int = DEFAULT_TRIES


# --------------------------------------------------------------------------- choosing questions


def select_questions(questions: Sequence[GoldQuestion], *, limit: int | None = None, seed: int | None = None,
                     dbs: Iterable[str] | None = None, ids: Iterable[str] | None = None) -> list[GoldQuestion]:
    """The questions of a run, in dataset order.

    ``dbs``/``ids`` filter first; then ``limit`` takes the first N, or with a
    ``seed`` a fixed random sample of N (the same for every method, so runs
    are comparable question by question). On a multi-turn benchmark (every
    example a turn of an interaction) N counts whole interactions, so
    interaction EX stays meaningful and every turn has its earlier turns."""
    chosen = list(questions)
    if dbs:
        wanted = set(dbs)
        chosen = [e for e in chosen if e.db_id in wanted]
    if ids:
        wanted_ids = set(ids)
        chosen = [e for e in chosen if e.id in wanted_ids]
    if limit is None or limit >= len(chosen):
        return chosen
    if limit < 0:
        raise InputError(f"--limit must be positive, not {limit}")
    turns = whole_interactions(chosen, limit, lambda n, k: range(k) if seed is None else seeded_picks(n, k, seed))
    if turns is not None:
        return turns
    if seed is None:
        return chosen[:limit]
    return [chosen[i] for i in sorted(seeded_picks(len(chosen), limit, seed))]


def seeded_picks(n: int, k: int, seed: int) -> list[int]:
    """``k`` distinct indices below ``n`` drawn one at a time with ``random.Random(seed)``.

    The first ``k`` picks never depend on ``k``, so a larger ``--limit`` with the
    same seed extends a sample instead of replacing it (``random.sample`` only
    does so while it keeps the same internal algorithm; this loop is that
    algorithm's set-based branch, so small samples equal ``random.sample``'s)."""
    rng = random.Random(seed)
    seen: set[int] = set()
    picks: list[int] = []
    while len(picks) < k:
        j = rng.randrange(n)
        if j not in seen:
            seen.add(j)
            picks.append(j)
    return picks


def by_database(questions: Sequence[GoldQuestion]) -> list[GoldQuestion]:
    """Questions grouped by database (first-seen database order, dataset order inside), so a
    prefix-caching model server reads each database's schema once, not once per question."""
    first: dict[str, int] = {}
    for i, e in enumerate(questions):
        first.setdefault(e.db_id, i)
    return sorted(questions, key=lambda e: first[e.db_id])


# --------------------------------------------------------------------------- graph names


def graph_name(dataset: Dataset, db_id: str, prefix: str = "") -> str:
    """Name of ``db_id`` in the schema graph.

    A benchmark whose splits reuse database names with different schemas
    (``split_in_graph_name``: the spatial set's ``traffic`` of dataset1 keeps
    derived columns, dataset2's does not) has the split in the name: ``traffic_dataset1``."""
    name = f"{db_id}_{dataset.split}" if dataset.benchmark.split_in_graph_name and dataset.split else db_id
    return f"{prefix}{name}"


def ingest_databases(graph: Any, dataset: Dataset, db_ids: Iterable[str], *, prefix: str = "",
                     log: Callable[[str], None] | None = None, shipped_profiles: bool = True) -> dict[str, str]:
    """Ingest the databases the run needs; returns db_id -> graph name (present files only).

    Ingest is idempotent (unchanged databases are skipped), so every run calls it. Without
    ``shipped_profiles`` the names start with ``bare_``: the same database with and without a
    profile's knowledge are two graph databases, never one rewritten by turns."""
    prefix = prefix if shipped_profiles else f"bare_{prefix}"
    names: dict[str, str] = {}
    for db_id in sorted(set(db_ids)):
        path = dataset.db_path(db_id)
        if path is None:
            continue
        name = graph_name(dataset, db_id, prefix)
        find = dataset.benchmark.description_folder
        descriptions = find(dataset.root, dataset.split, db_id) if find is not None else None
        t0 = time.perf_counter()
        report = graph.ingest(path, name=name, descriptions=descriptions, shipped_profiles=shipped_profiles)
        if log is not None and not getattr(report, "unchanged", 0):
            log(f"ingested {db_id} as '{name}' ({time.perf_counter() - t0:.1f} s)")
        names[db_id] = name
    return names


def check_no_leakage(graph: Any, names: dict[str, str], questions: Iterable[GoldQuestion]) -> None:
    """Refuse to test questions the graph has learnt from (mined with their SQL): that would score memory.

    A pair is known by its database, question and SQL (``kgsql.mining.history.pair_id``); a user who
    mined part of a benchmark evaluates on the other part, or on a fresh ``--graph-prefix``."""
    from kgsql.graph.facts import mined_pairs
    from kgsql.mining.history import pair_id

    store = getattr(graph, "store", None)
    if store is None:
        return
    learnt: dict[str, set[str]] = {}
    leaked = []
    for e in questions:
        name = names.get(e.db_id)
        if name is None or not e.gold:
            continue
        if name not in learnt:
            learnt[name] = mined_pairs(store, name, "rule") | mined_pairs(store, name, "llm")
        ids = {pair_id(db, e.question, g) for db in {name, e.db_id} for g in e.gold}
        if ids & learnt[name]:
            leaked.append(e)
    if leaked:
        dbs = sorted({names[e.db_id] for e in leaked})
        raise InputError(f"the graph has learnt {len(leaked)} of the questions under test from their SQL "
                         f"(databases {', '.join(dbs[:5])}); test other questions, use another --graph-prefix, "
                         f"or forget them: python -m kgsql.graph knowledge --db {dbs[0]} --remove-origin rule")


# --------------------------------------------------------------------------- one question


def evidence_for(example: GoldQuestion, given: bool = True) -> str | None:
    """What the benchmark gives beside the question: BIRD evidence; spatial evidence + ``name`` hints
    (nothing when not ``given``)."""
    if not given:
        return None
    parts = [p.strip() for p in (example.evidence, example.hints) if p and p.strip()]
    return " ".join(parts) or None


def ask_method(asker: Any, example: GoldQuestion, db: str, spec: RunSpec, history_sql: list[str] | None = None) -> Any:
    """One question to the method, with the benchmark's evidence when the run gives it and, for a
    conversation's follow-up turn, the earlier questions (the method decides what to do with them) and,
    for a method that reads them, the SQL it answered for them (``history_sql``)."""
    more: dict[str, Any] = {"history": example.history} if example.history else {}
    if example.history and history_sql is not None:
        more["history_sql"] = history_sql
    evidence = evidence_for(example, spec.with_evidence)
    if hasattr(asker, "ask_example"):  # a replay: the records of this very question answer the model calls
        return asker.ask_example(example.id, example.question, db=db, evidence=evidence, **more)
    return asker.ask(example.question, db=db, evidence=evidence, **more)


def missing_record(example: GoldQuestion) -> Record:
    return Record(id=example.id, db_id=example.db_id, question=example.question, gold=list(example.gold),
                  difficulty=example.difficulty, label=example.label, error=MISSING_DB, error_kind="missing_db")


def answer_record(example: GoldQuestion, dataset: Dataset, answer: Any, *, timeout_s: float,
                  schema: Any = None) -> Record:
    """Score ``answer`` against the gold SQL and keep what the report and a reader need;
    ``schema`` (the database's) lets the record name the gold columns the selection missed."""
    sql = (getattr(answer, "sql", "") or "").strip() or None
    t0 = time.perf_counter()
    verdict = evaluate_prediction(dataset.db_path(example.db_id), example.gold, sql, timeout_s=timeout_s,
                                  metrics=metrics_for(dataset.name))
    tokens = dict(getattr(answer, "tokens", {}) or {})
    prompts = getattr(answer, "prompts", None) or []
    rec = Record(
        id=example.id, db_id=example.db_id, question=example.question, gold=list(example.gold), pred=sql,
        scores=dict(verdict.scores), error=verdict.error, error_kind=verdict.error_kind,
        matched_gold=verdict.matched_gold,
        difficulty=example.difficulty, label=example.label,
        tokens=tokens.get("total"), latency_s=round(float(getattr(answer, "latency_s", 0.0) or 0.0), 3),
        rounds=getattr(answer, "rounds", None),
    )
    rec.extra.update({
        "tokens_prompt": tokens.get("prompt"), "tokens_completion": tokens.get("completion"),
        "tokens_cached": tokens.get("cached"), "llm_calls": len(prompts),
        "llm_cache_hits": sum(1 for p in prompts if p.get("from_cache")),
        "llm_s": round(sum(float(p.get("latency_s") or 0.0) for p in prompts), 3),
        "score_s": round(time.perf_counter() - t0, 3),
        "answer_error": getattr(answer, "error", None), "refusal": getattr(answer, "refusal", "") or "",
        "evidence": getattr(answer, "evidence", "") or "", "tips": list(getattr(answer, "tips", []) or []),
        "candidates": list(getattr(answer, "candidates", []) or []),
        "examples": list(getattr(answer, "examples", []) or []), "repaired": getattr(answer, "repaired", 0),
        "calls": [call_record(p) for p in prompts],
        "warnings": [w["code"] for w in getattr(answer, "warnings", None) or []],  # the answer's flags (issue 34)
        "opinions": list(getattr(answer, "opinions", None) or []),  # the answer's check (kgsql.correct.opinions)
        "least_sure": dict(getattr(answer, "least_sure", None) or {}),  # the name the model was least sure of
    })
    if getattr(answer, "steps", None):  # agent mode: every thought, action and observation
        rec.extra["agent_steps"] = list(answer.steps)
    selection = getattr(answer, "selection", None) or {}
    if selection.get("tables"):
        rec.extra["selection"] = selected_names(selection)
        missed = missed_gold(example, selection, schema)
        if missed is not None:
            rec.extra["selection"]["gold_missed"] = missed
    if verdict.gold_errors and verdict.error_kind != "gold_error":
        rec.extra["gold_errors"] = verdict.gold_errors
    return rec


def call_record(prompt: dict[str, Any]) -> dict[str, Any]:
    """One LLM call as a record keeps it: purpose, tokens, seconds, the raw output (and its tokens'
    log-probabilities where the call asked for them)."""
    logprobs = [[token, round(float(lp), 4)] for token, lp in prompt.get("token_logprobs") or ()]
    return {"step": prompt.get("step"), "prompt_tokens": prompt.get("prompt_tokens"),
            "cached_tokens": prompt.get("cached_tokens"), "completion_tokens": prompt.get("completion_tokens"),
            "seconds": round(float(prompt.get("latency_s") or 0.0), 3), "from_cache": bool(prompt.get("from_cache")),
            "output": prompt.get("response", ""),
            "prompt_sha": prompt_fingerprint(prompt["messages"]) if prompt.get("messages") else None,
            **({"logprobs": logprobs} if logprobs else {})}


def selected_names(selection: dict[str, Any]) -> dict[str, Any]:
    """The tables and ``table.column`` names retrieval selected."""
    return {"tables": list(selection.get("tables") or []),
            "columns": [f"{c['table']}.{c['column']}" for c in selection.get("columns") or []]}


def missed_gold(example: GoldQuestion, selection: dict[str, Any], schema: Any) -> list[str] | None:
    """Gold ``table.column`` names the selection left out (None when the gold SQL cannot be resolved)."""
    if schema is None or not example.gold:
        return None
    from kgsql.sql.gold_schema import gold_schema

    try:
        gold = gold_schema(example.gold[0], schema)
    except Exception:  # noqa: BLE001 - a gold query sqlglot cannot read: nothing to report
        return None
    chosen = {(c["table"].lower(), c["column"].lower()) for c in selection.get("columns") or []}
    tables = {t.lower() for t in selection.get("tables") or []}
    missed = [f"{t}.{c}" for t, c in sorted(gold.columns) if (t.lower(), c.lower()) not in chosen]
    missed += [t for t in sorted(gold.tables) if t.lower() not in tables and not any(
        m.startswith(t + ".") for m in missed)]
    return missed


def _produced_nothing(answer: Any) -> bool:
    tokens = getattr(answer, "tokens", {}) or {}
    return not (getattr(answer, "sql", "") or "").strip() and not tokens.get("total") \
        and getattr(answer, "error", None) is not None


# --------------------------------------------------------------------------- the loop


class _Progress:
    """tqdm bar on stderr with the running metric; a no-op when disabled."""

    def __init__(self, total: int, initial: list[Record], metric: str, enabled: bool, desc: str) -> None:
        self.metric = metric
        self.values = [float(r.value(metric)) for r in initial if r.value(metric) is not None]
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=len(initial), file=sys.stderr, unit="q",
                            dynamic_ncols=True, desc=desc)
            self._postfix()

    def _postfix(self) -> None:
        if self.bar is not None and self.values:
            ex = 100 * sum(self.values) / len(self.values)
            self.bar.set_postfix_str(f"{self.metric.split('_')[0].upper()} {ex:.1f}% of {len(self.values)}")

    def add(self, rec: Record | None) -> None:
        if rec is not None and rec.value(self.metric) is not None:
            self.values.append(float(rec.value(self.metric)))
        if self.bar is not None:
            self.bar.update(1)
            self._postfix()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_group(group: Group, dataset: Dataset, asker: Any, log: RecordLog, spec: RunSpec, *,
              names: dict[str, str], shots: int, progress: bool = True, desc: str = "") -> list[Record]:
    """Answer and score the group's questions not yet in ``log``; returns the group's records.

    Records of questions already logged are returned as logged (resume). A method that reads the SQL it
    answered for a conversation's earlier turns (``wants_history_sql``: ``--set context=history``) is
    shown its own logged predictions, so an interaction's turns are asked in order (interactions
    concurrently), and a turn waits for the next run when an earlier one could not be logged."""
    logged = {r.id: r for r in log.records()}
    todo = by_database([e for e in group.questions if e.id not in logged])
    done_before = [logged[e.id] for e in group.questions if e.id in logged]
    wants_sql = bool(getattr(asker, "wants_history_sql", False))
    if wants_sql:
        check_earlier_turns(todo, logged.values())
    bar = _Progress(len(group.questions), done_before, spec.metric, progress, desc)
    lock = threading.Lock()
    failures = [0]

    def finish(rec: Record, example: GoldQuestion) -> Record:
        rec.method, rec.shots = spec.method, shots
        rec.extra.update(group.tag)
        rec.extra.update(example.turn)  # a conversation's turn: its interaction, for interaction EX
        with lock:
            log.append(rec)
            logged[rec.id] = rec
        return rec

    def one(example: GoldQuestion) -> Record | None:
        if example.db_id not in names:
            return finish(missing_record(example), example)
        sqls = None
        if wants_sql and example.history:
            with lock:
                sqls = earlier_sql(example, list(logged.values()))
        try:
            answer, routed = ask_pooled(spec.route, example.question, names[example.db_id],
                                        lambda db: ask_method(asker, example, db, spec, sqls), spec.route_tries)
        except NotReplayable as exc:
            return finish(failed_record(example, str(exc), NOT_REPLAYABLE), example)
        except InputError as exc:  # this question is unanswerable as given: logged as a method error
            return finish(failed_record(example, str(exc), "no_prediction", dataset.name), example)
        if _produced_nothing(answer):
            raise RunAborted(f"{example.id}: the method produced nothing: {answer.error}")
        schema = getattr(asker, "schema", None)
        full = schema(names[example.db_id]) if callable(schema) else None
        rec = answer_record(example, dataset, answer, timeout_s=spec.timeout_s, schema=full)
        if sqls is not None:
            rec.extra["shown_history_sql"] = sqls  # the earlier turns' SQL the method was shown (its own)
        rec.extra.update(route_fields(routed, names[example.db_id]))
        return finish(rec, example)

    def settle(example: GoldQuestion) -> bool:
        """Ask ``example``; True when it was logged."""
        try:
            rec = one(example)
        except Exception as exc:  # noqa: BLE001 - one question's failure (a bug included) must not end the run
            if not isinstance(exc, (RunAborted, KgsqlError)):
                exc = KgsqlError(f"unexpected {type(exc).__name__}: {exc}")
            with lock:
                failures[0] += 1
                count = failures[0]
            print(f"\nwarning: {example.id} not logged (will be retried): {exc}", file=sys.stderr)
            bar.add(None)
            if count >= MAX_CONSECUTIVE_FAILURES:
                raise RunAborted(f"{count} questions in a row failed without an answer; last: {exc}") from exc
            return False
        if rec is not None and rec.error_kind != "missing_db":  # only a model answer ends a failure streak
            with lock:
                failures[0] = 0
        bar.add(rec)
        return rec is not None

    try:
        answer_chains(interaction_chains(todo) if wants_sql else [[e] for e in todo], settle, spec.concurrency)
    finally:
        bar.close()
    return [logged[e.id] for e in group.questions if e.id in logged]


def failed_record(example: GoldQuestion, error: str, kind: str, benchmark: str | None = None) -> Record:
    """The record of a question that got no answer: unscored when not replayable, else wrong."""
    scores = {} if kind == NOT_REPLAYABLE else zero_scores(benchmark)
    return Record(id=example.id, db_id=example.db_id, question=example.question, gold=list(example.gold),
                  scores=scores, error=error, error_kind=kind, difficulty=example.difficulty, label=example.label)


def answer_chains(chains: list[list[GoldQuestion]], settle: Callable[[GoldQuestion], bool], concurrency: int) -> None:
    """Each chain's questions in order, stopping at one not logged (the rest wait for the next run);
    up to ``concurrency`` chains at once. A ``RunAborted`` cancels what has not started and is raised."""
    def run_chain(chain: list[GoldQuestion]) -> None:
        for example in chain:
            if not settle(example):
                return

    if concurrency <= 1:
        for chain in chains:
            run_chain(chain)
        return
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures = [pool.submit(run_chain, chain) for chain in chains]
        for fut in as_completed(futures):
            try:
                fut.result()
            except RunAborted:
                for f in futures:
                    f.cancel()
                raise
