"""The live page at one moment, with no event stream: ``GET /snapshot[?game=ID]``.

The same page as ``GET /`` (the same scripts, so the same Content-Security-Policy) with the
state a new spectator watching ``game`` would be sent first (:meth:`LiveHub.state`) embedded as
data; the page draws it and opens no stream, so it finishes loading, and a headless browser's
``--screenshot --virtual-time-budget`` returns. Nothing is in it that the stream would not send
at that moment: the same encoded events, the same withholding.
"""

from __future__ import annotations

from referee.live.hub import LiveHub
from referee.view.page import embed_json

__all__ = ["GAME_ID_MAX", "SNAPSHOT_ID", "snapshot_data", "watched"]

SNAPSHOT_ID = "gin-live-snapshot"
"""The element holding the embedded events (live.js draws them instead of connecting)."""
GAME_ID_MAX = 200
"""A longer ``game`` parameter names no game (match ids are short)."""


def watched(game: str | None) -> str | None:
    """The ``game`` query parameter as a game to watch (None if absent, empty or too long)."""
    return game if game and len(game) <= GAME_ID_MAX else None


def snapshot_data(hub: LiveHub, game: str | None) -> str:
    """The data element of the snapshot of ``game`` (unless it is not on the page: the game the
    page would show first): the events a new spectator watching it is sent first, as one
    string."""
    asked = watched(game)
    state = hub.state(asked if asked in hub.matches else hub.shown())
    return embed_json(state.decode(), SNAPSHOT_ID)
