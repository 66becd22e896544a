"""A knock without declared melds is arranged blind: from the knocker's ten cards alone.

Issue 30: the engine used to pick, for a knocker that declared nothing, the arrangement that
scored best against the defender's actual hand. These tests pin the blind rule (docs/rules.md,
"After a knock"), show that the old rule is still there as ``knock_hindsight`` and that it is
the only thing that reads the defender's hand, and re-check the protocol doc's knock.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.examples import EXAMPLES
from protocol.schema import HandEnd
from protocol.values import WireAction
from referee.rules import (
    ALL_MELDS,
    DRAW_STOCK,
    PASS_UPCARD,
    STANDARD,
    Card,
    CardSet,
    HandResult,
    Meld,
    RuleSet,
    apply,
    best_melds,
    deadwood,
    knock_action,
    knock_arrangement,
    parse_cards,
)
from referee.rules.arrangement import arrangements, layoff_exposure
from referee.rules.cards import mask_value
from referee.rules.scoring import resolve_knock
from tests.rules.helpers import position

HINDSIGHT = replace(STANDARD, knock_hindsight=True)


def knock(
    kept: str | int, defender: str | int, *, rules: RuleSet = STANDARD, limit: int = 10
) -> HandResult:
    """Resolve seat 0's knock without declared melds."""
    k = CardSet.parse(kept).mask if isinstance(kept, str) else kept
    d = CardSet.parse(defender).mask if isinstance(defender, str) else defender
    return resolve_knock(
        rules, knocker=0, knocker_hand=k, defender_hand=d, knock_limit=limit, declared=None
    )


def left(kept: int, melds: tuple[int, ...] | tuple[Meld, ...]) -> int:
    """The deadwood ``kept`` leaves outside ``melds``."""
    covered = 0
    for m in melds:
        covered |= m.mask if isinstance(m, Meld) else m
    return mask_value(kept & ~covered)


def shown(result: HandResult) -> list[str]:
    return [str(m) for m in result.melds[0]]


# The class of hand: two arrangements with equal deadwood and different layoff
# exposure. 3c 3d 3h + 9s..Ks leaves 2h 4h (6) and exposes 3s and 8s; 2h 3h 4h + 9s..Ks leaves
# 3c 3d (6) and exposes Ah, 5h and 8s. Blind, the set is shown, whoever holds what.
TWO_WAYS = "3c 3d 3h 2h 4h 9s Ts Js Qs Ks"
SET_AND_RUN = ["3c 3d 3h", "9s Ts Js Qs Ks"]
THREE_RUNS = ["2h 3h 4h", "9s Ts Js Qs Ks"]
HOLDS_3S = "2c 9c Tc Jc 5d 6d 7d 8d 3s 4s"  # the worked example of docs/rules.md
HOLDS_5H = "2c 9c Tc Jc 5d 6d 7d 8d 5h 4s"
HOLDS_BOTH = "Ah 5h 3s 9c Tc Jc 5d 6d 7d 2c"
HOLDS_NEITHER = "2c 9c Tc Jc 5d 6d 7d 8d Kc 4s"


def test_the_worked_example_of_the_rules_doc() -> None:
    result = knock(TWO_WAYS, HOLDS_3S)
    assert shown(result) == SET_AND_RUN
    assert [(str(c), str(m)) for c, m in result.layoffs] == [("3s", "3c 3d 3h")]
    assert result.deadwood == (6, 6)  # 2h 4h against 2c 4s: a tie is an undercut
    assert (result.termination.value, result.winner, result.points) == ("undercut", 1, 25)
    # With sight of the 3s the engine used to show the run, deny the layoff and win 3.
    old = knock(TWO_WAYS, HOLDS_3S, rules=HINDSIGHT)
    assert shown(old) == THREE_RUNS and old.layoffs == ()
    assert (old.termination.value, old.winner, old.points, old.deadwood) == ("knock", 0, 3, (6, 9))
    # docs/protocol.md: declaring the run of hearts is how a knocker gets those 3 points now.
    runs = tuple(Meld.from_cards(parse_cards(m)) for m in THREE_RUNS)
    declared = resolve_knock(
        STANDARD, knocker=0, knocker_hand=CardSet.parse(TWO_WAYS).mask,
        defender_hand=CardSet.parse(HOLDS_3S).mask, knock_limit=10, declared=runs,
    )  # fmt: skip
    assert (declared.winner, declared.points, declared.layoffs) == (0, 3, ())


