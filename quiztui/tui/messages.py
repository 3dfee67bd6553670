"""Messages the TUI's screens post upward (past tense: facts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from quiztui.core.calibration import JudgeProfile


class RunStatusChanged(Message):
    """The vet screen's run moved to a new status: running, finished, cancelled or failed."""

    def __init__(self, status: str) -> None:
        super().__init__()
        self.status = status


class JudgeProfileStored(Message):
    """A calibration measured a judge profile and saved it in the store."""

    def __init__(self, profile: JudgeProfile) -> None:
        super().__init__()
        self.profile = profile


class FragilityMeasured(Message):
    """A robustness run finished: question id → (fragile, why), for the vet questions table."""

    def __init__(self, flags: dict[str, tuple[bool, str]]) -> None:
        super().__init__()
        self.flags = flags
