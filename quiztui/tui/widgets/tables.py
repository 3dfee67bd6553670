"""The questions table of the vet screen (and the other screens' tables), on a DataTable with vi
keys and fitted columns; the verdicts table is windowed (verdict_window.py).

Rows are keyed (questions by question id), so updates use ``update_cell(row_key, column_key, …)``
and survive sorting and filtering. Row geometry and cell renders are cached per cell
(unit_rows.py), so a 25,000-row table stays cheap to update.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.widgets import DataTable
from textual.widgets.data_table import Column, ColumnKey, RowKey

from quiztui.core.kscore import Badge
from quiztui.core.quiz import Unjudged
from quiztui.tui.state import QuestionRecord
from quiztui.tui.widgets.cells import (
    DASH,
    Cell,
    badge_cell,
    cell,
    confidence_text,
    option_cell,
    option_letter,
)
from quiztui.tui.widgets.unit_rows import UnitRows

LINT_STYLES = {"error": "bold red", "warning": "yellow", "info": "dim"}
# The review column: the words say it; the colours only help.
REVIEW_STYLES = {"accept": "green", "fix": "bold yellow", "rewrite": "magenta", "drop": "red"}


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    key: str
    label: str
    width: int  # fixed width, or the minimum width of a flexible column
    flex: int = 0  # > 0: takes this share of the width left over by the fixed columns


@dataclass
class FitColumn(Column):
    """A column that a narrow table can fold away (it keeps its cells; it takes no width)."""

    hidden: bool = False

    def get_render_width(self, data_table: DataTable[Any]) -> int:
        return 0 if self.hidden else super().get_render_width(data_table)


class NavTable(UnitRows, DataTable[Cell]):
    """A row-cursor DataTable with j/k/g/G and columns that fit the widget's width.

    ``PRIORITY`` names the columns a narrow table may hide (column key → rank, higher hidden
    first); the others are always shown. A flexible column never gets less than its
    ``ColumnSpec.width``: when even the always-shown columns do not fit, the table scrolls
    sideways (←/→). ``show_all_columns`` shows the hidden ones too (the table then scrolls).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Detail", id="table.open"),
        Binding("j", "cursor_down", "Down", id="table.down", show=False),
        Binding("k", "cursor_up", "Up", id="table.up", show=False),
        Binding("g", "scroll_top", "First row", id="table.first", show=False),
        Binding("G", "scroll_bottom", "Last row", id="table.last", show=False),
    ]

    COLUMNS: ClassVar[Sequence[ColumnSpec]] = ()
    # column key → rank: columns a narrow table may hide, the highest rank first
    PRIORITY: ClassVar[Mapping[str, int]] = {}

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(
            id=id, classes=classes, cursor_type="row", zebra_stripes=True, show_row_labels=False
        )
        self.show_all_columns = False
        self._fitted_width = 0
        for spec in self.COLUMNS:
            key = self.add_column(spec.label, width=spec.width, key=spec.key)
            col = self.columns[key]
            self.columns[key] = FitColumn(
                col.key, col.label, col.width, col.content_width, col.auto_width
            )

    def on_resize(self, event: Resize) -> None:
        self.fit_columns(event.size.width)

    @property
    def hidden_columns(self) -> list[str]:
        """The labels of the columns folded away at this width."""
        return [
            str(c.label)
            for c in self.ordered_columns
            if isinstance(c, FitColumn) and c.hidden and str(c.label).strip()
        ]

    @property
    def overflowing(self) -> bool:
        """The columns are wider than the table: it scrolls sideways."""
        return self.virtual_size.width > self.scrollable_content_region.width

    def toggle_all_columns(self) -> None:
        """Show the hidden columns (the table scrolls sideways), or fold them away again."""
        self.show_all_columns = not self.show_all_columns
        if self._fitted_width:
            self.fit_columns(self._fitted_width)

    def _shown_specs(self, room: int) -> set[str]:
        """The columns that fit in ``room`` cells: every unranked one, then by rank."""
        pad = 2 * self.cell_padding
        if self.show_all_columns or not self.PRIORITY:
            return {s.key for s in self.COLUMNS}
        shown = {s.key for s in self.COLUMNS if s.key not in self.PRIORITY}
        used = sum(s.width + pad for s in self.COLUMNS if s.key in shown)
        for spec in sorted(
            (s for s in self.COLUMNS if s.key in self.PRIORITY), key=lambda s: self.PRIORITY[s.key]
        ):
            if used + spec.width + pad > room:
                break  # lower ranks stay hidden too: columns fold in a fixed order
            shown.add(spec.key)
            used += spec.width + pad
        return shown

    def fit_columns(self, width: int) -> None:
        """Hide what does not fit, then share the width left by fixed columns (and the scrollbar
        gutter) among the flex columns."""
        self._fitted_width = width
        gutter = self.styles.scrollbar_size_vertical or 0
        shown = self._shown_specs(width - gutter)
        specs = [s for s in self.COLUMNS if s.key in shown]
        padding = 2 * self.cell_padding * len(specs)
        fixed = sum(s.width for s in specs if not s.flex)
        flex_specs = [s for s in specs if s.flex]
        # Minimum widths first; whatever is left is shared by weight (remainder to the last).
        extra = max(0, width - gutter - padding - fixed - sum(s.width for s in flex_specs))
        weights = sum(s.flex for s in flex_specs) or 1
        shares = [extra * s.flex // weights for s in flex_specs]
        if shares:
            shares[-1] += extra - sum(shares)
        changed = False
        for spec in self.COLUMNS:
            column = self.columns.get(ColumnKey(spec.key))
            hidden = spec.key not in shown
            if isinstance(column, FitColumn) and column.hidden != hidden:
                column.hidden = hidden
                changed = True
        for spec, share in zip(flex_specs, shares, strict=True):
            new_width = spec.width + share
            column = self.columns.get(ColumnKey(spec.key))
            if column is not None and column.width != new_width:
                column.width = new_width
                changed = True
        if changed:
            # DataTable has no public "resize column": mark dimensions stale and drop caches.
            self._require_update_dimensions = True
            self._clear_caches()
            self.refresh()

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list[list[Segment]]:
        if width <= 0:  # a hidden column: nothing at all (Padding would still draw two cells)
            height = self.header_height if row_index == -1 else 1
            return [[] for _ in range(max(height, 1))]
        return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)

    def update_changed(self, key: RowKey | str, cells: Mapping[str, Cell]) -> None:
        """Rewrite only the cells whose text or styling changed (each update costs a refresh).

        Styling includes the spans: a cell can keep its text and change which part is bold.
        """
        for column, value in cells.items():
            old = self.get_cell(key, column)
            if old.plain != value.plain or old.style != value.style or old.spans != value.spans:
                self.update_cell(key, column, value)

    @property
    def cursor_row_key(self) -> RowKey | None:
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key


