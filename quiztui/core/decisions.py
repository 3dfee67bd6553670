"""The review desk: a reviewer's decision about one question, and what follows from it.

A decision is one of four: *accept* (the key is right), *fix* (another option is right: the one
chosen), *rewrite* (the wording needs work) or *drop* (take the question out), with an optional
note. It is stored with the run it was made in and the question's content hash
(:func:`question_hash`: the stem and the options, not the key), and carried over to later runs
of the same quiz by that hash: a question whose text or options changed since gets none, and
neither does one whose key changed — unless the change is the fix itself (the key is now the
option the fix chose), which is how "apply fixes" leaves a question.

Decided questions are gold labels: an accepted question's key is the truth, a fixed one's chosen
option is; rewrite and drop say nothing about which option is right.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from quiztui.core.bank import Bank, Item, apply_edit, blank_number, item_index
from quiztui.core.quiz import Question, Quiz
from quiztui.errors import QuiztuiError

ACCEPT = "accept"
FIX = "fix"
REWRITE = "rewrite"
DROP = "drop"
ACTIONS = (ACCEPT, FIX, REWRITE, DROP)
# A decision taken back: stored like the others (the history stays), carried as no decision.
CLEAR = "clear"

# The vet table's review filter: every question, those without a decision, those with one.
REVIEW_FILTERS = ("all", "needs review", "decided")
MAX_NOTE = 2000  # characters kept of a note


def question_hash(question: Question) -> str:
    """The question's content hash: its stem and options, in order (not the key, not the id)."""
    h = hashlib.sha256()
    h.update(question.text.encode("utf-8", "surrogatepass"))
    for option in question.options:
        h.update(b"\x1f" + option.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Decision:
    """One reviewer decision about one question."""

    question_id: str
    question_hash: str
    action: str  # one of ACTIONS
    key: int  # the question's key when it was decided
    option: int | None = None  # fix: the option chosen as the right one
    note: str = ""
    run_id: int | None = None  # the run the reviewer was looking at (None: before any run)
    decided_at: float = 0.0

    @property
    def truth(self) -> int | None:
        """The right option as this decision says (None: rewrite and drop say nothing)."""
        if self.action == ACCEPT:
            return self.key
        if self.action == FIX:
            return self.option
        return None

    @property
    def label(self) -> str:
        """Short text for the review column: ``accept``, ``fix→C``, ``rewrite``, ``drop``."""
        if self.action == FIX and self.option is not None:
            return f"fix→{option_letter(self.option)}"
        return self.action


def option_letter(index: int) -> str:
    """A, B, …, Z, then the 1-based number."""
    return chr(ord("A") + index) if 0 <= index < 26 else str(index + 1)


def make_decision(
    question: Question,
    action: str,
    *,
    option: int | None = None,
    note: str = "",
    run_id: int | None = None,
    decided_at: float = 0.0,
) -> Decision:
    """A checked decision about ``question``: a fix names another option of the question."""
    if action not in (*ACTIONS, CLEAR):
        raise QuiztuiError(f"unknown review decision {action!r} (known: {', '.join(ACTIONS)})")
    if action == FIX:
        if option is None or not 0 <= option < question.n:
            raise QuiztuiError(
                f"question {question.id}: a fix chooses one of its {question.n} options"
            )
        if option == question.key:
            raise QuiztuiError(
                f"question {question.id}: option {option_letter(option)} is already the key;"
                " accept it instead"
            )
    elif option is not None:
        raise QuiztuiError(f"question {question.id}: only a fix chooses an option")
    return Decision(
        question_id=question.id,
        question_hash=question_hash(question),
        action=action,
        key=question.key,
        option=option,
        note=note.strip()[:MAX_NOTE],
        run_id=run_id,
        decided_at=decided_at,
    )


def carried(decision: Decision, question: Question) -> Decision | None:
    """``decision`` as it applies to ``question`` now, or None when the question changed since.

    The stem and options must be the same; the key too, except after the fix was applied (the
    key is now the option the fix chose). A cleared decision is none."""
    if decision.action == CLEAR or decision.question_hash != question_hash(question):
        return None
    if question.key != decision.key and not (
        decision.action == FIX and question.key == decision.option
    ):
        return None
    if decision.question_id == question.id:
        return decision
    return replace(decision, question_id=question.id)


def carry_over(quiz: Quiz, latest: Mapping[str, Decision]) -> dict[str, Decision]:
    """Question id → its decision, from the newest decision per content hash (``latest``)."""
    out: dict[str, Decision] = {}
    if not latest:  # no decision at all (a bank not reviewed yet): no question to hash
        return out
    for question in quiz.questions:
        decision = latest.get(question_hash(question))
        if decision is not None and (kept := carried(decision, question)) is not None:
            out[question.id] = kept
    return out


def needs_fix(decision: Decision, question: Question) -> bool:
    """A fix whose chosen option is not the key yet."""
    return (
        decision.action == FIX and decision.option is not None and question.key != decision.option
    )


def pending_fixes(quiz: Quiz, decisions: Mapping[str, Decision]) -> list[tuple[Question, int]]:
    """(question, the key to write) for every fix not applied yet, in quiz order."""
    out = []
    for question in quiz.questions:
        decision = decisions.get(question.id)
        if decision is not None and needs_fix(decision, question):
            assert decision.option is not None
            out.append((question, decision.option))
    return out


def fix_edits(bank: Bank, fixes: Iterable[tuple[Question, int]]) -> dict[int, Item]:
    """The bank items (by index) with each fixed question's key moved to its chosen option.

    Text and options stay as they are, so a format that saves in place rewrites only the key;
    several blanks of one embedded-answers item are fixed in the same item."""
    edits: dict[int, Item] = {}
    for question, key in fixes:
        index = item_index(question.id)
        if not 0 <= index < len(bank.items):
            raise QuiztuiError(
                f"{bank.source_path}: question {question.id} is not in the file any more"
            )
        item = edits.get(index, bank.items[index])
        edits[index] = apply_edit(
            item, question.text, question.options, key, blank=blank_number(question.id)
        )
    return edits


def matches_review_filter(review_filter: str, decision: Decision | None) -> bool:
    if review_filter == "needs review":
        return decision is None
    if review_filter == "decided":
        return decision is not None
    return True


def gold_labels(
    questions: Iterable[Question], decisions: Mapping[str, Decision]
) -> tuple[list[Question], dict[str, int]]:
    """The decided questions that say which option is right, and question id → that option.

    Accept: the key; fix: the chosen option; rewrite and drop are left out."""
    gold: list[Question] = []
    truth: dict[str, int] = {}
    for question in questions:
        decision = decisions.get(question.id)
        right = decision.truth if decision is not None else None
        if right is None or not 0 <= right < question.n:
            continue
        gold.append(question)
        truth[question.id] = right
    return gold, truth


def decision_counts(decisions: Iterable[Decision]) -> dict[str, int]:
    """How many of each action, every action listed (zero when none)."""
    counts = dict.fromkeys(ACTIONS, 0)
    for decision in decisions:
        if decision.action in counts:
            counts[decision.action] += 1
    return counts
