"""The environment's observation of a rules state: :func:`observation`.

:func:`observation` writes it with the compiled writer (``referee/env/_observe.c``, whose
:data:`fill` writes one into a buffer) when the install had a C compiler, else it is
:func:`python_observation`; ``GIN_REFEREE_PURE_PYTHON=1`` asks for the Python one. Both give the
numbers of :func:`protocol.encoding.encode` (tests/env/test_observe.py checks them against each
other and against the protocol's :func:`~protocol.encoding.encode_view`), so the observation is
the one a bot's policy gets from its ``request`` (:mod:`protocol.policy`).

The arguments: the state; the seat it is for; ``stock``, the deal's :func:`stock_masks`;
``fixed``, the seat's :func:`fixed_bytes` for the hand; ``legal``, the legal actions as a mask
over the action numbers (given only when the seat is to act). The result: the observation and
the action mask, ``int8`` arrays sharing one fresh buffer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from protocol.encoding import LAYOUT, NUM_ACTIONS, OBS_SIZE, PHASE_INDEX, encode, turn_bits
from referee.rules import HandState, Phase
from referee.rules.compiled import compiled_module

__all__ = [
    "COMPILED",
    "SIZE",
    "fill",
    "fixed_bytes",
    "observation",
    "python_observation",
    "stock_masks",
]

SIZE = OBS_SIZE + NUM_ACTIONS
"""Bytes of a filled buffer: the observation, then the action mask."""
_FULL = (1 << 52) - 1
_TO_ACT = LAYOUT["to_act"][0]
_PHASES = {phase: PHASE_INDEX[phase.value] for phase in Phase}
_OVER = Phase.HAND_OVER

Fill = Callable[[Any, HandState, int, list[int], bytes, int], None]
"""The signature of :data:`fill`: the observation and the mask written into ``out``, an
``int8`` buffer of :data:`SIZE` bytes, then the other arguments of :func:`observation`."""
Arrays = tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]
Observation = Callable[[HandState, int, list[int], bytes, int], Arrays]
"""The signature of :func:`observation`."""
_MISC: dict[bytes, int] = {}
""":func:`fixed_bytes`'s argument by its result (at most a few thousand: dealer, doubled,
knock limit, two score bands)."""


def stock_masks(deck: Sequence[int]) -> list[int]:
    """For each stock position 0..52 of a deck order, the mask of the cards from there on."""
    masks = [0] * 53
    for i in range(51, -1, -1):
        masks[i] = masks[i + 1] | 1 << deck[i]
    return masks


def fixed_bytes(misc: int) -> bytes:
    """The bytes a seat's observation has set all hand long: ``misc`` is
    :func:`protocol.encoding.hand_bits` (dealer, doubled, knock limit, scores)."""
    value = misc << _TO_ACT
    bits = np.unpackbits(
        np.frombuffer(value.to_bytes((SIZE + 7) // 8, "little"), np.uint8), bitorder="little"
    )
    fixed = bits[:SIZE].tobytes()
    _MISC[fixed] = misc
    return fixed


def python_observation(
    state: HandState, seat: int, stock: list[int], fixed: bytes, legal: int
) -> Arrays:
    """The observation and the mask through :func:`protocol.encoding.encode` (the general
    path, and what :func:`observation` is without the compiled writer)."""
    h0, h1 = state.hands
    pile = state.discard_pile
    top = 1 << pile[-1] if pile else 0
    mine = state.to_act == seat and state.phase is not _OVER
    misc = _MISC.get(fixed)
    if misc is None:  # bytes from elsewhere than fixed_bytes: read back
        packed = np.packbits(np.frombuffer(fixed, np.uint8), bitorder="little").tobytes()
        misc = _MISC[fixed] = int.from_bytes(packed, "little") >> _TO_ACT
    return encode(
        h1 if seat else h0,
        top,
        _FULL & ~(h0 | h1 | stock[state.stock_pos] | top),
        state.known[1 - seat],
        1 << state.taken if mine and state.taken >= 0 else 0,
        _PHASES[state.phase],
        misc
        | turn_bits(
            mine, (h0 if seat else h1).bit_count() == 11, len(state.deck) - state.stock_pos
        ),
        legal if mine else 0,
    )


def _compiled() -> Fill | None:
    """The compiled writer, set up for this layout, or None (not built, or
    ``GIN_REFEREE_PURE_PYTHON`` set)."""
    module = compiled_module("referee.env._observe")
    if module is None:
        return None
    fields = HandState._fields
    names = ("deck", "hands", "stock_pos", "discard_pile", "phase", "to_act", "taken", "known")
    phases = sorted(Phase, key=lambda phase: PHASE_INDEX[phase.value])
    blocks = ("top", "pile", "opp_known", "taken", "phase", "to_act", "opp_eleven", "stock")
    module.setup(
        tuple(fields.index(name) for name in names),
        tuple(phases),
        (*(LAYOUT[block][0] for block in blocks), OBS_SIZE, NUM_ACTIONS),
    )
    writer: Fill = module.fill
    return writer


def _with(write: Fill) -> Observation:
    """:func:`observation` through the compiled writer: a fresh buffer, filled, split."""
    empty, int8 = np.empty, np.int8

    def observe(state: HandState, seat: int, stock: list[int], fixed: bytes, legal: int) -> Arrays:
        buf = empty(SIZE, int8)
        write(buf, state, seat, stock, fixed, legal)
        return buf[:OBS_SIZE], buf[OBS_SIZE:]

    return observe


fill: Fill | None = _compiled()
"""The compiled writer (None when it was not built or is turned off)."""
COMPILED = fill is not None
"""Whether :func:`observation` uses the compiled writer."""
observation: Observation = python_observation if fill is None else _with(fill)
"""A seat's observation and mask (see the module docstring)."""
