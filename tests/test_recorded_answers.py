"""Audit from answers already given (issue 26 item 1): recorded model answers as judges.

Each import shape (letters, 0-based indices, option text; lm-evaluation-harness samples written
as the harness writes them), joins that miss, unusable answers, and runs from answers stored,
listed and reported like any other run. The dev-data test reads ../shared/data and skips
cleanly when it is absent.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import quiztui_main

from quiztui.cli import main
from quiztui.core.recorded import read_choice
from quiztui.errors import QuiztuiError
from quiztui.formats import load_quiz
from quiztui.formats.recorded import harness_model, load_answers
from quiztui.store import Store
from quiztui.testing.dev_data import dev_data_dir, label_rows, write_dev_quiz

QUESTIONS = [
    ("What is the capital of France?", ["Paris", "Rome", "Berlin", "Madrid"], 0),
    ("2 + 2 =", ["3", "4", "5", "22"], 1),
    ("Which is a mammal?", ["Shark", "Trout", "Whale", "Eel"], 2),
    ("The largest planet?", ["Mars", "Venus", "Earth", "Jupiter"], 3),
]


def write_quiz(tmp_path: Path) -> Path:
    path = tmp_path / "quiz.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["question", "choices", "answer"])
        for text, options, key in QUESTIONS:
            w.writerow([text, repr(options), key])
    return path


def write_answers(path: Path, header: list[str], rows: list[list[str]], sep: str = ",") -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter=sep)
        w.writerow(header)
        w.writerows(rows)
    return path


def reversed_rows(answers: dict[str, list[str]]) -> list[list[str]]:
    """Each question with its options listed in reverse order, and each model's answer."""
    rows = []
    for i, (text, options, _) in enumerate(QUESTIONS):
        rows.append(
            [f"  {text} ", repr(list(reversed(options)))] + [a[i] for a in answers.values()]
        )
    return rows


def test_letters_indices_and_option_text_read_through_the_files_own_option_order(
    tmp_path: Path,
) -> None:
    quiz = load_quiz(write_quiz(tmp_path))
    # The file lists each question's options in reverse: its "D" is the quiz's option A.
    answers = {
        "letters": [" D", "C ", "b", "A"],  # quiz options A, B, C, D
        "indices": ["3", "2", "1", "0"],  # the same choices as 0-based indices
        "texts": ["Paris", "4", " Whale ", "jupiter"],  # the option text (case, spaces aside)
    }
    path = write_answers(
        tmp_path / "answers.tsv",
        ["question", "choices", *answers],
        reversed_rows(answers),
        sep="\t",
    )
    read = load_answers([path], quiz)
    assert [j.model for j in read.judges] == list(answers)
    for judge in read.judges:
        chosen = [judge.answers[q.id].option for q in quiz.questions]
        assert chosen == [0, 1, 2, 3], judge.model
        assert judge.label == f"recorded answers of {judge.model} from {path}"
    assert read.notes == ()


def test_an_answer_that_names_no_option_is_kept_with_its_reason() -> None:
    options = ["1", "2", "3", "4"]
    assert read_choice(" C", options) == (2, "")
    assert read_choice("", options) == (None, "blank answer")
    assert read_choice("E", options)[1] == "answer 'E' is not one of the 4 options"
    assert "names no option" in read_choice("To", options)[1]
    # "1" is index 1 (option "2") and the text of option 0: two readings, no answer
    assert read_choice("1", options)[0] is None
    assert "ambiguous" in read_choice("1", options)[1]
    assert read_choice("0", ["0", "1", "2"]) == (0, "")  # both readings agree


