"""The per-decision ``request`` message, written straight from the rules state.

Every decision sends one request. Building it the general way (``observe`` → ``PlayerView`` →
``WireView`` → ``Request`` → map → msgpack) cost more than the rest of a decision, so
:func:`request_bytes` writes the very same bytes (property-tested against
:func:`protocol.codec.encode` of the general path) from the state's masks with precomputed
fragments: the packed card strings of every 13-bit suit row, the packed legal actions looked
up by identity (the rules intern them), and the map headers and keys, which come from the
protocol's description of ``request`` and its ``view`` (:func:`protocol.fields.describe`).
The writer fills the fields in the order of :data:`_REQUEST_FIELDS` and :data:`_VIEW_FIELDS`;
importing this module fails if the description's always-written fields differ from them.
The fragment tables take about 2 MiB, once per process.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgpack

from protocol.fields import StructSpec, describe, to_wire
from protocol.schema import Request, WireView
from referee.match.wire import to_wire_action
from referee.rules import (
    BIG_GIN,
    DECK,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_DISCARD,
    Action,
    HandState,
    Phase,
    discard_action,
    knock_action,
)
from referee.rules.cards import CARD_TEXT, ROW_MASK, row_table

__all__ = ["request_bytes"]

_pack = msgpack.Packer(use_bin_type=True).pack


def _array_header(count: int) -> bytes:
    if count < 16:
        return bytes((0x90 | count,))
    return b"\xdc" + count.to_bytes(2, "big")


_HEADER = tuple(_array_header(n) for n in range(64))
_INT = tuple(_pack(n) for n in range(256))
_CARD = tuple(_pack(text) for text in CARD_TEXT)
_NIL = _pack(None)


def _suit_rows(suit: int) -> tuple[bytes, ...]:
    """Packed card texts of each 13-bit row of ``suit``."""
    return row_table(lambda below, bit: below + _CARD[13 * suit + bit], b"")


_ROWS = tuple(_suit_rows(suit) for suit in range(4))
_R0, _R1, _R2, _R3 = _ROWS
_PHASE = {phase: _pack(str(phase)) for phase in Phase}
_INTERNED: tuple[Action, ...] = (
    PASS_UPCARD,
    TAKE_DISCARD,
    DRAW_STOCK,
    BIG_GIN,
    *(discard_action(card) for card in DECK),
    *(knock_action(card) for card in DECK),
)


def _packed_action(action: Action) -> bytes:
    return _pack(to_wire(to_wire_action(action)))


_ACTIONS = {id(action): _packed_action(action) for action in _INTERNED}
"""Packed wire form of every interned action, by identity (``_INTERNED`` keeps them alive)."""

_REQUEST_FIELDS = ("request_id", "decision", "legal", "view", "time_left_ms", "bank_ms")
"""The request's fields :func:`request_bytes` writes, in this order, then ``events`` if any."""
_VIEW_FIELDS = (
    *("seat", "phase", "to_act", "dealer", "hand", "discard_pile", "stock_size"),
    *("opponent_hand_size", "opponent_known", "knock_limit", "multiplier", "turn", "scores"),
    "taken_card",
)
"""The view's fields :func:`request_bytes` writes, in this order."""


def _keys(spec: StructSpec, written: tuple[str, ...]) -> dict[str, bytes]:
    """The packed keys of ``spec``, once its always-written fields are checked to be
    ``written`` (a field added to the description must be added to the writer too)."""
    if spec.always != written:
        raise ImportError(
            f"request_bytes writes {spec.cls.__name__} fields {written}, "
            f"but the protocol describes {spec.always}"
        )
    return spec.keys()


