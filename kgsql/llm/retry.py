"""Bounded exponential backoff, tunable so tests can run it in milliseconds."""
from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Retry timeouts, 429 and 5xx at most ``max_retries`` times.

    Delay before retry ``n`` (0-based) is ``base_delay_s * 2**n`` capped at
    ``max_delay_s``, with +-50% jitter so parallel eval workers do not retry in
    lockstep. A server's ``Retry-After`` wins when given, but is capped too.
    """

    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    jitter: bool = True

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("retry counts and delays must be >= 0")

    def delay(self, retry_index: int, retry_after_s: float | None = None) -> float:
        if retry_after_s is not None and retry_after_s >= 0:
            return min(retry_after_s, self.max_delay_s)
        d = min(self.base_delay_s * (2 ** retry_index), self.max_delay_s)
        return d * (0.5 + random.random()) if self.jitter else d
