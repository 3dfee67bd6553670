"""Reading quiz files as text and parsing JSON into located problems instead of tracebacks."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quiztui.errors import QuizFormatError, QuizProblem, QuiztuiError

_WHITESPACE = re.compile(r"[ \t\n\r]*")


def read_text(path: Path, shown: str, notes: list[str] | None = None) -> str:
    """The file's text (UTF-8, optional BOM), or a QuizFormatError with one clear message.

    A file that is not UTF-8 but holds no NUL byte is a legacy 8-bit file (a spreadsheet's
    "CSV" export, an old GIFT bank): it is read as Windows-1252 (bytes that code page leaves
    undefined as Latin-1) and a warning naming the encoding is added to ``notes``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _fail(shown, "file not found") from None
    except IsADirectoryError:
        raise _fail(shown, "is a directory, not a quiz file") from None
    except PermissionError:
        raise _fail(shown, "permission denied") from None
    except OSError as exc:
        raise _fail(shown, f"cannot read file: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        byte = data[exc.start]
        if b"\x00" in data[:1024]:
            message = f"binary data: byte 0x{byte:02x} is not UTF-8 (save the file as UTF-8)"
            raise QuizFormatError(shown, [QuizProblem(shown, message, line=line)]) from None
        if notes is not None:
            notes.append(
                f"{shown}: not UTF-8 (byte 0x{byte:02x} on line {line}): read as Windows-1252;"
                " save the file as UTF-8 if the text looks wrong"
            )
        return legacy_decode(data)


def legacy_decode(data: bytes) -> str:
    """Windows-1252, with the five bytes it leaves undefined read as Latin-1."""
    if not any(bytes((b,)) in data for b in _CP1252_UNDEFINED):
        return data.decode("cp1252")
    return "".join(chr(b) if b in _CP1252_UNDEFINED else bytes((b,)).decode("cp1252") for b in data)


def legacy_encode(text: str) -> bytes:
    """The inverse of ``legacy_decode``; a character Windows-1252 lacks is an error (the file
    would not read back the same)."""
    out = bytearray()
    for ch in text:
        if ord(ch) in _CP1252_UNDEFINED:
            out.append(ord(ch))
            continue
        try:
            out += ch.encode("cp1252")
        except UnicodeEncodeError:
            raise QuiztuiError(
                f"{ch!r} cannot be saved in this Windows-1252 file: save it as UTF-8 first"
            ) from None
    return bytes(out)


_CP1252_UNDEFINED = frozenset((0x81, 0x8D, 0x8F, 0x90, 0x9D))


def _fail(shown: str, message: str) -> QuizFormatError:
    return QuizFormatError(shown, [QuizProblem(shown, message)])


def json_problem(shown: str, exc: json.JSONDecodeError, *, line_offset: int = 0) -> QuizProblem:
    return QuizProblem(
        shown, f"invalid JSON: {exc.msg}", line=exc.lineno + line_offset, column=exc.colno
    )


def type_name(value: object) -> str:
    """The JSON name of a value's type, for messages such as "must be a string (got number)"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def show(value: str, limit: int = 60) -> str:
    """A value quoted for a one-line message: newlines escaped, long text shortened."""
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return repr(value)


def array_item_lines(text: str) -> list[int]:
    """1-based line on which each element of a top-level JSON array starts.

    Only called on text already known to be a valid JSON array; returns [] if it is not one.
    """
    decoder = json.JSONDecoder()
    pos = _skip(text, 0)
    if text[pos : pos + 1] != "[":
        return []
    pos = _skip(text, pos + 1)
    lines: list[int] = []
    line, counted = 1, 0
    if text[pos : pos + 1] == "]":
        return lines
    while pos < len(text):
        line += text.count("\n", counted, pos)
        counted = pos
        lines.append(line)
        try:
            _, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return lines
        pos = _skip(text, pos)
        if text[pos : pos + 1] != ",":
            break
        pos = _skip(text, pos + 1)
    return lines


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def category_and_difficulty(
    obj: dict[str, Any], report: Callable[[str, str], None]
) -> dict[str, str | None]:
    """The optional 'category' and 'difficulty' strings of an item; wrong types are reported."""
    extras: dict[str, str | None] = {}
    for name in ("category", "difficulty"):
        extras[name], problem = optional_str(obj, name)
        if problem:
            report(problem, name)
    return extras


def optional_str(obj: dict[str, Any], name: str) -> tuple[str | None, str | None]:
    """(value, problem) for an optional string field such as 'category'."""
    value = obj.get(name)
    if value is None or isinstance(value, str):
        return value, None
    return None, f"must be a string (got {type_name(value)})"


def json_array_spans(text: str, key: str | None = None) -> list[tuple[int, int]]:
    """[start, end) of each element of the top-level JSON array, or of the array at top-level
    ``key`` of an object. Only called on valid JSON; returns [] when the shape differs."""
    decoder = json.JSONDecoder()
    pos = _skip(text, 0)
    if key is not None:
        if text[pos : pos + 1] != "{":
            return []
        pos = _skip(text, pos + 1)
        while text[pos : pos + 1] == '"':
            name, pos = decoder.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text[pos : pos + 1] != ":":
                return []
            pos = _skip(text, pos + 1)
            if name == key:
                break
            _, pos = decoder.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
        else:
            return []
    if text[pos : pos + 1] != "[":
        return []
    pos = _skip(text, pos + 1)
    spans: list[tuple[int, int]] = []
    while pos < len(text) and text[pos] != "]":
        try:
            _, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return spans
        spans.append((pos, end))
        pos = _skip(text, end)
        if text[pos : pos + 1] != ",":
            break
        pos = _skip(text, pos + 1)
    return spans


def _members(text: str, pos: int) -> list[tuple[int, int]] | None:
    """The (start, end) spans of the values of the JSON object or array starting at ``pos``
    (None: not one, or unreadable)."""
    decoder = json.JSONDecoder()
    opening = text[pos : pos + 1]
    if opening not in ("{", "["):
        return None
    closing = "}" if opening == "{" else "]"
    spans: list[tuple[int, int]] = []
    pos = _skip(text, pos + 1)
    try:
        while text[pos : pos + 1] != closing:
            if opening == "{":
                _, pos = decoder.raw_decode(text, pos)  # the member's name
                pos = _skip(text, pos)
                if text[pos : pos + 1] != ":":
                    return None
                pos = _skip(text, pos + 1)
            _, end = decoder.raw_decode(text, pos)
            spans.append((pos, end))
            pos = _skip(text, end)
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
            elif text[pos : pos + 1] != closing:
                return None
    except json.JSONDecodeError:
        return None
    return spans


def _patched(old: Any, new: Any, text: str, start: int, end: int, ascii_only: bool) -> str | None:
    """The JSON value at ``text[start:end]`` (which reads as ``old``) changed into ``new`` by
    rewriting only the scalars that differ, every other byte kept; None when the shape differs
    (members added, removed or reordered; lengths changed)."""
    if old == new and type(old) is type(new):
        return text[start:end]
    if isinstance(old, dict) and isinstance(new, dict):
        if list(old) != list(new):
            return None
        values: list[Any] = list(zip(old.values(), new.values(), strict=True))
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return None
        values = list(zip(old, new, strict=True))
    elif isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        return None
    else:
        return json.dumps(new, ensure_ascii=ascii_only)
    spans = _members(text, start)
    if spans is None or len(spans) != len(values):
        return None
    pieces, pos = [], start
    for (old_value, new_value), (a, b) in zip(values, spans, strict=True):
        patched = _patched(old_value, new_value, text, a, b, ascii_only)
        if patched is None:
            return None
        pieces += [text[pos:a], patched]
        pos = b
    pieces.append(text[pos:end])
    return "".join(pieces)


def dump_like(obj: Any, original: str, text: str, start: int) -> str:
    """``obj`` as JSON in the style of ``original`` (the element it replaces, which starts at
    ``start`` of ``text``): one line or indented like it, ASCII-escaped only if it was.

    When ``obj`` has the shape of ``original`` (the same members in the same order), only the
    values that changed are rewritten and every other byte of ``original`` is kept."""
    ascii_only = "\\u" in original and original.isascii()
    try:
        patched = _patched(json.loads(original), obj, original, 0, len(original), ascii_only)
    except (json.JSONDecodeError, ValueError):
        patched = None
    if patched is not None and json.loads(patched) == obj:
        return patched
    if "\n" not in original:
        compact = ", " not in original and ": " not in original
        separators = (",", ":") if compact else (", ", ": ")
        return json.dumps(obj, ensure_ascii=ascii_only, separators=separators)
    line_start = text.rfind("\n", 0, start) + 1
    base = text[line_start:start] if not text[line_start:start].strip() else ""
    second = original.split("\n", 2)[1]
    unit = len(second) - len(second.lstrip()) - len(base)
    rendered = json.dumps(obj, ensure_ascii=ascii_only, indent=max(unit, 1))
    return rendered.replace("\n", "\n" + base)
