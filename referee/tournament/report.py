"""Standings, pairwise Elo and ratings from stored game results; rendered as text, CSV or JSON.

Scores are game results (1 win, 0.5 no winner, 0 loss). With duplicate deals the two games of
a pair are one unit of the statistics (pentanomial); see docs/statistics.md.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from referee.tournament.stats import (
    EloEstimate,
    Pentanomial,
    Trinomial,
    estimate_games,
    estimate_pairs,
)
from referee.tournament.store import GameRow

__all__ = ["BotStanding", "PairingStat", "Standings", "compute_standings", "render"]


@dataclass(slots=True)
class BotStanding:
    """One bot's totals."""

    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: int = 0
    faults: int = 0
    rating: float = 0.0
    rating_low: float = 0.0
    rating_high: float = 0.0

    @property
    def score(self) -> float:
        """Mean game score."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def points_per_game(self) -> float:
        """Mean of the bot's final game totals."""
        return self.points / self.games if self.games else 0.0


@dataclass(frozen=True, slots=True)
class PairingStat:
    """Head to head of two bots: ``first``'s score, Elo difference and LOS."""

    first: str
    second: str
    games: int
    score: float
    elo: EloEstimate


@dataclass(slots=True)
class Standings:
    """Everything ``results`` prints."""

    bots: list[BotStanding]
    pairings: list[PairingStat]
    matrix: dict[str, dict[str, float]] = field(default_factory=dict)
    done: int = 0
    total: int = 0


def _score(result: dict[str, Any], name: str) -> float:
    winner = result.get("winner")
    if winner is None:
        return 0.5
    return 1.0 if winner == name else 0.0


def compute_standings(rows: list[GameRow]) -> Standings:
    """Aggregate finished games into standings, pairwise estimates and fitted ratings."""
    table: dict[str, BotStanding] = {}
    matrix: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    pair_games: dict[tuple[str, str], list[float]] = defaultdict(list)
    pair_units: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    done = 0
    for row in rows:
        for name in (row.spec.seat0, row.spec.seat1):
            table.setdefault(name, BotStanding(name))
        if row.status != "done" or row.result is None:
            continue
        done += 1
        result = row.result
        first, second = row.spec.pairing.split("-vs-", 1)
        for seat, name in enumerate((row.spec.seat0, row.spec.seat1)):
            standing = table[name]
            standing.games += 1
            s = _score(result, name)
            standing.wins += s == 1.0
            standing.draws += s == 0.5
            standing.losses += s == 0.0
            standing.points += int(result["totals"][seat])
            standing.faults += sum(1 for f in result.get("faults", []) if f["seat"] == seat)
        s_first = _score(result, first)
        matrix[first][second] += s_first
        matrix[second][first] += 1.0 - s_first
        pair_games[(first, second)].append(s_first)
        if row.spec.pair_index is not None:
            pair_units[(first, second)][row.spec.pair_index].append(s_first)
    pairings = []
    for (first, second), scores in sorted(pair_games.items()):
        units = pair_units.get((first, second))
        if units:
            complete = [sum(v) for v in units.values() if len(v) == 2]
            estimate = estimate_pairs(Pentanomial.from_pair_scores(complete))
            band = estimate_pairs(Pentanomial.from_pair_scores([*complete, 1.0]))
        else:
            wins = sum(1 for s in scores if s == 1.0)
            draws = sum(1 for s in scores if s == 0.5)
            losses = len(scores) - wins - draws
            estimate = estimate_games(Trinomial(wins, draws, losses))
            band = estimate_games(Trinomial(wins, draws + 1, losses))
        # The interval (not the estimate) counts one extra drawn unit, a weak prior so that a
        # perfect record gets a finite, honest interval instead of a zero-width one.
        estimate = replace(estimate, lower=band.lower, upper=band.upper)
        pairings.append(
            PairingStat(first, second, len(scores), sum(scores) / len(scores), estimate)
        )
    bots = list(table.values())
    _fit_ratings(bots, pair_games)
    bots.sort(key=lambda b: (-b.score, -b.points_per_game, b.name))
    return Standings(bots, pairings, {k: dict(v) for k, v in matrix.items()}, done, len(rows))


