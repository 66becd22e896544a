"""A ladder's part of the report (``gin-referee report RUN_DIR`` on a ladder's directory): its
leaderboard and an SVG plot of the rating history of its best players.

The plot shows each player's ``mu`` after each of its pairs, against the ladder's rated pairs
(the x axis counts every pair of the ladder, in the order they were rated), with a band of
``mu ± sigma``: a new player's band is wide and narrows as it plays.

>>> svg = history_plot({"a.v1": [(1, 26.0, 8.0), (3, 27.5, 7.0)], "b.v1": [(1, 24.0, 8.0)]})
>>> svg.startswith("<svg") and "a.v1" in svg and "polyline" in svg and "</svg>" in svg
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from referee.tournament.ladder import LadderBook, ladder_board
from referee.tournament.store import SqliteStore, StoreError
from referee.view.svg import nice_step

__all__ = ["HISTORY_PLAYERS", "history_plot", "ladder_section"]

HISTORY_PLAYERS = 8
"""Players the history plot shows: the best by the leaderboard's rank value."""
_COLOURS = ("#1f6b45", "#b4462c", "#2b5d9c", "#8a5a00", "#6b3fa0", "#0f7c86", "#a0336b", "#555")
_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 720, 300, 44, 110, 12, 28

Point = tuple[int, float, float]
"""``(pair number, mu, sigma)`` after one of the player's pairs."""


def history_plot(history: Mapping[str, Sequence[Point]]) -> str:
    """One line of ``mu`` (and a ``mu ± sigma`` band) per player, over the pair number."""
    points = [p for series in history.values() for p in series] or [(0, 0.0, 0.0)]
    x_max = max([1, *(p[0] for p in points)])
    lows = [p[1] - p[2] for p in points]
    highs = [p[1] + p[2] for p in points]
    step = nice_step(max(highs) - min(lows))
    low, high = math.floor(min(lows) / step) * step, math.ceil(max(highs) / step) * step
    if high <= low:
        low, high = low - step, high + step
    width, height = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM

    def x(value: float) -> float:
        return round(_LEFT + width * value / x_max, 1)

    def y(value: float) -> float:
        return round(_TOP + height * (high - value) / (high - low), 1)

    parts = [f'<svg class="rating-plot history" viewBox="0 0 {_W} {_H}" width="100%" role="img"'
             ' aria-label="rating history" xmlns="http://www.w3.org/2000/svg">']  # fmt: skip
    tick = low
    while tick <= high + step / 2:
        parts.append(f'<line class="axis" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y(tick)}" '
                     f'y2="{y(tick)}"/><text class="tick" x="{_LEFT - 6}" y="{y(tick) + 4}" '
                     f'text-anchor="end">{tick:g}</text>')  # fmt: skip
        tick += step
    parts.append(f'<text class="tick" x="{_LEFT + width / 2}" y="{_H - 6}" text-anchor="middle">'
                 f"pairs rated (of the whole ladder: {x_max})</text>")  # fmt: skip
    for i, (name, series) in enumerate(history.items()):
        if not series:
            continue
        colour = _COLOURS[i % len(_COLOURS)]
        line = " ".join(f"{x(n)},{y(mu)}" for n, mu, _ in series)
        band = " ".join(
            [f"{x(n)},{y(mu + s)}" for n, mu, s in series]
            + [f"{x(n)},{y(mu - s)}" for n, mu, s in reversed(series)]
        )
        last = series[-1]
        parts.append(
            f"<g><title>{escape(name)}: mu {last[1]:.2f}, sigma {last[2]:.2f}</title>"
            f'<polygon points="{band}" fill="{colour}" opacity="0.12"/>'
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>'
            f'<text class="name" x="{x(last[0]) + 6}" y="{y(last[1]) + 4}" fill="{colour}">'
            f"{escape(name)}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(board: Mapping[str, Any], rows: int = 50) -> str:
    head = ("#", "player", "status", "mu", "sigma", "rank value", "pairs", "W-D-L", "Elo check")
    body = []
    for r in board["players"][:rows]:
        elo = "n/a" if r["elo"] is None else f"{r['elo']:+.0f}"
        cells = (r["rank"], r["player"], r["status"], f"{r['mu']:.2f}", f"{r['sigma']:.2f}",
                 f"{r['rank_value']:.2f}", r["pairs"], f"{r['wins']}-{r['draws']}-{r['losses']}",
                 elo)  # fmt: skip
        tds = [
            f"<td class='num'>{escape(str(c))}</td>" if i in (0, 3, 4, 5, 6, 7, 8)
            else f"<td>{escape(str(c))}</td>"
            for i, c in enumerate(cells)
        ]  # fmt: skip
        body.append("<tr>" + "".join(tds) + "</tr>")
    heads = "".join(f"<th>{h}</th>" for h in head)
    return (
        f"<div class='scroll'><table><thead><tr>{heads}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def ladder_section(directory: Path) -> str:
    """The ladder's leaderboard and rating history, or "" if ``directory`` holds no ladder."""
    path = directory / "tournament.sqlite"
    try:
        store = SqliteStore.open(path)
        try:
            if store.get_meta("ladder") is None:
                return ""
        finally:
            store.close()
        board = ladder_board(path)
        with LadderBook.open(path) as book:
            rows = book.history()
    except StoreError:
        return ""
    deal_number: dict[str, int] = {}
    history: dict[str, list[Point]] = {}
    for row in rows:
        n = deal_number.setdefault(row.deal_id, len(deal_number) + 1)
        history.setdefault(row.player, []).append((n, row.mu, row.sigma))
    best = [r["player"] for r in board["players"][:HISTORY_PLAYERS]]
    shown = {name: history.get(name, []) for name in best}
    return (
        f"<section class='ladder'><h2>Ladder {escape(board['ladder'])}: leaderboard</h2>"
        f"<p class='note'>{board['pairs_rated']} pairs rated; sorted by "
        f"{escape(board['sorted_by'])}; the best 50 of {len(board['players'])} players.</p>"
        f"{_table(board)}<h3>Rating history</h3><figure class='plot'>{history_plot(shown)}"
        f"<figcaption>mu after each pair, with a band of mu \u00b1 sigma, for the best "
        f"{len(shown)} players.</figcaption></figure></section>"
    )