def test_rows_and_questions_that_do_not_join_are_one_line_each(tmp_path: Path) -> None:
    quiz = load_quiz(write_quiz(tmp_path))
    rows = [
        ["What is the capital of France?", repr(["Paris", "Rome", "Berlin", "Madrid"]), "A"],
        ["Which is a mammal?", repr(["Shark", "Trout", "Whale", "Eel"]), "To"],
        ["Which is a mammal?", repr(["Shark", "Trout", "Whale", "Eel"]), "C"],  # a repeat
        ["Not in the quiz at all?", repr(["a", "b"]), "A"],
        ["2 + 2 =", repr(["3", "4", "5", "6"]), "B"],  # another option set: not this question
        ["", "", ""],  # blank: skipped
    ]
    path = write_answers(tmp_path / "a.csv", ["question", "choices", "gpt-x"], rows)
    read = load_answers([path], quiz)
    judge = read.judge(None)
    assert set(judge.answers) == {"q1", "q3"}
    assert judge.answers["q3"].option is None  # "To": kept, first row wins
    assert "names no option" in judge.answers["q3"].reason
    assert judge.answers["q3"].where == f"{path}:3"
    unjoined, missing, repeated = read.notes
    assert unjoined.startswith("2 of 5 answer rows join no quiz question: a.csv:5 'Not in")
    assert missing.startswith("2 of 4 quiz questions have no recorded answer (unjudged): q2")
    assert repeated == "gpt-x: 1 rows answer a question already answered (first kept)"


def test_a_column_of_notes_is_not_a_model_and_a_missing_model_is_an_error(
    tmp_path: Path,
) -> None:
    quiz = load_quiz(write_quiz(tmp_path))
    rows = [[t, repr(o), "ABCD"[k], f"note {k}", str(k)] for t, o, k in QUESTIONS]
    path = write_answers(tmp_path / "a.csv", ["question", "choices", "m1", "comment", "id"], rows)
    read = load_answers([path], quiz)
    assert [j.model for j in read.judges] == ["m1"]
    assert read.notes == ("column 'comment' left out: 0 of 4 cells name an option",)
    with pytest.raises(QuiztuiError, match="--answers-model m9: not in"):
        load_answers([path], quiz, models=["m9"])


def harness_line(doc_id: int, doc: dict[str, object], lls: list[float], target: int) -> str:
    """One line of samples_<task>_<date>.jsonl as lm-evaluation-harness writes it
    (lm_eval/evaluator.py builds the sample; loggers/evaluation_tracker.py's
    save_results_samples turns arguments into gen_args_i/arg_j and every response into strings
    through utils.sanitize_list)."""
    choices = doc["choices"]
    assert isinstance(choices, list)
    best = max(range(len(lls)), key=lambda i: lls[i])
    resps = [[[str(ll), str(i == best)]] for i, ll in enumerate(lls)]
    sample = {
        "doc_id": doc_id,
        "doc": doc,
        "target": str(target),
        "arguments": {
            f"gen_args_{i}": {"arg_0": f"{doc['question']}\nAnswer:", "arg_1": f" {c}"}
            for i, c in enumerate(choices)
        },
        "resps": resps,
        "filtered_resps": [r[0] for r in resps],
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "doc_hash": "0" * 64,
        "prompt_hash": "1" * 64,
        "target_hash": "2" * 64,
        "acc": float(best == target),
        "acc_norm": float(best == target),
    }
    return json.dumps(sample, ensure_ascii=False)


