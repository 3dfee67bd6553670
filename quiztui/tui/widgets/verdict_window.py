"""The vet screen's verdicts table, windowed: it draws only the rows on screen.

A run of 100,000 assertions cannot keep a ``DataTable`` row per verdict: every ``add_rows`` call
builds row objects, keys and offsets, and the flush that adds them stalls the event loop. This
widget keeps a plain list of the run's :class:`AssertionRecord` objects (the ones the run state
already holds) and renders a line with the Line API (``render_line`` + ``virtual_size``) only
when it is on screen, building the row's cells at that moment. Adding rows is a list extend.

It looks and behaves like the DataTable it replaces (same component classes, cell padding,
zebra stripes, row cursor, header line, keys: ↑/↓/j/k, PgUp/PgDn, Home/End/g/G, enter) and keeps
the calls the screen and the tests use: ``row_count``, ``rows`` (seq → record, in row order),
``get_row``/``get_cell``, ``cursor_row``/``cursor_row_key``, ``move_cursor``, ``clear``.
Row keys are the assertions' ``seq`` numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import ClassVar

from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.renderables.styled import Styled
from textual.scroll_view import ScrollView
from textual.strip import Strip

from quiztui.tui.state import AssertionRecord, QuestionRecord
from quiztui.tui.widgets.cells import Cell, agrees_cell, cell, keyed_cell, option_cell, verdict_cell
from quiztui.tui.widgets.tables import ColumnSpec

CELL_PADDING = 1
LINE_CACHE_SIZE = 512  # rendered lines kept (a few screens' worth); cleared when it fills


class _Rows(Mapping[int, AssertionRecord]):
    """A read-only view of the table's rows: seq → record, iterated in row order."""

    def __init__(self, table: VerdictsTable) -> None:
        self._table = table

    def __getitem__(self, seq: int) -> AssertionRecord:
        return self._table._records[self._table._index[seq]]

    def __iter__(self) -> Iterator[int]:
        return (record.seq for record in self._table._records)

    def __len__(self) -> int:
        return len(self._table._records)

    def __contains__(self, seq: object) -> bool:
        return seq in self._table._index


