"""Issue 19, item 7: a fuzzing suite that keeps it so.

Property-based tests (hypothesis) over every importer, the reply parsers and the report writers:
arbitrary bytes and structure-aware mutations of a well-formed file never give a traceback — an
importer returns a quiz or raises a ``QuiztuiError`` whose every line is one line (exit 2 at the
CLI), a reply parser returns a result or says the reply is unparsed, a report writer's output is
terminal-safe, valid JSON stays valid, and no CSV cell starts a formula.

``make test`` runs a bounded number of examples per property (``QUIZTUI_FUZZ_EXAMPLES``, default
40); ``make fuzz`` runs 10,000 per importer.
"""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import io
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiztui.core.grading import parse_facts, parse_pass3, parse_rubric10
from quiztui.core.paraphrase import parse_choice, parse_open, parse_rewrites
from quiztui.core.replies import ReplyUnparsed, json_values
from quiztui.core.review import parse_review
from quiztui.core.terminal import csv_cell, is_terminal_safe
from quiztui.core.verdicts import StreamingVerdictParser, parse_reply
from quiztui.errors import QuizFormatError, QuiztuiError
from quiztui.formats import load_quiz

EXAMPLES = int(os.environ.get("QUIZTUI_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 100,  # the bounded run in `make test` is the same every time
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# One small well-formed file per importer, written the way users write them.
SEEDS: dict[str, str] = {
    "quiz.json": json.dumps(
        [
            {
                "question": "What is the capital of Peru?",
                "responses": ["Lima", "Cusco"],
                "correct": "Lima",
                "category": "Geography",
            },
            {"question": "2 + 2 = ?", "responses": ["3", "4", "5"], "correct": "4"},
        ],
        indent=1,
    ),
    "trivia.json": json.dumps(
        {
            "response_code": 0,
            "results": [
                {
                    "type": "multiple",
                    "difficulty": "easy",
                    "category": "Science",
                    "question": "Which gas do plants absorb?",
                    "correct_answer": "CO&#039;2",
                    "incorrect_answers": ["O2", "N2", "He"],
                }
            ],
        }
    ),
    "quiz.jsonl": '{"question": "Largest ocean?", "responses": ["Pacific", "Indian"],'
    ' "correct": "Pacific"}\n{"question": "H2O is?", "responses": ["water", "salt"],'
    ' "correct": "water"}\n',
    "quiz.csv": "question,correct,distractor1,distractor2\n"
    'Capital of Chile?,Santiago,Lima,"Quito, Ecuador"\nHow many legs has a spider?,8,6,10\n',
    "bank.gift": "// geography\n::Q1:: What is the capital of Kenya? {=Nairobi ~Mombasa ~Kisumu}\n\n"
    "::Q2:: The sun is a star. {T}\n\n::Q3:: 2 + 3 = {#5:0.5}\n",
    "bank.aiken": "What colour is the sky?\nA. Blue\nB. Green\nANSWER: A\n\n"
    "Which is a prime?\nA) 4\nB) 7\nANSWER: B\n",
    "bank.xml": '<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n'
    '<question type="multichoice"><name><text>Q1</text></name>'
    '<questiontext format="html"><text><![CDATA[<p>Capital of <b>Spain</b>?</p>]]></text>'
    "</questiontext><single>true</single>"
    '<answer fraction="100"><text>Madrid</text></answer>'
    '<answer fraction="0"><text>Seville</text></answer></question>\n'
    '<question type="truefalse"><name><text>Q2</text></name>'
    "<questiontext><text>Ice is cold.</text></questiontext>"
    '<answer fraction="100"><text>true</text></answer>'
    '<answer fraction="0"><text>false</text></answer></question>\n</quiz>\n',
}
# Tokens that mean something to one of the formats: mutations splice them in.
TOKENS = [
    "[", "]", "{", "}", '"', "\\", ",", ":", "\n", "\r\n", "\x00", "\x1b]52;c;x\x07", "\u202e",
    "<", ">", "</question>", "<![CDATA[", "]]>", "<!DOCTYPE quiz [<!ENTITY e \"x\">]>", "&e;",
    "&amp;", "&#0;", "::", "~", "=", "#", "%50%", "->", "ANSWER:", "A.", "NaN", "1e999", "-0",
    "\ufeff", "\udcff", '"""', "'", ";", "\t", "[" * 80, "{" * 80,
]  # fmt: skip


def load_outcome(name: str, data: bytes) -> None:
    """Load ``data`` as file ``name``: a quiz, or one-line errors — anything else fails the test."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            load_quiz(path)
        except QuizFormatError as exc:
            lines = exc.all_lines()
            assert lines and all(line and "\n" not in line for line in lines), lines
        except QuiztuiError as exc:
            assert str(exc) and "\n" not in str(exc), str(exc)


@st.composite
def mutated(draw: st.DrawFn, seed: str) -> bytes:
    """The seed file with a few structure-aware edits: tokens spliced in, slices cut or doubled,
    bytes flipped."""
    data = bytearray(seed.encode("utf-8"))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["token", "cut", "double", "flip"]))
        if op == "token":
            token = draw(st.sampled_from(TOKENS)).encode("utf-8", "surrogatepass")
            data[at:at] = token * draw(st.integers(1, 3))
        elif op == "cut":
            del data[at : at + draw(st.integers(1, 40))]
        elif op == "double":
            data[at:at] = data[at : at + draw(st.integers(1, 200))]
        elif data:
            i = min(at, len(data) - 1)
            data[i] = draw(st.integers(0, 255))
    return bytes(data)


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_every_seed_file_loads(name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(SEEDS[name], encoding="utf-8")
        assert load_quiz(path).questions or load_quiz(path).unjudged


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_importers_survive_structure_aware_mutations(name: str) -> None:
    @FUZZ
    @given(mutated(SEEDS[name]))
    def check(data: bytes) -> None:
        load_outcome(name, data)

    check()


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_importers_survive_arbitrary_bytes(name: str) -> None:
    @FUZZ
    @given(st.binary(max_size=3000))
    def check(data: bytes) -> None:
        load_outcome(name, data)

    check()


# -- reply parsers --------------------------------------------------------------------------------

REPLY_TOKENS = [
    "a1: TRUE", "a2: FALSE | because", '{"id": "a1", "verdict": true}', "```json\n", "```",
    "rating: 7", "final_verdict: pass", '{"facts": ["x"]}', "1. ", "A)", "B", "\n", "[[", "}}",
    "TRUE", "false", "\x1b[2J", "verdict", '"', "\\", "{" * 70, "[" * 70,
]  # fmt: skip
replies = st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(REPLY_TOKENS) | st.text(max_size=12), max_size=30).map("".join),
)


@FUZZ
@given(replies)
def test_reply_parsers_return_or_say_unparsed(reply: str) -> None:
    ids = ["A1", "A2", "A3"]  # assertion ids as the prompts number them
    assert set(parse_reply(reply, ids)) <= set(ids)
    parser = StreamingVerdictParser(ids)
    for piece in (reply[: len(reply) // 2], reply[len(reply) // 2 :]):
        parser.feed(piece)
    parser.close()
    for parse in (
        parse_rubric10,
        parse_pass3,
        parse_facts,
        parse_open,
        parse_review,
        lambda r: parse_rewrites(r, 3),
        lambda r: parse_choice(r, ["yes", "no", "maybe"]),
        lambda r: list(json_values(r)),
    ):
        try:
            parse(reply)
        except ReplyUnparsed:
            pass


# -- report writers -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> object:
    from report_helpers import evil_quiz, simulated_run

    return asyncio.run(simulated_run(evil_quiz(4), tmp_path_factory.mktemp("fuzz") / "runs.db"))


def test_report_writers_keep_any_text_safe(summary: object) -> None:
    from quiztui.report.writers import FORMATS, render_report

    @FUZZ
    @given(st.text(max_size=200), st.text(max_size=60), st.text(max_size=100))
    def check(text: str, option: str, reason: str) -> None:
        base = summary
        q = base.questions[0]  # type: ignore[attr-defined]
        q = dataclasses.replace(
            q, text=text, options=(option, *q.options[1:]), reasons=(reason, *q.reasons[1:])
        )
        hostile = dataclasses.replace(
            base,  # type: ignore[type-var]
            quiz_title=text,
            judge_label=option,
            error=reason,
            questions=(q, *base.questions[1:]),  # type: ignore[attr-defined]
        )
        for fmt in FORMATS:
            out = render_report(hostile, fmt)
            assert is_terminal_safe(out), fmt
            if fmt == "json":
                assert json.loads(out)["questions"][0]["text"] == text
            if fmt == "csv":
                cells = [c for row in csv.reader(io.StringIO(out, newline="")) for c in row]
                # Every cell is marked or needs no mark (a plain number such as +0 stays numeric).
                assert not [c for c in cells if csv_cell(c) != c and not c.startswith("'")]

    check()
