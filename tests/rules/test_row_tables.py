"""The suit-row tables, built one step per row, give what the bits of each row say."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from referee.rules.cards import (
    _ROW_TOP,
    CARD_TEXT,
    DECK,
    bit_indices,
    mask_table,
    mask_value,
    row_table,
    row_table_by_bit,
)

masks = st.integers(min_value=0, max_value=(1 << 52) - 1)


def test_row_table_equals_the_definition_on_every_row() -> None:
    none: tuple[int, ...] = ()
    bits = row_table(lambda below, bit: (*below, bit), none)
    assert len(bits) == 8192
    assert all(bits[row] == tuple(i for i in range(13) if row >> i & 1) for row in range(8192))
    total = row_table(lambda below, bit: below + 2**bit, 0)
    assert total == tuple(range(8192))


def test_row_table_by_bit_equals_row_table_and_the_top_values_their_definition() -> None:
    def extend(below: tuple[int, ...], bit: int) -> tuple[int, ...]:
        return (*below, bit * bit)

    none: tuple[int, ...] = ()
    by_bit = row_table_by_bit(lambda rows, bit: [extend(below, bit) for below in rows], none)
    assert by_bit == row_table(extend, none)
    assert by_bit[0b101] == (0, 4)
    assert tuple(min(row.bit_length(), 10) for row in range(8192)) == _ROW_TOP


@given(masks)
def test_mask_tables_match_the_bits(mask: int) -> None:
    bits = [i for i in range(52) if mask >> i & 1]
    assert bit_indices(mask) == bits
    assert mask_value(mask) == sum(DECK[i].value for i in bits)
    assert mask_table(CARD_TEXT)(mask) == tuple(CARD_TEXT[i] for i in bits)