class VerdictsTable(ScrollView, can_focus=True):
    """One row per assertion in arrival order; only the rows on screen are ever rendered."""

    DEFAULT_CSS = """
    VerdictsTable {
        background: $surface;
        color: $foreground;
        height: 1fr;
        scrollbar-gutter: stable;
        &:focus {
            background-tint: $foreground 5%;
            & > .datatable--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .datatable--header {
                background-tint: $foreground 5%;
            }
        }
        &:dark {
            & > .datatable--even-row {
                background: $surface-darken-1 40%;
            }
        }
        & > .datatable--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .datatable--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .datatable--odd-row {
        }
        & > .datatable--even-row {
            background: $surface-lighten-1 50%;
        }
        & > .datatable--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "datatable--header",
        "datatable--cursor",
        "datatable--even-row",
        "datatable--odd-row",
    }

    # The same ids as the questions table's keys (tables.NavTable): a [keys] remap moves both.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Detail", id="table.open"),
        Binding("j", "cursor_down", "Down", id="table.down", show=False),
        Binding("k", "cursor_up", "Up", id="table.up", show=False),
        Binding("g", "scroll_top", "First row", id="table.first", show=False),
        Binding("G", "scroll_bottom", "Last row", id="table.last", show=False),
        Binding("down", "cursor_down", "Cursor down", show=False),
        Binding("up", "cursor_up", "Cursor up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("home", "scroll_top", "First row", show=False),
        Binding("end", "scroll_bottom", "Last row", show=False),
        Binding("ctrl+home", "scroll_top", "First row", show=False),
        Binding("ctrl+end", "scroll_bottom", "Last row", show=False),
    ]

    COLUMNS: ClassVar[Sequence[ColumnSpec]] = (
        ColumnSpec("seq", "seq", 5),
        ColumnSpec("question", "question", 8, flex=3),
        ColumnSpec("option", "option", 6, flex=2),
        ColumnSpec("keyed", "keyed", 5),
        ColumnSpec("verdict", "verdict", 8),
        ColumnSpec("agrees", "agrees", 6),
        ColumnSpec("reason", "reason", 8, flex=3),
    )
    LIVE_COLUMNS: ClassVar[tuple[str, ...]] = ("verdict", "agrees", "reason")

    class RowSelected(Message):
        """enter (or a click on the cursor row): the row's assertion ``seq``."""

        def __init__(self, table: VerdictsTable, seq: int) -> None:
            super().__init__()
            self.table = table
            self.seq = seq

        @property
        def control(self) -> VerdictsTable:
            return self.table

    def __init__(
        self,
        question_of: Callable[[str], QuestionRecord | None] = lambda qid: None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.question_of = question_of
        self._records: list[AssertionRecord] = []
        self._index: dict[int, int] = {}  # seq → row index
        self._cursor = 0
        self._widths: list[int] = [s.width + 2 * CELL_PADDING for s in self.COLUMNS]
        self._fitted_width = -1
        self._lines: dict[tuple[int, int, bool, bool], Strip] = {}
        self._column_index = {s.key: i for i, s in enumerate(self.COLUMNS)}

    # -- data -----------------------------------------------------------------------------------

    @staticmethod
    def row_cells(record: AssertionRecord, question: QuestionRecord | None) -> list[Cell]:
        if question is not None:
            q = question.question
            keyed = record.option_index == q.key
            q_text = cell(f"{question.number}. {q.text}")
            opt_text = q.options[record.option_index] if 0 <= record.option_index < q.n else "?"
        else:  # an event for a question the quiz does not have: show it, do not crash
            keyed = False
            q_text = cell(record.question_id)
            opt_text = "?"
        return [
            cell(str(record.seq)),
            q_text,
            option_cell(record.option_index, opt_text),
            keyed_cell(keyed),
            verdict_cell(record.verdict),
            agrees_cell(record.verdict, keyed),
            cell(record.reason, "dim" if record.cached else ""),
        ]

    @property
    def row_count(self) -> int:
        return len(self._records)

    @property
    def rows(self) -> Mapping[int, AssertionRecord]:
        return _Rows(self)

    def get_row(self, seq: int) -> list[Cell]:
        record = self._records[self._index[seq]]
        return self.row_cells(record, self.question_of(record.question_id))

    def get_cell(self, seq: int, column: str) -> Cell:
        return self.get_row(seq)[self._column_index[column]]

    def add_rows(self, records: Sequence[AssertionRecord]) -> None:
        """Append rows (a list extend: nothing is rendered until it scrolls into view)."""
        if not records:
            return
        start = len(self._records)
        self._records.extend(records)
        for i, record in enumerate(records, start):
            self._index[record.seq] = i
        self._resized()
        first_visible = round(self.scroll_offset.y)
        if start < first_visible + self.size.height:  # a new row is on screen
            self.refresh()

    def update_row(self, record: AssertionRecord) -> None:
        """A repeated verdict (a re-asked assertion) replaces its row's record."""
        row = self._index.get(record.seq)
        if row is None:
            return
        self._records[row] = record
        self._lines.clear()
        self.refresh()

    def remove_rows(self, seqs: Sequence[int]) -> None:
        """Drop rows (a re-judged question's old verdicts), keeping the cursor's place."""
        gone = {s for s in seqs if s in self._index}
        if not gone:
            return
        self._records = [r for r in self._records if r.seq not in gone]
        self._index = {r.seq: i for i, r in enumerate(self._records)}
        self._cursor = min(self._cursor, max(0, len(self._records) - 1))
        self._lines.clear()
        self._resized()
        self.refresh()

    def clear(self) -> None:
        self._records = []
        self._index = {}
        self._cursor = 0
        self._lines.clear()
        self._resized()
        self.scroll_to(y=0, animate=False, force=True)
        self.refresh()

    # -- cursor ---------------------------------------------------------------------------------

    @property
    def cursor_row(self) -> int:
        return self._cursor

    @property
    def cursor_row_key(self) -> int | None:
        """The seq of the row under the cursor (None when the table is empty)."""
        if not self._records:
            return None
        return self._records[self._cursor].seq

    @property
    def _page(self) -> int:
        """Data rows on screen (the header takes a line)."""
        return max(1, self.scrollable_content_region.height - 1)

    def move_cursor(self, *, row: int, animate: bool = False) -> None:
        if not self._records:
            return
        row = max(0, min(row, len(self._records) - 1))
        if row != self._cursor:
            self._cursor = row
            self.refresh()  # two lines change; the cached others are cheap to repaint
        top = round(self.scroll_offset.y)
        if row < top:
            self.scroll_to(y=row, animate=animate, force=True)
        elif row >= top + self._page:
            self.scroll_to(y=row - self._page + 1, animate=animate, force=True)

    def action_cursor_down(self) -> None:
        self.move_cursor(row=self._cursor + 1)

    def action_cursor_up(self) -> None:
        self.move_cursor(row=self._cursor - 1)

    def action_page_down(self) -> None:
        self.move_cursor(row=self._cursor + self._page)

    def action_page_up(self) -> None:
        self.move_cursor(row=self._cursor - self._page)

    def action_scroll_top(self) -> None:
        self.move_cursor(row=0)

    def action_scroll_bottom(self) -> None:
        self.move_cursor(row=len(self._records) - 1)

    def action_select_cursor(self) -> None:
        seq = self.cursor_row_key
        if seq is not None:
            self.post_message(self.RowSelected(self, seq))

    async def _on_click(self, event: events.Click) -> None:
        """A click moves the cursor to the row; a click on the cursor row selects it."""
        if event.y < 1:
            return
        row = event.y - 1 + round(self.scroll_offset.y)
        if 0 <= row < len(self._records):
            if row == self._cursor:
                self.action_select_cursor()
            else:
                self.move_cursor(row=row)

    # -- geometry -------------------------------------------------------------------------------

    def _resized(self) -> None:
        self.virtual_size = Size(sum(self._widths), len(self._records) + 1)
        # Now, not at the next layout: a cursor moved in the same tick scrolls the scrollbar too.
        self._refresh_scrollbars()

    def _fit(self, width: int) -> None:
        """Fixed columns keep their width; the flex ones share what is left by weight."""
        if width == self._fitted_width:
            return
        self._fitted_width = width
        pad = 2 * CELL_PADDING
        fixed = sum(s.width + pad for s in self.COLUMNS if not s.flex)
        flex = [s for s in self.COLUMNS if s.flex]
        extra = max(0, width - fixed - sum(s.width + pad for s in flex))
        weights = sum(s.flex for s in flex) or 1
        shares = {s.key: extra * s.flex // weights for s in flex}
        if flex:
            shares[flex[-1].key] += extra - sum(shares.values())
        self._widths = [s.width + pad + shares.get(s.key, 0) for s in self.COLUMNS]
        self._lines.clear()
        self._resized()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(self.scrollable_content_region.width)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()
        self.refresh()

    def _on_focus(self, event: events.Focus) -> None:
        self._lines.clear()
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        self._lines.clear()
        self.refresh()

    # -- rendering ------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x, scroll_y = self.scroll_offset
        row = -1 if y == 0 else y - 1 + scroll_y
        if row >= len(self._records):
            return Strip.blank(width, self.rich_style)
        strip = self._line(row)
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)

    def _line(self, row: int) -> Strip:
        """One table line (-1: the header) at full table width, cached while nothing changes."""
        cursor = row == self._cursor and row >= 0
        key = (row, self._fitted_width, cursor, self.has_focus)
        cached = self._lines.get(key)
        if cached is not None:
            return cached
        if row == -1:
            cells: list[Cell] = [cell(s.label) for s in self.COLUMNS]
            row_style = self.get_component_styles("datatable--header").rich_style
        else:
            record = self._records[row]
            cells = self.row_cells(record, self.question_of(record.question_id))
            stripe = "datatable--odd-row" if row % 2 else "datatable--even-row"
            row_style = self.get_component_styles(stripe).rich_style
        cursor_style = self.get_component_rich_style("datatable--cursor") if cursor else Style()
        # Cursor colours win over the cell's own (DataTable's default "css" priority).
        post = Style.from_color(color=cursor_style.color, bgcolor=cursor_style.bgcolor)
        console = self.app.console
        base_options = self.app.console_options
        segments: list[Segment] = []
        for column, (value, width) in enumerate(zip(cells, self._widths, strict=True)):
            # The cell's place as meta, as DataTable has it (keeps cells apart when simplified).
            meta = Style.from_meta({"row": row, "column": column})
            options = base_options.update_dimensions(width, 1).update(no_wrap=True)
            lines = console.render_lines(
                Styled(
                    Padding(value, (0, CELL_PADDING)),
                    pre_style=row_style + meta + cursor_style,
                    post_style=post,
                ),
                options,
            )
            segments.extend(lines[0])
        table_width = sum(self._widths)
        room = max(0, self.size.width - table_width)
        if room:
            meta = Style.from_meta({"row": row, "column": 0, "out_of_bounds": True})
            segments.append(Segment(" " * room, row_style + cursor_style + meta))
        strip = Strip(segments).adjust_cell_length(
            max(table_width, self.size.width), self.rich_style
        )
        if len(self._lines) >= LINE_CACHE_SIZE:
            self._lines.clear()
        self._lines[key] = strip.simplify()
        return self._lines[key]
