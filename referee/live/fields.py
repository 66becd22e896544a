"""What the live page is sent of the standings and of a ladder's leaderboard: the fields it
shows, no more (:class:`~referee.live.hub.LiveHub` encodes and sends them)."""

from __future__ import annotations

from typing import Any

__all__ = ["LEADERBOARD_ROWS", "leaderboard_page", "standings_page"]

_STANDINGS_KEYS = ("games_done", "games_total")
_BOARD_KEYS = ("ladder", "sorted_by", "pairs_rated", "games")
_PLAYER_KEYS = ("rank", "player", "entrant", "version", "status", "mu", "sigma", "rank_value",
                "pairs", "games", "wins", "draws", "losses", "elo")  # fmt: skip
LEADERBOARD_ROWS = 200
"""Players the page's leaderboard shows (the best by rank; ``/leaderboard.json`` has all)."""
_BOT_KEYS = ("name", "games", "wins", "draws", "losses", "score", "rating", "rating_low",
             "rating_high", "faults")  # fmt: skip


def standings_page(standings: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``results --format json`` standings the page shows."""
    page = {key: standings.get(key) for key in _STANDINGS_KEYS}
    page["bots"] = [{k: bot.get(k) for k in _BOT_KEYS} for bot in standings.get("bots", [])]
    return page


def leaderboard_page(board: dict[str, Any]) -> dict[str, Any]:
    """A ladder's leaderboard as the page shows it: names, ratings and counts of its best
    :data:`LEADERBOARD_ROWS` players (nothing of any deal)."""
    page = {key: board.get(key) for key in _BOARD_KEYS}
    rows = board.get("players", [])[:LEADERBOARD_ROWS]
    page["players"] = [{k: row.get(k) for k in _PLAYER_KEYS} for row in rows]
    page["shown"], page["total"] = len(rows), len(board.get("players", []))
    page["entrants"] = [
        {k: e.get(k) for k in ("entrant", "best", "latest")}
        for e in board.get("entrants", [])[:LEADERBOARD_ROWS]
    ]
    return page
