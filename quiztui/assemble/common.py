"""What every run kind's assembly shares: prompts with the user's overrides, the lint settings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Generator

    from quiztui.config import Config
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.prompts import PromptTemplate


def prompt_dir() -> Path:
    """Where the user's prompt overrides live: ``prompts/`` in the config dir."""
    from quiztui.locations import config_dir

    return config_dir() / "prompts"


def prompt_for(name: str) -> PromptTemplate:
    """The prompt file ``name``: the user's copy in the config dir's ``prompts/`` when there is
    one, else the packaged one. Every run kind loads its prompts through here."""
    from quiztui.pipeline.prompts import load_prompt

    return load_prompt(name, prompt_dir())


def lint_report(
    config: Config,
    quiz: Quiz,
    extra_disable: list[str] | None = None,
    *,
    select: list[str] | None = None,
    extend_select: list[str] | None = None,
) -> Any:
    """The quiz's ``LintReport`` with the configured settings (for the TUI and headless report);
    ``select``, ``extend_select`` and ``extra_disable`` (``--ignore``): the command line's."""
    from quiztui.core.lint import lint_quiz

    settings = config.lint.settings(extra_disable, select=select, extend_select=extend_select)
    return lint_quiz(quiz, settings)


def lint_report_steps(config: Config, quiz: Quiz) -> Generator[None, None, Any]:
    """:func:`lint_report` a few questions at a time (``core.lint.lint_steps``): for a caller
    on an event loop that lets other work in between steps."""
    from quiztui.core.lint import lint_steps

    return lint_steps(quiz, config.lint.settings())


def probe_judge(provider: object) -> None:
    """Before a run: one look at the judge's endpoint where the provider has one (an
    OpenAI-compatible server's ``/models``); a dead server, a base URL without ``/v1`` or an
    unknown model raises ``ConfigError`` with one line, before any request is spent."""
    probe = getattr(provider, "probe", None)
    if callable(probe):
        probe()
