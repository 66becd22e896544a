"""Standings, pairwise Elo and ratings from stored game results; rendered as text, CSV or JSON.

Scores are game results (1 win, 0.5 no winner, 0 loss). With duplicate deals the two games of
a pair are one unit of the statistics (pentanomial); ratings are a maximum-likelihood fit over
every game. An estimate that does not exist is reported as such, never as a number; see
docs/statistics.md.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from referee.tournament.stats import (
    EloEstimate,
    Pentanomial,
    RatingFit,
    Trinomial,
    estimate_games,
    estimate_pairs,
    fit_ratings,
    perfect_units_needed,
)
from referee.tournament.store import GameRow

__all__ = [
    "BotStanding",
    "PairingStat",
    "Standings",
    "compute_standings",
    "elo_text",
    "estimate_text",
    "render",
]


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
    rating: float | None = None
    rating_low: float | None = None
    rating_high: float | None = None
    rank: int | None = None
    """Place in the standings; None for a bot that has not played (it is listed last)."""
    tied: bool = False
    """Another bot has the same score and points per game, hence the same rank."""

    @property
    def score(self) -> float | None:
        """Mean game score; None before the first game."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else None

    @property
    def points_per_game(self) -> float | None:
        """Mean of the bot's final game totals; None before the first game."""
        return self.points / self.games if self.games else None

    @property
    def rank_text(self) -> str:
        """The rank as printed: ``3``, ``3=`` when tied, ``-`` before the first game."""
        return "-" if self.rank is None else f"{self.rank}{'=' * self.tied}"


@dataclass(frozen=True, slots=True)
class PairingStat:
    """Head to head of two bots: ``first``'s score, Elo difference and LOS."""

    first: str
    second: str
    games: int
    score: float | None
    """``first``'s mean game score; None before the first game."""
    elo: EloEstimate
    paired: bool = True


@dataclass(slots=True)
class Standings:
    """Everything ``results`` prints."""

    bots: list[BotStanding]
    pairings: list[PairingStat]
    matrix: dict[str, dict[str, float]] = field(default_factory=dict)
    done: int = 0
    total: int = 0
    rating_note: str = ""
    rating_hint: str = ""
    """What would give the ratings a finite estimate, when they have none."""
    prior_draws: float = 0.0


def _score(result: dict[str, Any], name: str) -> float:
    winner = result.get("winner")
    if winner is None:
        return 0.5
    return 1.0 if winner == name else 0.0


def compute_standings(rows: list[GameRow], *, prior_draws: float = 0.0) -> Standings:
    """Aggregate finished games into standings, pairwise estimates and fitted ratings.

    ``prior_draws`` virtual draws per pairing regularise the ratings (0: pure maximum
    likelihood); the head-to-head estimates never use a prior.
    """
    table: dict[str, BotStanding] = {}
    matrix: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    pair_games: dict[tuple[str, str], list[float]] = defaultdict(list)
    pair_units: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    done = 0
    scheduled: dict[tuple[str, str], bool] = {}
    for row in rows:
        for name in (row.spec.seat0, row.spec.seat1):
            table.setdefault(name, BotStanding(name))
        first, second = row.spec.pairing.split("-vs-", 1)
        scheduled[(first, second)] = row.spec.pair_index is not None
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
    for (first, second), paired in sorted(scheduled.items()):
        scores = pair_games.get((first, second), [])
        units = pair_units.get((first, second), {})
        if paired:
            complete = [sum(v) for v in units.values() if len(v) == 2]
            estimate = estimate_pairs(Pentanomial.from_pair_scores(complete))
        else:
            estimate = estimate_games(Trinomial.from_scores(scores))
        mean = sum(scores) / len(scores) if scores else None
        pairings.append(PairingStat(first, second, len(scores), mean, estimate, paired))
    bots = list(table.values())
    results = {pair: (sum(scores), len(scores)) for pair, scores in pair_games.items()}
    fit = fit_ratings([b.name for b in bots], results, prior_draws=prior_draws)
    for bot, rating in zip(bots, fit.ratings, strict=True):
        bot.rating, bot.rating_low, bot.rating_high = rating.elo, rating.lower, rating.upper
    _rank(bots)
    matrix_out = {k: dict(v) for k, v in matrix.items()}
    return Standings(bots, pairings, matrix_out, done, len(rows), fit.note,
                     _rating_hint(fit), prior_draws)  # fmt: skip


def _rank(bots: list[BotStanding]) -> None:
    """Sort by score, then points per game (then name, which decides nothing: tied bots share
    the rank of the first of them); bots without a game go last, unranked."""

    def key(b: BotStanding) -> tuple[float, float]:
        return (-(b.score or 0.0), -(b.points_per_game or 0.0))

    bots.sort(key=lambda b: (b.games == 0, key(b), b.name))
    played = [b for b in bots if b.games]
    for bot in played:
        same = [other for other in played if key(other) == key(bot)]
        bot.rank = 1 + played.index(same[0])
        bot.tied = len(same) > 1


def _rating_hint(fit: RatingFit) -> str:
    """What would make the ratings finite: games between groups that never met (a prior on
    the pairings played cannot link them), or ``--prior-draws`` for a perfect record."""
    if fit.status != "no finite estimate":
        return ""
    if fit.unlinked:
        groups = " and ".join("{" + ", ".join(g) + "}" for g in fit.unlinked)
        return f"games between {groups} would put them on one scale; --prior-draws cannot"
    return "--prior-draws N regularises them"


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def _finite(x: float | None) -> float | None:
    """JSON has no infinity: an unbounded interval end is null."""
    return x if x is not None and math.isfinite(x) else None


