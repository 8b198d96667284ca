"""The first kgsql pipeline (``kgsql-classic``, the KG paper's) as a stage list.

Knowledge selection over the graph, the unified KG-based schema with
geographic descriptions (or, without ``kg_schema``, the whole database as
plain ``CREATE TABLE``), the spatial functions this question needs, evidence
in three LLM steps, the pool's most similar examples, then least-to-most SQL
(decompose, then solve in order) corrected by schema-tip rounds that also
show the query that failed. Kept as the KG paper's reference point; the
default ``kgsql`` replaced it (docs/methods.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kgsql.correct.loop import LoopOptions
from kgsql.generate.render import render_geo_descriptions
from kgsql.generate.sqlgen import SQLGenerator, SQLPrompt
from kgsql.prompts.templates import join_sections, section
from kgsql.sql.dialects import dialect_of, label
from kgsql.stages.evidence import GatherEvidence, sectioned_context
from kgsql.stages.generate import correct_into, tip_rounds
from kgsql.stages.options import check_options
from kgsql.stages.schema import RenderSchema, SelectSchema, SpatialNotes, WholeDatabase
from kgsql.stages.shots import PickShots
from kgsql.stages.state import QuestionState, Stage


@dataclass(frozen=True)
class ClassicOptions:
    """The first pipeline's switches (each an ablation of the KG paper), the stage that reads it in brackets."""

    kg_schema: bool = True           # [select, render] unified KG-based schema; False: CREATE TABLE of everything
    selection: bool = True           # [select] knowledge selection (only with kg_schema)
    value_examples: int = 3          # [render]
    geo: bool = True                 # [render] geographic table descriptions
    sdbms: bool = True               # [spatial] SpatiaLite knowledge (spatial databases)
    spatial_functions: int = 6       # [spatial] functions chosen per question
    spatial_function_list: tuple[str, ...] = ()  # [spatial] a fixed list instead
    evidence: bool = True            # [evidence] generate evidence (3 calls)
    user_evidence: str = "add"       # [evidence] add | replace | ignore
    shots: int = 3                   # [examples] from the pool; none without one
    example_selection: str = "masked-similarity"  # [examples]
    static_shots: int = 0            # [examples] fixed examples of the hybrid selection
    least_to_most: bool = True       # [sql] decompose, then solve in order; False: direct
    correction: bool = True          # [sql] self-correction with schema tips (was `tips`)
    max_rounds: int = 5              # [sql] generations at most, the first included
    tip_kinds: tuple[str, ...] = ()  # [sql] keep only these tip kinds
    show_failed_query: bool = True   # [sql] rounds also show the query that failed and why
    max_tokens: int = 512            # [sql]
    timeout_s: float = 30.0          # [sql]
    max_rows: int = 1000             # [sql]
    rewrite: bool = True             # conversations: rewrite the question to stand alone

    def __post_init__(self) -> None:
        check_options(self)


@dataclass
class WholeDDL:
    """The whole database as plain ``CREATE TABLE`` statements, geographic descriptions under their heading."""

    geo: bool = True
    name: str = "render"

    def run(self, state: QuestionState) -> None:
        from kgsql.retrieve.budget import render_ddl

        geo = render_geo_descriptions(state.full) if self.geo else ""
        state.schema_text = join_sections(render_ddl(state.full), section("geo_section", geo=geo))
        state.answer.selected_schema = state.schema_text


@dataclass
class LeastToMostSQL:
    """The KG paper's SQL prompt (instructions, evidence, examples, sub-questions) and its correction rounds."""

    lm: object
    least_to_most: bool = True
    loop: LoopOptions = LoopOptions()
    max_tokens: int = 512
    timeout_s: float = 30.0
    max_rows: int = 1000
    name: str = "sql"

    def run(self, state: QuestionState) -> None:
        examples = "\n\n".join(f"/* Answer the following: {s.question} */\n{s.answer.strip()}" for s in state.shots)
        prompt = SQLPrompt(context=sectioned_context(state), dialect=label(dialect_of(state.full)),
                           evidence=state.user_evidence, examples=examples)
        generator = SQLGenerator(self.lm, least_to_most=self.least_to_most,  # type: ignore[arg-type]
                                 max_tokens=self.max_tokens)
        correct_into(state, generator, prompt, self.loop, timeout_s=self.timeout_s, max_rows=self.max_rows)


def classic_stages(options: ClassicOptions, lm: Any, retriever: Callable[[], Any], *, pool: Any = None,
                   encoder: Any = None) -> list[Stage]:
    """The first pipeline's stages, in order, each with its group of ``options``."""
    o = options
    loop = tip_rounds(correction=o.correction, max_rounds=o.max_rounds, tip_kinds=o.tip_kinds,
                      show_failed_query=o.show_failed_query)
    return [
        SelectSchema(retriever, scope="selected", with_evidence=False) if o.kg_schema and o.selection
        else WholeDatabase(),
        SpatialNotes(functions=o.spatial_functions, fixed=o.spatial_function_list, enabled=o.sdbms),
        RenderSchema(style="kg", value_examples=o.value_examples, geo=o.geo) if o.kg_schema else WholeDDL(geo=o.geo),
        GatherEvidence(lm, generate=o.evidence, user=o.user_evidence, sections=True),
        PickShots(pool, shots=o.shots, selection=o.example_selection, static_shots=o.static_shots, encoder=encoder),
        LeastToMostSQL(lm, least_to_most=o.least_to_most, loop=loop, max_tokens=o.max_tokens,
                       timeout_s=o.timeout_s, max_rows=o.max_rows),
    ]
