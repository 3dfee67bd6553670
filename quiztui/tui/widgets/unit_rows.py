"""O(1) row geometry and a cell cache that survives ``update_cell``, for a DataTable whose rows
are all one line high.

Textual's DataTable (8.x) keys every cache on one update counter, and ``update_cell`` moves it:
it then rebuilds the list of every row's line offsets (and the ordered list of rows) and renders
every visible cell again. With 25,000 question rows (a 100,000-assertion run) a flush that
changes one cell costs two passes over every row plus ~150 cell renders per frame, and the
screen stops answering keys. When every row is one line the offsets are the row indices
themselves; and a cell needs rendering again only when it, its row, or how it is drawn changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

from rich.style import Style
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.widgets.data_table import RowKey

if TYPE_CHECKING:
    from textual.widgets import DataTable

    _Base = DataTable[Any]
else:
    _Base = object


class _UnitOffsets(Sequence[tuple[RowKey, int]]):
    """What DataTable._y_offsets holds for one-line rows: line y is row y, offset 0."""

    def __init__(self, table: DataTable[Any]) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table.rows)

    @overload
    def __getitem__(self, y: int) -> tuple[RowKey, int]: ...

    @overload
    def __getitem__(self, y: slice) -> list[tuple[RowKey, int]]: ...

    def __getitem__(self, y: int | slice) -> tuple[RowKey, int] | list[tuple[RowKey, int]]:
        if isinstance(y, slice):
            return [self[i] for i in range(*y.indices(len(self)))]
        if y < 0:
            y += len(self)
        key = self._table._row_locations.get_key(y)
        if key is None:
            raise IndexError(y)
        return key, 0

    def __iter__(self) -> Iterator[tuple[RowKey, int]]:
        return (self[i] for i in range(len(self)))

    def clear(self) -> None:
        """DataTable.clear() clears the cached list; there is nothing cached here."""


CELL_CACHE_SIZE = 4096  # rendered cells kept: a few screens of a ten-column table


class UnitRows(_Base):
    """Mix in before DataTable; every row must be added with the default height of 1."""

    @property
    def _cells_cache(self) -> LRUCache[tuple[Any, ...], tuple[Any, Any]]:
        """Rendered cells: key → (the cell value rendered, its lines); made on first use."""
        cache = self.__dict__.get("_unit_rows_cells")
        if cache is None:
            cache = LRUCache(CELL_CACHE_SIZE)
            self.__dict__["_unit_rows_cells"] = cache
        return cache

    def _clear_caches(self) -> None:
        super()._clear_caches()
        self._cells_cache.clear()

    def notify_style_update(self) -> None:
        """A theme or CSS change: the cursor and header colours live only in the rendered cells."""
        self._cells_cache.clear()
        super().notify_style_update()

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> Any:
        """DataTable's render, cached on the cell's value instead of the table's update count."""
        if row_index < 0 or column_index < 0:  # the header and row labels: DataTable's cache
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        if row_key is None or column_key is None:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        row = self._data.get(row_key)
        value = row.get(column_key) if row is not None else None
        # update_cell puts a new value object in: keyed on its id, checked by identity (the entry
        # holds the value, so the id cannot be reused while the entry lives).
        key = (
            row_index,
            column_index,
            id(value),
            base_style,
            width,
            cursor,
            hover,
            self.show_cursor,
            self._show_hover_cursor,
            self._pseudo_class_state,
        )
        cache = self._cells_cache
        entry = cache.get(key)
        if entry is not None and entry[0] is value:
            return entry[1]
        lines = super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        cache[key] = (value, lines)
        return lines

    @property
    def _y_offsets(self) -> _UnitOffsets:  # type: ignore[override]
        return _UnitOffsets(self)

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        """Only the virtual size, when no column sizes itself to its cells and no row has a label
        or an automatic height (DataTable measures every new cell: ~2 s for 25,000 rows)."""
        new_rows = list(new_rows)
        if any(c.auto_width for c in self.columns.values()) or self.show_row_labels:
            super()._update_dimensions(new_rows)
            return
        rows = self.rows
        if any(
            (row := rows.get(key)) is not None and (row.auto_height or row.label is not None)
            for key in new_rows
        ):
            super()._update_dimensions(new_rows)
            return
        width = sum(column.get_render_width(self) for column in self.columns.values())
        header_height = self.header_height if self.show_header else 0
        self.virtual_size = Size(width + self._row_label_column_width, len(rows) + header_height)

    def _get_row_region(self, row_index: int) -> Region:
        if not self.is_valid_row_index(row_index):
            return Region(0, 0, 0, 0)
        row_width = (
            sum(column.get_render_width(self) for column in self.columns.values())
            + self._row_label_column_width
        )
        y = row_index + (self.header_height if self.show_header else 0)
        return Region(0, y, max(self.size.width, row_width), 1)
