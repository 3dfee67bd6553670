"""Truth files: the real answers of a quiz, kept beside it as ``<quiz stem>.truth.json``.

Format: ``{"answers": [{"question": "<question text>", "correct": "<option text>"}]}``, an
entry optionally with the question's ``"id"``. Each entry is resolved to (question id, option
index); the simulated judge answers from these facts rather than from the quiz's (possibly wrong)
key. An entry with an id names that question (its text may have been edited since); otherwise
text matches exactly, else ignoring case and runs of whitespace.

A truth file that no longer fits the quiz (a question edited, an option renamed) never stops the
quiz from opening: each entry that fits no question is a warning (``Quiz.notes``) naming the
entry and the question, and that question's truth is its key. Saving an edit in the TUI makes
the truth file follow it (:func:`follow_edits`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
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
    warnings: list[QuizProblem] = []  # entries that fit no question: the quiz opens anyway
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
        matches = _questions(quiz, entry["question"], entry.get("id"))
        if not matches:
            message = (
                f"question {show(entry['question'])} is not in the quiz (edited since?);"
                " its truth is not used"
            )
            warnings.append(QuizProblem(shown, message, item=item, field="question"))
            continue
        for question in matches:
            option = _option(question, entry["correct"])
            if option is None:
                number = quiz.questions.index(question) + 1
                message = (
                    f"{show(entry['correct'])} is not among the options of question {number}"
                    f" ({question.id}: {show(question.text, 40)}); its key stands for the truth"
                )
                warnings.append(QuizProblem(shown, message, item=item, field="correct"))
                continue
            truth[question.id] = option
    if problems:
        raise QuizFormatError(shown, problems)
    notes = quiz.notes + tuple(str(w) for w in warnings)
    return quiz.model_copy(update={"truth": {**quiz.truth, **truth}, "notes": notes})


def _questions(quiz: Quiz, text: str, qid: object = None) -> list[Question]:
    if isinstance(qid, str):
        by_id = [q for q in quiz.questions if q.id == qid]
        if by_id:
            return by_id
    exact = [q for q in quiz.questions if q.text == text.strip()]
    return exact or [q for q in quiz.questions if normalise(q.text) == normalise(text)]


def _option(question: Question, text: str) -> int | None:
    if text.strip() in question.options:
        return question.options.index(text.strip())
    loose = [i for i, o in enumerate(question.options) if normalise(o) == normalise(text)]
    return loose[0] if len(loose) == 1 else None


def follow_edits(quiz_path: str | Path, edited: Sequence[tuple[Question, Question, int]]) -> int:
    """Make the truth file beside ``quiz_path`` follow saved edits; how many entries changed.

    ``edited``: (the question before, after, the index of its true option before). The entry
    about the question takes its new text and its id; its answer stays the option it named
    when that option is still there, else follows the option at its index when that option was
    renamed. Nothing is written when there is no truth file or nothing changes."""
    path = truth_path_for(quiz_path)
    if not edited or not path.exists():
        return 0
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return 0  # the quiz's load says what is wrong with it
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, list):
        return 0
    changed = 0
    for before, after, true_index in edited:
        probe = Quiz(title="", questions=(before,))
        for entry in answers:
            if not isinstance(entry, dict) or not isinstance(entry.get("question"), str):
                continue
            if not _questions(probe, entry["question"], entry.get("id")):
                continue
            correct = entry.get("correct")
            if isinstance(correct, str) and _option(after, correct) is None:
                if 0 <= true_index < after.n:
                    entry["correct"] = after.options[true_index]
            new = {**entry, "question": after.text, "id": after.id}
            if new != entry:
                entry.clear()
                entry.update(new)
                changed += 1
    if changed:
        temporary = path.with_name(f".{path.name}.quiztui-tmp")
        temporary.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
        os.replace(temporary, path)
    return changed
