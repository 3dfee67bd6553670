"""Calibrations by name (issue 21 item 3): ``grade --benchmark FILE --fit kfold`` saves the fitted
calibration as ``<data dir>/calibrations/NAME.json`` (``--save-calibration NAME``, default the
marked file's stem), ``grade ANSWERS --calibration NAME|PATH`` (or ``[grade]
answers_calibration``) applies it, ``grade --calibrations`` lists the saved ones.

Every run is the real CLI over real files in ``tmp_path`` with the offline lexical grader.
"""

from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import pytest

from quiztui.cli import main
from quiztui.core.grading import GradeItem
from quiztui.pipeline.grade import lexical_outcome
from quiztui.pipeline.grade_fit import load_calibration

# A biology teacher's marks out of 10 on two questions, three answers each; the "week" column
# fixes the folds. Answers close to the reference got high marks, the others low ones.
MARKS = [
    # id, question, reference, answer, mark, week
    ("s1", "What gas do plants take in?", "Carbon dioxide", "carbon dioxide", "10", "1"),
    ("s2", "What gas do plants take in?", "Carbon dioxide", "oxygen I think", "1", "1"),
    (
        "s3",
        "What gas do plants take in?",
        "Carbon dioxide",
        "They take in carbon dioxide",
        "8",
        "2",
    ),
    ("s4", "Where is DNA kept?", "In the nucleus", "in the cell wall", "3", "2"),
    ("s5", "Where is DNA kept?", "In the nucleus", "in the nucleus", "9", "3"),
    ("s6", "Where is DNA kept?", "In the nucleus", "no idea", "0", "3"),
]
COLUMNS = "question=question,reference=model_answer,answer=response,score=mark,fold=week"

UNMARKED = [
    ("What gas do plants take in?", "Carbon dioxide", "carbon dioxide gas"),
    ("Where is DNA kept?", "In the nucleus", "in the mitochondria maybe"),
    ("Where is DNA kept?", "In the nucleus", "the nucleus"),
]


def write_marks(path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "question", "model_answer", "response", "mark", "week"])
        w.writerows(MARKS)
    return path


def write_unmarked(path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "reference", "candidate"])
        w.writerows(UNMARKED)
    return path


def calibrations(tmp_path: Path) -> Path:
    return tmp_path / "data" / "calibrations"  # the autouse fixture's QUIZTUI_DATA_DIR


