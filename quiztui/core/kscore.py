"""k-scores and badges (seed 000).

k counts the judged assertions whose verdict agrees with the keyed label. With n options:
k = n → good, k = n − 1 → questionable, k < n − 1 → poor; any unjudged assertion → incomplete.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum


class Badge(StrEnum):
    GOOD = "good"
    QUESTIONABLE = "questionable"
    POOR = "poor"
    INCOMPLETE = "incomplete"
    PENDING = "pending"


BADGE_SEVERITY = {
    Badge.GOOD: 0,
    Badge.PENDING: 0,
    Badge.INCOMPLETE: 1,
    Badge.QUESTIONABLE: 2,
    Badge.POOR: 3,
}


def k_score(keyed: Sequence[bool], verdicts: Sequence[bool | None]) -> int:
    """Number of judged assertions whose verdict equals the keyed label."""
    return sum(1 for lab, v in zip(keyed, verdicts, strict=True) if v is not None and v == lab)


def badge(n: int, k: int, unjudged: int = 0) -> Badge:
    if unjudged:
        return Badge.INCOMPLETE
    if k == n:
        return Badge.GOOD
    if k == n - 1:
        return Badge.QUESTIONABLE
    return Badge.POOR
