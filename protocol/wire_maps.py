"""The plain msgpack-ready map of every message: what :func:`protocol.codec.encode` packs.

One small function per message type; optional fields are omitted when absent (an optional
flag is written only when true). Keys come in the order of the documented field tables, with
``type`` first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol.schema import (
    ActionMsg,
    Bye,
    Error,
    Event,
    GameEnd,
    HandEnd,
    HandStart,
    Hello,
    MatchEnd,
    MatchStart,
    Message,
    Ping,
    Pong,
    Reject,
    Request,
    Welcome,
    WireAction,
    WireView,
)

__all__ = ["action_map", "event_map", "to_wire", "view_map"]


def action_map(a: WireAction) -> dict[str, Any]:
    """The map of one action (``card`` and ``melds`` only when present)."""
    d: dict[str, Any] = {"kind": a.kind}
    if a.card is not None:
        d["card"] = a.card
    if a.melds is not None:
        d["melds"] = a.melds
    return d


def view_map(v: WireView) -> dict[str, Any]:
    """The map of a request's view."""
    return {
        "seat": v.seat,
        "phase": v.phase,
        "to_act": v.to_act,
        "dealer": v.dealer,
        "hand": v.hand,
        "discard_pile": v.discard_pile,
        "stock_size": v.stock_size,
        "opponent_hand_size": v.opponent_hand_size,
        "opponent_known": v.opponent_known,
        "knock_limit": v.knock_limit,
        "multiplier": v.multiplier,
        "turn": v.turn,
        "scores": v.scores,
        "taken_card": v.taken_card,
    }


def _optional(d: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """Add the fields that are not None (optional fields are omitted when absent)."""
    for key, value in fields.items():
        if value is not None:
            d[key] = value
    return d


def _flag(value: bool) -> bool | None:
    """An optional boolean field's wire value: written only when True."""
    return True if value else None


def _hello(m: Hello) -> dict[str, Any]:
    d = {"type": "hello", "protocol_version": m.protocol_version, "name": m.name}
    d["token"] = m.token
    return _optional(
        d,
        author=m.author,
        version=m.version,
        inline_events=_flag(m.inline_events),
        multi_match=_flag(m.multi_match),
    )


def _welcome(m: Welcome) -> dict[str, Any]:
    d = {"type": "welcome", "protocol_version": m.protocol_version, "referee": m.referee}
    d["heartbeat_ms"] = m.heartbeat_ms
    return _optional(d, inline_events=_flag(m.inline_events), multi_match=_flag(m.multi_match))


def event_map(m: Event) -> dict[str, Any]:
    """The map of an ``event`` message (also an entry of a request's ``events``)."""
    return {"type": "event", "seat": m.seat, "action": action_map(m.action)}


def _request(m: Request) -> dict[str, Any]:
    d = {
        "type": "request",
        "request_id": m.request_id,
        "decision": m.decision,
        "legal": [action_map(a) for a in m.legal],
        "view": view_map(m.view),
        "time_left_ms": m.time_left_ms,
        "bank_ms": m.bank_ms,
    }
    if m.events:
        d["events"] = [event_map(e) for e in m.events]
    return d


def _match_start(m: MatchStart) -> dict[str, Any]:
    tc = m.time_control
    d = {
        "type": "match_start",
        "match_id": m.match_id,
        "seat": m.seat,
        "opponent": m.opponent,
        "games": m.games,
        "rules": dict(m.rules),
        "rules_hash": m.rules_hash,
        "time_control": {
            "move_ms": tc.move_ms,
            "bank_ms": tc.bank_ms,
            "grace_ms": tc.grace_ms,
            "startup_ms": tc.startup_ms,
        },
    }
    return _optional(d, seed=m.seed, deal_commitment=m.deal_commitment, deal_id=m.deal_id)


def _hand_end(m: HandEnd) -> dict[str, Any]:
    return {
        "type": "hand_end",
        "game": m.game,
        "hand": m.hand,
        "termination": m.termination,
        "winner": m.winner,
        "points": m.points,
        "hands": m.hands,
        "melds": m.melds,
        "layoffs": m.layoffs,
        "deadwood": m.deadwood,
        "scores": m.scores,
    }


def _match_end(m: MatchEnd) -> dict[str, Any]:
    f = m.fault
    d = {
        "type": "match_end",
        "result": m.result,
        "games_won": m.games_won,
        "points": m.points,
        "reason": m.reason,
        "fault": None if f is None else {"code": f.code, "detail": f.detail},
    }
    return _optional(d, deal_key=m.deal_key)


_ENCODERS: dict[type[Any], Callable[[Any], dict[str, Any]]] = {
    Hello: _hello,
    ActionMsg: lambda m: {
        "type": "action",
        "request_id": m.request_id,
        "action": action_map(m.action),
    },
    Pong: lambda m: {"type": "pong", "nonce": m.nonce},
    Bye: lambda m: _optional({"type": "bye"}, reason=m.reason),
    Welcome: _welcome,
    Reject: lambda m: {
        "type": "reject",
        "code": m.code,
        "message": m.message,
        "supported_versions": m.supported_versions,
    },
    MatchStart: _match_start,
    HandStart: lambda m: {
        "type": "hand_start",
        "game": m.game,
        "hand": m.hand,
        "dealer": m.dealer,
        "hand_cards": m.hand_cards,
        "upcard": m.upcard,
        "scores": m.scores,
    },
    Request: _request,
    Event: event_map,
    HandEnd: _hand_end,
    GameEnd: lambda m: {
        "type": "game_end",
        "game": m.game,
        "winner": m.winner,
        "scores": m.scores,
        "hands_won": m.hands_won,
    },
    MatchEnd: _match_end,
    Error: lambda m: _optional(
        {"type": "error", "code": m.code, "message": m.message}, request_id=m.request_id
    ),
    Ping: lambda m: {"type": "ping", "nonce": m.nonce},
}


def to_wire(msg: Message) -> dict[str, Any]:
    """The plain msgpack-ready map of ``msg`` (what ``encode`` packs)."""
    try:
        to_map = _ENCODERS[type(msg)]
    except KeyError:
        raise TypeError(f"not a protocol message: {type(msg).__name__}") from None
    return to_map(msg)
