"""Calibration end to end: gold sets, profiles in SQLite, the CLI, per-question mode (B1, B4, B6)."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from pathlib import Path

import pytest
from conftest import REPO, shared_data
from pipeline_helpers import make_quiz

from quiztui.cli import main
from quiztui.core.assertions import decompose
from quiztui.core.question_mode import (
    QuestionVerdictParser,
    parse_choice_line,
    parse_rendered_question,
    render_question,
)
from quiztui.core.quiz import Question, Quiz
from quiztui.errors import QuizFormatError
from quiztui.formats.statements import load_statements
from quiztui.pipeline.calibrate import (
    CalibrationRun,
    GoldSet,
    ProfileMeasured,
    load_gold,
    sample_quiz,
)
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.simulated import SimulatedProvider
from quiztui.simulate.vet import oracle_choice, oracle_reply, truth_table
from quiztui.store import Store
from quiztui.store.db import MIGRATIONS, SCHEMA_V1
from quiztui.testing.fake_openai import FakeOpenAI

SAMPLE = REPO / "sample_quizzes" / "opentdb_sample.json"


def gold_quiz(questions: int = 1000, seed: int = 5) -> GoldSet:
    """``questions`` four-option questions with trusted keys: 1 true and 3 false assertions each."""
    rng = random.Random(seed)
    qs = []
    for i in range(questions):
        qs.append(
            Question(
                id=f"g{i}",
                text=f"Gold question {i}?",
                options=tuple(f"answer {i}.{j}" for j in range(4)),
                key=rng.randrange(4),
            )
        )
    quiz = Quiz(title="gold", questions=tuple(qs))
    labels = {a.uid: a.keyed for a in decompose(quiz)}
    return GoldSet(quiz, labels, f"synthetic: {questions} questions")


async def calibrate(gold: GoldSet, provider, db: Path, **settings) -> ProfileMeasured:  # type: ignore[no-untyped-def]
    with Store(db) as store:
        run = CalibrationRun(
            gold, provider, store, load_prompt("judge_assertions"), VetSettings(**settings)
        )
        events = [e async for e in run.events()]
    measured = [e for e in events if isinstance(e, ProfileMeasured)]
    assert len(measured) == 1
    return measured[0]


# --- B1 through the pipeline ---------------------------------------------------------------------


def test_simulated_gold_run_recovers_tpr_and_tnr(tmp_path: Path) -> None:
    gold = gold_quiz(1000)
    provider = SimulatedProvider(gold.truth_by_text(), tpr=0.85, tnr=0.92, seed=3)
    profile = asyncio.run(calibrate(gold, provider, tmp_path / "q.db")).profile
    c = profile.confusion
    assert c.total == 4000 and c.positives == 1000 and c.negatives == 3000 and c.unjudged == 0
    assert abs(profile.tpr - 0.85) <= 0.02 and abs(profile.tnr - 0.92) <= 0.02
    for method in ("wilson", "beta"):
        lo, hi = c.tpr_interval(method)
        assert lo <= 0.85 <= hi
        lo, hi = c.tnr_interval(method)
        assert lo <= 0.92 <= hi
    # The profile is in the store, keyed by the judge set-up, with its run tagged "calibrate".
    with Store(tmp_path / "q.db") as store:
        again = store.profiles.match(
            provider="simulated",
            model=provider.model,
            prompt_hash=load_prompt("judge_assertions").hash,
            batch_size=20,
            mode="assertion",
        )
        assert again is not None and again.confusion == c and again.id == profile.id
        assert store.run_kind(profile.run_id or 0) == "calibrate"
        assert (
            store.profiles.match(
                provider="simulated",
                model=provider.model,
                prompt_hash="x",
                batch_size=20,
                mode="assertion",
            )
            is None
        )


def test_unjudged_gold_assertions_are_counted_apart(tmp_path: Path) -> None:
    gold = gold_quiz(50)
    with FakeOpenAI(gold.truth_by_text(), fault_rate=1.0, fault_kinds=("refusal",)) as server:
        from quiztui.providers.openai_compat import OpenAICompatProvider
        from quiztui.providers.retry import RetryPolicy

        provider = OpenAICompatProvider(
            base_url=server.base_url, model="fake-judge", retry=RetryPolicy(max_retries=0)
        )
        profile = asyncio.run(calibrate(gold, provider, tmp_path / "q.db", max_reasks=0)).profile
    c = profile.confusion
    assert c.unjudged == 200 and c.judged == 0 and c.unjudged_rate == 1.0
    assert profile.tpr != profile.tpr  # NaN: nothing measured, not 0


# --- gold sets ---------------------------------------------------------------------------------


def test_sampling_is_seeded_and_keeps_the_truth() -> None:
    quiz = make_quiz(40)
    a, b, c = sample_quiz(quiz, 10, 1), sample_quiz(quiz, 10, 1), sample_quiz(quiz, 10, 2)
    assert [q.id for q in a.questions] == [q.id for q in b.questions] != [q.id for q in c.questions]
    assert set(a.truth) == {q.id for q in a.questions}
    assert sample_quiz(quiz, None, 0) is quiz


def test_quiz_gold_set_labels_follow_the_truth_file(tmp_path: Path) -> None:
    gold = load_gold(REPO / "sample_quizzes" / "planted_errors.json")
    quiz = gold.quiz
    # q1's key is wrong (the truth file says B): its key assertion is labelled false.
    q1 = quiz.question("q1")
    assert gold.labels[f"q1#{q1.key}"] is False
    assert gold.labels[f"q1#{quiz.truth['q1']}"] is True
    assert sum(gold.labels.values()) == len(quiz.questions)


def test_statement_set_groups_answers_by_question(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    rows = [
        {"prompt": "Q: Capital of France?\nA: Paris\nTrue:", "completion": " yes"},
        {"prompt": "Q: Capital of France?\nA: Lyon\nTrue:", "completion": " no"},
        {"prompt": "Q: Capital of France?\nA: It is Paris.\nTrue:", "completion": " yes"},
        {"prompt": "Q: Capital of France?\nA: Lyon\nTrue:", "completion": " yes"},  # conflict
        {"prompt": "Q: Lonely?\nA: yes\nTrue:", "completion": " no"},  # one answer: left out
        {"prompt": "Q: Empty?\nA: \nTrue:", "completion": " yes"},
        {"question": "2 + 2?", "answer": "4", "label": True},
        {"question": "2 + 2?", "answer": "5", "label": "no"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    s = load_statements(path)
    assert [q.text for q in s.quiz.questions] == ["Capital of France?", "2 + 2?"]
    assert s.quiz.questions[0].options == ("Paris", "It is Paris.")  # Lyon conflicted
    assert s.conflicts == 1 and s.empty == 1
    assert s.labels == {"s1#0": True, "s1#1": True, "s2#0": True, "s2#1": False}
    gold = load_gold(path)
    assert gold.truth_by_text()["Q: 2 + 2? A: 5"] is False


def test_statement_set_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"prompt": "Q: a\\nA: b\\nTrue:", "completion": " yes"}\n'
        '{"prompt": "Q: a\\nA: c\\nTrue:", "completion": " maybe"}\n'
        "not json\n"
    )
    with pytest.raises(QuizFormatError) as info:
        load_statements(path)
    lines = info.value.all_lines()
    assert any("line 2" in x and "completion" in x for x in lines)
    assert any("line 3" in x and "not JSON" in x for x in lines)


def test_truthfulqa_statement_set_loads() -> None:
    s = load_statements(shared_data("truthfulqa", "finetune_truth.jsonl"))
    assert len(s.quiz.questions) > 800
    assert 15000 < len(s.labels) < s.statements
    assert 0.3 < sum(s.labels.values()) / len(s.labels) < 0.5


# --- per-question mode ------------------------------------------------------------------------


def test_question_prompt_round_trips_for_the_oracle() -> None:
    prompt = render_question(
        "Q {question}\n{options}\n({letters})", "What {x}?\nreally", ["a\nb", "c"]
    )
    assert "A) a b" in prompt and "(A, B)" in prompt and "{x}" in prompt
    rendered = render_question(load_prompt("judge_question").user, "Capital?", ["Rome", "Paris"])
    assert parse_rendered_question(rendered) == ["Q: Capital? A: Rome", "Q: Capital? A: Paris"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("ANSWER: C - Paris is the capital", 2),
        ("Answer: (b)", 1),
        ("**C**", 2),
        ("C) Paris", 2),
        ('{"answer": "D", "reason": "x"}', 3),
        ("The correct option is B.", 1),
        ("Final answer: A", 0),
        ("I think so", None),
        ("A good question", None),
        ("Answer: E", None),  # not an option of a four-option question
    ],
)
def test_choice_lines(line: str, expected: int | None) -> None:
    found = parse_choice_line(line, 4)
    assert (found[0] if found else None) == expected


def test_question_parser_turns_a_choice_into_one_verdict_per_option() -> None:
    parser = QuestionVerdictParser(["A1", "A2", "A3"])
    assert parser.feed("Thinking...\nANSWER: ") == []
    got = parser.feed("B - because\n") + parser.close()
    assert [(v.id, v.verdict) for v in got] == [("A1", False), ("A2", True), ("A3", False)]
    assert got[1].reason == "chose B: because"


def test_oracle_choice_is_right_with_probability_tpr() -> None:
    hits = 0
    for i in range(4000):
        options = [f"Q: q{i} A: {j}" for j in range(4)]
        truth = {o: j == i % 4 for j, o in enumerate(options)}
        hits += oracle_choice(options, truth, tpr=0.8, seed=1) == i % 4
    assert abs(hits / 4000 - 0.8) < 0.02


def test_vet_in_question_mode_sends_one_request_per_question(tmp_path: Path) -> None:
    quiz = make_quiz(12, wrong_every=4)
    with FakeOpenAI(truth_table(quiz), tpr=1.0, tnr=1.0) as server:
        from quiztui.providers.openai_compat import OpenAICompatProvider

        provider = OpenAICompatProvider(base_url=server.base_url, model="fake-judge")
        settings = VetSettings(mode="question", batch_size=20)
        store = Store(tmp_path / "q.db")
        try:
            from quiztui.pipeline.vet import VetRun

            run = VetRun(quiz, provider, store, load_prompt("judge_question"), settings)
            events = asyncio.run(_drain(run))
        finally:
            store.close()
        assert len(server.requests) == 12
        assert all(r.ids == () and r.status == 200 for r in server.requests)
    summary = events[-1].summary
    assert summary.mode == "question" and summary.batch_size == 1
    assert summary.judged == 48 and summary.unjudged == 0
    flagged = {q.question_id for q in summary.questions if q.badge.value == "poor"}
    assert flagged == {"q4", "q8", "q12"}  # a perfect judge picks the true option: key false
    for q in summary.questions:
        if q.question_id in flagged:
            assert q.suggested_option == 0


async def _drain(run):  # type: ignore[no-untyped-def]
    return [e async for e in run.events()]


def test_oracle_answers_question_prompts_and_batches_alike() -> None:
    quiz = make_quiz(3)
    truth = truth_table(quiz)
    q = quiz.questions[0]
    prompt = render_question(load_prompt("judge_question").user, q.text, q.options)
    assert oracle_reply(prompt, truth).startswith("ANSWER: A - ")


# --- the CLI against the fake server (B4, B6) -------------------------------------------------


def _judge_flags(server: FakeOpenAI, db: Path) -> list[str]:
    return [
        "--judge",
        "openai-compat",
        "--base-url",
        server.base_url,
        "--model",
        "fake-judge",
        "--db",
        str(db),
    ]


def test_calibrate_then_vet_carries_the_profile_into_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = load_gold(SAMPLE)
    quiz_path = REPO / "sample_quizzes" / "planted_errors.json"
    from quiztui.formats import load_quiz

    truth = gold.truth_by_text() | truth_table(load_quiz(quiz_path))
    db = tmp_path / "q.db"
    with FakeOpenAI(truth, tpr=0.9, tnr=0.8, seed=2) as server:
        assert main(["calibrate", str(SAMPLE), *_judge_flags(server, db)]) == 0
        out = capsys.readouterr().out
        assert "opentdb_sample.json: 50 of 50 questions" in out
        assert "TPR [95% CI]" in out and "batch 20" in out
        assert main(["profiles", "--db", str(db), "--format", "json"]) == 0
        (profile,) = json.loads(capsys.readouterr().out)
        lo, hi = profile["tpr_ci"]
        assert lo < profile["tpr"] < hi and profile["tp"] + profile["fn"] == 50
        assert profile["mode"] == "assertion" and profile["batch_size"] == 20
        calibration_requests = len(server.requests)

        code = main(
            ["vet", str(quiz_path), "--no-tui", "--format", "json", *_judge_flags(server, db)]
        )
        assert code in (0, 1)
        report = json.loads(capsys.readouterr().out)
        assert len(server.requests) > calibration_requests
        assert report["calibration"].startswith(f"profile #{profile['id']} measured 20")
        assert report["judge_rates"].startswith("TPR ")
        assert report["judge_rates"].endswith(" · " + report["calibration"])
        assert report["tpr_ci"] == pytest.approx(profile["tpr_ci"])
        assert report["tnr_ci"] == pytest.approx(profile["tnr_ci"])
        for q in report["questions"]:
            lo, hi = q["interval"]
            assert lo <= q["confidence"] + 1e-9 and q["confidence"] - 1e-9 <= hi

        main(["vet", str(quiz_path), "--no-tui", "--format", "md", *_judge_flags(server, db)])
        md = capsys.readouterr().out
        tpr_lo, tpr_hi = (f"{x:.2f}" for x in profile["tpr_ci"])
        assert "Judge rates: TPR" in md and f"profile \\#{profile['id']} measured 20" in md
        assert f"\\[{tpr_lo}, {tpr_hi}\\]" in md  # Markdown-escaped brackets
        # Each question's confidence is shown with its interval.
        assert any(line.count("[") >= 1 and " \\| " not in line for line in md.splitlines())


def test_vet_without_a_matching_profile_says_uncalibrated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "q.db"
    quiz_path = REPO / "sample_quizzes" / "planted_errors.json"
    assert main(["calibrate", str(SAMPLE), "--db", str(db), "--batch-size", "10"]) == 0
    capsys.readouterr()
    main(["vet", str(quiz_path), "--no-tui", "--format", "json", "--db", str(db)])
    report = json.loads(capsys.readouterr().out)
    assert report["calibration"] == "uncalibrated"  # the profile is for batch size 10, not 20
    assert report["tpr_ci"] is None
    # issue 26: unmeasured rates widen the confidence interval instead of leaving none
    for q in report["questions"]:
        lo, hi = q["interval"]
        assert lo <= q["confidence"] <= hi
    assert max(hi - lo for lo, hi in (q["interval"] for q in report["questions"])) > 0.1


def test_modes_comparison_prints_five_setups_for_the_fake_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = load_gold(SAMPLE)
    with FakeOpenAI(gold.truth_by_text(), tpr=0.9, tnr=0.9, seed=1) as server:
        code = main(["calibrate", str(SAMPLE), "--modes", *_judge_flags(server, tmp_path / "q.db")])
        paths = [r.path for r in server.requests]
    requests = paths.count("/v1/chat/completions")
    assert paths.count("/v1/models") == 1  # the endpoint probed once, before the first setup
    assert code == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "fake-judge" in line]
    assert len(rows) == 5
    for label in ("batch 1 ", "batch 10 ", "batch 20 ", "batch 50 ", "question "):
        assert sum(label in r for r in rows) == 1, label
    assert "cheapest set-up within 1 point of the best accuracy" in out
    assertions = sum(q.n for q in gold.quiz.questions)
    # batch 1 + batch 10 + batch 20 + batch 50 + one per question
    expected = assertions + -(-assertions // 10) + -(-assertions // 20) + -(-assertions // 50)
    assert requests == expected + len(gold.quiz.questions)
    with Store(tmp_path / "q.db") as store:
        modes = sorted((p.mode, p.batch_size) for p in store.profiles.list())
    assert modes == [
        ("assertion", 1),
        ("assertion", 10),
        ("assertion", 20),
        ("assertion", 50),
        ("question", 1),
    ]


def test_profiles_lists_nothing_helpfully(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles"]) == 0
    assert "quiztui calibrate" in capsys.readouterr().out


def test_calibrate_bad_gold_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "gold.json"
    bad.write_text('{"results": [{"question": 1}]}')
    assert main(["calibrate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "Traceback" not in err


# --- the store ----------------------------------------------------------------------------------


def test_a_version_1_store_is_upgraded_in_place(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.executescript(SCHEMA_V1 + ";PRAGMA user_version = 1;")
    conn.execute("INSERT INTO cache(key, verdict, reason, created_at) VALUES ('k', 1, 'r', 0)")
    conn.commit()
    conn.close()
    with Store(db) as store:
        version = store.conn.execute("PRAGMA user_version").fetchone()[0]
        assert version == len(MIGRATIONS)
        assert store.profiles.list() == []
        row = store.conn.execute("SELECT verdict, reason, p_true FROM cache").fetchone()
        assert row == (1, "r", None)