@pytest.mark.parametrize("defender", [HOLDS_3S, HOLDS_5H, HOLDS_BOTH, HOLDS_NEITHER])
def test_equal_deadwood_different_exposure_is_arranged_the_same_for_every_defender(
    defender: str,
) -> None:
    assert shown(knock(TWO_WAYS, defender)) == SET_AND_RUN
    assert knock(TWO_WAYS, defender).deadwood[0] == 6


def test_hindsight_is_what_changed_those_hands() -> None:
    # Under the old rule the same knocker hand was shown two ways, by the defender's cards.
    assert shown(knock(TWO_WAYS, HOLDS_3S, rules=HINDSIGHT)) == THREE_RUNS
    assert shown(knock(TWO_WAYS, HOLDS_5H, rules=HINDSIGHT)) == SET_AND_RUN


GOLDEN_KNOCKER = "7c 7d 7h 7s 4s 5s 6s Ac Ad 2h"  # test_golden's hand


@pytest.mark.parametrize(
    "defender", ["8s Qc Qd Jh Jd 9c 2c 3d 5h Th", "3s Qc Qd Jh Jd 9c 2c 3d 5h Th"]
)
def test_the_four_sevens_expose_less_than_the_long_run(defender: str) -> None:
    # 7777 + 456s exposes 3s only (7s is the knocker's); 777 + 4567s exposes 3s and 8s.
    result = knock(GOLDEN_KNOCKER, defender)
    assert shown(result) == ["7c 7d 7h 7s", "4s 5s 6s"]


def test_equal_exposure_falls_to_the_meld_list_order() -> None:
    # 7h..Qh as one run or as two: the same cards covered, the same ends exposed (6h, Kh), so
    # deadwood and exposure tie; the smaller meld list by card index wins: 7h 8h 9h first.
    kept = CardSet.parse("2c 2d 3d 4d 7h 8h 9h Th Jh Qh")
    ties = [
        a
        for a in arrangements(kept.mask)
        if left(kept.mask, a) == deadwood(kept) == 2
        and layoff_exposure(kept.mask, a).bit_count() == 4
    ]
    assert sorted(len(a) for a in ties) == [2, 3]
    chosen = knock_arrangement(kept, 10)
    assert [str(m) for m in chosen] == ["2d 3d 4d", "7h 8h 9h", "Th Jh Qh"]
    assert str(CardSet(layoff_exposure(kept.mask, chosen))) == "Ad 5d 6h Kh"


def test_declared_melds_are_used_as_declared() -> None:
    melds = tuple(Meld.from_cards(parse_cards(m)) for m in THREE_RUNS)
    d = CardSet.parse(HOLDS_5H).mask
    result = resolve_knock(
        STANDARD, knocker=0, knocker_hand=CardSet.parse(TWO_WAYS).mask, defender_hand=d,
        knock_limit=10, declared=melds,
    )  # fmt: skip
    assert shown(result) == THREE_RUNS
    assert [str(c) for c, _ in result.layoffs] == ["5h"]


def test_a_knock_through_the_state_machine_is_blind() -> None:
    # The non-dealer draws Kh and knocks it; the dealer holds the 3s.
    state = position(nondealer=TWO_WAYS, dealer=HOLDS_3S, upcard="Kd", stock="Kh")
    for action in (PASS_UPCARD, PASS_UPCARD, DRAW_STOCK):
        state = apply(state, action)
    state = apply(state, knock_action(Card.parse("Kh")))
    result = state.result
    assert result is not None
    assert [str(m) for m in result.melds[1]] == SET_AND_RUN
    assert (result.winner, result.points) == (0, 25)


def test_too_much_deadwood_is_refused() -> None:
    with pytest.raises(ValueError, match="above the knock limit"):
        knock_arrangement(CardSet.parse("3c 3d 3h 2h 4h 9s Ts Js Qs Ks"), 5)


# -- the property: the default arrangement does not depend on the defender's hand ---------


@st.composite
def knocker_and_defenders(draw: st.DrawFn) -> tuple[int, list[int]]:
    """Ten kept cards, rich in overlapping melds, and several defender hands from the rest."""
    melds = draw(st.lists(st.sampled_from(ALL_MELDS), min_size=1, max_size=4))
    kept = 0
    for meld in melds:
        if (kept | meld.mask).bit_count() <= 10:
            kept |= meld.mask
    others = draw(st.permutations(range(52)))
    for i in others:
        if kept.bit_count() == 10:
            break
        kept |= 1 << i
    rest = [i for i in range(52) if not kept >> i & 1]
    defenders = []
    for _ in range(draw(st.integers(2, 12))):
        cards = draw(st.permutations(rest))[:10]
        defenders.append(sum(1 << i for i in cards))
    return kept, defenders


