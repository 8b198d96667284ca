"""``MethodOptions``: the switches of the prompt-strategy pipeline (``Text2SQL``), checked once.

Each field is an ablation flag of ``python -m kgsql.ask`` and ``eval run --set``;
``check_options`` refuses unknown format/style/selection names when a method is
built, not later as an error in every answer.
"""
from __future__ import annotations

from dataclasses import dataclass

from kgsql.errors import UnknownNameError


@dataclass(frozen=True)
class MethodOptions:
    """Method switches (each an ablation flag of ``python -m kgsql.ask``)."""

    kg_schema: bool = True          # unified KG-based schema; False: plain CREATE TABLE of the whole database
    selection: bool = True          # knowledge selection (only with kg_schema)
    evidence: bool = True           # generate evidence
    user_evidence: str = "add"      # user-given evidence: "replace" generation, "add" to it, or "ignore"
    tips: bool = True               # self-correction with schema tips
    sdbms: bool = True              # SpatiaLite knowledge (spatial databases)
    geo: bool = True                # geographic table descriptions
    least_to_most: bool = True      # decompose, then solve in order
    max_rounds: int = 5             # generations at most, the first included
    spatial_functions: int = 6      # functions auto-selected per question
    value_examples: int = 3
    timeout_s: float = 30.0
    max_rows: int = 1000
    max_tokens: int = 512
    # Prompt strategies (kgsql.methods); the defaults leave the KG pipeline above unchanged.
    question_format: str = "kgsql"  # "kgsql" (instructions + least-to-most/direct), or dail/chat/act-completion
    schema_style: str = ""          # styles.py name (table-column, create-eot, code, kg...); "" = as kg_schema says
    example_rows: int = 0           # ACT-SQL's c example rows after each table (formatted prompts)
    shots: int = 0                  # few-shot examples picked from the pool (K); 0 = none
    example_selection: str = "masked-similarity"  # kgsql.fewshot selector name
    static_shots: int = 0           # ACT-SQL's ns fixed examples (with example_selection "hybrid")
    example_organisation: str = "sql-only"  # "full": each example shown with its own database's schema
    auto_cot: bool = False          # examples answer with ACT-SQL's auto chain-of-thought
    preliminary_sql: bool = False   # DAIL selection: a zero-shot draft SQL steers which examples are picked
    rewrite: bool = True            # with history: rewrite the question to stand alone (else concatenate)
    spatial_function_list: tuple[str, ...] = ()  # fixed SDBMS functions (SSpa) instead of per-question choice
    tip_kinds: tuple[str, ...] = () # keep only these tip kinds (SSpa: no_such_table/_column, ambiguous_column)
    show_failed_query: bool = True  # correction rounds also show the query that failed (SSpa: tips only)


def check_options(options: MethodOptions) -> MethodOptions:
    """Refuse unknown format/style/selection/organisation names when a method is built,
    not later as an error in every answer."""
    from kgsql.fewshot.select import available_selectors
    from kgsql.generate.formats import available_formats
    from kgsql.generate.shots import ORGANISATIONS
    from kgsql.generate.styles import get_style

    if options.question_format != "kgsql" and options.question_format not in available_formats():
        raise UnknownNameError(f"unknown question format '{options.question_format}'; known: kgsql, "
                               + ", ".join(available_formats()))
    if options.schema_style:
        get_style(options.schema_style)
    if options.example_selection not in available_selectors():
        raise UnknownNameError(f"unknown example selection '{options.example_selection}'; known: "
                               + ", ".join(available_selectors()))
    if options.example_organisation not in ORGANISATIONS:
        raise UnknownNameError(f"unknown example organisation '{options.example_organisation}'; known: "
                               + ", ".join(ORGANISATIONS))
    return options
