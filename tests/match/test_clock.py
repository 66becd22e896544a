"""The per-game clock: move time, then the bank."""

from __future__ import annotations

import pytest

from referee.match.clock import Clock, TimeControl


def test_clock_draws_overtime_from_the_bank() -> None:
    clock = Clock(TimeControl(move=1.0, bank=3.0))
    assert clock.time_left == 4.0
    clock.charge(0.5)
    assert clock.bank == 3.0
    clock.charge(2.5)
    assert clock.bank == pytest.approx(1.5)
    clock.charge(10.0)
    assert clock.bank == 0.0 and clock.decisions == 3
    clock.new_game()
    assert clock.bank == 3.0
