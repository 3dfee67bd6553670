"""Report JSON that every parser reads: no bare ``NaN`` or ``Infinity`` (not JSON; ``jq`` and
browsers refuse them). A figure that is not a finite number is ``null`` with a ``<key>_note``
beside it saying why (Cohen's and Fleiss' κ are undefined when the verdicts do not vary)."""

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


def dumps(data: Any, reasons: Mapping[str, str] | None = None, **kwargs: Any) -> str:
    """``json.dumps`` of ``finite(data)``; ``allow_nan=False`` makes a missed one an error.

    Most reports hold no such figure: encoding them as they are finds that out (a ValueError),
    so :func:`finite`'s walk and a second encoding are made only for the reports that need it."""
    try:
        return json.dumps(data, allow_nan=False, **kwargs)
    except (ValueError, TypeError):  # a NaN, or a mapping or value only the walk turns into JSON
        return json.dumps(finite(data, reasons), allow_nan=False, **kwargs)
