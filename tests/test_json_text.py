"""Report JSON (``core/json_text.py``): orjson writes a report as the standard library's
indented writer does, byte for byte, or leaves it to that writer; figures that are not finite
become null with a note either way."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiztui.core import json_text

_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e-3, max_value=1e-3),  # around the 1e-4 where the two writers part
    st.sampled_from([1e-4, 9.99e-5, 1e-5, 1e16, 1e15, 123456789.0, -0.0, 5e-324, 1e22]),
)
_TEXT = st.text(
    st.characters(codec="utf-8") | st.sampled_from(list('\x00\x1f\x7f"\\\u2028\ufeff')),
    max_size=8,
)
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**70), 2**70), _FLOATS, _TEXT
)
_KEYS = st.one_of(_TEXT, _TEXT, st.integers(-5, 5), st.booleans(), st.none())
_DATA = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_KEYS, inner, max_size=4),
    ),
    max_leaves=25,
)


def _standard(data: Any, **kwargs: Any) -> str:
    """What the report writer wrote before orjson: ``json``, and the walk for what is not finite."""
    try:
        return json.dumps(data, allow_nan=False, **kwargs)
    except (ValueError, TypeError):
        return json.dumps(json_text.finite(data), allow_nan=False, **kwargs)


@settings(max_examples=250, deadline=None)
@given(_DATA)
def test_a_report_reads_byte_for_byte_as_the_standard_librarys_writer_wrote_it(data: Any) -> None:
    """Every shape a report may hold: floats either side of 1e-4 (where ``json`` writes
    ``1e-05`` and orjson ``0.00001``), NaN and infinities (null and a note), ints past 64 bits,
    control characters, U+2028, keys that are not strings, tuples, empty containers."""
    want = _standard(data, indent=2, ensure_ascii=False)
    assert json_text.dumps(data, indent=2, ensure_ascii=False) == want


def test_orjson_writes_a_plain_report_and_json_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson writes what it writes as ``json`` does; a tiny float, a key that is no string, a
    str or float subclass goes to ``json``, and so does every other shape of the arguments."""
    import orjson

    used: list[object] = []
    real = orjson.dumps

    def spy(data: object, **kw: Any) -> bytes:
        used.append(data)
        return real(data, **kw)

    monkeypatch.setattr(orjson, "dumps", spy)

    class Colour(enum.StrEnum):
        RED = "red"

    report = {"questions": [{"p": 0.25, "id": "Q1", "ok": True, "none": None}], "n": (1, 2)}
    assert json_text.dumps(report, indent=2, ensure_ascii=False) == json.dumps(
        report, indent=2, ensure_ascii=False
    )
    assert len(used) == 1
    for odd in ({"p": 1e-5}, {1: "a"}, {"c": Colour.RED}, [1.5, math.pi, 10**30]):
        json_text.dumps(odd, indent=2, ensure_ascii=False)
    assert len(used) == 2  # the big int: orjson refused it, json wrote it
    json_text.dumps(report, indent=2)  # ASCII-escaped: json's
    json_text.dumps(report)
    assert len(used) == 2


def test_a_figure_that_is_not_finite_is_null_with_a_note_on_either_writer() -> None:
    data = {"kappa": math.nan, "rates": [0.5, math.inf], "n": 3}
    text = json_text.dumps(data, indent=2, ensure_ascii=False)
    assert json.loads(text) == {
        "kappa": None,
        "kappa_note": json_text.KAPPA_UNDEFINED,
        "rates": [0.5, None],
        "rates_note": json_text.UNDEFINED,
        "n": 3,
    }
    assert text == json_text.dumps(data, indent=2, ensure_ascii=False, sort_keys=False)


_PLAIN = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), _FLOATS, _TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=250, deadline=None)
@given(_PLAIN)
def test_what_orjson_writes_reads_as_json_wrote_it(data: Any) -> None:
    """The shapes orjson is given (string keys, 64-bit ints): byte for byte ``json``'s text."""
    want = _standard(data, indent=2, ensure_ascii=False)
    assert json_text.dumps(data, indent=2, ensure_ascii=False) == want


def _same(a: Any, b: Any) -> bool:
    """Equal as read back, NaN equal to NaN and -0.0 told from 0.0 (a float's sign is kept)."""
    if isinstance(a, float) and isinstance(b, float):
        same_sign = math.copysign(1, a) == math.copysign(1, b)
        return (math.isnan(a) and math.isnan(b)) or (a == b and same_sign)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=250, deadline=None)
@given(_DATA)
def test_a_stored_summary_reads_back_as_json_wrote_it(data: Any) -> None:
    """The store's summaries (``compact``): whichever writer, ``json.loads`` gives what it gave
    for ``json.dumps``'s text, NaN and infinities included, key order kept."""
    try:
        want = json.loads(json.dumps(data))
    except (TypeError, ValueError):  # a key json cannot write: compact raises alike
        with pytest.raises((TypeError, ValueError)):
            json_text.compact(data)
        return
    assert _same(json.loads(json_text.compact(data)), want)


def test_a_plain_summary_is_written_by_orjson_and_the_rest_by_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    used: list[str] = []
    real = json_text.orjson_module

    def spy() -> Any:
        used.append("orjson")
        return real()

    monkeypatch.setattr(json_text, "orjson_module", spy)
    summary = {"questions": [{"id": "q1", "p": 1e-7, "verdicts": [True, None]}], "cost": 0.5}
    assert json.loads(json_text.compact(summary)) == summary and used == ["orjson"]
    for odd in ({"p": math.nan}, {1: "a"}, {"big": 10**30}):  # NaN kept as json writes it
        assert json_text.compact(odd) == json.dumps(odd)
    assert used == ["orjson", "orjson"]  # the big int: orjson refused it, json wrote it