def write_harness(folder: Path, lls_per_question: list[list[float]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "samples_mmlu_quiz_2026-11-28T02-00-00.jsonl"
    lines = []
    for i, ((text, options, key), lls) in enumerate(zip(QUESTIONS, lls_per_question, strict=True)):
        doc = {"question": text, "subject": "misc", "choices": options, "answer": key}
        lines.append(harness_line(i, doc, lls, key))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_lm_eval_samples_choose_the_argmax_log_likelihood(tmp_path: Path) -> None:
    quiz = load_quiz(write_quiz(tmp_path))
    path = write_harness(
        tmp_path / "out" / "meta-llama__Llama-3-8B",
        [
            [-0.5, -2.0, -3.0, -4.0],  # A
            [-9.0, -8.0, -0.1, -7.0],  # C: the model is wrong
            [-3.0, -2.0, -1.0, -0.9],  # D
            # acc_mutual_info: 4 conditional then 4 unconditional log-likelihoods
            [-4.0, -3.0, -2.0, -1.0, -0.1, -0.1, -0.1, -9.0],  # D
        ],
    )
    assert harness_model(path) == "meta-llama__Llama-3-8B"
    read = load_answers([path], quiz)
    judge = read.judge("meta-llama__Llama-3-8B")
    assert [judge.answers[q.id].option for q in quiz.questions] == [0, 2, 3, 3]
    assert judge.answers["q1"].given.startswith("log-likelihoods -0.5, -2")


def test_lm_eval_samples_that_are_not_samples_are_one_line_errors(tmp_path: Path) -> None:
    quiz = load_quiz(write_quiz(tmp_path))
    bad = tmp_path / "samples_x.jsonl"
    bad.write_text('{"doc": {"question": "q"}}\n', encoding="utf-8")
    with pytest.raises(QuiztuiError, match=r"samples_x.jsonl:1: no field 'filtered_resps'"):
        load_answers([bad], quiz)
    bad.write_text("\nnot json\n", encoding="utf-8")
    with pytest.raises(QuiztuiError, match=r"samples_x.jsonl: line 2: not JSON"):
        load_answers([bad], quiz)
    bad.write_text('{"doc_id": 0}\n', encoding="utf-8")
    with pytest.raises(QuiztuiError, match=r"samples_x.jsonl:1: field 'doc': not an object"):
        load_answers([bad], quiz)


def panel_answers(tmp_path: Path) -> Path:
    """Three models: two right on every key, one that picks D always; one junk cell."""
    answers = {"good-1": ["D", "C", "B", "A"], "good-2": ["D", "C", "B", "A"]}
    answers["always-d"] = ["A", "A", "To", "A"]  # reversed options: the file's A is the quiz's D
    return write_answers(
        tmp_path / "answers.csv", ["question", "choices", *answers], reversed_rows(answers)
    )


def test_a_panel_from_answers_is_stored_reported_and_costs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = write_quiz(tmp_path)
    answers = panel_answers(tmp_path)
    db = tmp_path / "runs.db"
    assert main(["panel", str(quiz), "--answers", str(answers), "--db", str(db), "--format",
                 "json"]) == 0  # fmt: skip
    out = capsys.readouterr()
    data = json.loads(out.out)
    labels = [j["label"] for j in data["judges"]]
    assert labels == [f"recorded answers of {m} from {answers}" for m in
                      ("good-1", "good-2", "always-d")]  # fmt: skip
    assert data["expected_wrong_keys"]["text"].startswith("expect ")
    assert "0 requests" in out.err
    q3 = data["questions"][2]
    assert q3["verdicts"][2] == [None, None, None, None]  # "To": unjudged
    with Store(db) as store:
        runs = store.list_runs()
        assert len(runs) == 3
        for run in runs:
            assert store.run_kind(run.id) == "panel"
            summary = run_summary(store, run.id)
            assert summary.requests == 0 and summary.tokens_in == 0 and summary.cost == 0.0
            assert summary.mode == "question"
        d_run = next(r for r in runs if "always-d" in r.judge_label)
        summary = run_summary(store, d_run.id)
        reasons = {q.question_id: q.reasons for q in summary.questions}
        assert reasons["q3"][0].startswith("recorded answer unusable: answer 'To' names no option")
        assert reasons["q1"][3].startswith("chose D: recorded answer 'A' (answers.csv:2)")
        d_id = d_run.id
    # Every report format from the stored run: Markdown in a real process, the others through
    # the same main() in this process.
    for fmt, needle in (
        ("md", "Wrong keys: expect"),
        ("json", '"expected_wrong_keys"'),
        ("html", "Wrong keys"),
        ("junit", 'name="expected_wrong_keys"'),
        ("csv", "question_id"),
    ):
        args = ("report", str(d_id), "--db", str(db), "--format", fmt)
        if fmt == "md":
            done = subprocess.run(
                [sys.executable, "-m", "quiztui", *args],
                capture_output=True,
                text=True,
                timeout=120,
            )
        else:
            done = quiztui_main(*args)
        assert done.returncode == 0, done.stderr
        assert needle in done.stdout, fmt
        assert "recorded answers of always-d" in done.stdout or fmt == "csv"
    assert main(["runs", "--db", str(db)]) == 0
    listing = capsys.readouterr().out
    assert listing.count("recorded answers of") == 3


def run_summary(store: Store, run_id: int):  # type: ignore[no-untyped-def]
    from quiztui.pipeline.summary import summary_from_dict

    return summary_from_dict(store.get_run(run_id).summary)


def test_vet_from_one_models_answers_headless(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = write_quiz(tmp_path)
    answers = panel_answers(tmp_path)
    out = tmp_path / "report.json"
    code = main(["vet", str(quiz), "--no-tui", "--answers", str(answers), "--answers-model",
                 "always-d", "-o", str(out), "--fail-on", "never"])  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert "judging with the recorded answers of always-d" in err
    assert "expect " in err and "wrong keys" in err
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["requests"] == 0 and report["cost"] == 0.0
    assert report["judge_label"].startswith("recorded answers of always-d")
    assert [q["verdicts"] for q in report["questions"]][:2] == [
        [False, False, False, True],
        [False, False, False, True],
    ]
    assert report["questions"][2]["verdicts"] == [None, None, None, None]
    # several models and none named: one line naming them, exit 2
    assert main(["vet", str(quiz), "--no-tui", "--answers", str(answers)]) == 2
    assert "--answers holds 3 models: name one with --answers-model" in capsys.readouterr().err
    assert main(["vet", str(quiz), "--no-tui", "--answers", str(answers), "--answers-model",
                 "nope"]) == 2  # fmt: skip
    assert "--answers-model nope: not in" in capsys.readouterr().err


def test_the_dev_data_joins_and_every_model_judges(tmp_path: Path) -> None:
    folder = dev_data_dir()
    if folder is None:
        pytest.skip("the dev data (mmlu_redux_helm_dev) is not on this machine")
    quiz_path = write_dev_quiz(folder, tmp_path / "dev.csv")
    quiz = load_quiz(quiz_path)
    assert len(quiz.questions) == len(label_rows(folder)) == 2800
    read = load_answers([folder / "answers"], quiz)
    assert len(read.judges) == 10
    answered = set().union(*(set(j.answers) for j in read.judges))
    assert len(answered) >= 0.99 * 2800  # SOURCE.txt: about 99.6 % join
    gpt4 = read.judge("openai_gpt-4-1106-preview")
    unusable = [a for a in gpt4.answers.values() if a.option is None]
    assert unusable and all(a.reason for a in unusable)
    assert any(n.endswith("quiz questions have no recorded answer (unjudged): " + n.split(": ", 1)[1])
               for n in read.notes)  # fmt: skip


def test_vet_from_answers_in_the_tui_starts_at_once_and_shows_the_recorded_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``quiztui vet QUIZ --answers FILE --answers-model NAME`` opens the vet screen and judges
    at once (nothing to pay): the header names the recorded judge, not SIMULATED, the run makes
    no request, and the keys the model contradicts end poor with its pick suggested."""
    import asyncio

    from tui_helpers import settled, wait_until

    from quiztui.tui.app import QuiztuiApp
    from quiztui.tui.widgets.header import RunHeader

    quiz = write_quiz(tmp_path)
    answers = panel_answers(tmp_path)
    seen: dict[str, object] = {}

    async def drive(app: QuiztuiApp) -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.vet_screen
            await wait_until(pilot, lambda: screen.state.summary is not None, what="the run")
            await settled(pilot)
            summary = screen.state.summary
            assert summary is not None
            seen["header"] = screen.query_one(RunHeader).render_line(0).text
            seen["requests"] = summary.requests
            seen["badges"] = {q.question_id: q.badge.value for q in summary.questions}
            seen["verdicts"] = {q.question_id: q.verdicts for q in summary.questions}
            seen["label"] = summary.judge_label

    monkeypatch.setattr(QuiztuiApp, "run", lambda self, **_: asyncio.run(drive(self)))
    argv = ["vet", str(quiz), "--answers", str(answers), "--answers-model", "always-d"]
    assert main(argv) == 0
    assert str(seen["label"]).startswith("recorded answers of always-d")
    assert "recorded answers of always-d" in str(seen["header"])
    assert "SIMULATED" not in str(seen["header"])
    assert seen["requests"] == 0
    # always-d picked D everywhere ("To" for q3 names no option): the same verdicts as headless
    assert seen["verdicts"] == {
        "q1": (False, False, False, True),
        "q2": (False, False, False, True),
        "q3": (None, None, None, None),
        "q4": (False, False, False, True),
    }
    badges = seen["badges"]
    assert isinstance(badges, dict) and badges["q4"] == "good"  # its pick is the key: D
    assert badges["q1"] != "good" and badges["q2"] != "good"  # it picked D against the key
