"""Refused traffic is counted, answered a few times per peer, and logged at a bounded rate.

A client that guesses tokens, repeats a hello, or sends garbage before saying hello must cost
the referee neither a log line per message (one such client once wrote 12 MB of them) nor a
reply per message. :class:`RejectLog` counts every refusal by *kind* (the error code, e.g.
``bad_token``) and logs at most one line per kind per ``interval`` seconds: the first refusal
of a kind at once, then one summary line per interval saying how many were not logged
individually, and the total. :meth:`RejectLog.flush` (called periodically) writes the summary
of a burst that has ended, and :meth:`RejectLog.close` the last one. :class:`ReplyQuota` lets a
peer's first few refusals be answered and drops the rest unanswered (still counted).
"""

from __future__ import annotations

import logging
from collections import Counter

from referee.match.clock import Timer

__all__ = ["REJECT_LOG_INTERVAL", "REPLIES_PER_PEER", "RejectLog", "ReplyQuota"]

REJECT_LOG_INTERVAL = 10.0
"""Seconds between two log lines about the same kind of refusal."""
REPLIES_PER_PEER = 4
"""Refusals answered (``reject``/``error``) per unknown connection; later ones are dropped."""


class RejectLog:
    """Counts refusals by kind; logs at most one line per kind per interval (with counts)."""

    def __init__(
        self, logger: logging.Logger, timer: Timer, interval: float = REJECT_LOG_INTERVAL
    ) -> None:
        self.logger = logger
        self.timer = timer
        self.interval = interval
        self.counts: Counter[str] = Counter()
        """Refusals by kind since the start."""
        self._unlogged: Counter[str] = Counter()
        self._latest: dict[str, str] = {}
        self._quiet_until: dict[str, float] = {}

    @property
    def total(self) -> int:
        """Refusals of every kind since the start."""
        return sum(self.counts.values())

    def note(self, kind: str, detail: str) -> None:
        """Count one refusal of ``kind``; log it if no line about ``kind`` is recent."""
        self.counts[kind] += 1
        now = self.timer.time()
        if now < self._quiet_until.get(kind, float("-inf")):
            self._unlogged[kind] += 1
            self._latest[kind] = detail
            return
        self._quiet_until[kind] = now + self.interval
        if self._unlogged[kind]:  # the first after a quiet interval: summarised with the rest
            self._unlogged[kind] += 1
            self._latest[kind] = detail
            self._summarise(kind)
        else:
            self.logger.info("refused %s: %s (%d refused so far)", kind, detail, self.counts[kind])

    def flush(self, *, force: bool = False) -> None:
        """Log a summary for each kind with unlogged refusals whose interval has passed (every
        kind with ``force``)."""
        now = self.timer.time()
        for kind in [k for k, n in self._unlogged.items() if n]:
            if force or now >= self._quiet_until.get(kind, float("-inf")):
                self._quiet_until[kind] = now + self.interval
                self._summarise(kind)

    def _summarise(self, kind: str) -> None:
        self.logger.info(
            "refused %s: %d more not logged one by one (latest: %s); %d refused so far",
            kind,
            self._unlogged.pop(kind),
            self._latest.pop(kind, ""),
            self.counts[kind],
        )

    def close(self) -> None:
        """Log what is still unlogged."""
        self.flush(force=True)


class ReplyQuota:
    """How many refusals each peer has had answered, for at most ``peers`` peers (the oldest
    half is forgotten when full, so a reconnect storm cannot grow it)."""

    def __init__(self, replies: int = REPLIES_PER_PEER, peers: int = 4096) -> None:
        self.replies = replies
        self.peers = peers
        self._answered: dict[bytes, int] = {}

    def __len__(self) -> int:
        """Peers remembered."""
        return len(self._answered)

    def take(self, peer: bytes) -> bool:
        """True if this refusal to ``peer`` may be answered (and count it)."""
        answered = self._answered.get(peer, 0)
        if answered >= self.replies:
            return False
        if peer not in self._answered and len(self._answered) >= self.peers:
            for old in list(self._answered)[: self.peers // 2]:
                del self._answered[old]
        self._answered[peer] = answered + 1
        return True
