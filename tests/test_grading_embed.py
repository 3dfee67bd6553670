"""The embedding grader: MSRpar figures with the extra (G1), one clear line without it (G5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import shared_data

from quiztui.cli import main
from quiztui.embed import embed_available

needs_extra = pytest.mark.skipif(
    not embed_available(), reason="the embed extra is not installed (pip install 'quiztui[embed]')"
)

BLOCKED = """
import sys
sys.modules["onnxruntime"] = None  # as if the extra were not installed
from quiztui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_the_extra_the_embedding_grader_exits_2_with_the_install_line(
    tmp_path: Path,
) -> None:
    answers = tmp_path / "a.csv"
    answers.write_text("question,reference,candidate\nQ?,Paris,Paris\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, "grade", str(answers), "--grader", "embedding"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "pip install 'quiztui[embed]'" in lines[0] and "onnxruntime" in lines[0]


@needs_extra
def test_embedding_grader_takes_the_best_alias(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = tmp_path / "a.jsonl"
    rows = [
        {
            "id": "alias",
            "question": "Largest ocean?",
            "reference": ["Atlantic", "The Pacific Ocean"],
            "candidate": "the Pacific",
        },
        {
            "id": "off",
            "question": "Largest ocean?",
            "reference": "The Pacific Ocean",
            "candidate": "a recipe for banana bread",
        },
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["grade", str(answers), "--grader", "embedding", "--format", "json"]) == 0
    items = {i["id"]: i for i in json.loads(capsys.readouterr().out)["items"]}
    assert items["alias"]["score"] > 0.8 > 0.3 > items["off"]["score"]


@needs_extra
def test_g1_embedding_beats_the_seed_and_the_baseline_on_msrpar(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shared_data("grading", "sts_semeval2012_msrpar", "MSRpar.test.tsv")
    assert (
        main(["grade", "--benchmark", "msrpar", "--grader", "embedding", "--format", "json"]) == 0
    )
    body = json.loads(capsys.readouterr().out)
    test, base = body["test"], body["baseline_constant_mean"]
    print(
        f"MSRpar test: AAD {test['aad']:.4f}, bracket {test['bracket_accuracy']:.4f},"
        f" Pearson {test['pearson']:.4f}"
    )
    assert test["n"] == 750
    assert test["aad"] <= 0.60 and test["bracket_accuracy"] >= 0.72 and test["pearson"] >= 0.55
    assert test["aad"] < base["aad"] and test["bracket_accuracy"] > base["bracket_accuracy"]
    for seed in body["seed_figures"].values():
        assert test["aad"] < seed["aad"] and test["bracket_accuracy"] > seed["bracket_accuracy"]