def fit(marks: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[dict, str]:
    args = ["grade", "--benchmark", str(marks), "--grader", "lexical", "--scale", "0-10"]
    args += ["--columns", COLUMNS, "--format", "json", *extra]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def grade_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    code = main(["grade", *args, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def one_line_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_kfold_saves_under_the_files_stem_and_replaces_it_saying_when_it_was_fitted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marks = write_marks(tmp_path / "bio-term1.csv")
    body, err = fit(marks, capsys)
    saved = calibrations(tmp_path) / "bio-term1.json"
    assert body["calibration"] == str(saved) and saved.is_file()
    first = json.loads(saved.read_text(encoding="utf-8"))
    assert first["name"] == "bio-term1" and first["n_marks"] == len(MARKS)
    assert first["graders"] == ["lexical"] and first["scale"] == [0, 10]
    best = next(r for r in body["rows"] if r["model"] == body["best"])
    assert first["model"] == body["best"]
    assert first["held_out"]["bracket_accuracy"] == pytest.approx(best["bracket_accuracy"])
    assert "calibration saved: bio-term1" in err and "--calibration bio-term1" in err
    assert "replaced" not in err

    # Pretend the first fit was made a day earlier, so the replaced date is not today's.
    first["created_at"] -= 86400
    saved.write_text(json.dumps(first), encoding="utf-8")
    was = time.strftime("%Y-%m-%d %H:%M", time.localtime(first["created_at"]))
    _, err = fit(marks, capsys)
    assert f"replaced calibration bio-term1 (was fitted {was})" in err
    again = json.loads(saved.read_text(encoding="utf-8"))
    assert again["created_at"] > first["created_at"]
    assert sorted(p.name for p in calibrations(tmp_path).iterdir()) == ["bio-term1.json"]


def test_save_calibration_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marks = write_marks(tmp_path / "marks.csv")
    body, err = fit(marks, capsys, "--save-calibration", "biology_2026.v2")
    saved = calibrations(tmp_path) / "biology_2026.v2.json"
    assert body["calibration"] == str(saved)
    assert json.loads(saved.read_text(encoding="utf-8"))["name"] == "biology_2026.v2"
    assert not (calibrations(tmp_path) / "marks.json").exists()
    assert "calibration saved: biology_2026.v2" in err


def test_a_saved_name_applies_the_same_mapping_as_its_path_and_the_report_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fit(write_marks(tmp_path / "marks.csv"), capsys, "--save-calibration", "bio")
    answers = write_unmarked(tmp_path / "unmarked.csv")
    path = calibrations(tmp_path) / "bio.json"
    by_name, err = grade_json([str(answers), "--calibration", "bio"], capsys)
    by_path, _ = grade_json([str(answers), "--calibration", str(path)], capsys)
    values = [i["calibrated"] for i in by_name["items"]]
    assert values == [i["calibrated"] for i in by_path["items"]]
    # The same numbers as the calibration's own apply over the grader's raw scores.
    cal = load_calibration(path)
    items = [GradeItem(i["id"], *row) for i, row in zip(by_name["items"], UNMARKED, strict=True)]
    assert values == pytest.approx(cal.apply(items, [i["score"] for i in by_name["items"]]))
    # The close answers map high, the wrong one low, on the marks' own 0-10 scale.
    assert values[1] < 5 < min(values[0], values[2]) <= 10
    applied = by_name["calibration"]
    assert applied["name"] == "bio" and applied["grader"] == "lexical"
    assert applied["scale"] == [0, 10] and applied["file"] == str(path)
    assert "applying calibration bio (grader lexical" in err and "scale 0-10" in err
    assert main(["grade", str(answers), "--calibration", "bio"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("calibration bio (grader lexical, ") and "calibrated (0-10)" in text


def test_an_old_digest_named_file_still_loads_by_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fit(write_marks(tmp_path / "marks.csv"), capsys)
    body = json.loads((calibrations(tmp_path) / "marks.json").read_text(encoding="utf-8"))
    # The first saved files were named by the digest and had no name, count or Pearson.
    for key in ("name", "n_marks"):
        del body[key]
    del body["held_out"]["pearson"]
    old = tmp_path / f"{body['sha256'][:16]}.json"
    old.write_text(json.dumps(body), encoding="utf-8")
    answers = write_unmarked(tmp_path / "unmarked.csv")
    out, _ = grade_json([str(answers), "--calibration", str(old)], capsys)
    assert out["calibration"]["name"] == old.stem and out["calibration"]["file"] == str(old)
    new, _ = grade_json([str(answers), "--calibration", "marks"], capsys)
    assert [i["calibrated"] for i in out["items"]] == [i["calibrated"] for i in new["items"]]


def test_an_unknown_name_is_one_line_naming_it_and_the_saved_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_unmarked(tmp_path / "unmarked.csv")
    err = one_line_error(["grade", str(answers), "--calibration", "physics"], capsys)
    assert "--calibration 'physics': no such file or saved calibration" in err
    assert "none saved yet" in err
    marks = write_marks(tmp_path / "marks.csv")
    fit(marks, capsys, "--save-calibration", "bio")
    fit(marks, capsys, "--save-calibration", "chem")
    err = one_line_error(["grade", str(answers), "--calibration", "physics"], capsys)
    assert "'physics'" in err and "(saved: bio, chem)" in err
    err = one_line_error(
        ["grade", str(answers), "--calibration", "bio", "--grader", "pass3"], capsys
    )
    assert "fitted for grader lexical, not pass3" in err and "--calibration none" in err


@pytest.mark.parametrize(
    "name", ["two words", "../up", ".hidden", "-x", "a/b", "none", "é", "x" * 65]
)
def test_a_bad_name_is_one_line_and_nothing_is_graded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    marks = write_marks(tmp_path / "marks.csv")
    args = ["grade", "--benchmark", str(marks), "--grader", "lexical", "--scale", "0-10"]
    err = one_line_error([*args, "--columns", COLUMNS, f"--save-calibration={name}"], capsys)
    assert f"--save-calibration {name!r}" in err and "letters, digits" in err
    assert not calibrations(tmp_path).exists()


def test_save_calibration_needs_a_kfold_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = write_unmarked(tmp_path / "unmarked.csv")
    err = one_line_error(["grade", str(answers), "--save-calibration", "bio"], capsys)
    assert "--save-calibration: only with --benchmark" in err


def test_the_listing_shows_each_calibration_and_its_held_out_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["grade", "--calibrations"]) == 0
    assert "no saved calibrations in" in capsys.readouterr().out
    marks = write_marks(tmp_path / "marks.csv")
    body, _ = fit(marks, capsys, "--save-calibration", "bio")
    best = next(r for r in body["rows"] if r["model"] == body["best"])
    (calibrations(tmp_path) / "broken.json").write_text("{not json", encoding="utf-8")

    listed, _ = grade_json(["--calibrations"], capsys)
    by_name = {c["name"]: c for c in listed}
    assert set(by_name) == {"bio", "broken"} and by_name["broken"]["problem"]
    bio = by_name["bio"]
    assert bio["graders"] == ["lexical"] and bio["model"] == body["best"]
    assert bio["scale"] == [0, 10] and bio["marks"] == len(MARKS)
    assert bio["held_out"]["bracket_accuracy"] == pytest.approx(best["bracket_accuracy"])

    assert main(["grade", "--calibrations"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "grader", "model", "scale", "marks", "fitted", "held-out"]
    row = next(line for line in lines if line.startswith("bio "))
    fitted = time.strftime("%Y-%m-%d", time.localtime(bio["fitted_at"]))
    assert "lexical" in row and body["best"] in row and " 0-10 " in row and " 6 " in row
    assert fitted in row and f"brackets {100 * best['bracket_accuracy']:.1f} %" in row
    # The report's AAD is on the file's 0-10 scale, and so is the listing's.
    assert f"AAD {best['aad']:.2f}" in row
    assert any(line.startswith("broken ") and "unreadable" in line for line in lines)


def test_the_config_key_applies_a_calibration_and_none_turns_it_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fit(write_marks(tmp_path / "marks.csv"), capsys, "--save-calibration", "bio")
    answers = write_unmarked(tmp_path / "unmarked.csv")
    config = Path(os.environ["QUIZTUI_CONFIG_DIR"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[grade]\nanswers_calibration = "bio"\n', encoding="utf-8")

    out, err = grade_json([str(answers)], capsys)
    assert out["calibration"]["name"] == "bio" and "applying calibration bio" in err
    assert all(isinstance(i["calibrated"], float) for i in out["items"])

    out, err = grade_json([str(answers), "--calibration", "none", "--grader", "lexical"], capsys)
    assert "calibration" not in out and "applying" not in err
    assert all("calibrated" not in i for i in out["items"])

    config.write_text('[grade]\nanswers_calibration = "physics"\n', encoding="utf-8")
    err = one_line_error(["grade", str(answers)], capsys)
    assert "[grade] answers_calibration 'physics': no such file or saved calibration" in err
    assert "(saved: bio)" in err
    # The setting is for answer files: one answer typed on the command line is graded as is.
    line = ["--reference", "Carbon dioxide", "--candidate", "carbon dioxide", "--grader", "lexical"]
    out, _ = grade_json(line, capsys)
    assert "calibration" not in out


def test_neighbours_map_an_answer_alike_alone_or_with_others_and_as_computed_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The neighbours feature compares an answer only with the marked answers of its question,
    so the Grade screen, which maps a few answers per flush, gets the CLI report's numbers."""
    fit(write_marks(tmp_path / "marks.csv"), capsys, "--save-calibration", "bio")
    body = json.loads((calibrations(tmp_path) / "bio.json").read_text(encoding="utf-8"))
    assert {"neighbours", "combined"} <= {m["name"] for m in body["models"]}
    items = [GradeItem(f"u{n}", *row) for n, row in enumerate(UNMARKED)]
    raw = [lexical_outcome(it).raw for it in items]
    for model in ("neighbours", "combined", body["model"]):
        path = tmp_path / f"bio-{model}.json"
        path.write_text(json.dumps({**body, "model": model}), encoding="utf-8")
        cal = load_calibration(path)
        together = cal.apply(items, raw)
        alone = [cal.apply([it], [r])[0] for it, r in zip(items, raw, strict=True)]
        assert together == pytest.approx(alone) and all(v is not None for v in together)

    # "carbon dioxide gas" against the plants question's marked answers (token F1): "carbon
    # dioxide" 0.8, "oxygen I think" 0, "They take in carbon dioxide" 0.5; the weights are
    # the similarities + 0.001, the marks those answers got (stored on 0-5).
    cal = load_calibration(tmp_path / "bio-neighbours.json")
    marks = dict(zip(cal.marked_candidates, cal.marked_scores, strict=True))
    weights = {
        "carbon dioxide": 0.801,
        "oxygen I think": 0.001,
        "They take in carbon dioxide": 0.501,
    }
    by_hand = sum(w * marks[c] for c, w in weights.items()) / sum(weights.values())
    assert cal._neighbours(items[:1], None)[0] == pytest.approx(by_hand)
    assert marks["carbon dioxide"] == pytest.approx(5.0)  # 10 of 10
