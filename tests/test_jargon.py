"""No project-internal words on screen: every help text of the command line, the commented
config `quiztui config init` writes, and the TUI's help screen and key descriptions.

"seed 001", "the Quizaic seed", "seed §5.1" or "issue 21" name this project's history, not
anything a quiz author can look up; the screen says what the thing is instead.
"""

from __future__ import annotations

import html
import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.binding import Binding

import quiztui.tui
from quiztui.cli import build_parser, main
from quiztui.cli._args import COMMANDS
from quiztui.cli.docs_ref import commands
from quiztui.config import default_config_text
from quiztui.tui.help import HelpScreen

ROOT = Path(__file__).resolve().parents[1]
PLANTED = ROOT / "sample_quizzes" / "planted_errors.json"

JARGON = re.compile(
    r"\bseed\s*0\d\d\b"  # seed 000 … seed 004: the papers this project started from
    r"|\bseeds?\s*§"  # seed §5.1
    r"|\bQuizaic seed\b"
    r"|\bthe seed(?:'s)?\b(?!\s+(?:of|for|used|the run|that|it))"  # "the seed's figures"
    r"|\bissue\s*#?\d+"  # issue 21
    r"|\bitem\s+\d+\s*\)",
    re.IGNORECASE,
)


def jargon(text: str) -> list[str]:
    return [m.group(0) for m in JARGON.finditer(text)]


def test_the_pattern_finds_what_it_is_for() -> None:
    found = jargon(
        "rubric10 (seed 001), the Quizaic seed's badge, seed §5.1, issue 21, the seed's figures"
    )
    assert found == ["seed 001", "Quizaic seed", "seed §", "issue 21", "the seed's"]
    assert jargon("--seed N: the seed of the shuffle; a sample seed; the seed used") == []


def _help_texts() -> Iterator[tuple[str, str]]:
    top = build_parser()
    yield "quiztui --help", top.format_help()
    for cmd in commands():
        parser = cmd.parser
        yield f"quiztui {cmd.name} --help", parser.format_help()
        for action in parser._actions:  # choices and help as written, before wrapping
            yield f"quiztui {cmd.name} {action.dest}", f"{action.help or ''} {action.choices or ''}"


def test_every_help_text_is_free_of_project_jargon() -> None:
    texts = list(_help_texts())
    assert {name for name in COMMANDS} <= {t.split()[1] for t, _ in texts if len(t.split()) > 2}
    bad = [f"{where}: {hit!r}" for where, text in texts for hit in jargon(text)]
    assert bad == []


def test_config_init_is_free_of_project_jargon(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.toml"
    assert main(["config", "init", "--config", str(path)]) == 0
    text = path.read_text(encoding="utf-8")
    assert text == default_config_text() and "[judge]" in text
    bad = [
        f"line {n}: {hit!r}" for n, line in enumerate(text.splitlines(), 1) for hit in jargon(line)
    ]
    assert bad == []


def _tui_modules() -> Iterator[object]:
    for info in pkgutil.walk_packages(quiztui.tui.__path__, "quiztui.tui."):
        yield importlib.import_module(info.name)


def test_every_tui_key_description_is_free_of_project_jargon() -> None:
    """The help screen (F1) lists these descriptions, on every screen."""
    found: list[str] = []
    for module in _tui_modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            for binding in getattr(cls, "BINDINGS", []) or []:
                if isinstance(binding, Binding):
                    text = f"{binding.description} {binding.tooltip or ''}"
                    found += [f"{cls.__name__} {binding.key}: {h!r}" for h in jargon(text)]
    assert found == []


async def test_the_tui_help_screen_is_free_of_project_jargon(tmp_path: Path) -> None:
    """F1 on the vet screen and on the metrics screen of the real app, as a user opens them."""
    from tui_helpers import settled

    from quiztui.assemble.vet import open_quiz, vet_runs
    from quiztui.cli.vet import build_vet_app
    from quiztui.config import load_config

    config_file = tmp_path / "config.toml"
    config_file.write_text("", encoding="utf-8")
    env = {
        "QUIZTUI_STORE_PATH": str(config_file.parent / "runs.db"),
        "QUIZTUI_JUDGE_PROVIDER": "simulated",
        "QUIZTUI_SIMULATED_LATENCY": "0",
        "QUIZTUI_SIMULATED_LINE_DELAY": "0",
    }
    config = load_config(config_file, environ=env)
    store, quiz = open_quiz(config, PLANTED, None)
    try:
        app = build_vet_app(
            config, store, quiz, vet_runs(config, quiz, store, None), autostart=True
        )
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            seen: list[str] = []
            for opener in ((), ("m",)):
                for key in opener:
                    await pilot.press(key)
                    await pilot.pause()
                await pilot.press("f1")
                await pilot.pause()
                assert isinstance(app.screen, HelpScreen)
                text = "\n".join(
                    str(w.render())
                    for w in app.screen.query("Static")  # what it shows
                )
                assert "Keys" in text
                seen.append(text)
                await pilot.press("escape")
                await pilot.pause()
                while app.screen is not app.vet_screen:
                    await pilot.press("escape")
                    await pilot.pause()
    finally:
        store.close()
    bad = [hit for text in seen for hit in jargon(text)]
    assert bad == []


def _svg_lines(svg: str) -> list[str]:
    """The text rows of a Textual SVG screenshot, each row's fragments joined."""
    rows: dict[float, list[str]] = {}
    for m in re.finditer(r'<text[^>]*\by="([\d.]+)"[^>]*>(.*?)</text>', svg):
        rows.setdefault(float(m.group(1)), []).append(html.unescape(m.group(2)))
    return ["".join(parts).replace("\xa0", " ") for _, parts in sorted(rows.items())]


def test_no_screen_the_snapshot_tests_show_carries_project_jargon() -> None:
    """Every screen and dialog the SVG snapshot tests render, at every size they render it."""
    shots = sorted((ROOT / "tests" / "__snapshots__").rglob("*.svg"))
    assert len(shots) > 50
    bad = [
        f"{shot.relative_to(ROOT)}: {hit!r}"
        for shot in shots
        for line in _svg_lines(shot.read_text(encoding="utf-8"))
        for hit in jargon(line)
    ]
    assert bad == []
