"""Loading prompt files: the packaged ``prompts/`` (user overrides in the config dir win)."""

from __future__ import annotations

import hashlib
import re
from importlib.resources.abc import Traversable
from pathlib import Path

from quiztui import resources
from quiztui.core.records import record
from quiztui.errors import ConfigError


@record(frozen=True)
class PromptTemplate:
    name: str
    system: str
    user: str
    path: str

    @property
    def hash(self) -> str:
        return hashlib.sha256(f"{self.system}\x00{self.user}".encode()).hexdigest()[:16]


_COMMENT = re.compile(r"\A\s*<!--.*?-->", re.S)
_SYSTEM = re.compile(r"^=== SYSTEM ===[ \t]*$", re.M)
_USER = re.compile(r"^=== USER ===[ \t]*$", re.M)


def parse_prompt(text: str, name: str = "prompt", path: str = "") -> PromptTemplate:
    """Split a prompt file at the ``=== SYSTEM ===`` / ``=== USER ===`` lines.

    A leading ``<!-- … -->`` comment and any text before the markers are not sent. The markers
    count only on lines of their own, so a comment may name them.
    """
    body = _COMMENT.sub("", text, count=1)
    user_at = _USER.search(body)
    if user_at is None:
        raise ConfigError(f"{path or name}: prompt file has no '=== USER ===' line")
    head, user = body[: user_at.start()], body[user_at.end() :]
    system_at = _SYSTEM.search(head)
    system = head[system_at.end() :] if system_at else ""
    return PromptTemplate(name, system.strip(), user.strip() + "\n", path)


PROMPT_FOR_MODE = {"assertion": "judge_assertions", "question": "judge_question"}


def prompt_for_mode(mode: str) -> str:
    """The prompt file a judge mode uses."""
    return PROMPT_FOR_MODE[mode]


def load_prompt(name: str, override_dir: Path | None = None) -> PromptTemplate:
    """The prompt ``name``: ``<override_dir>/<name>.md`` when it exists, else the packaged one."""
    candidates: list[Traversable] = [] if override_dir is None else [override_dir / f"{name}.md"]
    candidates.append(resources.prompt_file(name))
    for path in candidates:
        if path.is_file():
            try:
                return parse_prompt(path.read_text(encoding="utf-8"), name, str(path))
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path}: cannot read prompt: {exc}") from None
    where = f"{override_dir} or " if override_dir is not None else ""
    raise ConfigError(
        f"prompt '{name}' not found in {where}the package's prompts ({resources.prompts_dir()})"
    )
