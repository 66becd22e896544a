"""The evaluation of msgspec against the protocol's own codec, on the two hot paths.

Run: ``pip install msgspec`` (not a dependency), then ``python -m bench.eval_msgspec``.
Interleaved in each of 9 rounds, over the decisions of 200 seeded hands, it times per call:
writing the request (today: ``request_bytes`` straight from the state; msgspec: building
``Struct`` values from the state and encoding them, the same bytes), and reading the action
reply (today: ``decode_action``; msgspec: a typed decoder, alone and then converted to our
interned ``WireAction``). It prints medians and the spread, then what msgspec says of three
bad actions: its errors are text (``Invalid enum value '1h' - at `$.action.card```) with no
code, and a rule across fields (a discard needs a card) passes unchecked.
"""

# mypy: ignore-errors
# (msgspec is not installed where the project's checks run)

from __future__ import annotations

import statistics
import time
from typing import Annotated, Literal

import msgpack
import msgspec

from bench.bench_codec import decisions
from protocol.cards import ALL_CARDS
from protocol.codec import decode_action
from protocol.parse import simple_action
from referee.match.request import request_bytes
from referee.match.wire import to_wire_action
from referee.rules.cards import CARD_TEXT, mask_table

Card = Literal[tuple(ALL_CARDS)]  # type: ignore[valid-type]
Kind = Literal["pass_upcard", "take_discard", "draw_stock", "discard", "knock", "big_gin"]
U53 = Annotated[int, msgspec.Meta(ge=0, le=2**53 - 1)]


class MAction(msgspec.Struct, frozen=True, omit_defaults=True):
    kind: Kind
    card: Card | None = None  # type: ignore[valid-type]
    melds: tuple[tuple[Card, ...], ...] | None = None  # type: ignore[valid-type]


class MActionMsg(msgspec.Struct, tag_field="type", tag="action"):
    request_id: U53
    action: MAction


class MPong(msgspec.Struct, tag_field="type", tag="pong"):
    nonce: U53


class MView(msgspec.Struct):
    seat: int
    phase: str
    to_act: int
    dealer: int
    hand: tuple[str, ...]
    discard_pile: tuple[str, ...]
    stock_size: int
    opponent_hand_size: int
    opponent_known: tuple[str, ...]
    knock_limit: int
    multiplier: int
    turn: int
    scores: tuple[int, int]
    taken_card: str | None


class MRequest(msgspec.Struct, tag_field="type", tag="request", omit_defaults=True):
    request_id: int
    decision: str
    legal: tuple[MAction, ...]
    view: MView
    time_left_ms: int
    bank_ms: int
    events: tuple[bytes, ...] = ()


DEC = msgspec.msgpack.Decoder(MActionMsg | MPong)
ENC = msgspec.msgpack.Encoder()
texts = mask_table(CARD_TEXT)
_MA: dict[object, MAction] = {}


def maction(a: object) -> MAction:
    m = _MA.get(a)
    if m is None:
        w = to_wire_action(a)  # type: ignore[arg-type]
        m = _MA[a] = MAction(w.kind, w.card)
    return m


def msgspec_request(state, legal, rid, tl, bank):  # type: ignore[no-untyped-def]
    seat = state.to_act
    other = 1 - seat
    view = MView(
        seat,
        str(state.phase),
        seat,
        state.dealer,
        texts(state.hands[seat]),
        tuple([CARD_TEXT[i] for i in state.discard_pile]),
        len(state.deck) - state.stock_pos,
        state.hands[other].bit_count(),
        texts(state.known[other]),
        state.knock_limit,
        state.multiplier,
        state.turn,
        state.scores,
        CARD_TEXT[state.taken] if state.taken >= 0 else None,
    )
    return ENC.encode(
        MRequest(rid, str(state.phase), tuple([maction(a) for a in legal]), view, tl, bank)
    )


def main() -> None:
    """Run the rounds and print the figures."""
    steps = [step[:4] for step in decisions(200)]
    # same bytes?
    s, lg, r, _ = steps[5]
    assert msgspec_request(s, lg, r, 5000, 60000) == request_bytes(s, lg, r, 5000, 60000, ()), (
        "bytes differ"
    )
    assert DEC.decode(steps[5][3]).action.kind == decode_action(steps[5][3])[1].kind  # type: ignore[index]
    res: dict[str, list[float]] = {
        k: []
        for k in (
            "enc_today",
            "enc_msgspec",
            "dec_today",
            "dec_msgspec",
            "dec_msgspec_to_wireaction",
        )
    }
    clock = time.perf_counter_ns
    for _ in range(9):
        for name, times in res.items():
            t0 = clock()
            if name == "enc_today":
                for st, lg, rid, _ in steps:
                    request_bytes(st, lg, rid, 5000, 60000, ())
            elif name == "enc_msgspec":
                for st, lg, rid, _ in steps:
                    msgspec_request(st, lg, rid, 5000, 60000)
            elif name == "dec_today":
                for *_, data in steps:
                    decode_action(data)
            elif name == "dec_msgspec":
                for *_, data in steps:
                    DEC.decode(data)
            else:
                for *_, data in steps:
                    m = DEC.decode(data)
                    a = m.action
                    if a.melds is None:
                        simple_action(a.kind, a.card)
            times.append((clock() - t0) / len(steps) / 1000)
    for name, xs in res.items():
        print(
            f"{name:26s} median {statistics.median(xs):.3f} us"
            f"  min {min(xs):.3f} max {max(xs):.3f}  ({len(steps)} calls x 9 rounds)"
        )
    for bad in ({"kind": "discard", "card": "1h"}, {"kind": "discard"}, {"kind": 3}):
        try:
            DEC.decode(msgpack.packb({"type": "action", "request_id": 1, "action": bad}))
            print("msgspec accepted", bad)
        except msgspec.ValidationError as exc:
            print("msgspec error:", exc)


if __name__ == "__main__":
    main()