class QuestionsTable(NavTable):
    """One row per question; cells change in place as verdicts and scores arrive."""

    COLUMNS: ClassVar[Sequence[ColumnSpec]] = (
        ColumnSpec("num", "#", 3),
        # The question takes the free width; the key and the suggestion are shown whole on the
        # vet screen's preview line under the table.
        ColumnSpec("question", "question", 30, flex=1),
        ColumnSpec("key", "key", 7),
        ColumnSpec("k", "k", 3),
        ColumnSpec("badge", "badge", 12),
        ColumnSpec("review", "review", 7),
        ColumnSpec("lint", "lint", 6),
        ColumnSpec("robust", "robust", 7),
        ColumnSpec("confidence", "conf", 4),
        ColumnSpec("suggested", "suggested", 10),
    )
    # At 80 columns: #, question (30+), badge, key, suggested and k; then the review column
    # (when there is one), confidence, lint, robust. `w` on the vet screen shows them all.
    PRIORITY: ClassVar[Mapping[str, int]] = {
        "key": 1,
        "suggested": 2,
        "k": 3,
        "review": 4,
        "confidence": 5,
        "lint": 6,
        "robust": 7,
    }

    @staticmethod
    def badge_of(record: QuestionRecord) -> str:
        return str(record.score.badge) if record.score is not None else str(Badge.PENDING)

    @staticmethod
    def robust_cell(record: QuestionRecord) -> Cell:
        """The fragility flag of the newest robustness run (blank when none was measured)."""
        if record.fragile is None:
            return cell("")
        return cell("fragile", "bold yellow") if record.fragile[0] else cell("ok", "dim")

    @staticmethod
    def review_cell(record: QuestionRecord) -> Cell:
        """The review desk's decision (screens/decide.py); blank while none is recorded."""
        decision = record.decision
        if decision is None:
            return cell("")
        return cell(decision.label, REVIEW_STYLES.get(decision.action, ""))

    @staticmethod
    def lint_cell(record: QuestionRecord) -> Cell:
        """The worst lint finding's code with its severity's colour, "+n" for more findings."""
        if not record.lint:
            return cell("")
        rank = {"error": 3, "warning": 2, "info": 1}
        top = max(record.lint, key=lambda f: rank.get(f.severity, 0))
        more = f"+{len(record.lint) - 1}" if len(record.lint) > 1 else ""
        return cell(f"{top.code}{more}", LINT_STYLES.get(top.severity, ""))

    @classmethod
    def live_cells(cls, record: QuestionRecord) -> dict[str, Cell]:
        """The cells that change during a run, by column key."""
        score = record.score
        if score is None:  # k is the pipeline's to compute; until it scores, show nothing
            return {
                "k": cell(DASH, "dim"),
                "badge": badge_cell(Badge.PENDING),
                "review": cls.review_cell(record),
                "lint": cls.lint_cell(record),
                "robust": cls.robust_cell(record),
                "confidence": cell(DASH, "dim"),
                "suggested": cell(""),
            }
        suggested = cell("")
        if score.suggested_option is not None:
            options = record.question.options
            idx = score.suggested_option
            text = options[idx] if 0 <= idx < len(options) else "?"
            p = f" ({score.suggested_p:.2f})" if score.suggested_p is not None else ""
            suggested = cell(f"{option_letter(idx)}: {text}{p}", "bold")
        return {
            "k": cell(f"{score.k}/{score.n}"),
            "badge": badge_cell(score.badge),
            "review": cls.review_cell(record),
            "lint": cls.lint_cell(record),
            "robust": cls.robust_cell(record),
            "confidence": cell(confidence_text(score.confidence)),
            "suggested": suggested,
        }

    @classmethod
    def row_cells(cls, record: QuestionRecord) -> list[Cell]:
        q = record.question
        live = cls.live_cells(record)
        return [
            cell(str(record.number)),
            cell(q.text),
            option_cell(q.key, q.options[q.key]) if 0 <= q.key < q.n else cell("?"),
            live["k"],
            live["badge"],
            live["review"],
            live["lint"],
            live["robust"],
            live["confidence"],
            live["suggested"],
        ]

    @classmethod
    def cells_by_key(cls, record: QuestionRecord) -> dict[str, Cell]:
        return dict(zip((s.key for s in cls.COLUMNS), cls.row_cells(record), strict=True))

    @classmethod
    def unjudged_cells(cls, item: Unjudged) -> list[Cell]:
        """A row for an item kept from the file that is not judged (an essay, matching, ...)."""
        blank = cell("")
        return [
            cell("·", "dim"),
            cell(item.text, "dim"),
            cell("—", "dim"),
            blank,
            cell("not judged", "dim italic"),
            blank,
            blank,
            blank,
            blank,
            cell(f"({item.type})", "dim"),
        ]

    def show(self, records: Iterable[QuestionRecord], unjudged: Iterable[Unjudged] = ()) -> None:
        """Replace the rows (used at start and when the filter changes), keeping the cursor on
        its question, or, when the filter hides that one, on the row where it was (the next
        question moves up under it; not the first row, which made keys land on another one).

        The cyclic collector rests while the rows are made: they hold no cycles, and its full
        passes over the growing tables cost 1.2 s of the 4.5 s that 25,000 rows took."""
        keep = self.cursor_row_key
        keep_row = self.cursor_row
        collecting = gc.isenabled()
        gc.disable()
        try:
            self.clear()
            for record in records:
                self.add_row(*self.row_cells(record), key=record.question.id)
            for item in unjudged:
                self.add_row(*self.unjudged_cells(item), key=item.id)
        finally:
            if collecting:
                gc.enable()
        if keep is not None and keep in self.rows:
            self.move_cursor(row=self.get_row_index(keep), animate=False)
        elif keep is not None and self.row_count:
            self.move_cursor(row=min(keep_row, self.row_count - 1), animate=False)

    def refresh_question(self, record: QuestionRecord) -> None:
        key = record.question.id
        if key not in self.rows:
            return
        self.update_changed(key, self.live_cells(record))
