"""Multi-turn rewriting (ACT-SQL §7.5) with a scripted LM."""
from __future__ import annotations

from pathlib import Path

from golden import assert_golden, messages_text
from kgsql.generate.rewrite import (
    REWRITE_SYSTEM, QuestionRewriter, RewriteExample, load_rewrite_examples, numbered, parse_numbered,
)
from kgsql.llm import ScriptedLM

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
CONVERSATION = ["How many singers are there?", "Which of them are from France?", "Show their names."]


def test_shipped_examples_are_well_formed() -> None:
    examples = load_rewrite_examples()
    assert len(examples) == 10
    assert all(len(e.multiturn) == len(e.standalone) >= 2 for e in examples)


def test_prompt_is_act_sql_remove_dependency() -> None:
    rewriter = QuestionRewriter(ScriptedLM(), [RewriteExample(("A?", "And B?"), ("A?", "A and B?"))])
    msgs = rewriter.messages(CONVERSATION)
    assert msgs[0] == {"role": "system", "content": REWRITE_SYSTEM}
    assert msgs[1:3] == [{"role": "user", "content": "1. A?\n2. And B?"},
                         {"role": "assistant", "content": "1. A?\n2. A and B?"}]
    assert msgs[-1]["content"] == numbered(CONVERSATION)
    assert_golden(FIXTURES / "rewrite.txt", messages_text(QuestionRewriter(ScriptedLM()).messages(CONVERSATION)))


def test_rewrite_parses_the_numbered_answer() -> None:
    lm = ScriptedLM({"rewrite": "1. How many singers are there?\n2. Which singers are from France?\n"
                                "3. Show the names of the singers from France."})
    rewriter = QuestionRewriter(lm)
    assert rewriter.standalone(CONVERSATION[-1], CONVERSATION[:-1]) == "Show the names of the singers from France."
    assert lm.steps() == ["rewrite"]


def test_no_history_no_call() -> None:
    lm = ScriptedLM()
    assert QuestionRewriter(lm).standalone("How many singers?") == "How many singers?"
    assert lm.calls == []


def test_unparsable_answer_keeps_the_question() -> None:
    assert QuestionRewriter(ScriptedLM({"rewrite": "Sure! Here you go."})).standalone("Show their names.", ["q?"]) \
        == "Show their names."
    # only the last item came back: still used
    assert QuestionRewriter(ScriptedLM({"rewrite": "2. Show the names of the singers."})).standalone(
        "Show their names.", ["How many singers?"]) == "Show the names of the singers."


def test_parse_numbered() -> None:
    assert parse_numbered("1) a\n 2. b \nnoise", 2) == ["a", "b"]
    assert parse_numbered("1. a", 2) is None
