"""Review runs (seed 004): every iteration of every question as it happens, then each question's
outcome, in the run store (schema v6)."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from quiztui.core.quiz import Question, Quiz
from quiztui.core.review import Iteration, ReviewOutcome
from quiztui.store.leases import create_held, end_held


@dataclass(frozen=True, slots=True)
class ReviewRunRecord:
    id: int
    created_at: float
    finished_at: float | None
    status: str
    quiz_path: str | None
    quiz_title: str
    quiz_hash: str
    mode: str
    max_iterations: int
    judge_label: str
    judge2_label: str | None
    simulated: bool
    params: dict[str, Any]
    summary: dict[str, Any] | None


_RUN_COLUMNS = (
    "id, created_at, finished_at, status, quiz_path, quiz_title, quiz_hash, mode, max_iterations,"
    " judge_label, judge2_label, simulated, params_json, summary_json"
)


def _json_tuple(value: tuple[Any, ...] | None) -> str | None:
    return None if value is None else json.dumps(list(value), ensure_ascii=False)


class ReviewStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def create_run(
        self,
        *,
        quiz: Quiz,
        mode: str,
        max_iterations: int,
        provider: str,
        model: str,
        judge_label: str,
        model2: str | None,
        judge2_label: str | None,
        simulated: bool,
        prompt_hash: str,
        params: dict[str, Any],
    ) -> int:
        return create_held(
            self.conn,
            "review",
            "INSERT INTO review_runs (created_at, status, quiz_path, quiz_title, quiz_hash, mode,"
            " max_iterations, provider, model, judge_label, model2, judge2_label, simulated,"
            " prompt_hash, params_json) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                quiz.source_path,
                quiz.title,
                quiz.content_hash(),
                mode,
                max_iterations,
                provider,
                model,
                judge_label,
                model2,
                judge2_label,
                int(simulated),
                prompt_hash,
                json.dumps(params, sort_keys=True),
            ),
        )

    def record_iteration(self, run_id: int, question_id: str, it: Iteration) -> None:
        """One rating, stored as soon as it is made (a killed run keeps its trajectories)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO review_iterations (run_id, question_id, iteration, judge, model,"
            " scores_json, strengths_json, flaws_json, reply, unparsed, failed, attempts,"
            " tokens_in, tokens_out) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                question_id,
                it.number,
                it.judge,
                it.model,
                _json_tuple(it.scores),
                _json_tuple(it.strengths),
                _json_tuple(it.flaws),
                it.reply,
                it.unparsed,
                int(it.failed),
                it.attempts,
                it.tokens_in,
                it.tokens_out,
            ),
        )

    def record_question(
        self, run_id: int, position: int, question: Question, outcome: ReviewOutcome, rewrite: bool
    ) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO review_questions (run_id, position, question_id, text, context,"
            " scores_json, converged, converged_at, iterations, unscored, rewrite)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                position,
                question.id,
                question.text,
                question.context,
                _json_tuple(outcome.scores),
                None if outcome.converged is None else int(outcome.converged),
                outcome.converged_at,
                len(outcome.iterations),
                outcome.unscored,
                int(rewrite),
            ),
        )

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any] | None) -> None:
        end_held(
            self.conn,
            "review",
            run_id,
            "UPDATE review_runs SET status = ?, finished_at = ?, summary_json = ? WHERE id = ?",
            (status, time.time(), json.dumps(summary) if summary is not None else None, run_id),
        )

    def get_run(self, run_id: int) -> ReviewRunRecord | None:
        row = self.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM review_runs WHERE id = ?", (run_id,)
        ).fetchone()
        return _run(row) if row else None

    def list_runs(self, limit: int = 50) -> list[ReviewRunRecord]:
        rows = self.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM review_runs ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
        return [_run(r) for r in rows]

    def iterations(self, run_id: int, question_id: str) -> list[Iteration]:
        rows = self.conn.execute(
            "SELECT iteration, judge, model, scores_json, strengths_json, flaws_json, reply,"
            " unparsed, failed, attempts, tokens_in, tokens_out FROM review_iterations"
            " WHERE run_id = ? AND question_id = ? ORDER BY iteration",
            (run_id, question_id),
        ).fetchall()
        return [
            Iteration(
                number,
                judge,
                model,
                tuple(json.loads(scores)) if scores else None,
                tuple(json.loads(strengths or "[]")),
                tuple(json.loads(flaws or "[]")),
                reply,
                unparsed,
                bool(failed),
                attempts,
                tokens_in,
                tokens_out,
            )
            for (
                number,
                judge,
                model,
                scores,
                strengths,
                flaws,
                reply,
                unparsed,
                failed,
                attempts,
                tokens_in,
                tokens_out,
            ) in rows
        ]

    def outcomes(self, run_id: int) -> list[tuple[int, str, ReviewOutcome, bool]]:
        """(position, question text, outcome with its trajectory, rewrite flag), in quiz order."""
        run = self.get_run(run_id)
        mode = run.mode if run is not None else "direct"
        rows = self.conn.execute(
            "SELECT position, question_id, text, scores_json, converged, converged_at, unscored,"
            " rewrite FROM review_questions WHERE run_id = ? ORDER BY position",
            (run_id,),
        ).fetchall()
        out = []
        for position, qid, text, scores, converged, at, unscored, rewrite in rows:
            outcome = ReviewOutcome(
                qid,
                mode,
                tuple(json.loads(scores)) if scores else None,
                tuple(self.iterations(run_id, qid)),
                None if converged is None else bool(converged),
                at,
                unscored,
            )
            out.append((position, text, outcome, bool(rewrite)))
        return out


def _run(row: tuple[Any, ...]) -> ReviewRunRecord:
    values = list(row)
    values[11] = bool(values[11])
    values[12] = json.loads(values[12])
    values[13] = json.loads(values[13]) if values[13] else None
    return ReviewRunRecord(*values)
