"""Robustness runs (MultiQ&A) in the run store: forms, answers, metrics, fragility (schema v5)."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass
from typing import Any

from quiztui.core.paraphrase import FormAnswer, QuestionRobustness, StageUsage
from quiztui.core.quiz import Quiz
from quiztui.store.leases import create_held, end_held


@dataclass(frozen=True, slots=True)
class RobustnessRunRecord:
    id: int
    created_at: float
    finished_at: float | None
    status: str
    quiz_path: str | None
    quiz_title: str
    quiz_hash: str
    format: str
    variants: int
    judge_label: str
    simulated: bool
    summary: dict[str, Any] | None


_RUN_COLUMNS = (
    "id, created_at, finished_at, status, quiz_path, quiz_title, quiz_hash, format, variants,"
    " judge_label, simulated, summary_json"
)


def _run(row: tuple[Any, ...]) -> RobustnessRunRecord:
    return RobustnessRunRecord(
        id=row[0],
        created_at=row[1],
        finished_at=row[2],
        status=row[3],
        quiz_path=row[4],
        quiz_title=row[5],
        quiz_hash=row[6],
        format=row[7],
        variants=row[8],
        judge_label=row[9],
        simulated=bool(row[10]),
        summary=json.loads(row[11]) if row[11] else None,
    )


class RobustnessStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def create_run(
        self,
        *,
        quiz: Quiz,
        format: str,
        variants: int,
        provider: str,
        model: str,
        judge_label: str,
        simulated: bool,
        prompt_hash: str,
        params: dict[str, Any],
    ) -> int:
        return create_held(
            self.conn,
            "robustness",
            "INSERT INTO robustness_runs (created_at, status, quiz_path, quiz_title, quiz_hash,"
            " format, variants, provider, model, judge_label, simulated, prompt_hash,"
            " params_json) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                quiz.source_path,
                quiz.title,
                quiz.content_hash(),
                format,
                variants,
                provider,
                model,
                judge_label,
                int(simulated),
                prompt_hash,
                json.dumps(params),
            ),
        )

    def record(self, run_id: int, position: int, result: QuestionRobustness) -> None:
        tokens = {"rewrite": asdict(result.rewrite_usage), "answer": asdict(result.answer_usage)}
        answers = {
            "answers": [asdict(a) for a in result.answers],
            "categories": list(result.categories),
            "correct": result.correct,
            "k": result.k,
        }
        self.conn.execute(
            "INSERT OR REPLACE INTO robustness_questions (run_id, position, question_id, text,"
            " forms_json, rewrite_reply, rewrite_note, answers_json, metrics_json, fragile,"
            " fragile_reason, tokens_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                position,
                result.question_id,
                result.text,
                json.dumps(list(result.forms)),
                result.rewrite_reply,
                result.rewrite_note or None,
                json.dumps(answers),
                json.dumps(result.metrics),
                int(result.fragile),
                result.fragile_reason,
                json.dumps(tokens),
            ),
        )

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any] | None) -> None:
        end_held(
            self.conn,
            "robustness",
            run_id,
            "UPDATE robustness_runs SET status = ?, finished_at = ?, summary_json = ? WHERE id = ?",
            (status, time.time(), json.dumps(summary) if summary is not None else None, run_id),
        )

    def runs(self, quiz_hash: str | None = None) -> list[RobustnessRunRecord]:
        sql = f"SELECT {_RUN_COLUMNS} FROM robustness_runs"
        args: tuple[Any, ...] = ()
        if quiz_hash is not None:
            sql, args = sql + " WHERE quiz_hash = ?", (quiz_hash,)
        return [_run(r) for r in self.conn.execute(sql + " ORDER BY id DESC", args)]

    def results(self, run_id: int) -> list[QuestionRobustness]:
        rows = self.conn.execute(
            "SELECT question_id, text, forms_json, rewrite_reply, rewrite_note, answers_json,"
            " metrics_json, fragile, fragile_reason, tokens_json FROM robustness_questions"
            " WHERE run_id = ? ORDER BY position",
            (run_id,),
        )
        out = []
        for qid, text, forms, reply, note, answers, metrics, fragile, why, tokens in rows:
            a = json.loads(answers)
            t = json.loads(tokens)
            out.append(
                QuestionRobustness(
                    question_id=qid,
                    text=text,
                    forms=tuple(json.loads(forms)),
                    rewrite_reply=reply,
                    rewrite_note=note or "",
                    answers=tuple(FormAnswer(**x) for x in a["answers"]),
                    categories=tuple(a["categories"]),
                    correct=a["correct"],
                    k=a["k"],
                    metrics=json.loads(metrics),
                    fragile=bool(fragile),
                    fragile_reason=why,
                    rewrite_usage=StageUsage(**t["rewrite"]),
                    answer_usage=StageUsage(**t["answer"]),
                )
            )
        return out

    def latest_fragility(self, quiz_hash: str) -> tuple[int, dict[str, tuple[bool, str]]] | None:
        """The newest finished run of this quiz: its id and question id → (fragile, reason)."""
        row = self.conn.execute(
            "SELECT id FROM robustness_runs WHERE quiz_hash = ? AND status = 'finished'"
            " ORDER BY id DESC LIMIT 1",
            (quiz_hash,),
        ).fetchone()
        if row is None:
            return None
        flags = {
            qid: (bool(fragile), why)
            for qid, fragile, why in self.conn.execute(
                "SELECT question_id, fragile, fragile_reason FROM robustness_questions"
                " WHERE run_id = ?",
                (row[0],),
            )
        }
        return row[0], flags
