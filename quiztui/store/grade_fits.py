"""K-fold fits in the run store (schema v11): ``grade --benchmark FILE --fit kfold`` kept, so
``quiztui runs`` lists it and ``runs show kfold:N`` prints its fold table again.

One row per fit: what was fitted (the marked file or built-in and its digest, the number of
marked answers, the graders, folds, seed and scale), who graded (judge label, model, simulated,
as the grade runs keep them, and the ids of those grade runs), how it ended (status, answers
left unscored, answers never graded, the error) and the whole :class:`KFoldResult` as JSON —
every figure the report prints, read back exactly (JSON keeps a float's every digit).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quiztui.core.benchmark import Agreement
from quiztui.core.grade_fit import Fitted, FoldRow, KFoldResult
from quiztui.store.leases import create_held, end_held


@dataclass(frozen=True, slots=True)
class GradeFitRecord:
    id: int
    created_at: float
    finished_at: float | None
    status: str
    source: str  # the marked file's path, or the built-in benchmark's name
    digest: str
    marked: int  # marked answers
    graders: tuple[str, ...]
    folds: int
    seed: int
    scale: tuple[float, float]  # the marks' range (lo, hi)
    judge_label: str
    model: str
    simulated: bool
    grade_runs: tuple[int, ...]  # the grade runs that graded the marked answers, in order
    unscored: int  # answers without a score from every grader (never graded ones included)
    not_run: int  # answers a grader never graded (the run ended early, or the grader stopped)
    calibration_path: str | None
    error: str | None
    result: KFoldResult | None  # None: the fit never got to its fold table


_COLUMNS = (
    "id, created_at, finished_at, status, source, digest, marked, graders_json, folds, seed,"
    " scale_lo, scale_hi, judge_label, model, simulated, grade_runs_json, unscored, not_run,"
    " calibration_path, error, result_json"
)


class GradeFitStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def create_fit(
        self,
        *,
        source: str,
        digest: str,
        marked: int,
        graders: Sequence[str],
        folds: int,
        seed: int,
        scale: tuple[float, float],
    ) -> int:
        return create_held(
            self.conn,
            "kfold",
            "INSERT INTO grade_fits (created_at, status, source, digest, marked, graders_json,"
            " folds, seed, scale_lo, scale_hi, not_run)"
            " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                source,
                digest,
                marked,
                json.dumps(list(graders)),
                folds,
                seed,
                scale[0],
                scale[1],
                marked,
            ),
        )

    def finish_fit(
        self,
        fit_id: int,
        status: str,
        *,
        judge_label: str,
        model: str,
        simulated: bool,
        grade_runs: Sequence[int],
        unscored: int,
        not_run: int,
        calibration_path: str | None = None,
        error: str | None = None,
        result: KFoldResult | None = None,
    ) -> None:
        end_held(
            self.conn,
            "kfold",
            fit_id,
            "UPDATE grade_fits SET status = ?, finished_at = ?, judge_label = ?, model = ?,"
            " simulated = ?, grade_runs_json = ?, unscored = ?, not_run = ?,"
            " calibration_path = ?, error = ?, result_json = ? WHERE id = ?",
            (
                status,
                time.time(),
                judge_label,
                model,
                int(simulated),
                json.dumps(list(grade_runs)),
                unscored,
                not_run,
                calibration_path,
                error,
                None if result is None else json.dumps(result_to_dict(result)),
                fit_id,
            ),
        )

    def get_fit(self, fit_id: int) -> GradeFitRecord | None:
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM grade_fits WHERE id = ?", (fit_id,)
        ).fetchone()
        return None if row is None else _record(row)

    def fits(self, limit: int = 200) -> list[GradeFitRecord]:
        """The newest ``limit`` fits, newest first (their results read back too)."""
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM grade_fits ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
        return [_record(row) for row in rows]


def _record(row: Sequence[Any]) -> GradeFitRecord:
    return GradeFitRecord(
        id=row[0],
        created_at=row[1],
        finished_at=row[2],
        status=row[3],
        source=row[4],
        digest=row[5],
        marked=int(row[6]),
        graders=tuple(json.loads(row[7])),
        folds=int(row[8]),
        seed=int(row[9]),
        scale=(float(row[10]), float(row[11])),
        judge_label=row[12],
        model=row[13],
        simulated=bool(row[14]),
        grade_runs=tuple(int(i) for i in json.loads(row[15])),
        unscored=int(row[16]),
        not_run=int(row[17]),
        calibration_path=row[18],
        error=row[19],
        result=None if row[20] is None else result_from_dict(json.loads(row[20])),
    )


# --- the fold table as JSON, and back -------------------------------------------------------------


def _interval(value: Any) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def _agreement(d: Mapping[str, Any]) -> Agreement:
    return Agreement(
        n=int(d["n"]),
        aad=float(d["aad"]),
        bracket_accuracy=float(d["bracket_accuracy"]),
        pearson=None if d["pearson"] is None else float(d["pearson"]),
        spearman=None if d["spearman"] is None else float(d["spearman"]),
        confusion=tuple((int(a), int(b), int(c)) for a, b, c in d["confusion"]),
    )


def result_to_dict(r: KFoldResult) -> dict[str, Any]:
    """Every field of the result, the held-out predictions and refitted models included."""
    return {
        "dataset": r.dataset,
        "graders": list(r.graders),
        "k": r.k,
        "seed": r.seed,
        "n": r.n,
        "folds": list(r.folds),
        "rows": [
            {
                "name": row.name,
                "baseline": row.baseline,
                "agreement": row.agreement.as_dict(),
                "rmse": row.rmse,
                "intervals": {k: None if v is None else list(v) for k, v in row.intervals.items()},
                "index": list(row.index),
                "predicted": list(row.predicted),
                "human": list(row.human),
            }
            for row in r.rows
        ],
        "unscored": dict(r.unscored),
        "neighbour_groups": r.neighbour_groups,
        "final": [m.to_dict() for m in r.final],
    }


def result_from_dict(d: Mapping[str, Any]) -> KFoldResult:
    return KFoldResult(
        dataset=str(d["dataset"]),
        graders=tuple(str(g) for g in d["graders"]),
        k=int(d["k"]),
        seed=int(d["seed"]),
        n=int(d["n"]),
        folds=tuple(int(f) for f in d["folds"]),
        rows=tuple(
            FoldRow(
                name=str(row["name"]),
                baseline=bool(row["baseline"]),
                agreement=_agreement(row["agreement"]),
                rmse=float(row["rmse"]),
                intervals={k: _interval(v) for k, v in row["intervals"].items()},
                index=tuple(int(i) for i in row["index"]),
                predicted=tuple(float(p) for p in row["predicted"]),
                human=tuple(float(h) for h in row["human"]),
            )
            for row in d["rows"]
        ),
        unscored={str(k): int(v) for k, v in d["unscored"].items()},
        neighbour_groups=int(d["neighbour_groups"]),
        final=tuple(Fitted.from_dict(m) for m in d["final"]),
    )


__all__ = ["GradeFitRecord", "GradeFitStore", "result_from_dict", "result_to_dict"]
