"""The bot author's toolkit: ``gin-referee check`` (:func:`run_check`, a scripted battery that
judges a bot item by item), ``gin-referee replay --feed`` (:func:`feed_record`, a record's
messages played back to a bot, offline) and :class:`BotOpponentEnv` (a Gymnasium environment
whose opponent is a bot process in real matches; it needs the ``env`` extra).

A tool is a harness around one match: its probe is a seat (:class:`~referee.toolkit.probe.ProbeLink`
watches what a bot does), so this package works with :mod:`referee.match`'s hub and seats
directly rather than through its front door. Nothing below :mod:`referee.cli` imports it: a
match pays for none of it. The names below are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referee.toolkit.check import CheckOptions, CheckReport, run_check
    from referee.toolkit.feed import FeedReport, feed_record
    from referee.toolkit.opponent import BotOpponentEnv

__all__ = [
    "BotOpponentEnv",
    "CheckOptions",
    "CheckReport",
    "FeedReport",
    "feed_record",
    "run_check",
]

_WHERE = {
    "CheckOptions": "check",
    "CheckReport": "check",
    "run_check": "check",
    "FeedReport": "feed",
    "feed_record": "feed",
    "BotOpponentEnv": "opponent",
}


def __getattr__(name: str) -> Any:
    """Import a tool's module when one of its names is first used."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
