"""Developer demo: the TUI on a sample quiz, judged by the simulated judge with visible delays.

    python -m quiztui.tui._demo [QUIZ] [--latency 0.3] [--line-delay 0.05]

Uses the real pipeline with a throw-away store in a temporary directory, so nothing persists.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m quiztui.tui._demo")
    parser.add_argument(
        "quiz", nargs="?", type=Path, default=None, help="default: the packaged demo quiz"
    )
    parser.add_argument("--latency", type=float, default=0.3, help="seconds before each reply")
    parser.add_argument("--line-delay", type=float, default=0.05, help="seconds per reply line")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--theme", default=None)
    args = parser.parse_args(argv)

    from quiztui import resources
    from quiztui.core.figures import QUIZ_KEY, TRUTH_FILE
    from quiztui.formats import load_quiz
    from quiztui.pipeline.events import VetEvent
    from quiztui.pipeline.prompts import load_prompt
    from quiztui.pipeline.vet import VetRun, VetSettings
    from quiztui.providers.simulated import SimulatedProvider
    from quiztui.simulate.vet import truth_table
    from quiztui.store import Store
    from quiztui.tui.app import QuiztuiApp
    from quiztui.tui.services import AppServices

    quiz = load_quiz(args.quiz or resources.as_path(resources.demo_quiz(), with_siblings=True))
    provider = SimulatedProvider(
        truth_table(quiz),
        latency=args.latency,
        line_delay=args.line_delay,
        concurrency=2,
        truth_source=TRUTH_FILE if quiz.truth else QUIZ_KEY,
    )
    prompt = load_prompt("judge_assertions")
    settings = VetSettings(
        batch_size=args.batch_size, concurrency=2, use_cache=False, logprobs=True
    )
    with tempfile.TemporaryDirectory(prefix="quiztui-demo-") as tmp:
        store = Store(Path(tmp) / "demo.db")

        def start_run() -> AsyncIterator[VetEvent]:
            return VetRun(quiz, provider, store, prompt, settings).events()

        try:
            services = AppServices(start_run=start_run, judge_label=provider.label, simulated=True)
            QuiztuiApp(quiz, services, theme_name=args.theme).run()
        finally:
            store.close()


if __name__ == "__main__":
    main()
