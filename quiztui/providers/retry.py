"""Retry policy: exponential backoff with full jitter, honouring Retry-After."""

from __future__ import annotations

import random
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.5  # fraction of the delay drawn at random
    max_retry_after: float = 120.0  # a server's Retry-After is obeyed up to this many seconds

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        raw = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        r = (rng or random).random()
        return raw * (1.0 - self.jitter) + raw * self.jitter * r


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms style) header value: delta-seconds or HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        import datetime as dt

        when = parsedate_to_datetime(value)
        return max((when - dt.datetime.now(when.tzinfo)).total_seconds(), 0.0)
    except (TypeError, ValueError):
        return None
