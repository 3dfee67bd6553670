"""Report writers for finished vet runs: JSON, CSV, Markdown, self-contained HTML and JUnit XML."""

from __future__ import annotations

from quiztui.report.writers import FORMATS, render_report

__all__ = ["FORMATS", "render_report"]