@settings(max_examples=150, deadline=None)
@given(knocker_and_defenders())
def test_the_default_arrangement_is_the_same_whatever_the_defender_holds(
    case: tuple[int, list[int]],
) -> None:
    kept, defenders = case
    cards = CardSet(kept)
    limit = 100  # every hand may knock: the choice is tested on all of them
    blind = knock_arrangement(cards, limit)
    gin = deadwood(cards) == 0
    shown_melds = best_melds(cards)[0] if gin else blind  # gin: nothing is laid off on it
    for defender in defenders:
        result = knock(kept, defender, limit=limit)
        assert result.melds[0] == shown_melds
        assert result.deadwood[0] == deadwood(cards)
    # The documented rule, recomputed: least deadwood, then fewest exposed cards.
    least = [a for a in arrangements(kept) if left(kept, a) == deadwood(cards)]
    assert left(kept, blind) == deadwood(cards)
    fewest = min(layoff_exposure(kept, a).bit_count() for a in least)
    assert layoff_exposure(kept, blind).bit_count() == fewest


@settings(max_examples=100, deadline=None)
@given(knocker_and_defenders())
def test_hindsight_never_scores_worse_for_the_knocker_than_blind(
    case: tuple[int, list[int]],
) -> None:
    # Hindsight can only help the knocker: the blind arrangement is one of the candidates it
    # weighs, so the blind score is never better for the knocker than the hindsight one.
    kept, defenders = case
    for defender in defenders[:3]:
        blind, old = (
            knock(kept, defender, limit=100),
            knock(kept, defender, rules=HINDSIGHT, limit=100),
        )
        signed = {r: (r.points if r.winner == 0 else -r.points) for r in (blind, old)}
        assert signed[blind] <= signed[old]


# -- the protocol doc's knock ---------------------------------------------------------------


def test_protocol_doc_hand_end_is_what_a_knock_without_melds_gives() -> None:
    # docs/protocol.md: hand_start deals seat 0 3c 3d 3h 4s 5s 6s 9c Td Jd Qd; it draws 2h and
    # knocks 9c. The request lists that knock without melds; action_knock declares them, and
    # hand_end is that declared knock, to the letter (its 3s goes onto 4s 5s 6s, as the engine
    # lays it off). Without melds the engine shows the same three melds in its own order (sets
    # by rank, then runs by suit: Td Jd Qd before 4s 5s 6s), so the layoffs are listed in that
    # order; points, deadwood and winner are the same. Blind or with hindsight alike: only one
    # arrangement is within the knock limit.
    example = EXAMPLES["hand_end"]
    assert isinstance(example, HandEnd)
    kept = CardSet.of(parse_cards(" ".join(example.hands[0])))
    defender = CardSet.of(parse_cards(" ".join(example.hands[1])))
    assert WireAction.knock("9c") in getattr(EXAMPLES["request"], "legal")  # noqa: B009
    wire_melds = getattr(EXAMPLES["action_knock"], "action").melds  # noqa: B009
    declared = tuple(Meld.from_cards(parse_cards(" ".join(m))) for m in wire_melds)
    as_shown = (
        [list(m) for m in example.melds[0]],
        [list(x) for x in example.layoffs],
    )
    engine_order = (
        [["3c", "3d", "3h"], ["Td", "Jd", "Qd"], ["4s", "5s", "6s"]],
        [as_shown[1][1], as_shown[1][0]],
    )
    for melds, (knocker_melds, layoffs) in ((declared, as_shown), (None, engine_order)):
        for rules in (STANDARD, HINDSIGHT):
            result = resolve_knock(
                rules, knocker=0, knocker_hand=kept.mask, defender_hand=defender.mask,
                knock_limit=10, declared=melds,
            )  # fmt: skip
            assert result.termination.value == example.termination
            assert (result.winner, result.points) == (example.winner, example.points)
            assert result.deadwood == example.deadwood
            assert [[str(c) for c in m.cards] for m in result.melds[0]] == knocker_melds
            assert [[str(c) for c in m.cards] for m in result.melds[1]] == [
                list(m) for m in example.melds[1]
            ]
            assert [[str(c), *map(str, m.cards)] for c, m in result.layoffs] == layoffs
    assert [str(m) for m in knock_arrangement(kept, 10)] == ["3c 3d 3h", "Td Jd Qd", "4s 5s 6s"]
