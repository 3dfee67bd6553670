"""Report JSON that every parser reads: no bare ``NaN`` or ``Infinity`` (not JSON; ``jq`` and
browsers refuse them). A figure that is not a finite number is ``null`` with a ``<key>_note``
beside it saying why (Cohen's and Fleiss' κ are undefined when the verdicts do not vary).

Written by orjson where it writes what ``json`` would (:func:`dumps`, :func:`compact`): the
standard library's writer took 5-15 ms of a 400-question run's end. In ``core`` so the store's
summaries (``store/runs.py``) and the reports write alike."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

KAPPA_UNDEFINED = "undefined: the verdicts do not vary, so chance agreement is 1"
UNDEFINED = "undefined for this data (not a finite number)"


def _reason(key: str, reasons: Mapping[str, str]) -> str:
    if key in reasons:
        return reasons[key]
    return KAPPA_UNDEFINED if "kappa" in key else UNDEFINED


def _bad(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def finite(data: Any, reasons: Mapping[str, str] | None = None) -> Any:
    """``data`` with every non-finite float as None; in a dict, ``<key>_note`` says why."""
    reasons = reasons or {}
    if isinstance(data, Mapping):
        out: dict[Any, Any] = {}
        for key, value in data.items():
            out[key] = finite(value, reasons)
            if _bad(value) or (isinstance(value, list | tuple) and any(_bad(v) for v in value)):
                out[f"{key}_note"] = _reason(str(key), reasons)
        return out
    if isinstance(data, list | tuple):
        return [finite(v, reasons) for v in data]
    return None if _bad(data) else data


def _plain(data: Any, small: bool = False) -> bool | None:
    """Whether ``data`` holds only what orjson writes as ``json`` does: True; False when it holds
    a float that is not finite (:func:`finite` first); None for a float under 1e-4 (``json``
    writes ``1e-05``, orjson ``0.00001``; ``small``: the same number all the same, fine), a type
    that is not exactly dict, list, tuple, str, int, float, bool or None, or a key that is no
    string.

    A walk with a stack of its own (a report is some 13,000 values, and a call per value was
    most of the time this check took)."""
    plain = True
    stack = [data]
    pop, push, add = stack.pop, stack.extend, stack.append
    while stack:
        value = pop()
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            continue
        if kind is dict:
            for key, item in value.items():
                if type(key) is not str:
                    return None
                add(item)
        elif kind is list or kind is tuple:
            push(value)
        elif kind is float:
            if value - value != 0.0:  # NaN or an infinity
                plain = False
            elif not small and 0.0 < abs(value) < 1e-4:
                return None
        else:
            return None
    return plain


_INDENTED = {"indent": 2, "ensure_ascii": False}


def dumps(data: Any, reasons: Mapping[str, str] | None = None, **kwargs: Any) -> str:
    """``json.dumps`` of ``finite(data)``; ``allow_nan=False`` makes a missed one an error.

    A report (``indent=2, ensure_ascii=False``) is written by orjson when it is installed,
    the very text ``json`` writes (``tests/test_json_text.py``) about twenty times faster: the
    standard library's indented writer is pure Python, 10-15 ms for a 400-question vet report
    and on the way to a headless run's exit. :func:`_plain` checks first that orjson writes
    ``data`` as ``json`` would; a report it does not vouch for, and every other shape, is written
    by ``json``. Most reports hold no figure that is not finite: encoding them as they are finds
    that out (a ValueError), so :func:`finite`'s walk and a second encoding are made only for the
    reports that need it."""
    if kwargs == _INDENTED:
        plain = _plain(data)
        if plain is not None:
            fast = orjson_module()
            if fast is not None:
                chosen = data if plain else finite(data, reasons)
                try:
                    return fast.dumps(chosen, option=fast.OPT_INDENT_2).decode()  # type: ignore[no-any-return]
                except TypeError:  # an int past 64 bits, a lone surrogate: json's to write
                    pass
    try:
        return json.dumps(data, allow_nan=False, **kwargs)
    except (ValueError, TypeError):  # a NaN, or a mapping or value only the walk turns into JSON
        return json.dumps(finite(data, reasons), allow_nan=False, **kwargs)


def compact(data: Any) -> str:
    """``json.dumps(data)`` read back: the same values, ``NaN`` kept as ``json`` writes it (the
    store's summaries, read by Python). orjson writes it, without ``json``'s spaces, when
    :func:`_plain` vouches that every value is one it writes as ``json`` does (a 400-question
    run's summary: 4-5 ms by ``json``, under 1 ms this way, with the check)."""
    if _plain(data, small=True):
        fast = orjson_module()
        if fast is not None:
            try:
                return fast.dumps(data).decode()  # type: ignore[no-any-return]
            except TypeError:  # an int past 64 bits, a lone surrogate: json's to write
                pass
    return json.dumps(data)


def orjson_module() -> Any:
    """The orjson module, or None where its wheel is missing (the reports, the store's summaries
    and the streamed replies' events, ``providers/_http.event_json``, look it up here)."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - a platform without its wheel
        return None
    return orjson
