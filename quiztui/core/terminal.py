"""The one sanitiser for text that leaves the program, and spreadsheet-safe CSV cells.

:func:`terminal_safe` is applied to everything written to a terminal or a text file (CLI output,
``runs show``, every report format, log lines): quiz text and model replies are untrusted, and an
escape sequence inside them (``ESC ] 52`` sets the clipboard, ``ESC c`` resets the terminal, C1
CSI ``U+009B`` and DCS drive it too) or a bidi override (which reorders what the reader sees) must
not reach the terminal. Each such character becomes a visible escape: C0 controls (except tab and
newline) as ``\\x1b``; DEL, C1 controls and the bidi controls as ``\\u009b``. The ``\\u`` form is a
valid JSON escape, so a JSON report stays valid and decodes back to the original text (``json``
already escapes every C0 control).

:func:`csv_row` neutralises spreadsheet formulas the way OWASP recommends: a cell that starts with
``=``, ``+``, ``-``, ``@``, tab or CR gets a leading ``'``. A cell that is a plain decimal number
(``-0.5``, ``+3``, ``-1e-3``) is left numeric: a spreadsheet reads it as that number and nothing
else. :func:`csv_unquote` strips the mark again when our own CSV is read back; the rule is
injective (a cell that already starts with quotes before a trigger gets one more), so a round trip
returns every cell as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TextIO, cast

__all__ = [
    "BIDI_CONTROLS",
    "CSV_TRIGGERS",
    "RAW_CSV_HELP",
    "csv_cell",
    "csv_row",
    "csv_unquote",
    "is_terminal_safe",
    "terminal_safe",
    "terminal_stream",
]

# Embedding, override and isolate controls, the marks and the Arabic letter mark.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

_TABLE: dict[int, str] = {c: f"\\x{c:02x}" for c in range(0x20) if chr(c) not in "\t\n"}
_TABLE |= {c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}
_TABLE |= {ord(ch): f"\\u{ord(ch):04x}" for ch in BIDI_CONTROLS}
_UNSAFE = re.compile("[" + "".join(re.escape(chr(c)) for c in _TABLE) + "]")


def terminal_safe(text: str) -> str:
    """``text`` with every control character (but tab and newline) and bidi control made visible."""
    if _UNSAFE.search(text) is None:  # the common case, and ten times quicker than translate
        return text
    return text.translate(_TABLE)


def is_terminal_safe(text: str) -> bool:
    """Whether ``text`` holds nothing :func:`terminal_safe` would change."""
    return _UNSAFE.search(text) is None


class _TerminalSafeStream:
    """A text stream whose every write goes through :func:`terminal_safe` (the CLI's stdout and
    stderr); ``unfiltered`` is the stream beneath, for the progress line's own redraw codes."""

    def __init__(self, stream: TextIO) -> None:
        self.unfiltered = stream

    def write(self, text: str) -> int:
        self.unfiltered.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unfiltered, name)


def terminal_stream(stream: TextIO) -> TextIO:
    """``stream`` with every write made terminal-safe (itself when it is one already)."""
    if isinstance(stream, _TerminalSafeStream):
        return cast(TextIO, stream)
    return cast(TextIO, _TerminalSafeStream(stream))


CSV_TRIGGERS = "=+-@\t\r"
RAW_CSV_HELP = (
    "write CSV cells verbatim (by default a cell starting with = + - @, tab or CR gets a leading '"
    " so a spreadsheet shows it as text, not a formula)"
)
_NEEDS_MARK = re.compile(r"'*[=+\-@\t\r]")
_MARKED = re.compile(r"'+[=+\-@\t\r]")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: object) -> str:
    """One cell, spreadsheet-safe: a leading ``'`` where a spreadsheet would see a formula."""
    text = "" if value is None else str(value)
    if _NEEDS_MARK.match(text) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_row(values: Iterable[object], *, raw: bool = False) -> list[object]:
    """A row for ``csv.writer``: every cell through :func:`csv_cell` unless ``raw`` (--raw-csv)."""
    if raw:
        return list(values)
    return [csv_cell(v) for v in values]


def csv_unquote(text: str) -> str:
    """A cell of our own CSV as it was before :func:`csv_cell` marked it."""
    return text[1:] if _MARKED.match(text) else text
