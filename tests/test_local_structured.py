"""Issue 18, items 1 and 5: constrained verdicts (``judge.structured``) and instructions that reach
the model (``judge.system_role``), against the loopback fake speaking each server's wire format:
``response_format`` json_schema (OpenAI, llama.cpp's server, vLLM, LM Studio, Ollama's /v1) and
llama-cpp-python's ``{"type": "json_object", "schema": ...}``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline_helpers import make_quiz
from test_estimate import run_all, vet_run

from quiztui.core.question_mode import QuestionVerdictParser, answer_schema
from quiztui.core.verdicts import parse_verdict_document, verdict_schema
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

FAST = RetryPolicy(max_retries=2, base_delay=0.02, max_delay=0.1)


def chats(server: FakeOpenAI):  # type: ignore[no-untyped-def]
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


@pytest.mark.parametrize("mode", ["assertion", "question"])
@pytest.mark.parametrize("stream", [True, False])
async def test_a_json_schema_server_gets_the_schema_and_every_verdict_is_read(
    tmp_path: Path, mode: str, stream: bool
) -> None:
    quiz = make_quiz(10, wrong_every=3)
    with FakeOpenAI(truth_from_quiz(quiz), structured="json_schema") as server:
        judge = OpenAICompatProvider(
            base_url=server.base_url, model="fake-judge", retry=FAST, stream=stream
        )
        with Store(tmp_path / "q.db") as store:
            settings = VetSettings(mode=mode, batch_size=7)
            _, summary = await run_all(vet_run(quiz, judge, store, mode=mode, settings=settings))
        await judge.aclose()
        sent = chats(server)
    assert {r.response_format for r in sent} == {"json_schema"}
    assert (summary.judged, summary.unjudged) == (40, 0)
    # The fake judge is right every time: the keys it marks wrong are the ones made wrong.
    flagged = {q.question_id for q in summary.questions if q.verdicts[q.key] is False}
    assert flagged == {f"q{i}" for i in (3, 6, 9)}


async def test_llama_cpp_python_is_learnt_from_its_refusals_and_then_asked_its_own_way(
    tmp_path: Path,
) -> None:
    """The first requests go together (none waits for another to learn the endpoint's shape):
    each one llama-cpp-python refuses (its 500 to json_schema, not retried as a server fault) is
    asked again as json_object, the shape steps down once however many refusals arrive, and
    every later request goes that way."""
    quiz = make_quiz(10)
    with FakeOpenAI(truth_from_quiz(quiz), structured="json_object") as server:
        judge = OpenAICompatProvider(base_url=server.base_url, model="gemma", retry=FAST)
        with Store(tmp_path / "q.db") as store:
            settings = VetSettings(batch_size=4, concurrency=8)
            _, summary = await run_all(vet_run(quiz, judge, store, settings=settings))
        await judge.aclose()
        sent = [(r.status, r.response_format) for r in chats(server)]
    refused = [s for s in sent if s[0] != 200]
    # More than one request was on the wire before the first refusal came back...
    assert len(refused) > 1 and set(refused) == {(500, "json_schema")}
    # ...and each refused batch was asked once more, as json_object, never as text.
    assert [s for s in sent if s[0] == 200] == [(200, "json_object")] * 10
    assert len(sent) == 10 + len(refused)
    assert judge.structured_wire == "json_object"
    assert (summary.judged, summary.unjudged) == (40, 0)


async def test_a_server_refusing_both_goes_on_with_text_under_auto(tmp_path: Path) -> None:
    quiz = make_quiz(4)
    with FakeOpenAI(truth_from_quiz(quiz), structured="text") as server:
        judge = OpenAICompatProvider(base_url=server.base_url, model="fake-judge", retry=FAST)
        with Store(tmp_path / "q.db") as store:
            _, summary = await run_all(vet_run(quiz, judge, store))
        await judge.aclose()
        sent = [(r.status, r.response_format) for r in chats(server)]
    # json_schema refused, then json_object refused, then text from there on.
    assert sent == [(400, "json_schema"), (400, "json_object"), (200, None)]
    assert judge.structured_wire is None
    assert (summary.judged, summary.unjudged) == (16, 0)


async def test_side_by_side_refusals_step_down_one_shape_at_a_time(tmp_path: Path) -> None:
    """Eight requests refused at once step the shape down once per shape the server refused:
    json_schema, then json_object, then text, and every batch is judged; a request refused in a
    shape the provider already left is asked again the current way, not stepped past it."""
    quiz = make_quiz(10)
    with FakeOpenAI(truth_from_quiz(quiz), structured="text") as server:
        judge = OpenAICompatProvider(base_url=server.base_url, model="fake-judge", retry=FAST)
        with Store(tmp_path / "q.db") as store:
            settings = VetSettings(batch_size=4, concurrency=8)
            _, summary = await run_all(vet_run(quiz, judge, store, settings=settings))
        await judge.aclose()
        sent = [(r.status, r.response_format) for r in chats(server)]
    assert judge.structured_wire is None
    assert (summary.judged, summary.unjudged) == (40, 0)
    assert sum(1 for s in sent if s == (400, "json_schema")) > 1
    assert {s for s in sent if s[0] != 200} <= {(400, "json_schema"), (400, "json_object")}
    assert [s for s in sent if s[0] == 200] == [(200, None)] * 10


async def test_structured_on_and_a_refusing_server_fail_the_run_with_the_reason(
    tmp_path: Path,
) -> None:
    quiz = make_quiz(4)
    with FakeOpenAI(truth_from_quiz(quiz), structured="text") as server:
        judge = OpenAICompatProvider(
            base_url=server.base_url, model="fake-judge", retry=FAST, structured="on"
        )
        with Store(tmp_path / "q.db") as store:
            _, summary = await run_all(vet_run(quiz, judge, store))
        await judge.aclose()
    assert summary.status == "failed" and summary.judged == 0
    assert 'judge.structured is "on"' in (summary.error or "")


async def test_structured_off_sends_no_response_format(tmp_path: Path) -> None:
    quiz = make_quiz(3)
    with FakeOpenAI(truth_from_quiz(quiz), structured="json_schema") as server:
        judge = OpenAICompatProvider(
            base_url=server.base_url, model="fake-judge", retry=FAST, structured="off"
        )
        with Store(tmp_path / "q.db") as store:
            _, summary = await run_all(vet_run(quiz, judge, store))
        await judge.aclose()
        assert {r.response_format for r in chats(server)} == {None}
    assert summary.judged == 12


@pytest.mark.parametrize(
    ("model", "role", "roles"),
    [
        ("fake-judge", "auto", ("system", "user")),
        ("gemma-3-270m-it", "auto", ("user",)),
        ("fake-judge", "user", ("user",)),
        ("gemma-3-270m-it", "system", ("system", "user")),
    ],
)
async def test_system_role_puts_the_instructions_where_the_template_reads_them(
    tmp_path: Path, model: str, role: str, roles: tuple[str, ...]
) -> None:
    quiz = make_quiz(3)
    with FakeOpenAI(truth_from_quiz(quiz), models=[model]) as server:
        judge = OpenAICompatProvider(
            base_url=server.base_url,
            model=model,
            retry=FAST,
            system_role=role,  # type: ignore[arg-type]
        )
        with Store(tmp_path / "q.db") as store:
            _, summary = await run_all(vet_run(quiz, judge, store))
        await judge.aclose()
        sent = chats(server)
    assert {r.roles for r in sent} == {roles}
    assert (summary.judged, summary.unjudged) == (12, 0)  # the batch is still read in the user turn


def test_a_verdict_document_over_many_lines_is_read_whole() -> None:
    doc = {
        "verdicts": [
            {"id": "A1", "verdict": True, "reason": "sum is right"},
            {"id": "A2", "verdict": False, "reason": "off by one"},
            {"id": "A9", "verdict": True, "reason": "not in the batch"},
        ]
    }
    found = parse_verdict_document(json.dumps(doc, indent=2), ["A1", "A2"])
    assert [(v.id, v.verdict, v.reason) for v in found] == [
        ("A1", True, "sum is right"),
        ("A2", False, "off by one"),
    ]
    assert parse_verdict_document("A1: TRUE", ["A1"]) == []
    schema = json.loads(verdict_schema(["A2", "A10", "A1"]))
    assert list(schema["properties"]) == schema["required"] == ["A1", "A2", "A10"]
    assert schema["properties"]["A1"]["required"] == ["verdict", "reason"]


def test_a_verdict_document_keyed_by_id_is_read_whole() -> None:
    """verdict_schema's own shape, over many lines as a constrained server writes it."""
    doc = {
        "A1": {"verdict": True, "reason": "sum is right"},
        "A2": {"verdict": False, "reason": "off by one"},
        "A3": "false",
        "A9": {"verdict": True, "reason": "not in the batch"},
        "A4": {"reason": "no verdict"},
    }
    found = parse_verdict_document(json.dumps(doc, indent=2), ["A1", "A2", "A3", "A4"])
    assert [(v.id, v.verdict, v.reason) for v in found] == [
        ("A1", True, "sum is right"),
        ("A2", False, "off by one"),
        ("A3", False, ""),
    ]


def test_a_structured_answer_over_many_lines_names_its_option() -> None:
    assert json.loads(answer_schema(3))["properties"]["answer"]["enum"] == ["A", "B", "C"]
    parser = QuestionVerdictParser(["A1", "A2", "A3"], "Question: x?\nA) a\nB) b\nC) c")
    parser.feed('{\n  "answer": "C",\n  "reason": "the third"\n}')
    got = parser.close()
    assert [(v.id, v.verdict) for v in got] == [("A1", False), ("A2", False), ("A3", True)]
    assert parser.problem is None
