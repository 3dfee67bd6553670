"""Quiz models: a quiz is a list of multiple-choice questions with one keyed option each.

Plain frozen dataclasses (they were pydantic models: importing pydantic and building them was
part of every run's start-up). Sequences given as lists are kept as tuples, so a question stays
hashable and a quiz cannot change under a run; ``model_copy(update=...)`` makes an edited copy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import field
from typing import Any, TypeVar

from quiztui.core.records import record

_T = TypeVar("_T")


def _tuple(value: Any) -> tuple[Any, ...]:
    return value if isinstance(value, tuple) else tuple(value)


class _Copy:
    """pydantic's ``model_copy(update=...)`` and ``model_dump()``, which the code uses."""

    __slots__ = ()

    def model_copy(self: _T, *, update: dict[str, Any] | None = None) -> _T:
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]

    def model_dump(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload, no-any-return]


@record(frozen=True, kw_only=True)
class Question(_Copy):
    """One multiple-choice question. ``key`` is the index of the keyed (supposedly correct) option."""

    id: str
    text: str
    options: tuple[str, ...]
    key: int
    category: str | None = None
    difficulty: str | None = None
    kind: str = "multiple"  # "multiple" or "boolean"
    source_line: int | None = None  # 1-based line (or item) in the source file
    # The passage the question was written from (``quiztui generate`` output carries one); used by
    # the review's relevance criterion. Not part of ``Quiz.content_hash``.
    context: str | None = None
    # Other columns or fields of the row it came from (a spreadsheet's id, notes, ...), in order.
    metadata: tuple[tuple[str, str], ...] = ()
    # Lint codes or categories the quiz itself accepts for this question (a GIFT
    # ``// quiztui: ignore L106`` line, a JSON ``lint_ignore`` field), checked when loaded.
    lint_ignore: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", _tuple(self.options))
        object.__setattr__(self, "metadata", tuple(_tuple(pair) for pair in self.metadata))
        object.__setattr__(self, "lint_ignore", _tuple(self.lint_ignore))

    @property
    def key_text(self) -> str:
        return self.options[self.key]

    @property
    def n(self) -> int:
        return len(self.options)


@record(frozen=True, kw_only=True)
class Unjudged(_Copy):
    """An item kept from the file that the vet pipeline does not judge (an essay, matching, ...).

    It is listed as "not judged (type)" and written back unchanged."""

    id: str
    text: str
    type: str
    source_line: int | None = None
    lint_ignore: tuple[str, ...] = ()  # as ``Question.lint_ignore``

    def __post_init__(self) -> None:
        object.__setattr__(self, "lint_ignore", _tuple(self.lint_ignore))


@record(frozen=True, kw_only=True)
class Quiz(_Copy):
    title: str
    questions: tuple[Question, ...]
    unjudged: tuple[Unjudged, ...] = ()
    source_path: str | None = None
    format: str | None = None
    # Known true answers (question id -> option index), e.g. from a truth file beside a sample quiz.
    truth: dict[str, int] = field(default_factory=dict)
    # A non-strict load: one line per item left out (the strict error's words), and how many
    # items were loaded (None: every question and unjudged row is one item).
    skipped: tuple[str, ...] = ()
    loaded: int | None = None
    # Warnings about how the file was read (a legacy encoding guessed), printed with the report.
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("questions", "unjudged", "skipped", "notes"):
            object.__setattr__(self, name, _tuple(getattr(self, name)))
        object.__setattr__(self, "truth", dict(self.truth))

    def load_report(self) -> list[str]:
        """``loaded N of M items (K skipped: …)`` then one line per skipped item; [] when none."""
        n = self.loaded if self.loaded is not None else len(self.questions) + len(self.unjudged)
        return [f"warning: {note}" for note in self.notes] + load_report(n, self.skipped)

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(question_id)

    def content_hash(self) -> str:
        """The questions' texts, options and keys hashed; worked out once per quiz (a frozen
        quiz's questions never change, and a run asks for it several times)."""
        known: str | None = self.__dict__.get("_content_hash")
        if known is not None:
            return known
        import hashlib

        h = hashlib.sha256()
        for q in self.questions:
            h.update(q.text.encode())
            for o in q.options:
                h.update(b"\x1f" + o.encode())
            h.update(f"\x1e{q.key}\x1d".encode())
        self.__dict__["_content_hash"] = known = h.hexdigest()
        return known


def load_report(loaded: int, skipped: Sequence[str]) -> list[str]:
    """What a non-strict load prints: ``loaded N of M items (K skipped: …)``, then each skipped
    item's line (file, line, why in the strict error's words, its title); [] when none."""
    if not skipped:
        return []
    k = len(skipped)
    head = f"loaded {loaded} of {loaded + k} items ({k} skipped: listed below; --strict stops)"
    return [head, *(f"skipped {line}" for line in skipped)]
