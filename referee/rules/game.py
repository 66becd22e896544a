"""A game: hands until a player's points reach the target, then the end-of-game bonuses.

>>> from referee.rules.ruleset import STANDARD
>>> game = new_game(STANDARD, first_dealer=0)
>>> from referee.rules.scoring import HandResult, Termination
>>> game = record_hand(game, HandResult(Termination.GIN, winner=1, points=100))
>>> game.winner, game.dealer
(1, 1)
>>> final = final_score(game)
>>> final.totals, final.margin
((0, 325), 325)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from referee.rules.ruleset import NextDealer, RuleSet
from referee.rules.scoring import HandResult

__all__ = ["GameScore", "GameState", "final_score", "new_game", "record_hand"]


@dataclass(frozen=True, slots=True)
class GameState:
    """Running state of one game between two seats."""

    rules: RuleSet
    """The rule set in force."""
    dealer: int
    """Seat that deals the next hand."""
    scores: tuple[int, int] = (0, 0)
    """Hand points by seat (before end-of-game bonuses)."""
    hands_won: tuple[int, int] = (0, 0)
    """Scored hands won by seat."""
    hands_played: int = 0
    """Hands dealt so far, void hands included."""
    winner: int | None = None
    """Seat that reached the target, once one has."""

    @property
    def is_over(self) -> bool:
        """Whether a seat has reached the target."""
        return self.winner is not None


def new_game(rules: RuleSet, *, first_dealer: int) -> GameState:
    """A fresh game; ``first_dealer`` deals the first hand."""
    if first_dealer not in (0, 1):
        raise ValueError(f"first_dealer must be 0 or 1, not {first_dealer!r}")
    return GameState(rules=rules, dealer=first_dealer)


def record_hand(game: GameState, result: HandResult) -> GameState:
    """Add a finished hand: points, hands won, who deals next, and whether the game is over.

    A void hand (wall, turn cap) scores nothing and the same dealer deals again.
    """
    if game.is_over:
        raise ValueError("the game is already over")
    played = game.hands_played + 1
    if result.winner is None:
        return replace(game, hands_played=played)
    winner = result.winner
    scores = list(game.scores)
    won = list(game.hands_won)
    scores[winner] += result.points
    won[winner] += 1
    policy = game.rules.next_dealer
    if policy is NextDealer.WINNER:
        dealer = winner
    elif policy is NextDealer.LOSER:
        dealer = 1 - winner
    else:
        dealer = 1 - game.dealer
    return replace(
        game,
        scores=(scores[0], scores[1]),
        hands_won=(won[0], won[1]),
        hands_played=played,
        dealer=dealer,
        winner=winner if scores[winner] >= game.rules.target else None,
    )


@dataclass(frozen=True, slots=True)
class GameScore:
    """A finished game's score with its bonuses."""

    winner: int
    """Seat that won the game."""
    totals: tuple[int, int]
    """Final totals by seat: hand points plus box bonuses, plus game and shutout for the winner."""
    margin: int
    """Winner's total minus loser's total."""
    shutout: bool
    """Whether the loser won no hand."""


def final_score(game: GameState) -> GameScore:
    """Add the game bonus, a box bonus per hand won and the shutout bonus."""
    if game.winner is None:
        raise ValueError("the game is not over")
    rules = game.rules
    winner = game.winner
    loser = 1 - winner
    totals = [game.scores[s] + rules.box_bonus * game.hands_won[s] for s in (0, 1)]
    totals[winner] += rules.game_bonus
    shutout = game.hands_won[loser] == 0
    if shutout:
        totals[winner] += rules.shutout_bonus
    return GameScore(
        winner=winner,
        totals=(totals[0], totals[1]),
        margin=totals[winner] - totals[loser],
        shutout=shutout,
    )
