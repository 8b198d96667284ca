"""Evidence: what the user gave beside the question, and optionally what an LLM writes.

LLM-written evidence (the KG paper's three steps) is off by default: with
1.5B models it misled the SQL in 5 of 7 lost questions (issue 12). It stays
an option for strong endpoints (``--set evidence=true``). The first kgsql
pipeline (``kgsql-classic``) and the baselines ask it over their own context
(``sections``: :func:`sectioned_context`, which their prompts were measured with).
"""
from __future__ import annotations

from dataclasses import dataclass

from kgsql.generate.evidence import EvidenceGenerator
from kgsql.llm.base import Message
from kgsql.prompts.templates import fill, join_sections, section
from kgsql.sql.dialects import dialect_of, expert_line
from kgsql.stages.state import QuestionState

USER_EVIDENCE_MODES = ("add", "replace", "ignore")


def sectioned_context(state: QuestionState) -> list[Message]:
    """The first pipeline's context messages: the system line (the dialect's expert when no stage set
    one), then the spatial functions under their heading, the schema and its geographic descriptions."""
    system = state.system or expert_line(dialect_of(state.full))
    user = join_sections(section("spatial_section", functions=state.functions),
                         fill("context", schema=join_sections(state.schema_text, state.geo)))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass
class GatherEvidence:
    """Sets ``state.user_evidence``: the user's, the model's, or both (``user`` mode)."""

    lm: object = None
    generate: bool = False
    user: str = "add"  # "add" to the generated text, "replace" it, or "ignore" the user's
    sections: bool = False  # the model reads :func:`sectioned_context` (the first pipeline's)
    name: str = "evidence"

    def run(self, state: QuestionState) -> None:
        given = state.user_evidence.strip() if self.user != "ignore" else ""
        state.user_evidence = given
        if not self.generate or (given and self.user == "replace"):
            state.answer.evidence, state.answer.evidence_source = given, "user" if given else "none"
            return
        context = sectioned_context(state) if self.sections else [
            {"role": "system", "content": state.system},
            {"role": "user", "content": join_sections(state.functions, fill("context", schema=state.schema_text))}]
        values = list(state.values)
        made = EvidenceGenerator(self.lm).generate(state.question, context, state.trace,  # type: ignore[arg-type]
                                                   values=values)
        text = " ".join(p for p in (given, made.text if made else "") if p).strip()
        state.user_evidence = text
        source = "user+generated" if given and made else ("user" if given else made.source if made else "none")
        state.answer.evidence, state.answer.evidence_source = text, source
