"""A match record turned into plain data a page can render without knowing the rules.

:func:`match_data` verifies the record (:func:`referee.match.record.replay_record`), then
re-deals every hand from its deck order and re-applies its actions through the rules engine,
keeping a *snapshot* after every step: both hands split into melds and deadwood, the discard
pile, the stock count, who is to act, and the decision that led there with its seat, card and
time. The page's script only draws these snapshots (see docs/viewer.md for the format).

A bot is named as the organiser named it (the header's ``seats``: the tournament's config or the
command line); the name it gave in its hello (the ``seats`` line) is only a detail, in
``self_names``.

:func:`hand_data` builds one hand's snapshots on its own, so a live page can send hands one at
a time in exactly the form the replay page embeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.match import RecordError, read_record_lines, replay_record
from referee.rules import (
    Card,
    Discard,
    DrawStock,
    HandState,
    Knock,
    RuleSet,
    TakeDiscard,
    apply,
    best_melds,
    deal,
    parse_action,
)

__all__ = [
    "VIEW_SCHEMA_VERSION",
    "Clocks",
    "hand_data",
    "hand_id",
    "match_data",
    "recorded_hand",
    "scores_after",
    "snapshot",
]

VIEW_SCHEMA_VERSION = 1
"""Version of the data format the page's script reads (``schema_version`` in the data)."""


def _cards(cards: Sequence[Card] | Any) -> list[str]:
    return [str(card) for card in cards]


def snapshot(state: HandState) -> dict[str, Any]:
    """One step of a hand as the spectator sees it: every card face up."""
    seats = []
    for seat in (0, 1):
        melds, rest = best_melds(state.hand(seat))
        seats.append(
            {
                "melds": [_cards(meld.cards) for meld in melds],
                "deadwood_cards": _cards(rest),
                "deadwood": rest.value,
            }
        )
    return {
        "seats": seats,
        "pile": [str(Card.from_index(i)) for i in state.discard_pile],
        "stock": state.stock_size,
        "phase": str(state.phase),
        "to_act": None if state.is_over else state.to_act,
    }


class Clocks:
    """Each seat's time used in a game and bank left, charged as the referee's clock does:
    time over ``move_ms`` comes out of the bank (floor 0)."""

    def __init__(self, time_control: dict[str, Any] | None = None) -> None:
        tc = time_control or {}
        self.move_ms: float | None = tc.get("move_ms")
        self.used_ms = [0.0, 0.0]
        bank = tc.get("bank_ms")
        self.bank_ms: list[float] | None = None if bank is None else [bank, bank]

    def charge(self, seat: int, ms: float) -> None:
        """Account one decision of ``seat``."""
        self.used_ms[seat] += ms
        if self.bank_ms is not None and self.move_ms is not None:
            self.bank_ms[seat] = max(0.0, self.bank_ms[seat] - max(0.0, ms - self.move_ms))


def _drawn(before: HandState, after: HandState, seat: int) -> str | None:
    """The card a draw or take put into ``seat``'s hand (the spectator sees it)."""
    new = after.hands[seat] & ~before.hands[seat]
    return str(Card.from_index(new.bit_length() - 1)) if new else None


def hand_data(
    rules: RuleSet,
    *,
    deck: Sequence[Card],
    dealer: int,
    scores: tuple[int, int],
    actions: Sequence[Sequence[Any]],
    clocks: Clocks | None = None,
) -> dict[str, Any]:
    """Deal and replay one hand; ``actions`` are ``[seat, action text, elapsed ms]``.

    ``clocks`` carries each seat's time used and bank left from the game's earlier hands (it
    is updated). Raises ``ValueError`` (or a :class:`referee.rules.RulesError`) if an action
    does not apply.
    """
    clocks = clocks or Clocks()
    state = deal(rules, deck, dealer=dealer, scores=scores)
    steps = [snapshot(state) | {"action": None}]
    for seat, text, ms in actions:
        if seat != state.actor:
            raise ValueError(f"action {text!r} by seat {seat} but seat {state.actor} was to act")
        action = parse_action(text)
        after = apply(state, action)
        clocks.charge(seat, float(ms))
        step: dict[str, Any] = {"seat": seat, "text": text, "ms": round(float(ms), 3)}
        if isinstance(action, DrawStock | TakeDiscard):
            step["card"] = _drawn(state, after, seat)
        elif isinstance(action, Discard | Knock):
            step["card"] = str(action.card)
        step["used_ms"] = round(clocks.used_ms[seat], 3)
        if clocks.bank_ms is not None:
            step["bank_ms"] = round(clocks.bank_ms[seat], 3)
        steps.append(snapshot(after) | {"action": step})
        state = after
    first = deal(rules, deck, dealer=dealer, scores=scores)
    return {
        "dealer": dealer,
        "upcard": str(first.upcard),
        "knock_limit": first.knock_limit,
        "multiplier": first.multiplier,
        "scores_before": list(scores),
        "steps": steps,
        "over": state.is_over,
        "used_ms": [round(ms, 3) for ms in clocks.used_ms],
    }


