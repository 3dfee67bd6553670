"""Labelled statement sets: gold data for calibrating a judge on single assertions.

One JSON object per line, either TruthfulQA's fine-tuning shape

    {"prompt": "Q: <question>\\nA: <answer>\\nTrue:", "completion": " yes" | " no"}

or the plain shape ``{"question": ..., "answer": ..., "label": true | false | "yes" | "no"}``.

Statements are grouped by question so each becomes one "question" whose options are its
answers; assertions are then ``Q: <question> A: <answer>`` exactly as in a vet run. Several
answers of a question may be true, so the labels travel per assertion (``labels``), not as a key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from quiztui.core.quiz import Question, Quiz
from quiztui.errors import QuizFormatError, QuizProblem
from quiztui.formats._source import read_text

_PROMPT = re.compile(r"^\s*Q:\s*(?P<q>.*?)\s*\nA:\s*(?P<a>.*?)\s*\n\s*True:\s*$", re.DOTALL)
_YES = {"yes", "true", "1", "t", "y"}
_NO = {"no", "false", "0", "f", "n"}


@dataclass(frozen=True)
class StatementSet:
    quiz: Quiz
    labels: dict[str, bool]  # assertion uid (``<question id>#<option index>``) → truth
    statements: int
    conflicts: int  # (question, answer) pairs labelled both ways, left out
    empty: int = 0  # rows with an empty answer, left out


def looks_like_statements(path: Path) -> bool:
    """A .jsonl whose first object has prompt/completion or answer/label fields."""
    if path.suffix.lower() != ".jsonl":
        return False
    try:
        with path.open(encoding="utf-8") as fh:
            first = next((line for line in fh if line.strip()), "")
        obj = json.loads(first)
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(obj, dict) and (
        {"prompt", "completion"} <= obj.keys() or {"answer", "label"} <= obj.keys()
    )


def _label(raw: object) -> bool | None:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in _YES | _NO:
        return raw.strip().lower() in _YES
    return None


def load_statements(path: str | Path) -> StatementSet:
    path = Path(path)
    shown = str(path)
    text = read_text(path, shown)
    problems: list[QuizProblem] = []
    grouped: dict[str, dict[str, bool | None]] = {}
    count = empty = 0
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            problems.append(QuizProblem(shown, f"not JSON: {exc}", line=line_no))
            continue
        if not isinstance(obj, dict):
            problems.append(QuizProblem(shown, "expected a JSON object", line=line_no))
            continue
        if "prompt" in obj:
            m = _PROMPT.match(str(obj.get("prompt", "")))
            if not m:
                problems.append(
                    QuizProblem(
                        shown, "expected 'Q: …\\nA: …\\nTrue:'", line=line_no, field="prompt"
                    )
                )
                continue
            question, answer = m.group("q"), m.group("a")
            label, label_field = _label(obj.get("completion")), "completion"
        else:
            question, answer = str(obj.get("question", "")).strip(), str(obj.get("answer", ""))
            label, label_field = _label(obj.get("label")), "label"
            if not question:
                problems.append(QuizProblem(shown, "missing", line=line_no, field="question"))
                continue
        if label is None:
            problems.append(
                QuizProblem(shown, "expected yes/no or true/false", line=line_no, field=label_field)
            )
            continue
        answer = answer.strip()
        if not answer:
            empty += 1  # nothing to judge (TruthfulQA has a few); counted, not an error
            continue
        count += 1
        answers = grouped.setdefault(question, {})
        previous = answers.get(answer, label)
        answers[answer] = label if previous == label else None  # None: labelled both ways
    if problems:
        raise QuizFormatError(shown, problems)
    questions: list[Question] = []
    labels: dict[str, bool] = {}
    conflicts = 0
    for question, answers in grouped.items():
        kept = [(a, v) for a, v in answers.items() if v is not None]
        conflicts += len(answers) - len(kept)
        if len(kept) < 2:
            continue  # a question needs two options; a lone statement is left out
        qid = f"s{len(questions) + 1}"
        key = next((i for i, (_, v) in enumerate(kept) if v), 0)
        questions.append(
            Question(id=qid, text=question, options=tuple(a for a, _ in kept), key=key)
        )
        for i, (_, v) in enumerate(kept):
            labels[f"{qid}#{i}"] = bool(v)
    if not questions:
        raise QuizFormatError(shown, [QuizProblem(shown, "no question with two labelled answers")])
    quiz = Quiz(title=path.stem, questions=tuple(questions), source_path=shown)
    return StatementSet(quiz, labels, count, conflicts, empty)
