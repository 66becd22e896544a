"""Live spectating: a page served by the referee on its own address, showing the games in
progress and the standings as they change, without helping any bot cheat.

:class:`LiveHub` holds the live state, fed by each match's observer (a
:data:`referee.match.Observer` given to its recorder) and by a :class:`TournamentFeed`;
:class:`LiveServer` serves the page and its server-sent event stream with aiohttp. What a
spectator sees, and when, is in docs/viewer.md and docs/security.md.

Sits between the command line and the views: it reuses the replay page's data builders and
assets (:mod:`referee.view`) and the tournament's store and standings.
"""

from referee.live.feed import TournamentFeed
from referee.live.hub import LiveConfig, LiveHub, TooManySpectators
from referee.live.server import LiveServer, parse_address
from referee.live.spectate import Spectating

__all__ = [
    "LiveConfig",
    "LiveHub",
    "LiveServer",
    "Spectating",
    "TooManySpectators",
    "TournamentFeed",
    "parse_address",
]