def elo_text(x: float | None, decimals: int = 0) -> str:
    """An Elo value as text: signed, ``0`` (never ``-0``), ``n/a``, or ``+inf``/``-inf``."""
    if x is None:
        return "n/a"
    if not math.isfinite(x):
        return "+inf" if x > 0 else "-inf"
    text = f"{x:+.{decimals}f}"
    return text[1:] if float(text) == 0.0 else text


_elo = elo_text


def _decimals(lower: float, upper: float) -> int:
    """Enough decimals for an interval narrower than a few Elo to show its width."""
    width = upper - lower
    return 0 if not width < 10.0 else 1 if width >= 1.0 else 2


def _csv(x: float | None, decimals: int = 1) -> str:
    return "" if x is None else f"{x:.{decimals}f}"


def estimate_text(e: EloEstimate, paired: bool = True) -> str:
    """One head-to-head estimate as text: the Elo with its 95% interval and LOS, or what is
    known when there is no estimate (``paired``: the units are duplicate pairs); a sample of
    fewer than SMALL_SAMPLE games (5 pairs) says it is too few to say much.

    A perfect record says so in words, with its one-sided bound: "won every pair (50 of 50):
    at least +446 Elo (95%)"; when that bound is not above 0 the record does not yet show the
    bot is the stronger, and the text says how many perfect units would."""
    unit = "pair" if paired else "game"
    if e.status == "empty":
        return "no complete duplicate pair yet" if unit == "pair" else "no games"
    notes = []
    if e.status == "no finite estimate":
        won = e.upper == math.inf
        bound = e.lower if won else e.upper
        verb, n = ("won" if won else "lost"), e.units
        text = f"{verb} every {unit} ({n} of {n})"
        if (bound > 0) == won and bound != 0:
            side = "at least" if won else "at most"
            return f"{text}: {side} {_elo(bound)} Elo (95%)"
        need = perfect_units_needed()
        better = "stronger" if won else "weaker"
        sign = ">" if won else "<"
        return (f"{text}, too few to say it is {better} at 95% ({need} of {need} would; "
                f"the bound is Elo {sign} {_elo(bound)})")  # fmt: skip
    assert e.los is not None
    d = _decimals(e.lower, e.upper)
    text = (f"Elo {_elo(e.elo, d)} [{_elo(e.lower, d)}, {_elo(e.upper, d)}], "
            f"LOS {100 * e.los:.1f}%")  # fmt: skip
    if e.status == "no spread":
        notes.append(f"every {unit} scored the same")
    if e.too_few:
        notes.append(f"{e.units} {unit}{'s' * (e.units > 1)}: too few to say much")
    return text + "".join(f" ({note})" for note in notes)


def render(standings: Standings, fmt: str = "table") -> str:
    """Standings as ``table`` (readable), ``csv`` or ``json``."""
    if fmt == "json":
        return json.dumps(
            {
                "schema_version": 3,
                "games_done": standings.done,
                "games_total": standings.total,
                "rating_note": standings.rating_note,
                "rating_hint": standings.rating_hint,
                "prior_draws": standings.prior_draws,
                "bots": [
                    {**asdict(b), "score": _round(b.score, 4),
                     "points_per_game": _round(b.points_per_game, 2)}
                    for b in standings.bots
                ],
                "pairings": [
                    {"first": p.first, "second": p.second, "games": p.games,
                     "score": _round(p.score, 4),
                     **{**asdict(p.elo), "lower": _finite(p.elo.lower),
                        "upper": _finite(p.elo.upper), "too_few": p.elo.too_few}}
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
        for b in standings.bots:
            writer.writerow([b.rank_text, b.name, b.games, b.wins, b.draws, b.losses,
                             _csv(b.score, 4), _csv(b.points_per_game, 2), _csv(b.rating),
                             _csv(b.rating_low), _csv(b.rating_high), b.faults])  # fmt: skip
        return buffer.getvalue()
    width = max([len(b.name) for b in standings.bots] + [3])
    lines = [
        f"games: {standings.done}/{standings.total}",
        f"{'#':>2}  {'bot':<{width}}  games   W-D-L        score  pts/game  "
        "rating (95%)       faults",
    ]
    for b in standings.bots:
        wdl = f"{b.wins}-{b.draws}-{b.losses}"
        interval = "" if b.rating is None else f"[{_elo(b.rating_low)}, {_elo(b.rating_high)}]"
        score = "-" if b.score is None else f"{b.score:.3f}"
        ppg = "-" if b.points_per_game is None else f"{b.points_per_game:.1f}"
        lines.append(
            f"{b.rank_text:>2}  {b.name:<{width}}  {b.games:>5}  {wdl:<11}  {score:>5}  "
            f"{ppg:>8}  {_elo(b.rating):>6} {interval:<12}  {b.faults:>5}"
        )
    if any(b.tied for b in standings.bots):
        lines.append("= tied on score and points per game (listed by name)")
    if any(b.rank is None for b in standings.bots):
        lines.append("- no game played yet")
    if standings.rating_note == "no games":
        lines.append("ratings: no games yet")
    elif standings.rating_note:
        hint = f" ({standings.rating_hint})" if standings.rating_hint else ""
        lines.append(f"ratings: {standings.rating_note}{hint}")
    elif standings.prior_draws:
        lines.append(f"ratings regularised by {standings.prior_draws:g} virtual draws per pairing")
    if standings.pairings:
        lines.append("")
        lines.append("head to head (first's score, Elo difference with 95% interval, LOS):")
        for p in standings.pairings:
            score = "" if p.score is None else f"score {p.score:.3f}, "
            lines.append(
                f"  {p.first} vs {p.second}: {p.games} games, {score}"
                + estimate_text(p.elo, p.paired)
            )
    return "\n".join(lines)
