"""The one JSON-from-reply extractor (``core/replies.py``) and the runs that read through it.

A reply of thousands of nested brackets is untrusted input: it must make its item unscored,
unjudged or failed with a reason, never end a run with ``RecursionError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pipeline_helpers import collect, make_quiz

from quiztui.core.assertions import parse_rendered_batch
from quiztui.core.grading import GradeItem, parse_facts, parse_pass3, parse_rubric10
from quiztui.core.paraphrase import parse_choice
from quiztui.core.qa_replies import ReplyError, extract_json
from quiztui.core.question_mode import QuestionVerdictParser, parse_choice_line
from quiztui.core.quiz import Question, Quiz
from quiztui.core.replies import (
    MAX_DEPTH,
    JSONRefused,
    ReplyUnparsed,
    embedded_values,
    fenced_blocks,
    json_document,
    json_values,
)
from quiztui.core.review import parse_points, parse_review
from quiztui.core.verdicts import StreamingVerdictParser, parse_line, parse_reply
from quiztui.formats.document import read_document
from quiztui.pipeline.events import AssertionUnjudged, RunFinished
from quiztui.pipeline.generate import ChunkFailed, GenerateFinished, GenerateRun, GenerateSettings
from quiztui.pipeline.grade import GradeFinished, GradeRun, GradeSettings, ItemGraded
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.review import QuestionReviewed, ReviewFinished, ReviewRun, ReviewSettings
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.base import ChatRequest, ChatResult, OnText, Usage
from quiztui.store import Store

DEEP_LISTS = "[" * 5000
DEEP_OBJECTS = '{"a":' * 5000
DEEP_CLOSED = '{"a":' * 5000 + "1" + "}" * 5000  # valid JSON: json.loads itself would recurse
HOSTILE = [DEEP_LISTS, DEEP_OBJECTS]
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"


# --- the extractor ------------------------------------------------------------------------------


def test_values_embedded_in_prose_in_order() -> None:
    reply = 'Sure. First {"a": 1}, then [1, 2] and {"b": {"c": [true, null]}}. Done.'
    assert json_values(reply) == [{"a": 1}, [1, 2], {"b": {"c": [True, None]}}]
    # Two objects both come back in order: a caller wanting the model's last word takes [-1].
    assert json_values('{"rating": 3} on reflection {"rating": 8}')[-1] == {"rating": 8}
    # Duplicate keys: the last one wins, as json.loads does.
    assert json_values('{"rating": 3, "rating": 8}') == [{"rating": 8}]


def test_a_fenced_block_is_read_first() -> None:
    reply = 'I considered {"rating": 1} but\n```json\n{"rating": 9}\n```\nand ```\n[2]\n```'
    assert fenced_blocks(reply) == ['{"rating": 9}\n', "[2]\n"]
    assert json_values(reply) == [{"rating": 9}]  # the first fence holding JSON
    # A fence without JSON falls back to the whole reply.
    assert json_values('```text\nnothing here\n``` but {"x": 1}') == [{"x": 1}]


def test_strings_holding_brackets_and_escapes() -> None:
    tricky = {"a": "}{][", "b": 'quote " and \\ backslash', "c": "\u00e9 \\u00e9"}
    reply = "prose [not json " + json.dumps(tricky) + " more ] prose"
    assert json_values(reply) == [tricky]
    assert json_values(r'{"k": "\"}\"", "n": 1}') == [{"k": '"}"', "n": 1}]
    # A string with a raw newline is not JSON (strict mode): the inner object is found instead.
    assert json_values('{"a": "line\nbreak", "b": {"c": 1}}') == [{"c": 1}]


def test_broken_outer_json_yields_the_valid_inner_values() -> None:
    cut = '[{"q": 1}, {"q": 2}, {"q": '
    assert json_values(cut) == [{"q": 1}, {"q": 2}]
    assert list(embedded_values('{see: {"a": 1}} and [x, [2]]')) == [{"a": 1}, [2]]
    assert json_values("no json at all (really) [citation needed]") == []


def test_json_document_is_the_whole_text_or_none() -> None:
    assert json_document(' \n{"a": [1, {"b": 2}]}\t') == {"a": [1, {"b": 2}]}
    assert json_document("[1, 2]") == [1, 2]
    assert json_document('{"a": 1} trailing') is None
    assert json_document("prose {}") is None
    assert json_document("42") is None  # a scalar is not a document here
    assert json_document("") is None


def test_depth_cap_is_checked_before_json_sees_the_text() -> None:
    at_cap = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert len(json_values(at_cap)) == 1
    over = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    for text in (over, DEEP_LISTS, DEEP_OBJECTS, DEEP_CLOSED, "```json\n" + DEEP_CLOSED + "\n```"):
        with pytest.raises(JSONRefused, match=TOO_DEEP):
            json_values(text)
        with pytest.raises(JSONRefused, match=TOO_DEEP):
            list(embedded_values(text))
    with pytest.raises(JSONRefused, match=TOO_DEEP):
        json_document(DEEP_CLOSED)
    assert len(json_values("[" * 10 + "]" * 10, max_depth=10)) == 1
    with pytest.raises(JSONRefused, match="nested deeper than 9 levels"):
        json_values("[" * 10 + "]" * 10, max_depth=9)
    # Brackets inside strings do not count; "{{" cannot be JSON, so it is not nesting either.
    assert json_values(json.dumps({"s": "[" * 500})) == [{"s": "[" * 500}]
    assert json_values("{" * 500 + " template braces") == []


def test_length_cap() -> None:
    reply = '{"a": "' + "x" * 100 + '"}'
    assert json_values(reply, max_chars=len(reply)) == [{"a": "x" * 100}]
    with pytest.raises(JSONRefused, match=r"reply too long to read for JSON \(109 characters"):
        json_values(reply, max_chars=len(reply) - 1)
    with pytest.raises(JSONRefused, match="too long"):
        json_document(reply, max_chars=10)


def test_refusal_is_a_reply_unparsed() -> None:
    # Every parser's "unparseable" path catches ReplyUnparsed (or converts it).
    assert issubclass(JSONRefused, ReplyUnparsed) and issubclass(ReplyUnparsed, ValueError)


def test_broken_brackets_everywhere_cost_a_few_passes() -> None:
    # Quadratic rescanning would take minutes here; correctness is what is asserted.
    assert json_values("[x]" * 60_000) == []
    assert len(json_values("[" * 60 + "[]" * 90_000)) == 90_000
    assert json_values(("[" * 60 + "x" + "]" * 60) * 1_000) == []


# --- every parser: a hostile reply is unparsed with the reason ---------------------------------


@pytest.mark.parametrize("hostile", HOSTILE, ids=["lists", "objects"])
@pytest.mark.parametrize("parse", [parse_rubric10, parse_pass3, parse_facts, parse_review])
def test_grade_and_review_parsers_refuse_deep_json(
    parse: Callable[[str], Any], hostile: str
) -> None:
    with pytest.raises(ReplyUnparsed, match=TOO_DEEP):
        parse(hostile)


def test_points_pass_over_refused_json() -> None:
    assert parse_points(DEEP_OBJECTS + "\nFlaws:\n- vague stem") == ((), ("vague stem",))


@pytest.mark.parametrize("hostile", HOSTILE, ids=["lists", "objects"])
def test_qa_extractor_refuses_deep_json(hostile: str) -> None:
    with pytest.raises(ReplyError, match=TOO_DEEP):
        extract_json(hostile)
    with pytest.raises(ReplyError, match="too long"):
        extract_json("[" + "1, " * 100_000 + "1]")


@pytest.mark.parametrize("hostile", [DEEP_OBJECTS, DEEP_CLOSED], ids=["open", "closed"])
def test_verdict_lines_past_the_caps_keep_the_reason(hostile: str) -> None:
    assert parse_line(hostile) is None
    assert parse_choice_line(hostile, 4) is None
    parser = StreamingVerdictParser(["A1", "A2"])
    found = parser.feed("A1: TRUE - fine\n" + hostile[:7000])
    found += parser.feed(hostile[7000:] + "\nA2: false\n") + parser.close()
    assert [(v.id, v.verdict) for v in found] == [("A1", True), ("A2", False)]
    assert parser.refused is not None and TOO_DEEP in parser.refused
    question = QuestionVerdictParser(["A1", "A2"])
    assert question.feed(hostile + "\n") == []
    assert question.refused is not None and TOO_DEEP in question.refused
    with pytest.raises(ReplyUnparsed, match=TOO_DEEP):
        parse_choice(hostile, ["x", "y"])


def test_verdict_json_lines_read_as_before() -> None:
    line = '- {"id": "a1", "verdict": "False", "reason": "no"}'
    found = parse_reply(line, ["A1"])["A1"]
    assert (found.verdict, found.reason, line[found.offset or 0 :]) == (
        False,
        "no",
        'False", ' + '"reason": "no"}',
    )
    # Two objects on one line are not one object: the line gives no verdict, as it never did.
    assert parse_line('{"id": "A1", "verdict": true} {"id": "A2", "verdict": false}') is None
    assert parse_line("A1: TRUE {not json") is not None


# --- end to end: the run finishes, the hostile item has a reason ---------------------------------


class HostileProvider:
    """Answers with ``hostile`` when ``trigger`` is in the prompt (always when it is empty), else
    with ``normal(prompt)``; streams through ``on_text`` in small chunks when asked to."""

    name = "hostile"
    model = "hostile"
    base_url = "hostile://"
    simulated = False

    def __init__(
        self, hostile: str, normal: Callable[[str], str] = lambda _: "", trigger: str = ""
    ) -> None:
        self.hostile, self.normal, self.trigger = hostile, normal, trigger
        self.usage = Usage()
        self.prompts: list[str] = []

    @property
    def label(self) -> str:
        return "hostile"

    async def complete(
        self, request: ChatRequest, *, on_text: OnText | None = None, **_: Any
    ) -> ChatResult:
        self.usage.requests += 1
        prompt = "\n".join(content for _, content in request.messages)
        self.prompts.append(prompt)
        text = self.hostile if self.trigger in prompt else self.normal(prompt)
        if on_text is not None:
            for i in range(0, len(text), 500):
                on_text(text[i : i + 500])
        return ChatResult(text, 10, 5, "stop")

    async def aclose(self) -> None:
        return None


def _graded_reply(prompt: str) -> str:
    if "facts" in prompt.lower() and "extract" in prompt.lower():
        return '{"facts": ["Shakespeare wrote Hamlet"]}'
    return '{"explanation": "right", "rating": 9, "evaluation": "ok", "final_verdict": "pass"}\n1'


@pytest.mark.parametrize("hostile", HOSTILE, ids=["lists", "objects"])
@pytest.mark.parametrize("grader", ["rubric10", "pass3", "facts"])
async def test_grade_run_marks_the_hostile_item_unscored(grader: str, hostile: str) -> None:
    items = [
        GradeItem("good", "Who wrote Hamlet?", "Shakespeare wrote Hamlet.", "Shakespeare."),
        # The trigger in the reference reaches the facts grader's extraction (its JSON step).
        GradeItem("bad", "Who wrote Hamlet?", "HOSTILE-ITEM wrote Hamlet.", "HOSTILE-ITEM"),
    ]
    provider = HostileProvider(hostile, _graded_reply, trigger="HOSTILE-ITEM")
    run = GradeRun(items, GradeSettings(grader=grader, concurrency=2), provider=provider)
    events = [e async for e in run.events()]
    outcomes = {e.item.id: e.outcome for e in events if isinstance(e, ItemGraded)}
    assert len([e for e in events if isinstance(e, GradeFinished)]) == 1
    assert outcomes["good"].scored
    bad = outcomes["bad"]
    assert not bad.scored and bad.unscored is not None and TOO_DEEP in bad.unscored


def _review_reply(_: str) -> str:
    scores = "\n".join(
        f"{c}: 4" for c in ("Grammaticality", "Appropriateness", "Relevance", "Novelty")
    )
    return scores + "\nComplexity: 3\nStrengths:\n- clear\nFlaws:\n- none\n"


@pytest.mark.parametrize("hostile", HOSTILE, ids=["lists", "objects"])
@pytest.mark.parametrize("mode", ["direct", "feedback"])
async def test_review_run_marks_the_hostile_question_unscored(mode: str, hostile: str) -> None:
    questions = (
        Question(id="ok", text="What is the capital of France?", options=("Paris", "Rome"), key=0),
        Question(id="bad", text="HOSTILE-QUESTION capital?", options=("Paris", "Rome"), key=0),
    )
    quiz = Quiz(title="t", questions=questions)
    provider = HostileProvider(hostile, _review_reply, trigger="HOSTILE-QUESTION")
    run = ReviewRun(quiz, ReviewSettings(mode=mode, concurrency=2), provider)
    events = [e async for e in run.events()]
    outcomes = {e.question.id: e.outcome for e in events if isinstance(e, QuestionReviewed)}
    assert len([e for e in events if isinstance(e, ReviewFinished)]) == 1
    assert outcomes["ok"].scored
    bad = outcomes["bad"]
    assert not bad.scored and bad.unscored is not None and TOO_DEEP in bad.unscored


@pytest.mark.parametrize("hostile", HOSTILE, ids=["lists", "objects"])
async def test_generate_run_fails_the_hostile_chunk_with_the_reason(
    tmp_path: Path, hostile: str
) -> None:
    doc = tmp_path / "notes.txt"
    doc.write_text(
        "The harbour at Port Assel is 11 metres deep at low tide.\n\n"
        "HOSTILE-CHUNK The wind farm has twelve turbines.\n",
        encoding="utf-8",
    )
    good = json.dumps(
        [
            {
                "Question": "How deep is the harbour at Port Assel at low tide, in metres?",
                "Answer": "11",
                "Context": "The harbour at Port Assel is 11 metres deep at low tide.",
            }
        ]
    )
    provider = HostileProvider(hostile, lambda _: good, trigger="HOSTILE-CHUNK")
    settings = GenerateSettings(subject="s", chunk_chars=60)
    run = GenerateRun(read_document(doc), provider, {"qa": load_prompt("generate_qa")}, settings)
    events = [e async for e in run.events()]
    finished = [e for e in events if isinstance(e, GenerateFinished)]
    assert len(finished) == 1
    failed = [e for e in events if isinstance(e, ChunkFailed)]
    assert failed and all(TOO_DEEP in f.reason for f in failed)
    assert len(failed) < len(run.chunks)  # the other chunks were read
    assert finished[0].summary.pairs


@pytest.mark.parametrize("mode", ["assertion", "question"])
async def test_vet_run_leaves_the_hostile_assertions_unjudged_with_the_reason(
    tmp_path: Path, mode: str
) -> None:
    def reply(prompt: str) -> str:
        if mode == "question":  # the hostile line first: a later answer line is still read
            return DEEP_CLOSED + ("\n" if "What is 3 + 3" in prompt else "\nANSWER: A\n")
        ids = parse_rendered_batch(prompt)
        return "\n".join(DEEP_CLOSED if i == "A1" else f"{i}: TRUE" for i in ids) + "\n"

    provider = HostileProvider("", reply, trigger="\x00never")
    settings = VetSettings(batch_size=16, max_reasks=1, mode=mode)
    store = Store(tmp_path / "r.db")
    prompt = load_prompt("judge_question" if mode == "question" else "judge_assertions")
    try:
        events = [e async for e in VetRun(make_quiz(4), provider, store, prompt, settings).events()]
    finally:
        store.close()
    summary = next(e.summary for e in events if isinstance(e, RunFinished))
    unjudged = [e for e in events if isinstance(e, AssertionUnjudged)]
    expected = 4 if mode == "question" else 1  # one question's options, or one assertion
    assert len(unjudged) == expected and summary.unjudged == expected
    assert all(TOO_DEEP in e.reason for e in unjudged), unjudged[0].reason
    if mode == "question":
        assert {e.question_id for e in unjudged} == {"q3"}


async def test_vet_run_with_only_hostile_replies_finishes_unjudged(tmp_path: Path) -> None:
    for hostile in [*HOSTILE, DEEP_CLOSED]:
        provider = HostileProvider(hostile)
        settings = VetSettings(batch_size=8, max_reasks=1)
        events, summary = await collect(
            make_quiz(2), provider, tmp_path / f"{len(hostile)}.db", settings=settings
        )
        unjudged = [e for e in events if isinstance(e, AssertionUnjudged)]
        assert len(unjudged) == 8 and summary.unjudged == 8
        # Verdict lines are objects: a line of "[" is no verdict, and never read as JSON.
        why = TOO_DEEP if "{" in hostile else "reply had no verdicts (refusal?)"
        assert all(why in e.reason for e in unjudged), unjudged[0].reason
