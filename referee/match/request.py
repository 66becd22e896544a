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

The same writer is compiled (``referee/match/_request.c``) when the install had a C compiler:
:func:`request_bytes` is then the compiled one, given these fragments at import, and the
Python writer (:func:`python_request_bytes`) is what it falls back to for anything outside the
common case (tested byte for byte against it). ``GIN_REFEREE_PURE_PYTHON=1`` in the
environment keeps the Python writer; :data:`COMPILED` says which one is in use.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence

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

__all__ = ["COMPILED", "python_request_bytes", "request_bytes"]

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


_DECISION_BY_PHASE = {phase: _K_DECISION + packed + _K_LEGAL for phase, packed in _PHASE.items()}
"""Per phase: the request's bytes from the ``decision`` key up to the legal array."""
_VIEW_BY_PHASE = {
    phase: tuple(
        tuple(
            _K_VIEW + _VIEW_HEAD + _INT[seat] + _K_PHASE + packed + _K_TO_ACT + _INT[seat]
            + _K_DEALER + _INT[dealer] + _K_HAND
            for dealer in (0, 1)
        )
        for seat in (0, 1)
    )
    for phase, packed in _PHASE.items()
}  # fmt: skip
"""Per phase, seat to act and dealer: the bytes from the request's ``view`` key up to the
view's ``hand`` array (the same for every request of that phase, seat and dealer)."""


_PILES: dict[int, tuple[tuple[int, ...], bytes]] = {}
"""Packed discard piles (with their array header) by identity, the pile kept beside its bytes
so that its id cannot be reused while cached: a draw from the stock keeps the pile, so the
request that follows it asks for the same one again. Emptied when it holds 64."""


def _pile(pile: tuple[int, ...]) -> bytes:
    """The packed array of a discard pile's card texts."""
    cached = _PILES.get(id(pile))
    if cached is not None:
        return cached[1]
    data = _HEADER[len(pile)] + b"".join(map(_CARD.__getitem__, pile))
    if len(_PILES) >= 64:
        _PILES.clear()
    _PILES[id(pile)] = (pile, data)
    return data


def _legal_parts(legal: Sequence[Action]) -> list[bytes]:
    """The packed legal actions (interned ones from the table, by identity)."""
    table = _ACTIONS
    try:
        return [table[id(action)] for action in legal]
    except KeyError:  # not an interned action (never from legal_actions): the general path
        return [_packed_action(action) for action in legal]


def python_request_bytes(
    state: HandState,
    legal: Sequence[Action],
    request_id: int,
    time_left_ms: int,
    bank_ms: int,
    events: Sequence[bytes] = (),
) -> bytes:
    """The encoded ``request`` asking ``state.to_act`` to choose among ``legal``: the bytes
    ``encode(Request(request_id, phase, wire legal, wire view of observe(state, to_act),
    time_left_ms, bank_ms, events))`` would give, ``events`` being given encoded.

    One join over the fragments, the fixed runs of fields looked up per phase, seat and
    dealer, the small integers inline (every call saved counts here: one call per decision).
    """
    seat = state.to_act
    hands = state.hands
    hand, opponent = (hands[0], hands[1]) if seat == 0 else (hands[1], hands[0])
    known = state.known[1 - seat]
    phase = state.phase
    scores = state.scores
    s0, s1 = scores[0], scores[1]
    taken = state.taken
    limit, multiplier, turn = state.knock_limit, state.multiplier, state.turn
    ints = _INT
    return b"".join(
        (
            _REQUEST_HEAD_EVENTS if events else _REQUEST_HEAD,
            ints[request_id] if 0 <= request_id < 256 else _pack(request_id),
            _DECISION_BY_PHASE[phase],
            _HEADER[len(legal)],
            *_legal_parts(legal),
            _VIEW_BY_PHASE[phase][seat][state.dealer],
            _HEADER[hand.bit_count()],
            _R0[hand & ROW_MASK],
            _R1[hand >> 13 & ROW_MASK],
            _R2[hand >> 26 & ROW_MASK],
            _R3[hand >> 39],
            _K_PILE,
            _pile(state.discard_pile),
            _K_STOCK,
            ints[len(state.deck) - state.stock_pos],
            _K_OPP_SIZE,
            ints[opponent.bit_count()],
            _K_OPP_KNOWN,
            _HEADER[known.bit_count()],
            _R0[known & ROW_MASK],
            _R1[known >> 13 & ROW_MASK],
            _R2[known >> 26 & ROW_MASK],
            _R3[known >> 39],
            _K_KNOCK,
            ints[limit] if 0 <= limit < 256 else _pack(limit),
            _K_MULT,
            ints[multiplier] if 0 <= multiplier < 256 else _pack(multiplier),
            _K_TURN,
            ints[turn] if 0 <= turn < 256 else _pack(turn),
            _K_SCORES,
            ints[s0] if 0 <= s0 < 256 else _pack(s0),
            ints[s1] if 0 <= s1 < 256 else _pack(s1),
            _K_TAKEN,
            _CARD[taken] if taken >= 0 else _NIL,
            _K_TIME_LEFT,
            ints[time_left_ms] if 0 <= time_left_ms < 256 else _pack(time_left_ms),
            _K_BANK,
            ints[bank_ms] if 0 <= bank_ms < 256 else _pack(bank_ms),
            *((_K_EVENTS, _array_header(len(events)), *events) if events else ()),
        )
    )


def _compiled() -> Callable[..., bytes] | None:
    """The compiled writer, given this module's fragments, or None (not built, or
    ``GIN_REFEREE_PURE_PYTHON`` set)."""
    if os.environ.get("GIN_REFEREE_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:  # (by name: the import linter would read a plain import as one of referee.match)
        _request = importlib.import_module("referee.match._request")
    except ImportError:  # installed without a C compiler: the Python writer
        return None
    fields = HandState._fields
    _request.setup(
        {
            "head": _REQUEST_HEAD,
            "head_events": _REQUEST_HEAD_EVENTS,
            "nil": _NIL,
            "k_pile": _K_PILE,
            "k_stock": _K_STOCK,
            "k_opp_size": _K_OPP_SIZE,
            "k_opp_known": _K_OPP_KNOWN,
            "k_knock": _K_KNOCK,
            "k_mult": _K_MULT,
            "k_turn": _K_TURN,
            "k_scores": _K_SCORES,
            "k_taken": _K_TAKEN,
            "k_time_left": _K_TIME_LEFT,
            "k_bank": _K_BANK,
            "k_events": _K_EVENTS,
            "cards": _CARD,
            "phases": tuple(
                (phase, _DECISION_BY_PHASE[phase], _VIEW_BY_PHASE[phase]) for phase in Phase
            ),
            "actions": tuple((action, _ACTIONS[id(action)]) for action in _INTERNED),
            "fields": tuple(
                fields.index(name)
                for name in (
                    *("dealer", "deck", "hands", "stock_pos", "discard_pile", "phase"),
                    *("to_act", "taken", "known", "turn", "knock_limit", "multiplier"),
                    "scores",
                )
            ),
        },
        python_request_bytes,
    )
    writer: Callable[..., bytes] = _request.request_bytes
    return writer


_COMPILED_WRITER = _compiled()
COMPILED = _COMPILED_WRITER is not None
"""Whether :func:`request_bytes` is the compiled writer."""
request_bytes = python_request_bytes
"""The encoded ``request`` (see :func:`python_request_bytes`): the compiled writer when there
is one, else the Python writer."""
if _COMPILED_WRITER is not None:
    request_bytes = _COMPILED_WRITER
