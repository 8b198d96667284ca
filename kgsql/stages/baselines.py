"""The published baselines as stage lists: DAIL-SQL, ACT-SQL and SSpa (``kgsql.methods``).

    from kgsql.stages.baselines import PromptOptions, prompt_stages
    StagedMethod(graph, lm, prompt_stages(PromptOptions(shots=5), lm, retriever, pool=pool))

One formatted prompt per generation: the schema in a named style (ACT-SQL's
rows after each table), SSpa's SDBMS knowledge when ``sdbms`` (without it no
spatial stage runs and the prompt has no system line, as in DAIL-SQL),
geographic descriptions, evidence, the pool's examples as the paper picks
and shows them (``kgsql.stages.shots``), and SSpa's schema-tip rounds
(``kgsql.correct.loop``'s ``tip_rounds``). ``PromptOptions`` is the union of
these stages' fields (``--set key=value``); the stage that reads a field is
named in brackets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kgsql.stages.context import HISTORY, PreviousTurns
from kgsql.stages.evidence import GatherEvidence
from kgsql.stages.generate import GenerateSQL, tip_rounds
from kgsql.stages.options import check_options
from kgsql.stages.schema import RenderSchema, SelectSchema, SpatialNotes, WholeDatabase
from kgsql.stages.shots import DraftSQL, PickShots
from kgsql.stages.state import Stage


@dataclass(frozen=True)
class PromptOptions:
    """A baseline's prompt strategy, one field per decision (the stage that reads it in brackets)."""

    selection: bool = False          # [select] show only the retrieved sub-schema
    sdbms: bool = True               # [spatial] SDBMS line + function notes (False: no spatial stage, no system line)
    spatial_functions: int = 6       # [spatial] functions chosen per question
    spatial_function_list: tuple[str, ...] = ()  # [spatial] a fixed list instead (SSpa's)
    schema_style: str = "code"       # [render] a kgsql.generate.styles name
    example_rows: int = 0            # [render, examples] ACT-SQL's rows after each table
    value_examples: int = 3          # [render] per column, kg style only
    geo: bool = True                 # [render] geographic descriptions of the tables
    evidence: bool = False           # [evidence] LLM-written evidence (3 calls)
    user_evidence: str = "add"       # [evidence] add | replace | ignore
    preliminary_sql: bool = False    # [draft] a zero-shot draft SQL steers the selection (DAIL-SQL's)
    shots: int = 0                   # [examples] from the pool; none without one
    example_selection: str = "masked-similarity"  # [examples] a kgsql.fewshot selector name
    static_shots: int = 0            # [examples] ACT-SQL's fixed examples (hybrid selection)
    example_organisation: str = "sql-only"  # [examples] "full": each with its own database's schema
    auto_cot: bool = False           # [examples, sql] the examples answer with ACT-SQL's auto chain-of-thought
    question_format: str = "dail"    # [draft, sql] a kgsql.generate.formats name (dail, chat, act-completion...)
    correction: bool = True          # [sql] schema-tip rounds (was `tips`)
    max_rounds: int = 5              # [sql] generations at most, the first included
    tip_kinds: tuple[str, ...] = ()  # [sql] keep only these tip kinds (SSpa's three)
    show_failed_query: bool = True   # [sql] rounds also show the query that failed (SSpa: tips only)
    max_tokens: int = 512            # [draft, sql]
    timeout_s: float = 30.0          # [sql]
    max_rows: int = 1000             # [sql]
    rewrite: bool = True             # conversations: rewrite the question to stand alone (False: join them)
    context: str = "rewrite"         # [context] a follow-up's earlier turns: rewrite | history | none

    def __post_init__(self) -> None:
        check_options(self)


def prompt_stages(options: PromptOptions, lm: Any, retriever: Callable[[], Any], *, pool: Any = None,
                  encoder: Any = None) -> list[Stage]:
    """A baseline's stages, in order, each with its group of ``options``; examples only from ``pool``."""
    o = options
    stages: list[Stage] = [SelectSchema(retriever, scope="selected", with_evidence=False) if o.selection
                           else WholeDatabase()]
    if o.sdbms:
        stages.append(SpatialNotes(functions=o.spatial_functions, fixed=o.spatial_function_list))
    stages += [
        RenderSchema(style=o.schema_style, value_examples=o.value_examples, geo=o.geo, example_rows=o.example_rows),
        GatherEvidence(lm, generate=o.evidence, user=o.user_evidence, sections=True),
    ]
    if o.preliminary_sql and o.shots > 0:
        stages.append(DraftSQL(lm, layout=o.question_format, cot=o.auto_cot, max_tokens=o.max_tokens))
    loop = tip_rounds(correction=o.correction, max_rounds=o.max_rounds, tip_kinds=o.tip_kinds,
                      show_failed_query=o.show_failed_query)
    if o.context == HISTORY:
        stages.append(PreviousTurns())
    stages += [
        PickShots(pool, shots=o.shots, selection=o.example_selection, static_shots=o.static_shots,
                  organisation=o.example_organisation, auto_cot=o.auto_cot, style=o.schema_style,
                  example_rows=o.example_rows, encoder=encoder),
        GenerateSQL(lm, layout=o.question_format, loop=loop, max_tokens=o.max_tokens, timeout_s=o.timeout_s,
                    max_rows=o.max_rows, cot=o.auto_cot),
    ]
    return stages
