"""Status lines redrawn on a timer: a ``Static`` is updated only when its text changed."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.dom import DOMNode
from textual.widgets import Static


def show_text(node: DOMNode, shown: dict[str, Any], selector: str, text: Text) -> None:
    """Put ``text`` in the Static at ``selector`` unless ``shown`` says it is already there."""
    if shown.get(selector) == text.plain:
        return
    shown[selector] = text.plain
    node.query_one(selector, Static).update(text)
