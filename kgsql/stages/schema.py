"""Stages that decide what the prompt knows about the database.

``SelectSchema`` runs retrieval once per question: the tables it finds
relevant and the cell values the question names feed the hints, and with
``scope="selected"`` the prompt shows only the selection. With
``scope="database"`` the prompt shows the whole database: the same text for
every question of a database, which a prefix-caching server reads once
(measured in docs/eval.md: the faster and more accurate choice on Spider with
the local server) -- up to ``max_schema_tokens`` (3,000: above every Spider and
BIRD schema here, whose largest is ~1,700; a 61-table warehouse of ~11,000
tokens took 189 s a question and then failed). A bigger schema shows the
selection instead. ``RenderSchema`` writes the shown schema in a named style;
``SpatialNotes`` names the dialect in the system line and adds the spatial
preamble (SpatiaLite, PostGIS) and the functions a question needs.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from kgsql.errors import InputError
from kgsql.generate.parts import Lasts
from kgsql.generate.render import RenderOptions, render_geo_descriptions, render_kg_schema
from kgsql.sql.dialects import dialect_of, expert_line, function_kb
from kgsql.stages.state import QuestionState

SCOPES = ("database", "selected")
#: Characters per token of a schema's CREATE TABLE text (Qwen's tokenizer on Spider/BIRD DDL: about 3.5-4).
CHARS_PER_TOKEN = 3.5


def schema_tokens(schema: Any) -> int:
    """About how many tokens the whole schema takes as plain DDL (a lower bound of every style)."""
    from kgsql.generate.styles import render_schema

    return int(len(render_schema("code", schema)) / CHARS_PER_TOKEN)


@dataclass
class SelectSchema:
    """Retrieval for one question: focus tables, value hits, and (``selected``) the sub-schema."""

    retriever: Callable[[], Any]  # built on first use: loading the encoder takes seconds
    scope: str = "database"
    max_schema_tokens: int = 3000  # "database" scope only up to this size; above it, the selection
    with_evidence: bool = True  # the query is the question and the user's evidence (False: the question only)
    name: str = "select"

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise InputError(f"schema scope '{self.scope}': expected one of {', '.join(SCOPES)}")

    def run(self, state: QuestionState) -> None:
        # Evidence the user gave (BIRD's, spatial name hints) often names the values the question
        # only paraphrases, possibly in another script: retrieval reads both. A follow-up read with its
        # earlier turns (context=history) names no table itself: their questions are read too.
        earlier = [question for question, _ in state.earlier]
        query = " ".join(p for p in (*earlier, state.question, state.user_evidence if self.with_evidence else "")
                         if p)
        selection = self.retriever().select(state.full, query, db_path=state.full.path or None)
        state.answer.selection = selection.to_dict()
        state.focus_tables = list(selection.tables)
        state.values = list(selection.values)
        too_big = self.scope == "database" and schema_tokens(state.full) > self.max_schema_tokens
        if too_big:  # said where the answer shows its selection
            state.answer.selection["shown"] = f"selected: the whole schema is over {self.max_schema_tokens} tokens"
        if self.scope == "selected" or too_big:
            sub = selection.to_schema(state.full)
            state.schema = replace(sub, description=state.full.description, derived=list(state.full.derived))
        else:
            state.schema = state.full


@dataclass
class WholeDatabase:
    """Shows the whole database without retrieval: for a method whose later stages need no selection
    (no hints, no pruning), so no encoder is loaded at all."""

    name: str = "select"

    def run(self, state: QuestionState) -> None:
        state.schema = state.full


@dataclass
class RenderSchema:
    """The shown schema as text in a registered style (``kgsql.generate.styles``)."""

    style: str = "code-values"
    value_examples: int = 3  # the kg style's examples per column
    geo: bool = True
    example_rows: int = 0  # ACT-SQL's rows after each table
    name: str = "render"

    def __post_init__(self) -> None:
        from kgsql.generate.styles import get_style

        get_style(self.style)  # an unknown name fails when the method is built

    def run(self, state: QuestionState) -> None:
        from kgsql.generate.styles import render_example_rows, render_schema

        schema = state.shown
        if self.style == "kg":  # the unified schema carries its own geographic descriptions
            text = render_kg_schema(schema, RenderOptions(value_examples=self.value_examples,
                                                          geo_descriptions=self.geo))
            state.schema_text = "\n".join(p for p in (text, render_example_rows(schema, self.example_rows)) if p)
        else:
            state.schema_text = render_schema(self.style, schema, example_rows=self.example_rows)
            state.geo = render_geo_descriptions(schema) if self.geo else ""
        state.answer.selected_schema = state.schema_text


@dataclass
class SpatialNotes:
    """SSpa's SDBMS knowledge: the SpatiaLite preamble and this question's function notes (``per_database``:
    the database's, every function its geometry types make likely, one cached text for all its questions)."""

    functions: int = 6
    fixed: tuple[str, ...] = ()
    enabled: bool = True
    per_database: bool = False  # every function the database's geometry makes likely, the same for each question
    name: str = "spatial"

    def run(self, state: QuestionState) -> None:
        dialect = dialect_of(state.full)
        state.system = expert_line(dialect)
        kb = function_kb(dialect)
        if not self.enabled or not kb:
            return
        from kgsql.sql.spatialite import spatial_notes

        schema = state.full if self.per_database else state.shown  # the database's: the same for its questions
        preamble, notes = spatial_notes(state.question, schema, k=self.functions, fixed=self.fixed, dialect=kb,
                                        per_database=self.per_database)
        if preamble:
            state.system, state.functions = preamble, notes
            if self.per_database or self.fixed:
                state.lasting["functions"] = Lasts.DATABASE
