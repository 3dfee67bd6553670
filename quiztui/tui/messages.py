"""Messages the TUI's screens post upward (past tense: facts)."""

from __future__ import annotations

from textual.message import Message


class RunStatusChanged(Message):
    """The vet screen's run moved to a new status: running, finished, cancelled or failed."""

    def __init__(self, status: str) -> None:
        super().__init__()
        self.status = status
