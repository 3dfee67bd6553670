"""``quiztui grade --benchmark FILE``: a user's own marked answers, k-fold fitted graders, the
saved calibration (issue 21 item 3, T3).

The fold figures are checked against sums done here by hand on a six-answer file with fixed
folds; the MSRpar check compares the k-fold run on a CSV made from the shared data with the
built-in split benchmark, both run here.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import shared_data

from quiztui.cli import main
from quiztui.core.grade_fit import fit_thresholds, fold_ids, hold_in_bracket

# Two questions, three answers each: an answer is either the reference itself (lexical score 1)
# or shares no word with it (score 0). Marks are out of 10; folds are fixed by the "term" column.
TINY = [
    # id, question, reference, answer, mark (0-10), term
    ("a1", "What do plants make?", "Plants make glucose", "plants make glucose.", "10", "A"),
    ("a2", "What do plants make?", "Plants make glucose", "I do not know", "2", "A"),
    ("b1", "What do plants make?", "Plants make glucose", "Plants make glucose", "8", "B"),
    ("b2", "Why is ice slippery?", "A water film forms", "because it is cold", "4", "B"),
    ("c1", "Why is ice slippery?", "A water film forms", "a water film forms", "9", "C"),
    ("c2", "Why is ice slippery?", "A water film forms", "no idea", "0", "C"),
]


def write_tiny(path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "q", "ref", "ans", "mark", "term"])
        w.writerows(TINY)
    return path


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(args) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def kfold_tiny(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    path = write_tiny(tmp_path / "marks.csv")
    return run_json(
        [
            "grade",
            "--benchmark",
            str(path),
            "--grader",
            "lexical",
            "--scale",
            "0-10",
            "--columns",
            "question=q,reference=ref,answer=ans,score=mark,fold=term",
            "--format",
            "json",
        ],
        capsys,
    )


def test_fold_metrics_match_a_hand_computation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = kfold_tiny(tmp_path, capsys)
    assert body["k"] == 3 and body["n"] == 6 and body["folds"] == [0, 0, 1, 1, 2, 2]
    rows = {r["model"]: r for r in body["rows"]}
    # Marks on 0-5 (0-10 halved): a1 5, a2 1, b1 4, b2 2, c1 4.5, c2 0.
    # Constant mean: fold A is predicted by the mean of B and C's marks, and so on.
    mean_a = (4 + 2 + 4.5 + 0) / 4  # 2.625
    mean_b = (5 + 1 + 4.5 + 0) / 4  # 2.625
    mean_c = (5 + 1 + 4 + 2) / 4  # 3.0
    errors = [5 - mean_a, mean_a - 1, 4 - mean_b, mean_b - 2, 4.5 - mean_c, mean_c - 0]
    assert errors == [2.375, 1.625, 1.375, 0.625, 1.5, 3.0]
    const = rows["constant mean"]
    assert const["baseline"] and const["n"] == 6
    # AAD and RMSE are reported on the file's own 0-10 scale: twice the 0-5 figures.
    assert const["aad"] == pytest.approx(2 * 10.5 / 6)  # 3.5
    squares = 2.375**2 + 1.625**2 + 1.375**2 + 0.625**2 + 1.5**2 + 3.0**2  # 21.8125
    assert const["rmse"] == pytest.approx(2 * math.sqrt(squares / 6))
    # Every prediction is in the 2-4 bracket; of the marks only b2 (2.0) is.
    assert const["bracket_accuracy"] == pytest.approx(1 / 6)

    # Lexical overlap through a monotone map: in each fold, score 1 maps to the mean mark of the
    # training answers that scored 1, score 0 to that of those that scored 0.
    predicted = [
        (4 + 4.5) / 2,  # a1 (fold A: training b1, c1 scored 1)
        (2 + 0) / 2,  # a2 (b2, c2 scored 0)
        (5 + 4.5) / 2,  # b1
        (1 + 0) / 2,  # b2
        (5 + 4) / 2,  # c1
        (1 + 2) / 2,  # c2
    ]
    human = [5, 1, 4, 2, 4.5, 0]
    assert predicted == [4.25, 1.0, 4.75, 0.5, 4.5, 1.5]
    for name in ("lexical overlap · monotone", "lexical · monotone"):
        lex = rows[name]
        assert lex["aad"] == pytest.approx(2 * (0.75 + 0 + 0.75 + 1.5 + 0 + 1.5) / 6)  # 1.5
        assert lex["rmse"] == pytest.approx(2 * math.sqrt((0.75**2 * 2 + 1.5**2 * 2) / 6))
        # Brackets predicted 2,0,2,0,2,0 against human 2,0,2,1,2,0: five of six.
        assert lex["bracket_accuracy"] == pytest.approx(5 / 6)
        # Pearson: both means are 16.5 / 6 = 2.75; deviations' products sum to 17.125, squares
        # to 19.0 and 20.875.
        assert sum(predicted) / 6 == 2.75 and sum(human) / 6 == 2.75
        assert lex["pearson"] == pytest.approx(17.125 / math.sqrt(19.0 * 20.875))
        # Spearman: ranks 4,2,6,1,5,3 against 6,2,4,3,5,1; squared rank differences sum to 16.
        assert lex["spearman"] == pytest.approx(1 - 6 * 16 / (6 * (36 - 1)))
    assert rows["lexical overlap · monotone"]["baseline"]
    assert not rows["lexical · monotone"]["baseline"]
    for row in body["rows"]:
        lo, hi = row["intervals"]["aad"]
        assert lo <= row["aad"] <= hi
        lo, hi = row["intervals"]["bracket_accuracy"]
        assert 0 <= lo <= row["bracket_accuracy"] <= hi <= 1
    # Two questions with three marked answers each: the neighbours model is there.
    assert body["neighbour_groups"] == 2 and "neighbours" in rows
    assert {"combined", "combined · ordinal", "lexical · ordinal"} <= set(rows)


def test_the_saved_calibration_grades_unmarked_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = kfold_tiny(tmp_path, capsys)
    saved = Path(body["calibration"])
    assert saved.is_file() and saved.parent.name == "calibrations"
    cal = json.loads(saved.read_text(encoding="utf-8"))
    assert cal["model"] == body["best"] and cal["scale"] == [0, 10]
    # Saved under the marked file's stem, with the file's digest inside.
    assert saved.name == "marks.json" and cal["name"] == "marks" and len(cal["sha256"]) == 64
    answers = tmp_path / "unmarked.jsonl"
    answers.write_text(
        json.dumps(
            {
                "question": "What do plants make?",
                "reference": "Plants make glucose",
                "candidate": "plants make glucose",
            }
        )
        + "\n"
        + json.dumps(
            {
                "question": "Why is ice slippery?",
                "reference": "A water film forms",
                "candidate": "nobody knows",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    out = run_json(["grade", str(answers), "--calibration", str(saved), "--format", "json"], capsys)
    assert out["calibration"]["model"] == cal["model"]
    right, wrong = (item["calibrated"] for item in out["items"])
    assert 0 <= wrong < right <= 10
    # Marked answers that matched their reference were marked 8-10; those that did not, 0-4.
    assert right >= 8 and wrong <= 4
    assert main(["grade", str(answers), "--calibration", str(saved), "--grader", "pass3"]) == 2
    assert "fitted for grader lexical" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("rows", "extra", "where"),
    [
        ("q,ref,ans\nQ,R,C\n", [], "line 1: field 'score': column 'mark' is not in the header"),
        ("q,ref,ans,mark\nQ,R,C,7\nQ,R,D,11\n", [], "line 3: field 'mark': 11 is outside"),
        ("q,ref,ans,mark\nQ,R,C,7\nQ,R,D,\n", [], "line 3: field 'mark': missing"),
        ("q,ref,ans,mark\nQ,R,C,seven\n", [], "line 2: field 'mark': must be a number"),
        ("q,ref,ans,mark\nQ,,C,3\n", [], "line 2: field 'ref': must be a non-empty string"),
        ("q,ref,ans,mark\nQ,R,C,3\n", ["--scale", "5-1"], "--scale '5-1'"),
        ("q,ref,ans,mark\nQ,R,C,3\n", ["--fit", "split"], "use --fit kfold"),
    ],
)
def test_bad_marked_files_exit_2_naming_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: str, extra: list[str], where: str
) -> None:
    path = tmp_path / "marks.csv"
    path.write_text(rows, encoding="utf-8")
    args = ["grade", "--benchmark", str(path), "--grader", "lexical", "--scale", "0-10"]
    args += ["--columns", "question=q,reference=ref,answer=ans,score=mark", *extra]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert where in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    if not where.startswith("--"):
        assert str(path) in err


def test_bad_columns_and_jsonl_rows_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "marks.jsonl"
    path.write_text(
        '{"question": "Q", "reference": "R", "candidate": "C", "score": 4}\n'
        '{"question": "Q", "reference": "R", "candidate": "D"}\n',
        encoding="utf-8",
    )
    assert main(["grade", "--benchmark", str(path), "--grader", "lexical"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: line 2: field 'score': missing" in err and len(err.splitlines()) == 1
    assert main(["grade", "--benchmark", str(path), "--columns", "mark=score"]) == 2
    assert "unknown field 'mark'" in capsys.readouterr().err


def test_default_folds_are_seeded_and_balanced() -> None:
    a = fold_ids(10, 3, seed=7)
    assert sorted(np.bincount(a).tolist()) == [3, 3, 4]
    assert fold_ids(10, 3, seed=7).tolist() == a.tolist()
    assert fold_ids(10, 3, seed=8).tolist() != a.tolist()


def test_ordinal_thresholds_are_fitted_for_the_brackets() -> None:
    # Scores 0..7 with marks whose brackets are 0,0,1,1,1,2,2,2 (the last mark is low): the cuts
    # that put most marks in their bracket fall between 1 and 2 and between 4 and 5.
    z = np.arange(8.0)
    human = np.array([0.5, 1.0, 2.5, 3.0, 3.5, 4.5, 5.0, 4.0])
    assert fit_thresholds(z, human) == (1.5, 4.5)
    # A value held inside its bracket: 3.9 from a score past the upper cut becomes 4.0.
    held = hold_in_bracket(np.array([3.9, 1.0]), np.array([6.0, 3.0]), (1.5, 4.5))
    assert held.tolist() == [4.0, 2.0]


def test_kfold_on_msrpar_reproduces_the_builtin_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """T3: the MSRpar pairs written as a user's CSV, 5-fold, against the built-in split run."""
    folder = shared_data("grading", "sts_semeval2012_msrpar")
    path = tmp_path / "msrpar.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["gold", "sentence1", "sentence2"])
        for name in ("MSRpar.train.tsv", "MSRpar.test.tsv"):
            for line in (folder / name).read_text(encoding="utf-8").splitlines():
                gold, first, second = line.split("\t")[:3]
                w.writerow([gold, first, second])
    builtin = run_json(
        ["grade", "--benchmark", "msrpar", "--grader", "lexical", "--format", "json"], capsys
    )
    kfold = run_json(
        [
            "grade",
            "--benchmark",
            str(path),
            "--grader",
            "lexical",
            "--columns",
            "reference=sentence1,answer=sentence2,score=gold",
            "--format",
            "json",
        ],
        capsys,
    )
    assert kfold["n"] == 1500 and kfold["k"] == 5
    rows = {r["model"]: r for r in kfold["rows"]}
    mine = rows["lexical · monotone"]
    for key in ("aad", "bracket_accuracy", "pearson", "spearman"):
        lo, hi = mine["intervals"][key]
        assert lo <= builtin["test"][key] <= hi, (key, builtin["test"][key], lo, hi)
    # The baselines on the same folds: the grader beats the constant mean on AAD.
    assert mine["aad"] < rows["constant mean"]["aad"]
    assert rows["constant mean"]["pearson"] is None  # a constant has no correlation


