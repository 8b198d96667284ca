"""The generate-run-retry loop: a correction loop that corrects.

Measured with a 1.5B model (issue 12), the old loop resubmitted the identical
query in 21 of 35 retries and rescued none of 8 failures: at temperature 0 the
same prompt plus a tip often gives the same query. Here:

1. the first candidate is generated greedily and run through the rules of
   ``kgsql.correct`` (one ``CheckContext`` per question, one connection);
   a failed one is first rewritten without a model call by the repairs of
   :data:`REPAIRS`, in order (a table named in another number than the
   database's renamed, ``kgsql.correct.table_names``; columns on the wrong
   tables moved through the FK graph, ``kgsql.correct.repair``; a lookup table's label read through its
   key, ``kgsql.correct.lookup``; on spatial databases a column of the table a
   row lies in joined by location, ``kgsql.correct.spatial_joins``), keeping
   the first rewrite that runs;
   every candidate is first rewritten by :data:`REWRITES`, for queries that run
   and answer wrongly: lengths/areas/distances of lon/lat geometry in metres
   (cast to geography on PostGIS, the ellipsoid argument on SpatiaLite,
   ``kgsql.correct.units``); a join condition that joins nothing (``T1.a =
   T1.a``, ``Intersects(g, g)``) replaced by the tables' key, else their
   location relation (``kgsql.correct.join_conditions``);
   by default also a key compared with a label compared through its lookup
   table, a key into a pure lookup table shown as the answer shown by its
   label (``kgsql.correct.lookup``), dates compared as the text SQLite
   stores (``kgsql.correct.dates``), an aggregate the question asks "each
   year" / "per city" of grouped so (``kgsql.correct.grouping``), "the
   closest X" ordered by its distance (``kgsql.correct.nearest``) and "the
   westernmost X" by its shape's extreme on that side (``kgsql.correct.compass``); as options,
   integer ratios divided as reals (``kgsql.correct.ratios``), rankings that skip NULL/missing values
   (``kgsql.correct.ranking``), text literals in their stored spelling
   (``kgsql.correct.literals``) -- measured in docs/eval.md, issue 28 -- and a
   place name read from the geometry table that holds it, joined by location
   (``kgsql.correct.located_values``);
2. while it still fails, up to ``max_rounds`` greedy rounds show the failed query,
   the database's error and the tips (the table that owns a column, the
   join that reaches it, the closest real values...). A query already tried
   is never run again: a repeat ends the greedy rounds at once;
3. when no candidate returned rows (a lone row of NULLs or zeros, an
   aggregate over nothing, counts as none; so does a constant that reads no
   table, ``SELECT 1``, which a small model writes to answer by itself), ``samples`` candidates are sampled
   (temperature, fixed seeds: reproducible and cacheable) from the last
   prompt, which a prefix-caching server has already read, so each costs
   only its generated tokens; every distinct one is run once, and
4. the answer is chosen by execution: candidates with rows beat empty (or
   vacuous) ones, empty ones beat failures, and among equals the result
   most candidates agree on wins (ties: the earlier candidate).

``tip_rounds`` keeps the rounds the baselines were published with (SSpa §3.7,
the first kgsql pipeline), so their prompts stay the papers': every
generation is the step ``sql``; a round goes on only while the check adds a
tip not given before; the failed query shown is the last one that had SQL;
a lone row of NULLs counts as rows; the answer is the latest candidate of
the best rank. The baselines also turn the repairs, rewrites and samples off.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from kgsql.correct import CheckContext, Checked, Tip, check_candidate, render_tips
from kgsql.correct.compass import order_by_compass
from kgsql.correct.confidence import Choice, least_sure_choice, unsure_of, written_names
from kgsql.correct.dates import sqlite_dates
from kgsql.correct.distance_bounds import distance_for_within, drop_vacuous_relations
from kgsql.correct.grouping import group_per_question
from kgsql.correct.join_conditions import fix_join_conditions
from kgsql.correct.literals import match_literals
from kgsql.correct.located_values import locate_values
from kgsql.correct.lookup import labels_for_shown_keys, labels_through_keys, repair_lookups
from kgsql.correct.nearest import rank_by_distance
from kgsql.correct.opinions import Opinion, second_opinions
from kgsql.correct.ranking import rank_known_values
from kgsql.correct.ratios import cast_ratios
from kgsql.correct.repair import repair_joins
from kgsql.correct.spatial_joins import repair_spatial_joins
from kgsql.correct.table_names import rename_tables
from kgsql.correct.units import ellipsoid_units, geography_units, stated_distances_in_metres
from kgsql.correct.whole_geometry import named_geometries, whole_geometries
from kgsql.correct.rules import is_vacuous
from kgsql.db.isolate import prestart
from kgsql.errors import KgsqlError
from kgsql.llm.trace import Trace
from kgsql.prompts.templates import fill, join_sections

NO_SQL_TIP = Tip("no_sql", "Answer with one SQL query only.")
#: The first pipeline's words for it (``tip_rounds``).
TIP_ROUNDS_NO_SQL_TIP = Tip("no_sql", "Answer with one SQL query only, in a ```sql block.")


@dataclass(frozen=True)
class Rewrites:
    """Which rewrites without a model call the loop makes: one switch per idea of :data:`REPAIRS` and
    :data:`REWRITES`. A method's options inherit these fields, so ``--set <switch>=false`` reaches the loop
    with no mirror to keep, and a new repair is one module plus one field and one line here."""

    table_names: bool = True       # [sql] a table the database has in another number (city -> cities)
    join_repair: bool = True       # [sql] misplaced columns moved to their tables via the FK graph
    lookup_repair: bool = True     # [sql] a lookup table's label read through its key (eye_colour -> colour)
    spatial_repair: bool = True    # [sql] a column of the table a row lies in, joined by location (province)
    join_conditions: bool = True   # [sql] a join on nothing (T1.a = T1.a) joined by key, else by location
    geography_units: bool = True   # [sql] PostGIS lon/lat lengths, areas, distances cast to geography (metres)
    key_labels: bool = True        # [sql] a lookup key shown as the answer shows its label (eye_colour_id -> colour)
    date_forms: bool = True        # [sql] SQLite dates compared as text (strftime('%Y', d) = '2019', YEAR(d))
    group_each: bool = True        # [sql] an aggregate the question asks "each year" / "per city" of, grouped so
    rank_nearest: bool = True      # [sql] "the closest X" ordered by its one distance, limited to the count asked
    compass_extremes: bool = True  # [sql] "the westernmost X" ordered by its shape's west extreme (MbrMinX), ascending
    located_values: bool = False   # [sql] a place name another geometry table holds, read there, joined by location
    ratio_cast: bool = False       # [sql] divide integer ratios as reals (COUNT(..) * 100 / COUNT(*))
    rank_known: bool = False       # [sql] ORDER BY .. LIMIT skips NULL and documented missing values
    match_literals: bool = False   # [sql] text literals in the column's stored spelling ('human' -> 'Human')
    metre_units: bool = True       # [sql] SpatiaLite lon/lat lengths, areas, distances in metres (GLength(g, 1))
    distance_units: bool = True    # [sql] a distance said in km or miles, written bare against metres: 20 -> 20 * 1000
    bounded_relations: bool = True  # [sql] Intersects(a, b) beside Distance(a, b) <= d or ORDER BY it: dropped
    within_distance: bool = True   # [sql] "within 150 km" read as Within(a, b): Distance(a, b) <= 150 * 1000
    whole_geometry: bool = False   # [sql] a place stored as many rows read whole: (SELECT GUnion(Shape) FROM ..)
    named_geometry: bool = True    # [sql] a place's name where a geometry belongs read as its geometry

    def switches(self) -> dict[str, bool]:
        """Every switch and its setting (to hand a method's choice to :class:`LoopOptions`)."""
        return {f.name: getattr(self, f.name) for f in fields(Rewrites)}

    @staticmethod
    def none() -> dict[str, bool]:
        """Every switch off: the baselines' loop, as their papers ran it."""
        return {f.name: False for f in fields(Rewrites)}


@dataclass(frozen=True)
class LoopOptions(Rewrites):
    """How hard to try: greedy feedback rounds, then sampled candidates voted by result; which rewrites."""

    max_rounds: int = 3          # greedy generations at most, the first included
    samples: int = 1             # sampled candidates when no candidate returned rows (0: none); 1: measured (issue 12)
    temperature: float = 0.7
    correction: bool = True      # False: one generation, no checks beyond running it
    tip_kinds: tuple[str, ...] = ()  # keep only these tip kinds (empty: all)
    show_failed_query: bool = True
    tip_rounds: bool = False     # the first pipeline's rounds (SSpa's): see the module docstring
    opinions: int = 0            # readings sampled after an answer with rows, to check it (``kgsql.correct.opinions``)
    opinions_below: float = 1.0  # ... only where the model's least sure name had a lower probability (1: always)


#: Rewrites of a failed candidate without a model call, in the order tried: (the :class:`Rewrites` switch,
#: the rewrite, returning the new SQL or None).
REPAIRS: tuple[tuple[str, Callable[[CheckContext, str], str | None]], ...] = (
    ("table_names", rename_tables),
    ("join_repair", repair_joins),
    ("lookup_repair", repair_lookups),
    ("spatial_repair", repair_spatial_joins),
)


#: Rewrites of every candidate before it runs, in order: (the :class:`Rewrites` switch, the rewrite, returning
#: the new SQL or None). For queries that run and answer wrongly, so no error tip could catch them.
REWRITES: tuple[tuple[str, Callable[[CheckContext, str], str | None]], ...] = (
    ("named_geometry", named_geometries),
    ("whole_geometry", whole_geometries),
    ("within_distance", distance_for_within),
    ("distance_units", stated_distances_in_metres),  # first: a radius in metres is what geography_units casts
    ("geography_units", geography_units),
    ("metre_units", ellipsoid_units),
    ("join_conditions", fix_join_conditions),
    ("bounded_relations", drop_vacuous_relations),
    ("located_values", locate_values),
    ("lookup_repair", labels_through_keys),
    ("key_labels", labels_for_shown_keys),
    ("ratio_cast", cast_ratios),
    ("rank_known", rank_known_values),
    ("match_literals", match_literals),
    ("date_forms", sqlite_dates),
    ("group_each", group_per_question),
    ("rank_nearest", rank_by_distance),
    ("compass_extremes", order_by_compass),
)


class Generator(Protocol):
    """Writes one candidate: (raw model text, the text the prompt ended with)."""

    stepwise: bool

    def generate(self, prompt: Any, question: str, trace: Trace, *, tips: str = "",
                 step: str | None = None, **params: Any) -> tuple[str, str]: ...


@dataclass
class LoopResult:
    """The chosen candidate and how it was reached."""

    best: Checked | None = None
    candidates: list[str] = field(default_factory=list)   # distinct queries, in the order they were run
    tips: list[Tip] = field(default_factory=list)
    rounds: int = 0                                      # generations made
    votes: dict[str, int] = field(default_factory=dict)  # query -> how often it was generated
    repaired: int = 0                                    # candidates written by join repair
    error: str | None = None                             # why there is no query at all
    opinions: list[Opinion] = field(default_factory=list)  # the answer's check (``kgsql.correct.opinions``)
    least_sure: Choice | None = None  # the best's least sure name, as the model wrote it (``kgsql.correct.confidence``)


def same_query(sql: str) -> str:
    """The identity of a query for the no-repeat rule (whitespace and a final ';' do not count)."""
    return " ".join(sql.split()).rstrip(";").strip()


def _rank(c: Checked, *, vacuous: bool = True) -> int:
    """2: rows; 1: ran but empty, or (``vacuous``) only an aggregate over nothing (a lone row of
    NULLs/zeros) or a constant that reads no table; 0: failed."""
    if c.result is None:
        return 0
    if not c.result.rows or (vacuous and c.constant):
        return 1
    return 1 if vacuous and is_vacuous(c.result) else 2


def _signature(c: Checked) -> tuple[str, ...]:
    """The result as a multiset of rows (order-insensitive), for voting."""
    if c.result is None:
        return ("<error>", c.sql)
    return tuple(sorted(repr(tuple(r)) for r in c.result.rows))


def vote(checked: list[Checked], votes: dict[str, int]) -> Checked | None:
    """The candidate whose result the most generations agree on, within the best rank."""
    if not checked:
        return None
    support: Counter[tuple[str, ...]] = Counter()
    for c in checked:
        support[_signature(c)] += votes.get(same_query(c.sql), 1)
    return max(checked, key=lambda c: (_rank(c), support[_signature(c)], -checked.index(c)))


class _Candidates:
    """One question's candidates: generated, rewritten, run once each, repaired when they fail."""

    def __init__(self, loop: "CorrectionLoop", prompt: Any, question: str, ctx: CheckContext, trace: Trace) -> None:
        self.generator, self.opts = loop.generator, loop.options
        self.prompt, self.question, self.ctx, self.trace = prompt, question, ctx, trace
        self.out = LoopResult()
        self.tried: dict[str, Checked] = {}
        self.failed = ""  # the failed-query block last shown (``tip_rounds`` keeps it over a round without SQL)
        self.read: dict[str, Checked] = {}  # the readings run to check the answer (no candidates)
        self.choices: dict[str, Choice | None] = {}  # each candidate's least sure name (a repair: its source's)

    def attempt(self, step: str, feedback: str, **params: Any) -> tuple[Checked | None, bool]:
        """(the candidate, whether it repeats an earlier one); None when the output held no SQL."""
        from kgsql.sql.extract import extract_sql

        opts, out = self.opts, self.out
        before = len(self.trace.steps)
        raw, suffix = self.generator.generate(self.prompt, self.question, self.trace, tips=feedback, step=step,
                                              **params)
        out.rounds += 1
        try:
            sql = extract_sql(raw, prompt_suffix=suffix, last=self.generator.stepwise)
        except KgsqlError as exc:
            out.error = str(exc)
            return None, False
        made = self.trace.steps[before:]  # this call's step: its tokens' log-probabilities, where asked for
        logprobs = made[-1].token_logprobs if made else []
        written = least_sure_choice(logprobs, written_names(self.ctx.tree(sql))) if logprobs else None
        sql = self.rewritten(sql)
        key = same_query(sql)
        self.choices.setdefault(key, written)
        out.votes[key] = out.votes.get(key, 0) + 1
        if key in self.tried:
            if opts.tip_rounds:  # the latest of equals is the answer: a repeat is the latest
                self.tried[key] = self.tried.pop(key)
            return self.tried[key], True
        checked = self.check(sql)
        if checked.result is None and opts.correction:
            return self.repaired(checked), False
        return checked, False

    def rewritten(self, sql: str, *, counted: bool = True) -> str:
        """``sql`` after each of :data:`REWRITES` that applies, in order (a model's candidate or a repair's);
        ``counted``: each rewrite counts in ``repaired`` (an opinion's do not: it is no candidate)."""
        for switch, rewrite in REWRITES:
            changed = rewrite(self.ctx, sql) if getattr(self.opts, switch) else None
            if changed is not None:
                sql = changed
                self.out.repaired += int(counted)
        return sql

    def check(self, sql: str) -> Checked:
        """Run ``sql`` once and remember it."""
        checked = check_candidate(self.ctx, sql, tips=self.opts.correction, vacuous_as_empty=not self.opts.tip_rounds)
        self.tried[same_query(sql)] = checked
        self.out.candidates.append(sql)
        return checked

    def repaired(self, failed: Checked) -> Checked:
        """The first of :data:`REPAIRS`' rewrites that runs, else the failed candidate."""
        for switch, repair in REPAIRS:
            sql = repair(self.ctx, failed.sql) if getattr(self.opts, switch) else None
            if sql is not None:
                sql = self.rewritten(sql)  # a repair can write what a rewrite corrects (T2.a = T2.a)
            if sql is None or same_query(sql) in self.tried:
                continue
            self.choices.setdefault(same_query(sql), self.choices.get(same_query(failed.sql)))
            self.out.votes[same_query(sql)] = self.out.votes.get(same_query(sql), 0) + 1
            self.out.repaired += 1
            checked = self.check(sql)
            if checked.result is not None:
                return checked
        return failed

    def opinion(self, seed: int) -> Checked | None:
        """One reading sampled from the first prompt (which a prefix-caching server has read) and run, kept
        apart from the candidates: it checks the answer and never becomes it. None when it held no SQL."""
        from kgsql.sql.extract import extract_sql

        raw, suffix = self.generator.generate(self.prompt, self.question, self.trace, step="sql_opinion",
                                              temperature=self.opts.temperature, seed=seed)
        try:
            sql = self.rewritten(extract_sql(raw, prompt_suffix=suffix, last=self.generator.stepwise), counted=False)
        except KgsqlError:
            return None
        key = same_query(sql)
        known = self.tried.get(key) or self.read.get(key)
        if known is None:
            known = self.read[key] = check_candidate(self.ctx, sql, tips=False, vacuous_as_empty=True)
        return known

    def best(self) -> Checked | None:
        """By result (:func:`vote`); with ``tip_rounds`` the latest of the best rank (rows count as rows)."""
        checked = list(self.tried.values())
        if not self.opts.tip_rounds or not checked:
            return vote(checked, self.out.votes)
        return max(checked, key=lambda c: (_rank(c, vacuous=False), checked.index(c)))


class CorrectionLoop:
    """Runs the loop of the module docstring for one question."""

    def __init__(self, generator: Generator, options: LoopOptions = LoopOptions()) -> None:
        self.generator = generator
        self.options = options

    def run(self, prompt: Any, question: str, ctx: CheckContext, trace: Trace) -> LoopResult:
        opts = self.options
        run = _Candidates(self, prompt, question, ctx, trace)
        out = run.out
        prestart()  # the query worker starts while the model writes the first candidate
        current, _ = run.attempt("sql", "")
        feedback = ""
        rounds = max(1, opts.max_rounds) if opts.correction else 1
        fix_step = "sql" if opts.tip_rounds else "sql_fix"
        while opts.correction and out.rounds < rounds and (current is None or _rank(current) < 2):
            if current is not None and current.result is not None and not current.tips:
                break  # ran empty and the rules have nothing to say: sampling decides
            fresh = self._new_tips(current, out)
            if opts.tip_rounds and not fresh:
                break  # nothing new to say: another round would repeat the prompt
            feedback = self._feedback(current, run)
            current, repeated = run.attempt(fix_step, feedback)
            if repeated:
                break
        if opts.tip_rounds and opts.correction and (current is None or current.result is None):
            self._new_tips(current, out)  # the last failure's tips are reported too
        if opts.correction and opts.samples > 0 and not any(_rank(c) == 2 for c in run.tried.values()):
            for seed in range(1, opts.samples + 1):
                run.attempt("sql_sample", feedback, temperature=opts.temperature, seed=seed)
        out.best = run.best()
        if out.best is not None:
            out.error = out.best.error
            out.least_sure = run.choices.get(same_query(out.best.sql))
            whole_rows = _rank(out.best) == 2 and not out.best.result.truncated  # type: ignore[union-attr]
            checked = opts.opinions > 0 and unsure_of(out.least_sure, opts.opinions_below)
            if checked and whole_rows:  # a cut-off answer cannot be compared
                out.opinions = second_opinions(run.opinion, out.best, opts.opinions, ctx.tree)
        return out

    def _new_tips(self, current: Checked | None, out: LoopResult) -> list[Tip]:
        """Adds the tips of ``current`` (of ``tip_kinds``) not given before to ``out.tips``; returns them."""
        opts = self.options
        no_sql = TIP_ROUNDS_NO_SQL_TIP if opts.tip_rounds else NO_SQL_TIP
        new = [no_sql] if current is None else list(current.tips)
        if opts.tip_kinds:
            new = [t for t in new if t.kind in opts.tip_kinds]
        seen = {t.text for t in out.tips}
        fresh = [t for t in new if t.text not in seen]
        out.tips.extend(fresh)
        return fresh

    def _feedback(self, current: Checked | None, run: _Candidates) -> str:
        """The next round's tips block: the failed query and its problem, then every tip so far."""
        opts = self.options
        if not opts.tip_rounds:
            run.failed = ""
        if opts.show_failed_query and current is not None:
            if current.error:
                problem = f"It failed: {current.error}"
            elif current.constant:
                problem = "It reads no table."
            elif current.result is not None and current.result.rows:
                problem = f"It returned only {current.result.rows[0]!r}: its filters match no rows."
            else:
                problem = "It returned no rows."
            run.failed = fill("failed_query", sql=current.sql, problem=problem)
        return join_sections(run.failed, render_tips(run.out.tips))
