"""A person at the table: ``gin-referee play BOT`` (docs/play.md).

The person's seat is an ordinary remote seat of the match's hub. :class:`PersonSeat` is that
seat's bot: it connects to the referee's endpoint like any bot, over the real wire, and carries
the seat's messages to the page in the browser (a WebSocket) and the person's chosen action back,
refusing any that the request does not list as legal. :func:`play_session` runs the page's
server beside :func:`~referee.match.run_match`.
"""

from referee.play.bridge import PersonSeat
from referee.play.session import PlayOptions, play_session

__all__ = ["PersonSeat", "PlayOptions", "play_session"]
