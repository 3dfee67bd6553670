"""Issue 18, item 6 (LO2): clear failures against a local server, through the real command line.

A dead port, a base URL without /v1 and an unknown model are each one line and exit 2 before any
chat request; a run whose every request failed ends "failed"; --base-url without --model is an
error; grade exits non-zero when nothing was scored."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from pipeline_helpers import make_quiz
from test_estimate import fake_config, quiz_file

from quiztui.cli import main
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_config(tmp_path: Path, base_url: str, model: str = "fake-judge", extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[judge]\nprovider = "openai-compat"\nbase_url = "{base_url}"\nmodel = "{model}"\n'
        f'[store]\npath = "{tmp_path / "runs.db"}"\n{extra}',
        encoding="utf-8",
    )
    return path


def vet_args(tmp_path: Path, config: Path) -> list[str]:
    quiz = quiz_file(tmp_path, make_quiz(3))
    args = ["vet", str(quiz), "--config", str(config), "--no-tui", "--format", "json"]
    return [*args, "--judge", "openai-compat"]  # the tests' environment says "simulated"


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("quiztui: error:")]


def runs_in(tmp_path: Path) -> int:
    db = tmp_path / "runs.db"
    if not db.exists():
        return 0
    with Store(db) as store:
        return len(store.run_listings())


def test_a_dead_port_is_one_line_and_exit_2_before_any_run(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    url = f"http://127.0.0.1:{dead_port()}/v1"
    code = main(vet_args(tmp_path, write_config(tmp_path, url)))
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [f"quiztui: error: cannot reach {url}: connection refused"]
    assert runs_in(tmp_path) == 0  # no run was started, so no request was spent


def test_a_base_url_without_v1_names_the_url_and_the_hint(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAI({}) as server:
        bare = server.base_url.removesuffix("/v1")
        code = main(vet_args(tmp_path, write_config(tmp_path, bare)))
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    err = capsys.readouterr().err
    assert code == 2 and chats == []
    assert error_lines(err) == [
        f"quiztui: error: GET {bare}/models: HTTP 404; OpenAI-compatible servers serve their API"
        f" under /v1: try --base-url {bare}/v1"
    ]


def test_an_unknown_model_lists_the_models_the_server_has(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAI({}, models=["gemma-3-270m-it", "qwen2.5:0.5b"]) as server:
        config = write_config(tmp_path, server.base_url, model="gemma3")
        code = main(vet_args(tmp_path, config))
        paths = [r.path for r in server.requests]
    err = capsys.readouterr().err
    assert code == 2 and paths == ["/v1/models"]  # one probe, no chat request
    assert error_lines(err) == [
        f"quiztui: error: model 'gemma3' is not served at {server.base_url}; the server has:"
        " gemma-3-270m-it, qwen2.5:0.5b"
    ]


def test_an_ollama_model_without_a_tag_is_its_latest(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    quiz = make_quiz(3)
    with FakeOpenAI(truth_from_quiz(quiz), models=["qwen2.5:latest"]) as server:
        config = write_config(tmp_path, server.base_url, model="qwen2.5")
        code = main(vet_args(tmp_path, config))
    assert code == 0, capsys.readouterr().err


def test_a_run_whose_every_request_failed_ends_failed_with_exit_2(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAI({}, fault_rate=1.0, fault_kinds=["drop"]) as server:
        config = write_config(tmp_path, server.base_url, extra="")
        config.write_text(
            config.read_text(encoding="utf-8").replace(
                'model = "fake-judge"\n', 'model = "fake-judge"\nmax_retries = 0\n'
            ),
            encoding="utf-8",
        )
        code = main(vet_args(tmp_path, config))
        dropped = [r for r in server.requests if r.path.endswith("/chat/completions")]
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert code == 2 and report["status"] == "failed"
    assert report["judged"] == 0 and report["unjudged"] == 12
    assert len(dropped) == 3  # one batch, asked three times (max_reasks 2), every time dropped
    (line,) = error_lines(captured.err)
    assert line.startswith("quiztui: error: every request failed (3 of 3 batches): ")
    with Store(tmp_path / "runs.db") as store:
        assert store.get_run(report["run_id"]).status == "failed"


@pytest.mark.parametrize("command", ["vet", "grade"])
def test_base_url_without_a_model_is_an_error_naming_both_flags(
    tmp_path: Path, capsys, monkeypatch, command: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("QUIZTUI_JUDGE_PROVIDER")  # the default, "auto"
    empty = tmp_path / "empty.toml"
    empty.write_text(f'[store]\npath = "{tmp_path / "runs.db"}"\n', encoding="utf-8")
    target = str(quiz_file(tmp_path, make_quiz(2)))
    code = main([command, target, "--config", str(empty), "--base-url", "http://127.0.0.1:9/v1"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        "quiztui: error: --base-url http://127.0.0.1:9/v1 needs --model: name the model the"
        " server runs (or set judge.model in the config)"
    ]


def test_grade_exits_non_zero_when_nothing_was_scored(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    answers = tmp_path / "answers.csv"
    answers.write_text(
        "question,reference,candidate\n"
        "What is the boiling point of water at sea level?,100 °C,about 100 degrees\n"
        "Who wrote Hamlet?,Shakespeare,William Shakespeare\n",
        encoding="utf-8",
    )
    with FakeOpenAI({}, fault_rate=1.0, fault_kinds=["refusal"]) as server:
        config = fake_config(tmp_path, server)
        args = ["grade", str(answers), "--config", str(config), "--grader", "rubric10"]
        code = main([*args, "--judge", "openai-compat"])
        asked = [r for r in server.requests if r.path.endswith("/chat/completions")]
    err = capsys.readouterr().err
    assert asked  # the judge was asked, and refused every time
    assert code == 1
    assert "quiztui: error: no answer was scored (2 of 2 unscored" in err
