"""What dealing a pair's two games apart costs, in games per unit of rating precision.

A duplicate pair deals the same cards twice with the seats swapped, so the luck of the deal
cancels. A pair with a remote player cannot (it may remember the first game's cards:
docs/statistics.md, "Remote bots and duplicate deals"), so its two games deal apart. This
simulation measures the cost: two bots of close strength (the sample greedy bot against the
same bot playing a random legal action with probability ``--noise``) play ``--pairs`` pairs
of games (one game: hands to 100, the tournament's unit), once duplicate, once apart, from the
same seeds, in the pure rules engine. The spread of a pair's score (points: 1 a win, 0 a loss,
per game, summed over the pair) gives the games needed for a 95% interval of +-10 Elo:
``n = (1.96 * sd_pair / (10 * dE/ds))**2 * 2`` games, where ``dE/ds`` is the slope of the
logistic Elo curve at the measured score. Run: ``python -m bench.bench_duplicate``.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import statistics
import time
from collections.abc import Callable

from referee.rules import (
    STANDARD,
    Action,
    Card,
    CardSet,
    HandState,
    apply,
    deadwood,
    deal,
    legal_actions,
    new_game,
    observe,
    record_hand,
    shuffled_deck,
)
from referee.rules.actions import BigGin, Discard, DrawStock, Knock, PassUpcard, TakeDiscard

Policy = Callable[[HandState, random.Random], Action]


def _after(hand: CardSet, card: Card) -> tuple[int, int]:
    return deadwood(hand.remove(card)), -card.value


def greedy(state: HandState, rng: random.Random) -> Action:
    """The sample greedy bot's choices (sample_bots/greedy_bot.py) on the rules' own types."""
    legal = legal_actions(state)
    view = observe(state, state.to_act)
    hand = view.hand
    for action in legal:
        if isinstance(action, BigGin):
            return action
    knocks = [a for a in legal if isinstance(a, Knock)]
    if knocks:
        return min(knocks, key=lambda a: _after(hand, a.card))
    discards = [a for a in legal if isinstance(a, Discard)]
    if discards:
        return min(discards, key=lambda a: _after(hand, a.card))
    take = next((a for a in legal if isinstance(a, TakeDiscard)), None)
    if take is not None and view.discard_pile:
        with_top = hand.add(view.discard_pile[-1])
        if min(deadwood(with_top.remove(c)) for c in hand) < deadwood(hand):
            return take
    draw = next((a for a in legal if isinstance(a, DrawStock)), None)
    return draw or next(a for a in legal if isinstance(a, PassUpcard))


def noisy(noise: float) -> Policy:
    """The greedy bot, but a random legal action with probability ``noise``."""

    def policy(state: HandState, rng: random.Random) -> Action:
        if rng.random() < noise:
            return rng.choice(legal_actions(state))
        return greedy(state, rng)

    return policy


def play_game(seats: tuple[Policy, Policy], deck_seed: str, rng: random.Random) -> int:
    """One game to 100 (seat 0 deals first); each hand's deck from ``deck_seed`` and its
    number. Returns the winning seat."""
    game = new_game(STANDARD, first_dealer=0)
    hand = 0
    while not game.is_over and hand < 200:
        digest = hashlib.sha256(f"{deck_seed}/{hand}".encode()).digest()
        state = deal(STANDARD, shuffled_deck(random.Random(digest)), dealer=game.dealer)
        while not state.is_over:
            state = apply(state, seats[state.to_act](state, rng))
        assert state.result is not None
        game = record_hand(game, state.result)
        hand += 1
    return game.winner if game.winner is not None else rng.randrange(2)


def pair_score(a: Policy, b: Policy, seed: int, *, duplicate: bool) -> float:
    """Bot ``a``'s points (0, 1 or 2) over a pair: ``a`` in seat 0, then in seat 1."""
    rng = random.Random(seed)
    first = play_game((a, b), f"{seed}/deal", rng)
    second = play_game((b, a), f"{seed}/deal" if duplicate else f"{seed}/other", rng)
    return (first == 0) + (second == 1)


def games_for(sd_pair: float, score: float, elo: float = 10.0) -> float:
    """Games for a 95% interval of +-``elo`` Elo, given a pair's score spread and the mean
    score per game."""
    score = min(max(score, 0.01), 0.99)
    slope = 400 / math.log(10) / (score * (1 - score))  # Elo per unit of per-game score
    sd_game_mean = sd_pair / 2  # a pair's mean per game
    pairs = (1.96 * sd_game_mean * slope / elo) ** 2
    return 2 * pairs


def main() -> None:
    """Run both designs on the same seeds and print the spread and the games they need."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    strong, weak = greedy, noisy(args.noise)
    started = time.monotonic()
    for duplicate in (True, False):
        scores = [pair_score(strong, weak, args.seed * 1_000_003 + i, duplicate=duplicate)
                  for i in range(args.pairs)]  # fmt: skip
        mean = statistics.fmean(scores) / 2
        sd = statistics.stdev(scores)
        elo = -400 * math.log10(1 / min(max(mean, 0.001), 0.999) - 1)
        name = "duplicate" if duplicate else "apart"
        need = games_for(sd, mean)
        print(f"{name:>9}: {args.pairs} pairs, score {mean:.3f} per game ({elo:+.0f} Elo), "
              f"pair sd {sd:.3f}, games for +-10 Elo (95%): {need:,.0f}")  # fmt: skip
    print(f"({time.monotonic() - started:.0f} s; noise {args.noise}, seed {args.seed})")


if __name__ == "__main__":
    main()