def hand_id(game: int, hand: int) -> str:
    """A hand's id in the data and the page's links: ``g1-h2`` (both counted from 1)."""
    return f"g{game + 1}-h{hand + 1}"


def scores_after(scores_before: Sequence[int], result: dict[str, Any]) -> list[int]:
    """A game's score after a hand with this (record form) result."""
    after = [int(scores_before[0]), int(scores_before[1])]
    if result.get("winner") is not None:
        after[result["winner"]] += int(result["points"])
    return after


def recorded_hand(rules: RuleSet, rec: dict[str, Any], clocks: Clocks) -> dict[str, Any]:
    """The page's data for a record's ``hand`` line (``clocks`` as for :func:`hand_data`).
    Raises ``KeyError``, ``TypeError``, ``ValueError`` or ``IndexError`` on a bad line."""
    game = int(rec["game"])
    hand = hand_data(
        rules,
        deck=[Card.parse(text) for text in rec["deck"]],
        dealer=int(rec["dealer"]),
        scores=(int(rec["scores_before"][0]), int(rec["scores_before"][1])),
        actions=rec["actions"],
        clocks=clocks,
    )
    result = rec["result"]
    hand.update(
        game=game,
        hand=int(rec["hand"]),
        result=result,
        scores_after=scores_after(hand["scores_before"], result),
        id=hand_id(game, int(rec["hand"])),
    )
    return hand


def match_data(path: Path) -> dict[str, Any]:
    """Everything the replay page shows, from a record file; :class:`RecordError` if the file
    cannot be read or does not verify."""
    report = replay_record(path)
    header = report.header
    rules = RuleSet.from_dict(header["rules"])
    names = [str(n) for n in header.get("seats", ["seat 0", "seat 1"])]
    self_names: list[str] | None = None
    hands: list[dict[str, Any]] = []
    faults: list[dict[str, Any]] = []
    games: list[dict[str, Any]] = []
    match_end: dict[str, Any] | None = None
    clocks: dict[int, Clocks] = {}
    control = header.get("time_control") if isinstance(header.get("time_control"), dict) else None
    for number, rec in read_record_lines(path):
        kind = rec["type"]
        if kind == "seats" and isinstance(rec.get("names"), list):
            self_names = [str(n) for n in rec["names"]][:2]
        elif kind == "fault":
            faults.append({k: rec.get(k) for k in ("seat", "kind", "detail", "game", "hand")})
        elif kind == "game":
            games.append({k: v for k, v in rec.items() if k != "type"})
        elif kind == "match_end":
            match_end = {k: v for k, v in rec.items() if k != "type"}
        elif kind == "hand":
            clock = clocks.setdefault(int(rec["game"]), Clocks(control))
            try:
                hands.append(recorded_hand(rules, rec, clock))
            except (KeyError, TypeError, ValueError, IndexError) as err:
                raise RecordError(str(path), number, f"{type(err).__name__}: {err}") from err
    for fault in faults:
        fault["name"] = names[fault["seat"]] if fault.get("seat") in (0, 1) else None
    return {
        "schema_version": VIEW_SCHEMA_VERSION,
        "match_id": header.get("match_id"),
        "names": names,
        "self_names": self_names,
        "rules": header["rules"],
        "seed": header.get("seed"),
        "time_control": header.get("time_control"),
        "policy": header.get("policy"),
        "games_planned": header.get("games"),
        "hands": hands,
        "faults": faults,
        "games": games,
        "match_end": match_end,
        "complete": report.complete,
    }
