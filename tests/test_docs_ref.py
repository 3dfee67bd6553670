"""The manual's generated references (``make docs-ref``) and the grouped ``quiztui --help``.

docs/cli.md and docs/configuration.md are made from the argparse parser and the pydantic config
model by ``quiztui.cli.docs_ref``; these tests fail when a flag, subcommand or config key has no
help text, when a page misses one, or when the committed pages are stale.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quiztui.cli import build_parser, main
from quiztui.cli._args import COMMANDS, GROUPS
from quiztui.cli.docs_ref import (
    CLI_PAGE,
    CONFIG_PAGE,
    MissingHelp,
    cli_page,
    commands,
    config_keys,
    config_page,
    stale,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_the_committed_references_are_current() -> None:
    assert stale(DOCS) == [], "run `make docs-ref` and commit docs/cli.md, docs/configuration.md"


def test_a_changed_reference_is_reported_stale(tmp_path: Path) -> None:
    for name in (CLI_PAGE, CONFIG_PAGE):
        (tmp_path / name).write_text((DOCS / name).read_text(encoding="utf-8"), encoding="utf-8")
    assert stale(tmp_path) == []
    (tmp_path / CONFIG_PAGE).write_text("# Configuration reference\n", encoding="utf-8")
    assert stale(tmp_path) == [CONFIG_PAGE]


def test_every_flag_and_subcommand_has_help_and_is_in_the_cli_page() -> None:
    page = cli_page()
    found = 0
    for cmd in commands():
        assert f"quiztui {cmd.name} {{#" in page, cmd.name
        for action in cmd.parser._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            assert action.help and action.help is not argparse.SUPPRESS, (cmd.name, action.dest)
            for option in action.option_strings or [action.metavar or action.dest]:
                assert option in page, (cmd.name, option)
            found += 1
    assert {c.path[0] for c in commands()} == set(COMMANDS)
    assert found > 150  # every flag of every subcommand, not a sample


def test_a_flag_without_help_fails_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    from quiztui.cli import _args

    real = _args.parents

    def parents_with_a_silent_flag() -> _args.Parents:
        made = real()
        made.common.add_argument("--undocumented")
        return made

    monkeypatch.setattr("quiztui.cli.parents", parents_with_a_silent_flag)
    with pytest.raises(MissingHelp, match="--undocumented"):
        cli_page()


def test_every_config_key_has_a_description_and_is_in_the_config_page() -> None:
    page = config_page()
    keys = list(config_keys())
    assert len(keys) > 80
    for section, key, info in keys:
        assert info.description, f"{section}.{key}"
        assert f"## [{section}]" in page and f"| `{key}` |" in page, f"{section}.{key}"
        if not key == "models":
            assert f"QUIZTUI_{section.upper()}_{key.upper()}" in page
    assert "| `batch_size` | int | 20 | 1 ≤ x ≤ 500 | QUIZTUI_VET_BATCH_SIZE |" in page
    assert '| `prior` | float or one of "auto", "auto+rates" | "auto" | 0 &#60; x &#60; 1 |' in page


def test_a_config_key_without_description_fails_the_generator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from quiztui.config import VetConfig

    info = VetConfig.model_fields["batch_size"]
    monkeypatch.setattr(info, "description", None)
    with pytest.raises(MissingHelp, match="vet.batch_size"):
        config_page()


def test_docs_ref_check_exits_1_on_a_stale_page(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    command = [sys.executable, "-m", "quiztui.cli.docs_ref", "--docs", str(tmp_path)]
    done = subprocess.run([*command, "--check"], capture_output=True, text=True, env=env)
    assert done.returncode == 1 and "is stale: run `make docs-ref`" in done.stderr
    assert subprocess.run(command, capture_output=True, env=env).returncode == 0
    assert (tmp_path / CLI_PAGE).read_text(encoding="utf-8") == cli_page()
    done = subprocess.run([*command, "--check"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


def test_help_groups_every_command_under_a_heading_at_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    listed = [n for _, names in GROUPS for n in names]
    assert sorted(listed) == sorted(COMMANDS)  # every command exactly once
    for heading, names in GROUPS:
        assert f"\n{heading}:\n" in out
        section = out.split(f"\n{heading}:\n", 1)[1].split("\n\n", 1)[0]
        for name in names:
            assert f"\n  {name} " in f"\n{section}", (heading, name)
    assert "  quiztui QUIZ " in out.split("Start here:", 1)[1]
    assert "New here?" in out and "\n  review " not in out  # the old name is hidden


def test_review_is_a_deprecated_alias_of_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiz = ROOT / "sample_quizzes" / "planted_errors.json"
    config = tmp_path / "config.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "runs.db"}"\n', encoding="utf-8")
    args = [str(quiz), "--config", str(config), "--judge", "simulated", "--sim-latency", "0"]
    args += ["--mode", "direct", "--limit", "2", "--format", "json"]
    assert main(["rate", *args]) == 0
    rated = capsys.readouterr()
    assert main(["review", *args]) == 0
    aliased = capsys.readouterr()
    assert "`review` is now `quiztui rate`" in aliased.err
    assert "is now" not in rated.err
    assert '"questions"' in rated.out and aliased.out.count("\n") == rated.out.count("\n")
    assert "review" not in build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]


PAGES = (
    "index getting-started tui your-quiz judges numbers grading robustness review-desk history"
    " ci lint configuration cli troubleshooting speed"
).split()


def test_the_readme_is_short_and_the_manual_has_every_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert "make run" in readme and "make test" in readme
    assert "](docs/img/vet-finished.svg)" in readme and (DOCS / "img" / "vet-finished.svg").exists()
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in PAGES:
        assert (DOCS / f"{page}.md").exists(), page
        assert f" {page}.md" in nav, page
    for target in re_links(readme):
        assert (ROOT / target).exists(), target


def re_links(text: str) -> list[str]:
    import re

    return [m for m in re.findall(r"\]\(([^)#\s]+)", text) if not m.startswith("http")]
