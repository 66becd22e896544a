"""Scoring a finished hand: knocker's arrangement, the defender's layoffs, gin and undercut.

The defender's layoffs and own melds are chosen together to minimise its deadwood; the hand is
over, so the engine makes that choice optimally. Cards are laid off singly onto the knocker's
melds: the fourth card of a set, and chains at either end of a run (8s then 9s onto 5s6s7s).
Nothing is laid off onto deadwood, nor onto a gin or big-gin hand.

>>> standard = RuleSet.preset("standard")
>>> score_hand(standard, knocker_deadwood=8, defender_deadwood=32).points
24
>>> score_hand(standard, knocker_deadwood=8, defender_deadwood=6)
HandScore(termination=<Termination.UNDERCUT: 'undercut'>, knocker_wins=False, points=27)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from itertools import product

from referee.rules.arrangement import arrangements, knock_arrangement
from referee.rules.cards import DECK, ROW_MASK, Card, CardSet, mask_value
from referee.rules.melds import (
    _COLUMN,
    Meld,
    _best_packing,
    best_melds,
    split_packing,
)
from referee.rules.ruleset import RuleSet

__all__ = [
    "Defence",
    "HandResult",
    "HandScore",
    "Termination",
    "best_defence",
    "declared_defence",
    "defend_result",
    "layoff_options",
    "resolve_knock",
    "score_hand",
]


class Termination(StrEnum):
    """How a hand ended."""

    KNOCK = "knock"
    GIN = "gin"
    BIG_GIN = "big_gin"
    UNDERCUT = "undercut"
    WALL = "wall"
    TURN_CAP = "turn_cap"
    FORFEIT = "forfeit"

    @property
    def is_void(self) -> bool:
        """Whether the hand scores nothing and is redealt by the same dealer."""
        return self in (Termination.WALL, Termination.TURN_CAP)


@dataclass(frozen=True, slots=True)
class HandScore:
    """The outcome of :func:`score_hand`."""

    termination: Termination
    """KNOCK, GIN, BIG_GIN or UNDERCUT."""
    knocker_wins: bool
    """False only for an undercut."""
    points: int
    """Points the winner of the hand scores (after any multiplier)."""


def score_hand(
    rules: RuleSet,
    *,
    knocker_deadwood: int,
    defender_deadwood: int,
    gin: bool = False,
    big_gin: bool = False,
    multiplier: int = 1,
) -> HandScore:
    """Score a hand from the two final deadwood counts (the defender's after layoffs).

    >>> score_hand(RuleSet.preset("classic"), knocker_deadwood=73, defender_deadwood=39).points
    44
    """
    if big_gin:
        if rules.big_gin_bonus is None:
            raise ValueError("big gin is not played under these rules")
        points = rules.big_gin_bonus + defender_deadwood
        return HandScore(Termination.BIG_GIN, True, points * multiplier)
    if gin:
        return HandScore(Termination.GIN, True, (rules.gin_bonus + defender_deadwood) * multiplier)
    if knocker_deadwood < defender_deadwood:
        return HandScore(
            Termination.KNOCK, True, (defender_deadwood - knocker_deadwood) * multiplier
        )
    points = knocker_deadwood - defender_deadwood + rules.undercut_bonus
    return HandScore(Termination.UNDERCUT, False, points * multiplier)


def layoff_options(defender: int, meld: int) -> list[int]:
    """Every set of the defender's cards that can be laid off onto one meld (0 included)."""
    options = [0]
    low = (meld & -meld).bit_length() - 1
    rank = low % 13
    if meld.bit_count() <= 4 and meld & ~_COLUMN[rank] == 0:
        missing = _COLUMN[rank] & ~meld
        if meld.bit_count() == 3 and defender & missing:
            options.append(missing)
        return options
    base = low - rank
    row = meld >> base & ROW_MASK
    top = row.bit_length() - 1
    below = [0]
    r = rank - 1
    while r >= 0 and defender >> (base + r) & 1:
        below.append(below[-1] | 1 << (base + r))
        r -= 1
    above = [0]
    r = top + 1
    while r < 13 and defender >> (base + r) & 1:
        above.append(above[-1] | 1 << (base + r))
        r += 1
    return [lo | hi for lo in below for hi in above]


@dataclass(frozen=True, slots=True)
class Defence:
    """The defender's best response to a knock."""

    deadwood: int
    """Deadwood after layoffs and own melds."""
    melds: tuple[Meld, ...]
    """The defender's own melds."""
    layoffs: tuple[tuple[Card, Meld], ...]
    """Each laid-off card with the knocker's meld it joined."""


def best_defence(defender: int, knocker_melds: tuple[Meld, ...], *, allow_layoffs: bool) -> Defence:
    """The defender's layoffs and melds that minimise its deadwood (exhaustive, exact)."""
    per_meld = [layoff_options(defender, m.mask) if allow_layoffs else [0] for m in knocker_melds]
    best: tuple[int, int, tuple[int, ...]] | None = None
    seen: set[int] = set()
    for combo in product(*per_meld):
        laid = 0
        disjoint = True
        for option in combo:
            if laid & option:
                disjoint = False
                break
            laid |= option
        if not disjoint or laid in seen:
            continue
        seen.add(laid)
        rest = defender & ~laid
        dw = mask_value(rest) - _best_packing(rest)[1]
        if best is None or dw < best[0]:
            best = (dw, laid, combo)
    assert best is not None
    dw, laid, combo = best
    rest = defender & ~laid
    layoffs = tuple(
        (DECK[i], meld)
        for meld, option in zip(knocker_melds, combo, strict=True)
        for i in _chain_order(option, meld.mask)
    )
    return Defence(dw, split_packing(rest, _best_packing(rest)[0]), layoffs)


def declared_defence(
    defender: int, melds: tuple[Meld, ...], knocker_melds: tuple[Meld, ...], *, allow_layoffs: bool
) -> Defence:
    """The defender's deadwood with its own ``melds`` as declared: its other cards are deadwood
    except those it lays off (chosen for the least deadwood; no other meld is formed)."""
    covered = 0
    for meld in melds:
        covered |= meld.mask
    rest = defender & ~covered
    per_meld = [layoff_options(rest, m.mask) if allow_layoffs else [0] for m in knocker_melds]
    best: tuple[int, tuple[int, ...]] | None = None
    for combo in product(*per_meld):
        laid = 0
        for option in combo:
            if laid & option:
                break
            laid |= option
        else:
            dw = mask_value(rest & ~laid)
            if best is None or dw < best[0]:
                best = (dw, combo)
    assert best is not None
    dw, combo = best
    layoffs = tuple(
        (DECK[i], meld)
        for meld, option in zip(knocker_melds, combo, strict=True)
        for i in _chain_order(option, meld.mask)
    )
    return Defence(dw, melds, layoffs)


def defend_result(
    rules: RuleSet, result: HandResult, melds: tuple[Meld, ...], multiplier: int = 1
) -> HandResult:
    """``result`` (a knock's) scored again with the defender's declared ``melds``."""
    knocker = result.knocker
    assert knocker is not None
    defender = 1 - knocker
    big_gin = result.termination is Termination.BIG_GIN
    k_dw = result.deadwood[knocker]
    gin = k_dw == 0 and not big_gin
    defence = declared_defence(
        result.hands[defender].mask, melds, result.melds[knocker],
        allow_layoffs=not (gin or big_gin),
    )  # fmt: skip
    score = score_hand(
        rules, knocker_deadwood=k_dw, defender_deadwood=defence.deadwood, gin=gin,
        big_gin=big_gin, multiplier=multiplier,
    )  # fmt: skip
    hands = result.hands
    scored = _result(
        knocker, hands[knocker].mask, hands[defender].mask, result.melds[knocker], k_dw,
        defence, score,
    )  # fmt: skip
    return replace(scored, defended=True)


def _chain_order(option: int, meld: int) -> list[int]:
    """Indices of ``option`` ordered from the meld outwards (the order they are laid off)."""
    low = (meld & -meld).bit_length() - 1
    high = meld.bit_length() - 1
    indices = [i for i in range(52) if option >> i & 1]
    return sorted(indices, key=lambda i: min(abs(i - low), abs(i - high)))


@dataclass(frozen=True, slots=True)
class HandResult:
    """Everything about how a hand ended; public once the hand is over."""

    termination: Termination
    """How the hand ended."""
    winner: int | None
    """Seat that scores, or None for a void hand."""
    points: int
    """Points scored by ``winner`` (0 for a void hand)."""
    knocker: int | None = None
    """Seat that knocked (or went gin/big gin), if any."""
    hands: tuple[CardSet, CardSet] = (CardSet(), CardSet())
    """Final hands by seat (the knocker's without its knock discard)."""
    melds: tuple[tuple[Meld, ...], tuple[Meld, ...]] = ((), ())
    """Melds by seat (the defender's own melds, not counting layoffs)."""
    layoffs: tuple[tuple[Card, Meld], ...] = ()
    """Cards the defender laid off, each with the knocker's meld it joined."""
    deadwood: tuple[int, int] = (0, 0)
    """Final deadwood by seat (the defender's after layoffs)."""
    defended: bool = False
    """The defender declared its own melds (:func:`defend_result`)."""


def resolve_knock(
    rules: RuleSet,
    *,
    knocker: int,
    knocker_hand: int,
    defender_hand: int,
    knock_limit: int,
    declared: tuple[Meld, ...] | None,
    big_gin: bool = False,
    multiplier: int = 1,
) -> HandResult:
    """Resolve a knock, gin or big gin into a scored :class:`HandResult`.

    ``declared`` is the knocker's own arrangement (already validated by the caller) or None. For
    None the engine shows :func:`~referee.rules.arrangement.knock_arrangement` of the knocker's
    cards: chosen blind, from those cards alone (a gin hand is shown as :func:`best_melds`
    arranges it; nothing is laid off on a gin, so its arrangement never changes the score).
    Only under ``rules.knock_hindsight`` does the choice read ``defender_hand``: then it is the
    arrangement within the knock limit that scores best for the knocker against the defender's
    optimal layoffs (ties: lower knocker deadwood, then the first in :func:`arrangements`
    order), the rule before that option existed.
    """
    if big_gin or declared is None:
        melds, rest = best_melds(CardSet(knocker_hand))
        if big_gin or rest.mask == 0:
            defence = best_defence(defender_hand, melds, allow_layoffs=False)
            score = score_hand(
                rules,
                knocker_deadwood=0,
                defender_deadwood=defence.deadwood,
                gin=not big_gin,
                big_gin=big_gin,
                multiplier=multiplier,
            )
            return _result(knocker, knocker_hand, defender_hand, melds, 0, defence, score)
        if not rules.knock_hindsight:
            declared = knock_arrangement(CardSet(knocker_hand), knock_limit)
        else:
            return _hindsight_knock(
                rules, knocker, knocker_hand, defender_hand, knock_limit, multiplier
            )
    covered = 0
    for meld in declared:
        covered |= meld.mask
    k_dw = mask_value(knocker_hand & ~covered)
    gin = k_dw == 0
    defence = best_defence(defender_hand, declared, allow_layoffs=not gin)
    score = score_hand(
        rules, knocker_deadwood=k_dw, defender_deadwood=defence.deadwood, gin=gin,
        multiplier=multiplier,
    )  # fmt: skip
    return _result(knocker, knocker_hand, defender_hand, declared, k_dw, defence, score)


def _hindsight_knock(
    rules: RuleSet,
    knocker: int,
    knocker_hand: int,
    defender_hand: int,
    knock_limit: int,
    multiplier: int,
) -> HandResult:
    """The knock arranged with sight of the defender's hand (``rules.knock_hindsight`` only)."""
    best: tuple[tuple[int, int], tuple[Meld, ...], int, Defence, HandScore] | None = None
    for arrangement in arrangements(knocker_hand):
        covered = 0
        for meld_mask in arrangement:
            covered |= meld_mask
        k_dw = mask_value(knocker_hand & ~covered)
        if k_dw > knock_limit:
            continue
        chosen = tuple(Meld.from_mask(m) for m in arrangement)
        defence = best_defence(defender_hand, chosen, allow_layoffs=True)
        score = score_hand(
            rules, knocker_deadwood=k_dw, defender_deadwood=defence.deadwood,
            multiplier=multiplier,
        )  # fmt: skip
        key = (score.points if score.knocker_wins else -score.points, -k_dw)
        if best is None or key > best[0]:
            best = (key, chosen, k_dw, defence, score)
    if best is None:
        raise ValueError("knock with deadwood above the knock limit")
    _, chosen, k_dw, defence, score = best
    return _result(knocker, knocker_hand, defender_hand, chosen, k_dw, defence, score)


def _result(
    knocker: int,
    knocker_hand: int,
    defender_hand: int,
    knocker_melds: tuple[Meld, ...],
    knocker_deadwood: int,
    defence: Defence,
    score: HandScore,
) -> HandResult:
    """Assemble a :class:`HandResult` with seat-indexed fields."""
    defender = 1 - knocker
    hands = [CardSet(), CardSet()]
    melds: list[tuple[Meld, ...]] = [(), ()]
    deadwood = [0, 0]
    hands[knocker], hands[defender] = CardSet(knocker_hand), CardSet(defender_hand)
    melds[knocker], melds[defender] = knocker_melds, defence.melds
    deadwood[knocker], deadwood[defender] = knocker_deadwood, defence.deadwood
    return HandResult(
        termination=score.termination,
        winner=knocker if score.knocker_wins else defender,
        points=score.points,
        knocker=knocker,
        hands=(hands[0], hands[1]),
        melds=(melds[0], melds[1]),
        layoffs=defence.layoffs,
        deadwood=(deadwood[0], deadwood[1]),
    )
