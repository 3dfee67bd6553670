"""The review desk for both faces: decisions in the store, fixes written back, gold from review.

``StoreDecisionBook`` is what the TUI's vet screen records through; ``apply_fixes`` writes the
chosen keys into the quiz file (its own format, the old file kept as ``<file>.bak``) for the
TUI and ``quiztui apply-fixes``; ``review_gold`` turns a run's decided questions into the gold
set ``quiztui calibrate --gold-from-review RUN`` measures the run's judge on.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from quiztui.core.decisions import (
    FIX,
    Decision,
    carry_over,
    fix_edits,
    gold_labels,
    pending_fixes,
    question_hash,
)
from quiztui.core.quiz import Question, Quiz
from quiztui.errors import QuiztuiError, StoreError

if TYPE_CHECKING:
    from quiztui.core.bank import Bank
    from quiztui.pipeline.calibrate import GoldSet
    from quiztui.store import Store


class StoreDecisionBook:
    """The TUI's decision book over the run store (``tui/screens/decide.DecisionBook``)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def load(self, quiz: Quiz) -> dict[str, Decision]:
        return decisions_for(self.store, quiz)

    def record(self, decision: Decision, quiz: Quiz) -> Decision:
        try:
            return self.store.decisions.record(decision, quiz.content_hash())
        except sqlite3.Error as exc:  # locked by another process past the busy timeout, ...
            raise StoreError(f"{self.store.path}: the decision was not kept: {exc}") from None

    def last_run_id(self, quiz: Quiz) -> int | None:
        run = self.store.latest_vet_run(quiz.content_hash())
        return None if run is None else run.id


def decisions_for(store: Store, quiz: Quiz) -> dict[str, Decision]:
    """Question id → the decision carried over to ``quiz`` as it is now."""
    if not store.decisions.count():  # none stored (most stores): no question to hash
        return {}
    latest = store.decisions.latest(question_hash(q) for q in quiz.questions)
    return carry_over(quiz, latest)


@dataclass(frozen=True)
class FixesApplied:
    path: Path
    backup: Path
    fixed: tuple[tuple[Question, int], ...]  # (question as it was, the key written)


def apply_fixes(bank: Bank, quiz: Quiz, decisions: dict[str, Decision]) -> FixesApplied | None:
    """Write every pending fix's chosen key into the quiz file; None when none is pending.

    Only the fixed questions' items are rewritten (formats that save in place keep every other
    byte); the file as it was is left beside it as ``<file>.bak``."""
    from quiztui.formats.bank_io import save_edits

    fixes = pending_fixes(quiz, decisions)
    if not fixes:
        return None
    path, backup = save_edits(bank, fix_edits(bank, fixes))
    return FixesApplied(path, backup, tuple(fixes))


def run_quiz(store: Store, run_id: int) -> Quiz:
    """The quiz a vet run judged, as the store kept it (its questions, ids and keys)."""
    record = store.get_run(run_id)
    questions = tuple(
        Question(id=qid, text=text, options=options, key=key)
        for qid, text, options, key in store.run_questions(run_id)
    )
    return Quiz(title=record.quiz_title, questions=questions, source_path=record.quiz_path)


def review_gold(store: Store, run_id: int) -> GoldSet:
    """The decided questions of run ``run_id`` as a gold set: accept → the key is the truth,
    fix → the chosen option is; rewrite, drop and undecided questions are left out."""
    from quiztui.core.assertions import decompose
    from quiztui.pipeline.calibrate import GoldSet

    quiz = run_quiz(store, run_id)
    decisions = decisions_for(store, quiz)
    questions, truth = gold_labels(quiz.questions, decisions)
    if not questions:
        raise QuiztuiError(
            f"run {run_id}: no question is decided accept or fix yet; review it first"
            " (quiztui QUIZ, then y / o on a question)"
        )
    gold = quiz.model_copy(update={"questions": tuple(questions), "truth": truth})
    labels = {a.uid: a.option_index == truth[a.question_id] for a in decompose(gold)}
    fixed = sum(1 for q in questions if decisions[q.id].action == FIX)  # applied or not
    name = (
        f"review of run {run_id}: {len(questions)} decided questions"
        f" ({len(questions) - fixed} accepted, {fixed} fixed)"
    )
    return GoldSet(gold, labels, name)
