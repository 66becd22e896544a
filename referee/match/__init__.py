"""One match between two bots: the hub that routes frames to seats, each seat's clock and
faults, the hand and game loops, and the record.

This ``__init__`` is the front door: :func:`run_match` plays a match end to end (transport,
bot processes, teardown), :func:`play_match` plays one over seats already issued
(:func:`play_watched` the same while watching the bots' processes), and the
configuration (:class:`MatchConfig`, :class:`TimeControl`, :class:`FaultPolicy`) and result
(:class:`MatchResult`, :class:`SeatSummary`) types. Modules inside import each other directly,
never through this file.
"""

from __future__ import annotations

from referee.match.clock import TimeControl
from referee.match.config import MatchConfig
from referee.match.faults import FaultPolicy
from referee.match.play import play_match
from referee.match.result import MatchResult, SeatSummary
from referee.match.runner import BotSpec, play_watched, run_match

__all__ = [
    "BotSpec",
    "FaultPolicy",
    "MatchConfig",
    "MatchResult",
    "SeatSummary",
    "TimeControl",
    "play_match",
    "play_watched",
    "run_match",
]
