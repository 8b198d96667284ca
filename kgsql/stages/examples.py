"""Few-shot examples: the pool's questions most like this one, shown with their SQL only.

DAIL-SQL's finding, and ours with small local models: similar (question, SQL)
pairs in the same form as the final question are the cheapest accuracy there
is. Without a pool, the examples the database was taught (``SchemaGraph.learn``,
``ingest --history``: ``graph_examples``) are the pool; without either, a
spatial database's own derived examples (``kgsql.fewshot.spatial_derived``:
questions written from its geometry tables), else the ``fallback`` pool (the
shipped examples the default was measured with, ``kgsql.fewshot.shipped``) in
its own order; without any, zero-shot. The last two only where a ``fallback``
is given: the path of a user with nothing of their own. With ``derived_first``
a spatial database's derived examples also replace a pool that holds none of
its questions (other databases' questions teach other tables' names).

Two of these stages may run: one picking ``lead`` examples that are the same
for every question (``typical`` selection, shown first so a prefix-caching
server reads them once), then one picking the question's similar examples,
never repeating a lead example.

A spatial database may use another selection (``spatial_selection``): its
questions turn on functions (lengths, areas, containment) that the pool's
most common SQL shapes seldom show, and its nearest questions do (issue 12).
With ``per_database`` its derived examples are shown whole instead (a dozen at
most, one per kind and table): the same text for each of its questions, which
a prefix-caching server reads once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from kgsql.generate.parts import Lasts
from kgsql.stages.state import QuestionState


@dataclass
class PickExamples:
    """``shots`` examples from ``pool`` by a registered selector (``kgsql.fewshot.select``),
    into the state's lead examples when ``lead`` (else its per-question examples)."""

    pool: Any = None
    shots: int = 5
    selection: str = "masked-similarity"
    encoder: Any = None
    graph_examples: Callable[[str], list[dict[str, Any]]] | None = None  # db -> its taught pairs
    lead: bool = False
    questions: bool = True  # False: show each example's SQL only (about half the tokens)
    spatial_selection: str = ""  # on a spatial database ("" = ``selection``)
    fallback: Any = None  # a pool shown as it is when there is neither ``pool`` nor taught examples
    derived_too: bool = False  # a spatial database's derived examples are candidates beside ``pool``'s
    derived_first: bool = False  # ... instead of ``pool``'s when the pool holds none of the database's questions
    per_database: bool = False  # derived examples: all of them, the same for each question of the database
    name: str = "examples"
    _selectors: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    _per_db: dict[str, tuple[tuple[Any, ...], Any]] = field(default_factory=dict, init=False, repr=False)
    _pool_dbs: frozenset[str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        from kgsql.fewshot.select import available_selectors
        from kgsql.errors import UnknownNameError

        chosen = [("example selection", self.selection)]
        if self.spatial_selection:  # "": the same selection on every database
            chosen.append(("spatial example selection", self.spatial_selection))
        for what, name in chosen:
            if name not in available_selectors():
                raise UnknownNameError(f"unknown {what} '{name}'; known: " + ", ".join(available_selectors()))

    def selection_for(self, schema: Any) -> str:
        """The selection used on ``schema``'s database."""
        return self.spatial_selection if self.spatial_selection and schema.is_spatial else self.selection

    def selector_for(self, db: str, schema: Any) -> tuple[Any, str]:
        """The pool's selector (with a spatial database's derived examples beside it when ``derived_too``,
        or instead of it when ``derived_first`` and the pool holds none of ``db``'s questions), else one over
        ``db``'s taught examples (rebuilt when they change), else over its derived ones, else the fallback's;
        with where its examples come from (``pool``/``taught``/``derived``/``shipped``)."""
        selection = self.selection_for(schema)
        # per database, the derived examples are all shown in their order: no similarity to compute
        alone = "typical" if self.per_database else selection
        if self.pool is not None and self.derived_first and schema.is_spatial and not self._pool_holds(db):
            derived = self._derived_selector(db, schema, alone)
            if derived is not None:
                return derived, "derived"
        if self.pool is not None and self.derived_too and schema.is_spatial:
            merged = self._derived_selector(db, schema, selection, beside=self.pool)
            return merged or self._pool_selector(selection), "pool"
        if self.pool is not None:
            return self._pool_selector(selection), "pool"
        rows = self.graph_examples(db) if self.graph_examples is not None else []
        if not rows:
            derived = self._derived_selector(db, schema, alone) if self.fallback is not None else None
            return (derived, "derived") if derived is not None else (self._fallback_selector(), "shipped")
        from kgsql.fewshot.pool import ExamplePool

        def taught() -> Any:
            records = [{"question": r["question"], "sql": r["sql"], "db_id": db, "id": r["key"]} for r in rows]
            return ExamplePool.from_records(records, name=f"{db}-taught", schemas=lambda _db: schema)

        return self._per_db_selector(db, (selection, *sorted(r["key"] for r in rows)), selection, taught), "taught"

    def _derived_selector(self, db: str, schema: Any, selection: str, *, beside: Any = None) -> Any:
        """A selector over a spatial database's derived examples, with the examples of the pool ``beside``
        when given (rebuilt when they change), or None."""
        if not schema.is_spatial:
            return None
        from kgsql.fewshot.spatial_derived import derived_examples

        pairs = derived_examples(schema)
        if not pairs:
            return None
        from kgsql.fewshot.pool import ExamplePool, PoolExample

        def derived() -> Any:
            own = [PoolExample(q, sql, db, f"derived-{i}") for i, (q, sql) in enumerate(pairs)]
            others = list(beside) if beside is not None else []
            schemas = ((lambda d: schema if d == db else beside.schema(d)) if beside is not None
                       else (lambda _d: schema))
            return ExamplePool(others + own, name=f"{db}-derived", schemas=schemas)

        return self._per_db_selector(db, ("derived", selection, id(beside), *pairs), selection, derived)

    def _per_db_selector(self, db: str, keys: tuple[Any, ...], selection: str, make_pool: Callable[[], Any]) -> Any:
        """A selector over a pool of ``db``'s own (``make_pool``), rebuilt only when ``keys``, what the pool
        is made of, change."""
        cached = self._per_db.get(db)
        if cached is None or cached[0] != keys:
            from kgsql.fewshot.select import get_selector

            cached = (keys, get_selector(selection, make_pool(), encoder=self.encoder))
            self._per_db[db] = cached
        return cached[1]

    def _pool_holds(self, db: str) -> bool:
        """Whether the pool holds a question of ``db`` (another database's questions teach other names)."""
        if self._pool_dbs is None:
            self._pool_dbs = frozenset(e.db_id for e in self.pool)
        return db in self._pool_dbs

    def _pool_selector(self, selection: str) -> Any:
        if selection not in self._selectors:
            from kgsql.fewshot.select import get_selector

            self._selectors[selection] = get_selector(selection, self.pool, encoder=self.encoder)
        return self._selectors[selection]

    def _fallback_selector(self) -> Any:
        """The fallback pool in its own order (it holds the examples to show, not candidates), or None."""
        if self.fallback is None:
            return None
        if "fallback" not in self._selectors:
            from kgsql.fewshot.select import get_selector

            self._selectors["fallback"] = get_selector("typical", self.fallback)
        return self._selectors["fallback"]

    def run(self, state: QuestionState) -> None:
        selector, source = self.selector_for(state.db, state.full) if self.shots > 0 else (None, "")
        if selector is None:
            return
        from kgsql.fewshot.select import ExampleQuery

        query = ExampleQuery(state.question, state.full, tuple(v.value for v in state.values),
                             exclude_ids=frozenset(state.answer.examples or ()))
        whole = self.per_database and source == "derived"  # the database's own few: all, in their order
        picks = ([e for e in selector.pool if e.id not in query.exclude_ids] if whole
                 else selector.select(query, self.shots))
        state.answer.examples = [*(state.answer.examples or ()), *(e.id for e in picks)]
        if picks:
            state.answer.example_source = source
        shown = [(e.question if self.questions else "", " ".join(e.sql.strip().rstrip(";").split())) for e in picks]
        if self.lead:
            state.lead_examples = shown
        else:
            state.examples = shown
            state.lasting["shots"] = (Lasts.DATABASE if whole else Lasts.QUESTION if selector.per_question
                                      else Lasts.RUN)
