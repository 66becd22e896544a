"""Ratings after every pair: the Weng-Lin Bayesian model (OpenSkill's Plackett-Luce, the
``openskill`` package), a Gaussian skill ``mu`` with uncertainty ``sigma`` per player.

A pair's outcome is its score: the games a player won plus half its draws, over the games of
the pair (the two games of a duplicate deal, or one): more than half is a win, exactly half a
draw. docs/ladder.md says why a pair, not a game, is the unit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce

from referee.tournament.ladder.config import RatingParams

__all__ = ["Skill", "SkillModel", "pair_score", "unplayed"]


@dataclass(frozen=True, slots=True)
class Skill:
    """One player's rating."""

    mu: float
    sigma: float

    def rank_value(self, sigmas: float) -> float:
        """The conservative value the leaderboard sorts by: ``mu - sigmas * sigma``."""
        return self.mu - sigmas * self.sigma


def pair_score(player: str, results: Sequence[Mapping[str, Any]]) -> float:
    """``player``'s score in a pair's stored game results (0..1): wins, plus half the games
    without a winner, over the games."""
    if not results:
        raise ValueError("a pair has at least one game")
    points = 0.0
    for result in results:
        winner = result.get("winner")
        points += 1.0 if winner == player else 0.5 if winner is None else 0.0
    return points / len(results)


def unplayed(results: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a game of the pair was not played at all (``no_start``: neither bot started, a
    fault of the machine rather than of either): such a pair is not rated, rather than rated a
    draw that says nothing about the two."""
    return any(result.get("reason") == "no_start" for result in results)


class SkillModel:
    """The rating model of a ladder (its ``[ratings]`` parameters)."""

    def __init__(self, params: RatingParams) -> None:
        self.params = params
        self._model = PlackettLuce(
            mu=params.mu, sigma=params.sigma, beta=params.beta, tau=params.tau
        )

    def new(self) -> Skill:
        """A new player's rating."""
        return Skill(self.params.mu, self.params.sigma)

    def idle(self, skill: Skill, seconds: float) -> Skill:
        """``skill`` after ``seconds`` without a pair: its ``sigma`` grown by
        ``idle_sigma_per_day`` per day (in quadrature), at most a new player's."""
        days = max(0.0, seconds) / 86400.0
        grown = math.hypot(skill.sigma, self.params.idle_sigma_per_day * days)
        return Skill(skill.mu, min(max(grown, skill.sigma), max(skill.sigma, self.params.sigma)))

    def rate(self, a: Skill, b: Skill, score_a: float) -> tuple[Skill, Skill]:
        """Both ratings after a pair that ``a`` scored ``score_a`` (0..1) in against ``b``."""
        if not 0.0 <= score_a <= 1.0:
            raise ValueError(f"a pair's score is between 0 and 1, not {score_a!r}")
        ranks = [0.0, 0.0] if score_a == 0.5 else [0.0, 1.0] if score_a > 0.5 else [1.0, 0.0]
        one = self._model.rating(mu=a.mu, sigma=a.sigma)
        two = self._model.rating(mu=b.mu, sigma=b.sigma)
        [[new_a], [new_b]] = self._model.rate([[one], [two]], ranks=ranks)
        return Skill(float(new_a.mu), float(new_a.sigma)), Skill(
            float(new_b.mu), float(new_b.sigma)
        )
