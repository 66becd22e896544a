"""The leaderboard: every player's rating (``mu``, ``sigma``, the conservative rank value
``mu - k * sigma`` it is sorted by), its games, the MLE Elo of every stored game as a check,
and each entrant's best and latest version. Plain data (the JSON of ``gin-referee results
--ladder`` and of the live page's ``/leaderboard.json``) and a text table;
:func:`ladder_board` reads it from a ladder's store.
"""

from __future__ import annotations

import time
import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.tournament.config import ConfigError
from referee.tournament.ladder.book import LadderBook, Player
from referee.tournament.ladder.config import LadderConfig, RatingParams, parse_ladder
from referee.tournament.ladder.skill import Skill, SkillModel
from referee.tournament.stats import fit_ratings
from referee.tournament.store import GameRow, StoreError, open_store

__all__ = ["ELO_CHECK_PLAYERS", "ladder_board", "leaderboard", "leaderboard_text"]

ELO_CHECK_PLAYERS = 100
"""The MLE Elo check covers the best this many players (by rank value), over the games among
them: the fit costs time in proportion to the cube of its players (0.8 s at 100, 10 s at 200,
80 s at 400 here), and the leaderboard is recomputed after every pair."""


def _games(
    games: Sequence[GameRow],
) -> tuple[dict[str, Counter[str]], dict[tuple[str, str], tuple[float, int]]]:
    """Per player its wins, draws and losses; per ordered pairing (score, games)."""
    tally: dict[str, Counter[str]] = {}
    results: dict[tuple[str, str], tuple[float, int]] = {}
    for row in games:
        if row.status != "done" or row.result is None:
            continue
        a, b = row.spec.seat0, row.spec.seat1
        winner = row.result.get("winner")
        for me in (a, b):
            word = "draws" if winner is None else "wins" if winner == me else "losses"
            tally.setdefault(me, Counter())[word] += 1
        score = 0.5 if winner is None else 1.0 if winner == a else 0.0
        old = results.get((a, b), (0.0, 0))
        results[(a, b)] = (old[0] + score, old[1] + 1)
    return tally, results


def leaderboard(
    name: str,
    players: Sequence[Player],
    current: Mapping[str, tuple[float, float, int]],
    games: Sequence[GameRow],
    params: RatingParams,
    *,
    now: float,
    last_played: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The ladder's leaderboard as plain data (see the module); with ``last_played``, each
    player's ``sigma`` has grown for the time since (:meth:`SkillModel.idle`)."""
    tally, results = _games(games)
    k = params.rank_sigmas
    model = SkillModel(params)
    played = last_played or {}

    def rating(name: str) -> tuple[float, float, int]:
        mu, sigma, pairs = current.get(name, (params.mu, params.sigma, 0))
        if name in played:
            sigma = model.idle(Skill(mu, sigma), now - played[name]).sigma
        return mu, sigma, pairs

    def rank_value(p: Player) -> float:
        mu, sigma, _ = rating(p.player)
        return mu - k * sigma

    names = [p.player for p in sorted(players, key=rank_value, reverse=True)[:ELO_CHECK_PLAYERS]]
    known = set(names)
    fit = fit_ratings(names, {pair: v for pair, v in results.items() if set(pair) <= known})
    elo = {r.name: r for r in fit.ratings}
    rows: list[dict[str, Any]] = []
    for p in players:
        mu, sigma, pairs = rating(p.player)
        counts = tally.get(p.player, Counter())
        check = elo.get(p.player)
        rows.append(
            {
                **p.lineage(),
                "mu": round(mu, 4),
                "sigma": round(sigma, 4),
                "rank_value": round(mu - k * sigma, 4),
                "pairs": pairs,
                "games": sum(counts.values()),
                "wins": counts["wins"],
                "draws": counts["draws"],
                "losses": counts["losses"],
                "elo": None if check is None or check.elo is None else round(check.elo, 1),
            }
        )
    rows.sort(key=lambda r: (-r["rank_value"], -r["mu"], r["player"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    entrants: dict[str, dict[str, Any]] = {}
    for row in rows:  # best first
        entry = entrants.setdefault(
            row["entrant"],
            {"entrant": row["entrant"], "best": row["player"], "best_rank": row["rank"]},
        )
        latest = entry.get("latest_version", 0)
        if row["version"] > latest:
            entry.update(
                latest=row["player"],
                latest_version=row["version"],
                latest_rank=row["rank"],
                status=row["status"],
            )
    return {
        "ladder": name,
        "generated_at": now,
        "sorted_by": f"rank_value = mu - {k:g} * sigma, highest first (then mu)",
        "rating_model": "OpenSkill Plackett-Luce (Weng-Lin), updated after every pair",
        "pairs_rated": sum(r["pairs"] for r in rows) // 2,
        "games": sum(v[1] for v in results.values()),
        "players": rows,
        "entrants": sorted(entrants.values(), key=lambda e: e["best_rank"]),
        "elo_check": {
            "model": f"maximum-likelihood Elo over the games among the best {ELO_CHECK_PLAYERS}"
            " players",
            "status": fit.status,
            "note": fit.note,
        },
    }


def leaderboard_text(board: Mapping[str, Any]) -> str:
    """The leaderboard as a text table."""
    lines = [
        f"ladder {board['ladder']}: {board['pairs_rated']} pair(s) rated, {board['games']} game(s);"
        f" sorted by {board['sorted_by']}",
        f"{'#':>3}  {'player':<24} {'status':<10} {'mu':>7} {'sigma':>6} {'rank':>7}"
        f" {'pairs':>5} {'W-D-L':>11} {'elo':>7}",
    ]
    for r in board["players"]:
        elo = "n/a" if r["elo"] is None else f"{r['elo']:+.0f}"
        wdl = f"{r['wins']}-{r['draws']}-{r['losses']}"
        lines.append(
            f"{r['rank']:>3}  {r['player']:<24} {r['status']:<10} {r['mu']:>7.2f}"
            f" {r['sigma']:>6.2f} {r['rank_value']:>7.2f} {r['pairs']:>5} {wdl:>11} {elo:>7}"
        )
    check = board["elo_check"]
    if check["status"] != "ok":
        lines.append(
            f"elo check: {check['status']}" + (f" ({check['note']})" if check["note"] else "")
        )
    return "\n".join(lines)


def ladder_board(
    location: str | Path, config: LadderConfig | None = None, *, name: str | None = None
) -> dict[str, Any]:
    """The leaderboard of the ladder stored at ``location`` (a SQLite file, or a PostgreSQL URL
    with the ladder's ``name``), rated with its stored configuration's parameters unless
    ``config`` is given; StoreError if it holds no ladder (with ``config``, the live page's
    case, a ladder just starting has an empty leaderboard)."""
    name = name or (config.name if config is not None else None)
    store = open_store(location, tournament=name)
    try:
        stored, text, games = store.get_meta("ladder"), store.get_meta("config_toml"), store.games()
    finally:
        store.close()
    where = store.location
    if config is None and (stored is None or text is None):
        raise StoreError(where, "holds no ladder (start one with `gin-referee ladder run`)")
    if config is None:
        assert text is not None
        try:
            config = parse_ladder(tomllib.loads(text), source=f"{where} (stored config)")
        except (tomllib.TOMLDecodeError, ConfigError) as err:
            raise StoreError(
                where, f"its stored ladder configuration is unreadable: {err}"
            ) from None
    with LadderBook.open(location, ladder=config.name) as book:
        players, current, played = book.players(), book.current(), book.last_played()
    return leaderboard(config.name, players, current, games, config.ratings, now=time.time(),
                       last_played=played)  # fmt: skip
