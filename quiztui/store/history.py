"""Every stored run, of every kind, newest first: ``quiztui runs`` and the Runs screen.

Vet, calibrate and panel runs live in ``runs``; grade, review, robustness and generate runs in
their own tables (``grade_runs``, ``review_runs``, ``robustness_runs``, ``generate_runs``), and
k-fold fits of graders on a user's marks in ``grade_fits`` (kind "kfold"), each with its own id
sequence. This module lists them together as :class:`RunListing` rows whose
``kind`` names the table, so "grade 3" and "vet 3" are different runs. Counts: a grade run's
items, a review's or robustness run's questions, a generate run's pairs, a k-fold fit's marked
answers; ``unjudged`` is the ones without a score. It reads what is there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from quiztui.store.runs import RunListing, Store

# kinds kept in the ``runs`` table (Store.run_listings) and the other tables, each with its own
# id sequence: (table, its item table, the column saying an item has no score)
RUNS_TABLE_KINDS = ("vet", "calibrate", "panel")
OTHER_KINDS: dict[str, tuple[str, str, str]] = {
    "grade": ("grade_runs", "grades", "unscored"),
    "review": ("review_runs", "review_questions", "unscored"),
    "robustness": ("robustness_runs", "robustness_questions", "NULL"),
    "generate": ("generate_runs", "generate_pairs", "NULL"),
}
# k-fold fits of graders on a user's marks (``grade_fits``, store/grade_fits.py): one row each,
# its count the marked answers, "unjudged" the answers without every grader's score
KFOLD = "kfold"
KINDS = (*RUNS_TABLE_KINDS, *OTHER_KINDS, KFOLD)

# Per kind: the run's quiz (title, path, hash) and judge columns; a grade run has no quiz, it
# grades answers from a file or a benchmark (its ``source``).
_COLUMNS: dict[str, str] = {
    "grade": "COALESCE(r.source, 'answers'), r.source, '', r.judge_label, r.model, r.simulated",
    "review": "r.quiz_title, r.quiz_path, r.quiz_hash, r.judge_label, r.model, r.simulated",
    "robustness": "r.quiz_title, r.quiz_path, r.quiz_hash, r.judge_label, r.model, r.simulated",
    # a generate run makes a quiz from a document: the document stands where the quiz does
    "generate": "r.document, r.output, '', r.judge_label, r.model, r.simulated",
}


# Per kind: how many items the run set out to do, from its params (None: not recorded; a generate
# run's pairs are not known before it reads the document).
_PLANNED: dict[str, str] = {
    "grade": "json_extract(r.params_json, '$.items')",
    "review": "json_extract(r.params_json, '$.questions')",
    "robustness": "json_extract(r.params_json, '$.questions')",
    "generate": "NULL",
}


def _other_listings(store: Store, kind: str, limit: int, quiz_hash: str | None) -> list[RunListing]:
    table, items, unscored = OTHER_KINDS[kind]
    where = ""
    args: list[object] = [limit]
    if quiz_hash is not None:
        if kind in ("grade", "generate"):
            return []  # answers or a document, not a quiz: no such run is "of this quiz"
        where, args = " WHERE r.quiz_hash = ?", [quiz_hash, limit]
    sql = (
        f"SELECT r.id, r.created_at, r.finished_at, r.status, {_COLUMNS[kind]},"
        f" (SELECT COUNT(*) FROM {items} i WHERE i.run_id = r.id),"
        f" (SELECT COUNT(*) FROM {items} i WHERE i.run_id = r.id AND {unscored} IS NOT NULL),"
        f" r.summary_json, {_PLANNED[kind]} FROM "
        + table
        + " r"
        + where
        + " ORDER BY r.id DESC LIMIT ?"
    )
    out = []
    for row in store.conn.execute(sql, args).fetchall():
        summary: dict[str, Any] = json.loads(row[12]) if row[12] else {}
        cost = summary.get("cost")
        total, without = int(row[10]), int(row[11])
        planned = row[13]  # what the run set out to do (None: not known for this kind)
        out.append(
            RunListing(
                id=row[0],
                created_at=row[1],
                finished_at=row[2],
                status=row[3],
                kind=kind,
                # a grade run's "quiz" is the answers file it graded, a generate run's the
                # document it read: the file's name, like a quiz title
                quiz_title=Path(str(row[4])).name if kind in ("grade", "generate") else str(row[4]),
                quiz_path=row[5],
                quiz_hash=str(row[6] or ""),
                judge_label=str(row[7]),
                model=str(row[8]),
                simulated=bool(row[9]),
                questions=total,
                assertions=total,
                judged=total - without,
                unjudged=without,
                has_summary=bool(summary),
                badge_counts={},  # badges are a vet run's; these kinds have none
                cost=float(cost) if isinstance(cost, (int, float)) else None,
                # never reached: a killed or cancelled run's items that have no row
                not_run=max(0, int(planned) - total) if isinstance(planned, int) else 0,
            )
        )
    return out


def _kfold_listings(store: Store, limit: int, quiz_hash: str | None) -> list[RunListing]:
    if quiz_hash is not None:
        return []  # marked answers, not a quiz
    rows = store.conn.execute(
        "SELECT id, created_at, finished_at, status, source, digest, judge_label, model,"
        " simulated, marked, unscored, not_run, result_json IS NOT NULL"
        " FROM grade_fits ORDER BY id DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [
        RunListing(
            id=row[0],
            created_at=row[1],
            finished_at=row[2],
            status=row[3],
            kind=KFOLD,
            quiz_title=Path(str(row[4])).name,  # the marked file's name (a built-in's name)
            quiz_path=row[4],
            quiz_hash=str(row[5]),
            judge_label=str(row[6]),
            model=str(row[7]),
            simulated=bool(row[8]),
            questions=int(row[9]),
            assertions=int(row[9]),
            judged=int(row[9]) - int(row[10]),
            unjudged=int(row[10]),
            has_summary=bool(row[12]),
            badge_counts={},
            cost=None,
            not_run=int(row[11]),
        )
        for row in rows
    ]


def run_history(
    store: Store, limit: int = 200, *, kind: str | None = None, quiz_hash: str | None = None
) -> list[RunListing]:
    """The newest ``limit`` runs of every kind (or of ``kind``), newest first."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown run kind {kind!r}")
    listings: list[RunListing] = []
    if kind is None or kind in RUNS_TABLE_KINDS:
        listings += store.run_listings(limit, kind=kind, quiz_hash=quiz_hash)
    for other in OTHER_KINDS:
        if kind is None or kind == other:
            listings += _other_listings(store, other, limit, quiz_hash)
    if kind is None or kind == KFOLD:
        listings += _kfold_listings(store, limit, quiz_hash)
    listings.sort(key=lambda r: (r.created_at, r.id), reverse=True)
    return listings[:limit]


def listing_key(listing: RunListing) -> str:
    """A key unique across kinds: the id for the ``runs`` table's kinds, ``kind:id`` else."""
    return str(listing.id) if listing.kind in RUNS_TABLE_KINDS else f"{listing.kind}:{listing.id}"