def _fit_ratings(bots: list[BotStanding], pair_games: dict[tuple[str, str], list[float]]) -> None:
    """Logistic (Elo) ratings by maximum likelihood over all games, mean 0, with an interval
    from each bot's score against the field it met."""
    index = {b.name: i for i, b in enumerate(bots)}
    ratings = [0.0] * len(bots)
    for _ in range(500):
        gradient = [0.0] * len(bots)
        for (a, b), scores in pair_games.items():
            i, j = index[a], index[b]
            expected = 1 / (1 + 10 ** ((ratings[j] - ratings[i]) / 400))
            delta = sum(scores) - expected * len(scores)
            gradient[i] += delta
            gradient[j] -= delta
        step = max(abs(g) for g in gradient) if gradient else 0.0
        for k, g in enumerate(gradient):
            ratings[k] = max(-1500.0, min(1500.0, ratings[k] + 8.0 * g / max(1, bots[k].games)))
        if step < 1e-6:
            break
    mean = sum(ratings) / len(ratings) if ratings else 0.0
    for k, bot in enumerate(bots):
        bot.rating = ratings[k] - mean
        # The interval comes from the bot's score against the field it met (one extra drawn
        # game as a weak prior), shifted onto the fitted rating; it may be asymmetric.
        band = estimate_games(Trinomial(bot.wins, bot.draws + 1, bot.losses))
        bot.rating_low = bot.rating + (band.lower - band.elo)
        bot.rating_high = bot.rating + (band.upper - band.elo)


def render(standings: Standings, fmt: str = "table") -> str:
    """Standings as ``table`` (readable), ``csv`` or ``json``."""
    if fmt == "json":
        return json.dumps(
            {
                "schema_version": 1,
                "games_done": standings.done,
                "games_total": standings.total,
                "bots": [
                    {**asdict(b), "score": round(b.score, 4),
                     "points_per_game": round(b.points_per_game, 2)}
                    for b in standings.bots
                ],
                "pairings": [
                    {"first": p.first, "second": p.second, "games": p.games,
                     "score": round(p.score, 4), **asdict(p.elo)}
                    for p in standings.pairings
                ],
                "matrix": standings.matrix,
            },
            indent=2,
        )  # fmt: skip
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        header = ["rank", "bot", "games", "wins", "draws", "losses", "score"]
        header += ["points_per_game", "rating", "rating_low", "rating_high", "faults"]
        writer.writerow(header)
        for rank, b in enumerate(standings.bots, start=1):
            writer.writerow([rank, b.name, b.games, b.wins, b.draws, b.losses, f"{b.score:.4f}",
                             f"{b.points_per_game:.2f}", f"{b.rating:.1f}", f"{b.rating_low:.1f}",
                             f"{b.rating_high:.1f}", b.faults])  # fmt: skip
        return buffer.getvalue()
    width = max([len(b.name) for b in standings.bots] + [3])
    lines = [
        f"games: {standings.done}/{standings.total}",
        f"{'#':>2}  {'bot':<{width}}  games   W-D-L        score  pts/game  "
        "rating (95%)       faults",
    ]
    for rank, b in enumerate(standings.bots, start=1):
        wdl = f"{b.wins}-{b.draws}-{b.losses}"
        interval = f"[{b.rating_low:+.0f}, {b.rating_high:+.0f}]"
        lines.append(
            f"{rank:>2}  {b.name:<{width}}  {b.games:>5}  {wdl:<11}  {b.score:>5.3f}  "
            f"{b.points_per_game:>8.1f}  {b.rating:>+6.0f} {interval:<12}  {b.faults:>5}"
        )
    if standings.pairings:
        lines.append("")
        lines.append("head to head (first's score, Elo difference with 95% interval, LOS):")
        for p in standings.pairings:
            lines.append(
                f"  {p.first} vs {p.second}: {p.games} games, score {p.score:.3f}, "
                f"Elo {p.elo.elo:+.0f} [{p.elo.lower:+.0f}, {p.elo.upper:+.0f}], "
                f"LOS {100 * p.elo.los:.1f}%"
            )
    return "\n".join(lines)
