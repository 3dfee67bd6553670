"""Where each element of an XML document starts and ends, and source offsets as line/column.

The Moodle XML reader parses with ElementTree, which keeps no source positions; ``scan`` finds
every element's [start, end) range in the text so problems can name a line and column and
unmodelled questions and extras can be kept as their exact source.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_START_TAG = re.compile(r"""<([^\s/>]+)(?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*(/?)>""")
_END_TAG = re.compile(r"</([^\s>]+)\s*>")
_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class Located:
    name: str
    start: int
    end: int = -1


def _skip_declaration(text: str, start: int) -> int:
    """The end of a ``<!DOCTYPE ...>`` (or other ``<!...>``) starting at ``start``."""
    pos, depth, length = start + 2, 0, len(text)
    while pos < length:
        char = text[pos]
        if char in "\"'":
            close = text.find(char, pos + 1)
            pos = length if close < 0 else close + 1
            continue
        if text.startswith("<!--", pos):
            close = text.find("-->", pos + 4)
            pos = length if close < 0 else close + 3
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == ">" and depth <= 0:
            return pos + 1
        pos += 1
    return length


def scan(text: str) -> list[Located] | None:
    """Every element of a well-formed document in document order, with its [start, end) range.

    Skips comments, CDATA, processing instructions and the DOCTYPE. None if the text does not
    scan (it was parsed by expat first, so that would be a bug here, not in the file)."""
    elements: list[Located] = []
    stack: list[Located] = []
    pos = 0
    while (lt := text.find("<", pos)) >= 0:
        for opener, closer in (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>")):
            if text.startswith(opener, lt):
                close = text.find(closer, lt + len(opener))
                if close < 0:
                    return None
                pos = close + len(closer)
                break
        else:
            if text.startswith("<!", lt):
                pos = _skip_declaration(text, lt)
            elif text.startswith("</", lt):
                end_match = _END_TAG.match(text, lt)
                if end_match is None or not stack:
                    return None
                stack.pop().end = end_match.end()
                pos = end_match.end()
            else:
                start_match = _START_TAG.match(text, lt)
                if start_match is None:
                    return None
                element = Located(start_match.group(1), lt)
                elements.append(element)
                if start_match.group(2):
                    element.end = start_match.end()
                else:
                    stack.append(element)
                pos = start_match.end()
    return None if stack else elements


class Lines:
    """Offsets to 1-based (line, column)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]

    def at(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def byte_column(self, line: int, column: int) -> int:
        """expat's 0-based byte column on a line -> 1-based character column."""
        if not 1 <= line <= len(self.starts):
            return column + 1
        start = self.starts[line - 1]
        stop = self.starts[line] if line < len(self.starts) else len(self.text)
        encoded = self.text[start:stop].encode("utf-8", "surrogatepass")
        return len(encoded[:column].decode("utf-8", "ignore")) + 1
