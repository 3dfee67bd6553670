"""Report writers for finished vet runs: JSON, CSV, Markdown, self-contained HTML and JUnit XML.

The writers are imported on first use (``quiztui.report.render_report``), so a headless run's
progress line (:mod:`quiztui.report.progress`) loads none of them before its first request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quiztui.report.writers import FORMATS, render_report

__all__ = ["FORMATS", "render_report"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from quiztui.report import writers

        return getattr(writers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
