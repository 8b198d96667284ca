"""Text-to-SQL methods by name: baselines, kgsql and their ablations.

    from kgsql.methods import build
    t2s = build("act-sql", graph, lm, pool=ExamplePool.from_spider("train_7000.json"))
    t2s.ask("How many singers do we have?", db="concert_singer")

A method is a ``MethodSpec``: options whose type says which list of stages
(``kgsql.stages``) answers, all over the one correction loop
(``kgsql.correct.loop``): ``OneCallOptions`` (kgsql and its ablations),
``PromptOptions`` (the baselines, composed from the shared parts below, so two
methods differ exactly by the switches that tell them apart),
``ClassicOptions`` (kgsql-classic); ``AgentOptions`` runs the agent. Registered:

* ``dail-sql``  code-representation schema, masked-question-similarity examples
  (SQL only), "Answer the following with no explanation: ... SELECT"; one shot
  at the SQL, no SDBMS knowledge, no geographic descriptions, no tips (SSpa's
  DAIL-SQL baseline)
* ``act-sql``   Table(Column) schema with 3 example rows, 2 static + 2 dynamic
  examples with their own schemas and auto-CoT, ACT-SQL's chat format
* ``sspa``      DAIL-SQL + SDBMS knowledge (SSpa's fixed function list) +
  geographic descriptions + SSpa's three schema tips (up to 5 generations)
* ``sspa-sdbms``, ``sspa-geo``, ``sspa-tips``: SSpa without that one component
* ``kgsql``     the default: one call over the graph's knowledge, composed from
  stages (``kgsql.stages``): 5 examples of the pool's most common SQL shapes,
  the same for every question and first (a prefix-caching server reads them
  once per run; on a spatial database the 5 nearest questions instead, after
  the schema), then the whole database's schema (read once per database)
  with value comments on low-cardinality text columns, SpatiaLite notes,
  graph-derived hints (values the question names, join conditions; on a
  spatial database how the tables relate by location instead), then the
  question; a correction loop that repairs misplaced columns through the FK
  graph and never reruns a query. Measured (issue 12, 1.5B, 200 Spider
  questions, one run): +6.5 EX points over DAIL-SQL at 0.38x its LLM seconds;
  every spatial question (SSpa cross-fold): +11.0 points (docs/eval.md)
* ``kgsql-<part>``: kgsql without that one part (``value-hints``,
  ``join-hints``, ``spatial-hints``, ``hints``, ``values``, ``examples``, ``correction``, ``repair``,
  ``cache-layout``, ``whole-schema``, ``sdbms``, ``geo``)
* ``agent``     Interactive-T2S: the model looks the schema up through the graph's
  tools (``kgsql.agent``), one per round, and finishes with ``Done(sql)``
* ``kgsql-classic``  the first kgsql pipeline: knowledge selection, unified KG
  schema, three LLM evidence steps, least-to-most, schema tips

``register_method(MethodSpec(...))`` adds one; ``build(name, ..., shots=3)``
overrides options for a sweep (K in {0, 1, 3, 5}).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any, Callable

from kgsql.agent.method import AgentMethod, AgentOptions
from kgsql.errors import InputError, UnknownNameError
from kgsql.fewshot.shipped import SHIPPED_EXAMPLES, shipped_pool
from kgsql.registry import Registry
from kgsql.stages.baselines import PromptOptions, prompt_stages
from kgsql.stages.context import check_context
from kgsql.stages.classic import ClassicOptions, classic_stages
from kgsql.stages.method import OneCallOptions, StagedMethod
from kgsql.stages.state import Stage

__all__ = ["MethodSpec", "register_method", "get_method", "available_methods", "build", "checked_overrides",
           "parse_sets", "SSPA_FUNCTIONS"]

#: SSpa §3.2: "commonly used functions, such as GLength, Area, Distance, Centroid, Touches, and Intersects".
SSPA_FUNCTIONS = ("GLength", "Area", "Distance", "Centroid", "Touches", "Intersects")
#: SSpa §3.7: the three feedback kinds it turns into schema tips.
SSPA_TIP_KINDS = ("no_such_table", "no_such_column", "ambiguous_column")


@dataclass(frozen=True)
class MethodSpec:
    """A named method: its options (whose type says which stages run) plus a one-line description."""

    name: str
    options: OneCallOptions | PromptOptions | ClassicOptions | AgentOptions
    description: str = ""

    @property
    def uses_examples(self) -> bool:
        return self.options.shots + getattr(self.options, "lead_shots", 0) > 0


# --------------------------------------------------------------------------- shared parts

#: DAIL-SQL's prompt: the whole database in code representation + SSpa's question format.
DAIL_PROMPT: dict[str, Any] = dict(question_format="dail", schema_style="code")
#: DAIL-SQL's example selection and organisation.
MASKED_EXAMPLES: dict[str, Any] = dict(shots=5, example_selection="masked-similarity", example_organisation="sql-only")
#: Nothing beyond the prompt: no SDBMS knowledge, no geography, no self-correction.
NO_EXTRAS: dict[str, Any] = dict(sdbms=False, geo=False, correction=False, max_rounds=1, show_failed_query=False)
#: SSpa's three added components.
SSPA_PARTS: dict[str, Any] = dict(sdbms=True, spatial_function_list=SSPA_FUNCTIONS, geo=True, correction=True,
                                  tip_kinds=SSPA_TIP_KINDS, max_rounds=5, show_failed_query=False)
#: ACT-SQL's prompt: Table(Column) + 3 rows, 2 static + 2 dynamic examples with schemas and auto-CoT, chat.
ACT_PROMPT: dict[str, Any] = dict(question_format="chat", schema_style="table-column", example_rows=3,
                                  shots=4, static_shots=2, example_selection="hybrid", example_organisation="full",
                                  auto_cot=True)

_METHODS: Registry[MethodSpec] = Registry("method", sorted_names=True)
#: The stage lists of the option types built here (the default's and the agent's are built apart).
_STAGES: dict[type, Callable[..., list[Stage]]] = {PromptOptions: prompt_stages, ClassicOptions: classic_stages}


def _options(*parts: dict[str, Any]) -> PromptOptions:
    merged: dict[str, Any] = {}
    for p in parts:
        merged.update(p)
    return PromptOptions(**merged)


def register_method(spec: MethodSpec) -> MethodSpec:
    return _METHODS.register(spec.name, spec)


def available_methods() -> list[str]:
    return _METHODS.names()


def get_method(name: str) -> MethodSpec:
    return _METHODS.get(name)


def checked_overrides(name: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` under today's option names, refused in one line where method ``name`` has no such option
    (what :func:`build` does first; a server that builds its method late calls it before serving)."""
    overrides = {RENAMED_OPTIONS.get(k, k): v for k, v in overrides.items()}
    known = {f.name for f in fields(get_method(name).options)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise UnknownNameError(f"unknown option(s) {', '.join(unknown)} for method '{name}' "
                               f"(known: {', '.join(sorted(known))})")
    return overrides


def build(name: str, graph: Any, lm: Any, pool: Any = SHIPPED_EXAMPLES, *, retriever: Any = None,
          encoder: Any = None, follow_ingest: bool = False, **overrides: Any) -> StagedMethod | AgentMethod:
    """Method ``name``, ready to ``ask``; ``overrides`` replace option fields (e.g. ``shots=1``).

    ``pool``: the few-shot examples. By default the one-call methods show the database's taught
    examples, else the shipped examples the default was measured with (``kgsql.fewshot.shipped``);
    ``None``: taught examples, else zero-shot. The baselines and kgsql-classic show a given pool's
    examples only (zero-shot without one), as they were measured. ``follow_ingest``: for a method kept warm (the service,
    the MCP server), each question checks whether its database was re-ingested and reads it again."""
    shipped = pool is SHIPPED_EXAMPLES
    pool = None if shipped else pool
    spec = get_method(name)
    overrides = checked_overrides(name, overrides)
    options = replace(spec.options, **overrides) if overrides else spec.options
    if isinstance(options, AgentOptions):
        drafter = build("kgsql", graph, lm, SHIPPED_EXAMPLES if shipped else pool, retriever=retriever,
                        encoder=encoder, follow_ingest=follow_ingest).ask if options.draft else None
        return AgentMethod(graph, lm, options, retriever=retriever, encoder=encoder, follow_ingest=follow_ingest,
                           drafter=drafter)
    if isinstance(options, OneCallOptions):
        fallback = shipped_pool() if shipped else None  # only the one-call methods show them
        return StagedMethod.one_call(graph, lm, options, pool=pool, fallback_pool=fallback, retriever=retriever,
                                     encoder=encoder, follow_ingest=follow_ingest)
    from kgsql.retrieve.lazy import lazy_retriever

    get_retriever = lazy_retriever(retriever, encoder, getattr(graph, "vector_stage", None))
    stages = _STAGES[type(options)](options, lm, get_retriever, pool=pool, encoder=encoder)
    return StagedMethod(graph, lm, stages, options=options, rewrite=options.rewrite,
                        context=getattr(options, "context", "rewrite"), follow_ingest=follow_ingest)


# --------------------------------------------------------------------------- registry

register_method(MethodSpec("dail-sql", _options(DAIL_PROMPT, MASKED_EXAMPLES, NO_EXTRAS),
                           "DAIL-SQL: code representation, masked-question-similarity examples, SQL only"))
register_method(MethodSpec("act-sql", _options(ACT_PROMPT, NO_EXTRAS),
                           "ACT-SQL: Table(Column)+3 rows, static+dynamic examples with auto-CoT, chat format"))
register_method(MethodSpec("sspa", _options(DAIL_PROMPT, MASKED_EXAMPLES, SSPA_PARTS),
                           "SSpa: DAIL-SQL + SDBMS knowledge + geographic descriptions + schema tips"))
#: SSpa without one part: the options that remove it.
SSPA_ABLATIONS: dict[str, dict[str, Any]] = {
    "sdbms": dict(sdbms=False), "geo": dict(geo=False), "tips": dict(correction=False, max_rounds=1)}
for _part, _off in SSPA_ABLATIONS.items():
    register_method(MethodSpec(f"sspa-{_part}", _options(DAIL_PROMPT, MASKED_EXAMPLES, SSPA_PARTS, _off),
                               f"SSpa without its {_part} component"))

register_method(MethodSpec("kgsql", OneCallOptions(),
                           "kgsql: one call over the graph's schema, values, examples and hints; corrected by execution"))
#: kgsql without one part: the options that remove it.
KGSQL_ABLATIONS: dict[str, dict[str, Any]] = {
    "value-hints": dict(value_hints=False),
    "join-hints": dict(join_hints=False),
    "hints": dict(value_hints=False, join_hints=False, spatial_hints=False),
    "spatial-hints": dict(spatial_hints=False, spatial_join_hints=True),
    "values": dict(schema_style="code"),
    "documentation": dict(schema_style="code-values"),
    "meaning-hints": dict(meaning_hints=False),
    "graph": dict(schema_style="code", value_hints=False, join_hints=False, meaning_hints=False, spatial_hints=False),
    "examples": dict(shots=0),
    "correction": dict(correction=False),
    "repair": dict(join_repair=False),
    "cache-layout": dict(layout="dail"),
    "whole-schema": dict(scope="selected"),
    "sdbms": dict(sdbms=False),
    "geo": dict(geo=False),
    "knowledge": dict(knowledge=False),
}
for _part, _off in KGSQL_ABLATIONS.items():
    register_method(MethodSpec(f"kgsql-{_part}", OneCallOptions(**_off), f"kgsql without {_part}"))

register_method(MethodSpec("agent", AgentOptions(),
                           "agent: the model looks the schema up through the graph's tools, one per round "
                           "(Interactive-T2S)"))
register_method(MethodSpec("kgsql-classic", ClassicOptions(),
                           "the first kgsql pipeline: selection, unified KG schema, LLM evidence, least-to-most, tips"))

#: ``eval run --ablation NAME``: a method, DAIL-SQL and the method without each of its parts.
ABLATION_SETS: dict[str, tuple[str, ...]] = {
    "kgsql": ("dail-sql", "kgsql", *(f"kgsql-{p}" for p in KGSQL_ABLATIONS)),
    "sspa": ("dail-sql", "sspa", *(f"sspa-{p}" for p in SSPA_ABLATIONS)),
}


# --------------------------------------------------------------------------- --set key=value

#: Options' earlier names, still read (in ``--set``, a notebook's keywords, recorded commands) as the new ones.
RENAMED_OPTIONS: dict[str, str] = {"tips": "correction"}  # the whole correction loop, not only its tips

_TRUE = {"1", "true", "yes", "on", "y", "t"}
_FALSE = {"0", "false", "no", "off", "n", "f"}


def _option_fields() -> dict[str, Any]:
    """Defaults of every option name some method knows (the method itself refuses the others when built)."""
    kinds = {type(get_method(name).options): None for name in available_methods()}
    defaults: dict[str, Any] = {}
    for f in [f for kind in kinds for f in fields(kind)]:
        if f.default is not MISSING:
            defaults[f.name] = f.default
        elif f.default_factory is not MISSING:  # type: ignore[misc]
            defaults[f.name] = f.default_factory()  # type: ignore[misc]
        else:
            defaults[f.name] = None
    return defaults


def _convert(key: str, text: str, default: Any) -> Any:
    """``text`` as the type of the option's default (bool, int, float, tuple, str)."""
    raw = text.strip()
    if isinstance(default, bool):
        low = raw.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise InputError(f"--set {key}={text}: expected true or false")
    try:
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            value = float(raw)
            if not math.isfinite(value):
                raise InputError(f"--set {key}={text}: expected a finite number")
            return value
    except ValueError as exc:
        raise InputError(f"--set {key}={text}: expected a {type(default).__name__}") from exc
    if isinstance(default, (tuple, list)):
        return tuple(p.strip() for p in raw.split(",") if p.strip())
    if default is None:
        low = raw.lower()
        if low in ("none", "null", ""):
            return None
        for cast in (int, float):
            try:
                return cast(raw)
            except ValueError:
                pass
    return raw


def parse_sets(items: Sequence[str] | None) -> dict[str, Any]:
    """``["correction=false", "max_rounds=3"]`` -> typed method option overrides.

    Unknown option names are refused with the list of known ones, so a typo
    cannot silently run the unablated method."""
    defaults = _option_fields()
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        key = RENAMED_OPTIONS.get(key, key)
        if not sep or not key:
            raise InputError(f"--set {item!r}: expected key=value")
        if key not in defaults:
            raise UnknownNameError(f"--set {key}: unknown method option (known: {', '.join(sorted(defaults))})")
        out[key] = _convert(key, value, defaults[key])
    if "context" in out:  # refused before a run ingests anything, not when its first method is built
        check_context(out["context"])
    return out
