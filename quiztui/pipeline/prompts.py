"""Loading prompt files from ``prompts/`` (user overrides in the config dir win)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from quiztui.errors import ConfigError

REPO_PROMPTS = Path(__file__).resolve().parents[2] / "prompts"


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    name: str
    system: str
    user: str
    path: str

    @property
    def hash(self) -> str:
        return hashlib.sha256(f"{self.system}\x00{self.user}".encode()).hexdigest()[:16]


def parse_prompt(text: str, name: str = "prompt", path: str = "") -> PromptTemplate:
    """Split a prompt file at ``=== SYSTEM ===`` / ``=== USER ===``; text before them is a comment."""
    if "=== USER ===" not in text:
        raise ConfigError(f"{path or name}: prompt file has no '=== USER ===' section")
    head, user = text.split("=== USER ===", 1)
    system = head.split("=== SYSTEM ===", 1)[1] if "=== SYSTEM ===" in head else ""
    return PromptTemplate(name, system.strip(), user.strip() + "\n", path)


PROMPT_FOR_MODE = {"assertion": "judge_assertions", "question": "judge_question"}


def prompt_for_mode(mode: str) -> str:
    """The prompt file a judge mode uses."""
    return PROMPT_FOR_MODE[mode]


def load_prompt(name: str, override_dir: Path | None = None) -> PromptTemplate:
    for folder in (override_dir, REPO_PROMPTS):
        if folder is None:
            continue
        path = folder / f"{name}.md"
        if path.is_file():
            try:
                return parse_prompt(path.read_text(encoding="utf-8"), name, str(path))
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path}: cannot read prompt: {exc}") from None
    raise ConfigError(f"prompt '{name}' not found in {override_dir or ''} or {REPO_PROMPTS}")
