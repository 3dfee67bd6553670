"""The manual's screenshots, taken from the real app: ``make docs-screenshots``.

    .venv/bin/python scripts/docs_screenshots.py [--out docs/img] [--size 100x30]

Opens ``sample_quizzes/planted_errors.json`` in the app exactly as ``quiztui QUIZ`` builds it
(``quiztui.cli.vet.build_vet_app``: the configured services over a real run store, here in a
temporary folder, judged by the SIMULATED judge with no delay), drives it with Textual's Pilot
and saves an SVG of each screen with ``App.save_screenshot``. Nothing is hand-edited: run it again
after a change to the TUI and commit the SVGs it writes. The README's screenshot is
``docs/img/vet-finished.svg``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUIZ = ROOT / "sample_quizzes" / "planted_errors.json"

# (file name, keys pressed from the finished vet screen, what it shows). Each starts again from
# the vet screen ("escape" back after each).
SHOTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("vet-finished", (), "the vet screen after a run: badges, confidence, suggested keys"),
    ("question-detail", ("enter",), "one question: every option's verdict and reason"),
    ("metrics", ("m",), "the metrics screen"),
    ("help", ("f1",), "F1: the keys of the focused table, the screen and the app"),
    ("runs", ("h",), "the Runs screen: stored runs of every kind"),
)


def offline(svg: str) -> str:
    """The SVG with nothing to fetch: the fonts from the reader's machine (``local()``, else
    monospace), never a download; no address in the generator comment either."""
    svg = re.sub(r',\s*url\("[^"]*"\)\s*format\("[^"]*"\)', "", svg)
    return re.sub(r"<!-- Generated with Rich [^>]*-->", "<!-- scripts/docs_screenshots.py -->", svg)


async def _settled(pilot, app) -> None:  # type: ignore[no-untyped-def]
    await app.workers.wait_for_complete()
    for _ in range(200):  # the buffered table updates reach the tables on a timer
        state = app.vet_screen.state
        if not (state.pending_seqs or state.changed_seqs or state.dirty_questions):
            break
        await asyncio.sleep(0.02)
    await pilot.pause()


async def take(out: Path, size: tuple[int, int]) -> list[Path]:
    from quiztui.assemble.vet import open_quiz, vet_runs
    from quiztui.cli.vet import build_vet_app
    from quiztui.config import load_config

    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="quiztui-shots-") as tmp:
        env = {
            "QUIZTUI_STORE_PATH": str(Path(tmp) / "runs.db"),
            "QUIZTUI_JUDGE_PROVIDER": "simulated",
            "QUIZTUI_SIMULATED_LATENCY": "0",
            "QUIZTUI_SIMULATED_LINE_DELAY": "0",
        }
        empty = Path(tmp) / "config.toml"  # the defaults, never the user's own config file
        empty.write_text("", encoding="utf-8")
        config = load_config(empty, environ=env)
        store, quiz = open_quiz(config, QUIZ, None)
        try:
            runs = vet_runs(config, quiz, store, None)
            app = build_vet_app(config, store, quiz, runs, autostart=True)
            async with app.run_test(size=size) as pilot:
                await _settled(pilot, app)
                for name, keys, _ in SHOTS:
                    for key in keys:
                        await pilot.press(key)
                        await pilot.pause()
                    await app.workers.wait_for_complete()
                    await pilot.pause(0.3)
                    path = Path(app.save_screenshot(f"{name}.svg", str(out)))
                    path.write_text(offline(path.read_text(encoding="utf-8")), encoding="utf-8")
                    written.append(path)
                    while app.screen is not app.vet_screen:
                        await pilot.press("escape")
                        await pilot.pause()
        finally:
            store.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/docs_screenshots.py", description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="output folder")
    parser.add_argument("--size", default="100x30", help="terminal size, COLUMNSxROWS")
    args = parser.parse_args(argv)
    width, _, height = args.size.partition("x")
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.pop("NO_COLOR", None)  # colours as a user sees them
    for path in asyncio.run(take(args.out, (int(width), int(height)))):
        print(
            f"docs_screenshots: wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