_REQUEST, _VIEW = describe(Request), describe(WireView)
_K = _keys(_REQUEST, _REQUEST_FIELDS)
_V = _keys(_VIEW, _VIEW_FIELDS)
_REQUEST_HEAD = _REQUEST.header() + _REQUEST.type_prefix() + _K["request_id"]
_REQUEST_HEAD_EVENTS = _REQUEST.header(1) + _REQUEST.type_prefix() + _K["request_id"]
_K_EVENTS = _K["events"]
_K_DECISION, _K_LEGAL, _K_VIEW = _K["decision"], _K["legal"], _K["view"]
_K_TIME_LEFT, _K_BANK = _K["time_left_ms"], _K["bank_ms"]
_VIEW_HEAD = _VIEW.header() + _V["seat"]
_K_PHASE, _K_TO_ACT, _K_DEALER, _K_HAND = _V["phase"], _V["to_act"], _V["dealer"], _V["hand"]
_K_PILE, _K_STOCK = _V["discard_pile"], _V["stock_size"]
_K_OPP_SIZE, _K_OPP_KNOWN = _V["opponent_hand_size"], _V["opponent_known"]
_K_KNOCK, _K_MULT, _K_TURN = _V["knock_limit"], _V["multiplier"], _V["turn"]
_K_SCORES, _K_TAKEN = _V["scores"] + _HEADER[2], _V["taken_card"]


def _int(value: int) -> bytes:
    return _INT[value] if 0 <= value < 256 else _pack(value)


def _cards(mask: int) -> bytes:
    """Packed array of the card texts of a 52-bit mask, in index order."""
    return b"".join(
        (
            _HEADER[mask.bit_count()],
            _R0[mask & ROW_MASK],
            _R1[mask >> 13 & ROW_MASK],
            _R2[mask >> 26 & ROW_MASK],
            _R3[mask >> 39],
        )
    )


def _legal(legal: Sequence[Action]) -> bytes:
    table = _ACTIONS
    try:
        parts = [table[id(action)] for action in legal]
    except KeyError:  # not an interned action (never from legal_actions): the general path
        parts = [_packed_action(action) for action in legal]
    return _HEADER[len(legal)] + b"".join(parts)


def request_bytes(
    state: HandState,
    legal: Sequence[Action],
    request_id: int,
    time_left_ms: int,
    bank_ms: int,
    events: Sequence[bytes] = (),
) -> bytes:
    """The encoded ``request`` asking ``state.to_act`` to choose among ``legal``: the bytes
    ``encode(Request(request_id, phase, wire legal, wire view of observe(state, to_act),
    time_left_ms, bank_ms, events))`` would give, ``events`` being given encoded."""
    seat = state.to_act
    other = 1 - seat
    phase = _PHASE[state.phase]
    pile = state.discard_pile
    scores = state.scores
    taken = state.taken
    view = b"".join(
        (
            _VIEW_HEAD,
            _INT[seat],
            _K_PHASE,
            phase,
            _K_TO_ACT,
            _INT[seat],
            _K_DEALER,
            _INT[state.dealer],
            _K_HAND,
            _cards(state.hands[seat]),
            _K_PILE,
            _HEADER[len(pile)],
            *[_CARD[i] for i in pile],
            _K_STOCK,
            _INT[len(state.deck) - state.stock_pos],
            _K_OPP_SIZE,
            _INT[state.hands[other].bit_count()],
            _K_OPP_KNOWN,
            _cards(state.known[other]),
            _K_KNOCK,
            _int(state.knock_limit),
            _K_MULT,
            _int(state.multiplier),
            _K_TURN,
            _int(state.turn),
            _K_SCORES,
            _int(scores[0]),
            _int(scores[1]),
            _K_TAKEN,
            _CARD[taken] if taken >= 0 else _NIL,
        )
    )
    return b"".join(
        (
            _REQUEST_HEAD_EVENTS if events else _REQUEST_HEAD,
            _int(request_id),
            _K_DECISION,
            phase,
            _K_LEGAL,
            _legal(legal),
            _K_VIEW,
            view,
            _K_TIME_LEFT,
            _int(time_left_ms),
            _K_BANK,
            _int(bank_ms),
            *((_K_EVENTS, _array_header(len(events)), *events) if events else ()),
        )
    )
