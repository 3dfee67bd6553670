"""Truth files: the real answers of a quiz, kept beside it as ``<quiz stem>.truth.json``.

Format: ``{"answers": [{"question": "<question text>", "correct": "<option text>"}]}``. Each
entry is resolved to (question id, option index); the simulated judge answers from these facts
rather than from the quiz's (possibly wrong) key. Text matches exactly, else ignoring case and
runs of whitespace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from quiztui.core.quiz import Question, Quiz
from quiztui.errors import QuizFormatError, QuizProblem
from quiztui.formats._source import json_problem, read_text, show, type_name
from quiztui.formats._validate import normalise

SUFFIX = ".truth.json"


def truth_path_for(quiz_path: str | Path) -> Path:
    """Where the truth file of a quiz would be: ``quiz.json`` -> ``quiz.truth.json``."""
    path = Path(quiz_path)
    return path.with_name(path.stem + SUFFIX)


def load_truth(quiz: Quiz, path: str | Path) -> Quiz:
    """The quiz with ``truth`` filled from the truth file at ``path``."""
    shown = str(path)
    text = read_text(Path(path), shown)
    problems: list[QuizProblem] = []
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise QuizFormatError(shown, [json_problem(shown, exc)]) from None
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, list):
        got = "missing" if answers is None else f"got {type_name(answers)}"
        message = f'expected {{"answers": [{{"question": ..., "correct": ...}}]}} ({got})'
        raise QuizFormatError(shown, [QuizProblem(shown, message, field="answers")])
    truth: dict[str, int] = {}
    for index, entry in enumerate(answers):
        item = index + 1
        if not isinstance(entry, dict):
            message = f"expected an object (got {type_name(entry)})"
            problems.append(QuizProblem(shown, message, item=item))
            continue
        bad = [name for name in ("question", "correct") if not isinstance(entry.get(name), str)]
        for name in bad:
            got = "missing" if name not in entry else f"got {type_name(entry[name])}"
            message = f"must be a string ({got})"
            problems.append(QuizProblem(shown, message, item=item, field=name))
        if bad:
            continue
        matches = _questions(quiz, entry["question"])
        if not matches:
            message = f"question {show(entry['question'])} is not in the quiz"
            problems.append(QuizProblem(shown, message, item=item, field="question"))
            continue
        for question in matches:
            option = _option(question, entry["correct"])
            if option is None:
                message = (
                    f"{show(entry['correct'])} is not among the options of {question.id} "
                    f"({show(question.text, 40)})"
                )
                problems.append(QuizProblem(shown, message, item=item, field="correct"))
                break
            truth[question.id] = option
    if problems:
        raise QuizFormatError(shown, problems)
    return quiz.model_copy(update={"truth": {**quiz.truth, **truth}})


def _questions(quiz: Quiz, text: str) -> list[Question]:
    exact = [q for q in quiz.questions if q.text == text.strip()]
    return exact or [q for q in quiz.questions if normalise(q.text) == normalise(text)]


def _option(question: Question, text: str) -> int | None:
    if text.strip() in question.options:
        return question.options.index(text.strip())
    loose = [i for i, o in enumerate(question.options) if normalise(o) == normalise(text)]
    return loose[0] if len(loose) == 1 else None
