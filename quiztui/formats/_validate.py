"""Checks shared by every quiz format, and the step that turns checked items into a Quiz.

A format module reads its file into ``RawItem``s (reporting type errors itself) and hands each
to a ``QuizBuilder``, which collects every problem of the whole file before raising once.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import field

from quiztui.core.quiz import Question, Quiz
from quiztui.core.records import record
from quiztui.errors import QuizFormatError, QuizProblem
from quiztui.formats._source import show


def normalise(text: str) -> str:
    """Text compared loosely: case-folded, runs of whitespace collapsed."""
    return " ".join(text.split()).casefold()


def shuffled_order(question_text: str, n: int) -> list[int]:
    """A permutation of range(n) that depends only on the question text (stable across runs)."""
    seed = int.from_bytes(hashlib.sha256(question_text.encode()).digest()[:8], "big")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return order


@record
class RawItem:
    """One question as read from a file, before validation.

    With ``shuffle`` the options are "correct answer first, then distractors" (Open Trivia DB,
    CSV) and are put in a deterministic order so the key is not always the first option.
    """

    text: str
    options: list[str]
    correct: str
    option_fields: list[str]  # the field/column each option came from, for messages
    line: int | None = None
    item: int | None = None
    question_field: str = "question"
    correct_field: str = "correct"
    options_field: str = "responses"
    category: str | None = None
    difficulty: str | None = None
    kind: str | None = None  # None: "boolean" when the options are True/False, else "multiple"
    shuffle: bool = False
    context: str | None = None  # the passage the question was written from, when the file has one
    metadata: tuple[tuple[str, str], ...] = ()  # other columns or fields, kept with the question
    lint_ignore: tuple[str, ...] = ()  # lint rules the quiz accepts for this question


@record
class QuizBuilder:
    path: str
    fmt: str
    problems: list[QuizProblem] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    # role -> names the user gave (``--columns``), for readers of dataset-shaped records
    columns: Mapping[str, Sequence[str]] | None = None

    def problem(
        self,
        message: str,
        *,
        line: int | None = None,
        item: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        self.problems.append(
            QuizProblem(self.path, message, line=line, item=item, column=column, field=field)
        )

    def error(self) -> QuizFormatError:
        return QuizFormatError(self.path, self.problems)

    def add(self, raw: RawItem) -> None:
        """Validate one item; keep it as a Question when it has no problem."""
        count = len(self.problems)
        text = raw.text.strip()
        options = [option.strip() for option in raw.options]

        def report(message: str, field: str) -> None:
            self.problem(message, line=raw.line, item=raw.item, field=field)

        if not text:
            report("question text is empty", raw.question_field)
        # A repeated option is not a load error: the quiz loads and lint reports it (L116).
        for i, option in enumerate(options):
            name = raw.option_fields[i] if i < len(raw.option_fields) else raw.options_field
            if not option:
                report(f"option {i + 1} is empty", name)
        if len(options) < 2:
            plural = "" if len(options) == 1 else "s"
            report(
                f"has {len(options)} option{plural}; a question needs at least two",
                raw.options_field,
            )
        correct = raw.correct.strip()
        key = _find(options, correct) if correct else None
        if key is None and correct:
            report(f"key {show(correct)} is not among the options", raw.correct_field)
        elif key is None and not raw.shuffle:
            # (With shuffle the key is option 1, already reported above as empty.)
            report("key (correct answer) is empty", raw.correct_field)
        if len(self.problems) > count or key is None:
            return
        kind = raw.kind or ("boolean" if _is_true_false(options) else "multiple")
        if raw.shuffle:
            if kind == "boolean":
                order = sorted(range(len(options)), key=lambda i: normalise(options[i]) != "true")
            else:
                order = shuffled_order(text, len(options))
            options = [options[i] for i in order]
            key = order.index(key)
        self.questions.append(
            Question(
                id=f"q{len(self.questions) + 1}",
                text=text,
                options=tuple(options),
                key=key,
                category=_clean(raw.category),
                difficulty=_clean(raw.difficulty),
                kind=kind,
                source_line=raw.line if raw.line is not None else raw.item,
                context=_clean(raw.context),
                metadata=tuple((k, v) for k, v in raw.metadata if v.strip()),
                lint_ignore=raw.lint_ignore,
            )
        )

    def build(self, title: str, *, strict: bool = True) -> Quiz:
        """The quiz, or QuizFormatError listing every problem found.

        With ``strict=False`` the items with problems are left out, one ``Quiz.skipped`` line
        each (its first problem); a problem of the whole file, or no good item, still raises."""
        if not self.problems and not self.questions:
            self.problem("no questions found")
        skipped: list[str] = []
        if self.problems:
            by_item: dict[tuple[int | None, int | None], list[QuizProblem]] = {}
            for p in self.problems:
                by_item.setdefault((p.line, p.item), []).append(p)
            if strict or not self.questions or (None, None) in by_item:
                raise self.error()
            for found in by_item.values():
                more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
                skipped.append(str(found[0]) + more)
        return Quiz(
            title=title,
            questions=tuple(self.questions),
            source_path=self.path,
            format=self.fmt,
            skipped=tuple(skipped),
        )


def _find(options: list[str], wanted: str) -> int | None:
    """Index of the option equal to ``wanted``: exactly, else loosely (case and spacing).

    Several loose matches are one option repeated (lint's L116): the first is the key.
    """
    if wanted in options:
        return options.index(wanted)
    loose = [i for i, option in enumerate(options) if normalise(option) == normalise(wanted)]
    return loose[0] if loose else None


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    return value.strip() or None


def _is_true_false(options: list[str]) -> bool:
    return len(options) == 2 and sorted(normalise(o) for o in options) == ["false", "true"]