def test_kfold_with_an_llm_grader_asks_each_answer_once_across_folds_and_reruns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Grading replies are cached like vet verdicts: the folds reuse one grading pass, and a
    second run (or a plain grade of the same answers) sends nothing to the judge."""
    from quiztui.testing.fake_openai import FakeOpenAI

    def chats() -> int:
        return sum(r.path.endswith("/chat/completions") for r in server.requests)

    path = write_tiny(tmp_path / "marks.csv")
    with FakeOpenAI(models=["m", "m2"]) as server:
        judge = ["--judge", "openai-compat", "--base-url", server.base_url, "--model", "m"]
        args = ["grade", "--benchmark", str(path), "--grader", "pass3", "--scale", "0-10"]
        args += ["--columns", "question=q,reference=ref,answer=ans,score=mark", *judge]
        first = run_json([*args, "--format", "json"], capsys)
        asked = chats()
        assert asked == len(TINY) and first["unscored"] == {"pass3": 0}
        second = run_json([*args, "--format", "json"], capsys)
        assert chats() == asked  # every reply came from the grade cache
        assert second["rows"] == first["rows"]
        plain = tmp_path / "same.jsonl"
        plain.write_text(
            "".join(
                json.dumps({"question": q, "reference": r, "candidate": c}) + "\n"
                for _, q, r, c, _, _ in TINY
            ),
            encoding="utf-8",
        )
        assert main(["grade", str(plain), "--grader", "pass3", *judge]) == 0
        assert "6 from the grade cache" in capsys.readouterr().out and chats() == asked
        # Another model is another judge: nothing cached for it.
        other = [a if a != "m" else "m2" for a in args]
        assert main(other) == 0 and chats() == 2 * asked


def tiny_kfold_screen(tmp_path: Path) -> Any:
    """The Benchmark screen over a 3-fold lexical run on the six-answer file (fixed folds)."""
    from quiztui.formats.marked import Scale, load_marked
    from quiztui.pipeline.grade import GradeSettings
    from quiztui.pipeline.grade_fit import KFoldRun
    from quiztui.tui.screens.benchmark import BenchmarkScreen

    columns = {"question": "q", "reference": "ref", "candidate": "ans", "human": "mark"}
    marked = load_marked(
        write_tiny(tmp_path / "marks.csv"), Scale(0, 10), columns | {"fold": "term"}
    )

    async def start() -> Any:
        run = KFoldRun(marked, ["lexical"], GradeSettings(grader="lexical"), folds=3)
        async for event in run.events():
            yield event

    return BenchmarkScreen(
        start,
        dataset=marked.name,
        grader="lexical",
        calibration="kfold",
        train=len(marked.items),
        test=0,
        flush_interval=0.02,
    )


async def test_benchmark_screen_shows_the_kfold_table_and_the_scatter(tmp_path: Path) -> None:
    """The TUI's Benchmark screen over a k-fold run: the CLI's fold table (baselines included),
    the best model's held-out confusion, and its predictions against the marks as a scatter."""
    from quiztui.report.grade_fit import kfold_rows
    from quiztui.tui.grade_app import GradeApp

    screen = tiny_kfold_screen(tmp_path)
    app = GradeApp(screen)
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen.flush()
        await pilot.pause()
        scored = screen.progress.kfold
        assert scored is not None and screen.progress.status == "finished"
        widget = screen.query_one("#bench-comparison")
        table = "\n".join(widget.render_line(y).text for y in range(widget.size.height))
        for row in kfold_rows(scored.result, scored.scale):
            assert row["AAD (0-10)"] in table and row["bracket acc"] in table
        assert "constant mean" in table and "lexical overlap" in table and "baseline" in table
        count = screen.query_one("#bench-count")
        assert "graded 6/6" in count.render_line(0).text
        points = screen.query_one("#bench-plot").spec.series[-1]  # type: ignore[attr-defined]
        best = scored.result.best()
        assert points.kind == "scatter" and points.x == best.predicted and points.y == best.human


def test_grade_benchmark_file_tui_opens_the_benchmark_screen_in_kfold_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.benchmark import BenchmarkScreen

    opened: list[GradeApp] = []
    monkeypatch.setattr(GradeApp, "run", lambda self, *a, **k: opened.append(self))
    path = write_tiny(tmp_path / "marks.csv")
    argv = ["grade", "--benchmark", str(path), "--grader", "lexical", "--scale", "0-10"]
    argv += ["--columns", "question=q,reference=ref,answer=ans,score=mark", "--also", "embedding"]
    assert main([*argv, "--tui"]) == 0
    home = opened[0].home
    assert isinstance(home, BenchmarkScreen)
    assert (home.dataset, home.grader, home.calibration) == (
        "marks.csv",
        "lexical + embedding",
        "kfold",
    )
    assert (home.train, home.test) == (2 * len(TINY), 0)  # every answer graded by each grader
