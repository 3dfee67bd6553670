"""A run's summary survives the store: summary_from_dict(summary_to_dict(s)) == s."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline_helpers import collect, make_quiz

from quiztui.pipeline.summary import summary_from_dict, summary_to_dict
from quiztui.providers.simulated import SimulatedProvider
from quiztui.store import Store
from quiztui.testing.fake_openai import truth_from_quiz


async def test_a_stored_summary_reads_back_equal(tmp_path: Path) -> None:
    quiz = make_quiz(12, wrong_every=4)
    provider = SimulatedProvider(truth_from_quiz(quiz), tpr=0.9, tnr=0.9, latency=0, line_delay=0)
    db = tmp_path / "runs.db"
    _, summary = await collect(quiz, provider, db)
    assert summary_from_dict(json.loads(json.dumps(summary_to_dict(summary)))) == summary
    with Store(db) as store:
        stored = store.get_run(summary.run_id).summary
    assert stored is not None
    assert summary_from_dict(stored) == summary


def test_an_older_summary_without_newer_fields_takes_their_defaults() -> None:
    data = {
        "run_id": 3, "status": "finished", "quiz_title": "t", "quiz_path": None,
        "judge_label": "j", "simulated": True, "calibration": "uncalibrated", "seed": 1,
        "batch_size": 20, "tpr": 0.9, "tnr": 0.9, "prior": 0.95, "questions": [],
    }  # fmt: skip
    summary = summary_from_dict(data)
    assert summary.cost is None and summary.not_run == 0 and summary.tpr_ci is None
