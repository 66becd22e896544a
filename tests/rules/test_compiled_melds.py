"""The compiled meld searches (``referee/rules/_melds.c``) equal the Python functions: the
best packing (the same cards, not only the same value: the first best in the same order),
its melds as ``split_packing`` splits them (``best_melds``), the deadwood and the knock
discards, on random hands of 0 to 11 cards and on hands built from
melds (where packings overlap and ties are common), and they refuse what they cannot take.

Skipped where the extension was not built (an install without a C compiler), unless
``GIN_REFEREE_REQUIRE_COMPILED`` is set, as ``.ci/run`` does.
"""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import ALL_MELDS, melds
from referee.rules.cards import CardSet, mask_value
from referee.rules.compiled import compiled_module

REQUIRED = os.environ.get("GIN_REFEREE_REQUIRE_COMPILED", "") not in ("", "0")
C = compiled_module("referee.rules._melds")
pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(C is None and not REQUIRED, reason="the meld searches were not compiled"),
]


def test_the_compiled_searches_are_in_use_where_required() -> None:
    if REQUIRED:
        assert melds.COMPILED and C is not None, "GIN_REFEREE_REQUIRE_COMPILED: Python in use"
    assert melds.COMPILED is (C is not None)


def random_hand(rng: random.Random, size: int) -> int:
    return sum(1 << i for i in rng.sample(range(52), size))


@st.composite
def meld_rich(draw: st.DrawFn) -> int:
    """Up to 11 cards made of overlapping melds (sets and runs sharing cards), topped up with
    random cards."""
    mask = 0
    for meld in draw(st.lists(st.sampled_from(ALL_MELDS), min_size=1, max_size=4)):
        if (mask | meld.mask).bit_count() <= 11:
            mask |= meld.mask
    extra = draw(st.lists(st.integers(0, 51), max_size=11))
    for card in extra:
        if (mask | 1 << card).bit_count() <= 11:
            mask |= 1 << card
    return mask


def check(mask: int) -> None:
    assert C is not None
    expected = melds._python_best_packing(mask)
    assert C.best_packing(mask) == expected, hex(mask)
    assert C.deadwood(mask) == mask_value(mask) - expected[1]
    split = melds.split_packing(mask, expected[0])
    assert C.best_split(mask) == (split, mask & ~expected[0]), hex(mask)
    assert melds.best_melds(CardSet(mask)) == (split, CardSet(mask & ~expected[0]))
    if mask.bit_count() == 11:
        for limit in (0, 10, 25):
            want = melds._python_knock_discards_exact(mask, limit)
            assert C.knock_discards_exact(mask, limit) == want, (hex(mask), limit)


@settings(max_examples=1500)
@given(meld_rich())
def test_meld_rich_hands(mask: int) -> None:
    check(mask)


def test_random_hands_of_every_size() -> None:
    rng = random.Random(3)
    for size in range(12):
        for _ in range(400):
            check(random_hand(rng, size))


def test_the_richest_rows_and_the_four_of_a_kind() -> None:
    """An 11-card run of one suit (45 runs inside it), four-of-a-kinds with runs through them."""
    row = sum(1 << i for i in range(11))
    for suit in range(4):
        check(row << 13 * suit)
    fours = sum(1 << (suit * 13 + rank) for suit in range(4) for rank in (4, 5))
    check(fours | 1 << 6 | 1 << 19 | 1 << 3)  # 5s and 6s, 7c 7d 4c: runs through both fours


def test_what_it_cannot_take_is_refused_and_python_takes_larger_hands() -> None:
    assert C is not None
    with pytest.raises(ValueError, match="at most 11 cards"):
        C.deadwood((1 << 12) - 1)
    with pytest.raises(ValueError, match="at most 11 cards"):
        C.best_packing(1 << 52)
    with pytest.raises(ValueError, match="at most 11 cards"):
        C.best_split((1 << 12) - 1)
    with pytest.raises(TypeError):
        C.deadwood("3c")
    with pytest.raises(OverflowError):
        C.deadwood(-1)
    thirteen = (1 << 13) - 1  # a whole suit: melds.py's Python search takes it
    assert melds.deadwood_mask(thirteen) == 0
