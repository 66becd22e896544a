"""One match between two bots: the hub that routes frames to seats, each seat's clock and
faults, the hand and game loops, deals and the record.

This ``__init__`` is the front door, and the only way in for the packages above
(``referee.tournament``, ``referee.view``, ``referee.live``, ``referee.cli``; an import-linter
contract keeps it so): :func:`run_match` plays a match end to end (transport, bot processes,
teardown), :func:`play_watched`/:func:`play_match` play one over seats a caller opened on its
own :class:`Hub`, with the configuration (:class:`MatchConfig`, :class:`TimeControl`,
:class:`FaultPolicy`, :class:`Deal`), result (:class:`MatchResult`, :class:`SeatSummary`) and
record (:class:`MatchRecorder`, :func:`replay_record`) types; an :data:`Observer` given to the
recorder is told the record's lines and every decision as they happen (the live spectator
page's feed). The hub, the game loop and the record are imported when first used, so that a
match starts its bots before it pays for them. The bot author's tools (``check``, ``replay
--feed``) are :mod:`referee.toolkit`, which works with this package's seats and hub directly.
Modules inside import each other directly, never through this file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from referee.match.bots import (
    BotSpec,
    curve_env,
    curve_transport,
    local_bot_keys,
    sandbox_level,
    start_bot,
)
from referee.match.clock import CHECK_TIME, REMOTE_STARTUP, TimeControl
from referee.match.config import DEFAULT_MAX_HANDS, MatchConfig
from referee.match.deals import Deal, parse_key
from referee.match.early import EarlyStart, binds_endpoint, can_start_early, start_early
from referee.match.faults import FaultPolicy
from referee.match.result import MatchResult, SeatSummary

if TYPE_CHECKING:
    from referee.match.hub import Hub
    from referee.match.play import play_match
    from referee.match.record import (
        MatchRecorder,
        Observer,
        RecordError,
        RecordUnreadable,
        read_record_lines,
        replay_record,
    )
    from referee.match.runner import (
        BOT_EXIT_GRACE,
        FAREWELL_FLUSH,
        play_watched,
        release_seats,
        run_match,
    )
    from referee.match.seat import SeatLink

_LAZY = {
    "BOT_EXIT_GRACE": "runner",
    "FAREWELL_FLUSH": "runner",
    "play_watched": "runner",
    "release_seats": "runner",
    "run_match": "runner",
    "Hub": "hub",
    "play_match": "play",
    "MatchRecorder": "record",
    "Observer": "record",
    "RecordError": "record",
    "RecordUnreadable": "record",
    "read_record_lines": "record",
    "replay_record": "record",
    "SeatLink": "seat",
}
"""Imported on first use: the runner (it needs asyncio), the hub, the game loop and the record,
which a match imports once its bots are started (:func:`start_early`: their start overlaps
these imports), and the bot author's tools, which a match never needs (docs/performance.md,
"Start-up")."""


def __getattr__(name: str) -> Any:
    """The names of :data:`_LAZY`, imported from their module when first asked for."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BOT_EXIT_GRACE",
    "CHECK_TIME",
    "REMOTE_STARTUP",
    "BotSpec",
    "DEFAULT_MAX_HANDS",
    "Deal",
    "EarlyStart",
    "FAREWELL_FLUSH",
    "FaultPolicy",
    "Hub",
    "MatchConfig",
    "MatchRecorder",
    "MatchResult",
    "Observer",
    "RecordError",
    "RecordUnreadable",
    "SeatLink",
    "SeatSummary",
    "TimeControl",
    "binds_endpoint",
    "can_start_early",
    "curve_env",
    "curve_transport",
    "local_bot_keys",
    "parse_key",
    "play_match",
    "play_watched",
    "read_record_lines",
    "release_seats",
    "replay_record",
    "run_match",
    "sandbox_level",
    "start_bot",
    "start_early",
]
