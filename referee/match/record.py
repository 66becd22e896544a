"""Match records: a JSON Lines file per match, and their verified replay.

Line types (each a JSON object with ``type``): ``header`` (schema version, match id, rules and
hash, seed, deal commitment, deal id and secret flag, seat names, time control, policy),
``hand`` (game, hand, dealer, the 52-card deck order, scores before, every action with its seat
and elapsed milliseconds, and the result), ``fault``, ``game`` (winner and totals) and
``match_end`` (with the revealed deal key, unless a tournament keeps it sealed). A hand line is
written when the hand ends, so a decision costs no I/O; every line is flushed as written, so a
killed referee loses at most the hand in progress. A tournament compresses each finished record
(:mod:`referee.match.record_gzip`); readers take either form. See docs/records.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from referee.match.deals import commitment, deck_order, parse_key
from referee.match.faults import Fault
from referee.match.record_read import RecordError, RecordUnreadable, read_record_lines
from referee.net.private import private_dir, private_opener
from referee.rules import (
    DECK,
    Action,
    Card,
    HandResult,
    RulesError,
    RuleSet,
    Termination,
    apply,
    deal,
    final_score,
    new_game,
    parse_action,
    record_hand,
)

__all__ = [
    "RECORD_SCHEMA_VERSION",
    "MatchRecorder",
    "Observer",
    "RecordError",
    "RecordUnreadable",
    "read_record_lines",
    "replay_record",
]

RECORD_SCHEMA_VERSION = 1


def result_to_dict(result: HandResult) -> dict[str, Any]:
    """Plain-data form of a hand result."""
    return {
        "termination": str(result.termination),
        "winner": result.winner,
        "points": result.points,
        "knocker": result.knocker,
        "deadwood": list(result.deadwood),
        "melds": [[str(m) for m in seat] for seat in result.melds],
        "layoffs": [[str(card), str(meld)] for card, meld in result.layoffs],
    }


Observer = Callable[[dict[str, Any]], None]
"""Told every line of a match's record as it is written, and two events that are not written:
``deal`` (``game``, ``hand``, ``dealer``, ``upcard``, ``scores``, ``stock``, ``to_act``,
``phase``, ``knock_limit``, ``multiplier``: what both seats see when a hand is dealt) and
``action`` (``game``, ``hand``, ``seat``, ``action`` as recorded, ``ms``, then the public
state after it: ``to_act``, ``phase``, ``stock``). Called synchronously on the referee's event
loop, so it must return at once. It is told secrets (a ``hand`` line holds the deck, a knock
its melds): withholding them from anyone is the observer's job (``referee.live``)."""


class MatchRecorder:
    """Writes one match's record; every line is flushed as it is written, then handed to the
    ``observer``, if any (see :data:`Observer`)."""

    def __init__(self, path: Path, *, observer: Observer | None = None) -> None:
        self.path = path
        private_dir(path.parent)
        self._file: IO[str] | None = open(path, "w", encoding="utf-8", opener=private_opener)  # noqa: SIM115
        self.header_extra: dict[str, Any] = {}
        """Fields the match runner adds to the header (e.g. the bots' ``sandbox`` level)."""
        self.observer = observer
        """Told every line and the live-only events (see :data:`Observer`)."""

    def write(self, record: dict[str, Any]) -> None:
        """Append one line (an infrastructure error such as a full disk propagates)."""
        if self._file is None:
            raise ValueError("record already closed")
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._file.flush()
        if self.observer is not None:
            self.observer(record)

    def header(self, **fields: Any) -> None:
        """The first line."""
        header = {"type": "header", "schema_version": RECORD_SCHEMA_VERSION, **fields}
        self.write({**header, **self.header_extra})

    def hand(
        self,
        *,
        game: int,
        hand: int,
        dealer: int,
        deck: tuple[Card, ...],
        scores: tuple[int, int],
        actions: list[tuple[int, str, float]],
        result: HandResult,
        excused: list[tuple[int, float]] | None = None,
    ) -> None:
        """One finished (or forfeited) hand with its actions (and, when any was, the time
        excused: ``[action index, ms]`` pairs)."""
        line: dict[str, Any] = {
            "type": "hand",
            "game": game,
            "hand": hand,
            "dealer": dealer,
            "deck": [str(c) for c in deck],
            "scores_before": list(scores),
            "actions": [[s, a, round(ms, 3)] for s, a, ms in actions],
            "result": result_to_dict(result),
        }
        if excused:
            line["excused"] = [[i, round(ms, 3)] for i, ms in excused]
        self.write(line)

    def fault(self, fault: Fault) -> None:
        """One fault."""
        self.write({"type": "fault", **fault.to_dict()})

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclass(slots=True)
class ReplayReport:
    """What :func:`replay_record` verified."""

    header: dict[str, Any]
    """The record's header."""
    hands: int = 0
    """Hands re-applied and verified."""
    games: int = 0
    """Game lines verified."""
    faults: int = 0
    """Fault lines read."""
    lines: list[str] = field(default_factory=list)
    """A readable account of every hand."""
    complete: bool = False
    """Whether the record ends with ``match_end``."""
    decks: list[tuple[int, int, int, list[int]]] = field(default_factory=list)
    """Every hand's (line, game, hand, deck card indices), for the deal check."""
    revealed: tuple[int, str] | None = None
    """The ``match_end`` line and the deal key it reveals, if any."""
    deals: str = "deals: not verified (--verify re-derives every deck from the deal key)"
    """The deal check's verdict."""


def _check(cond: bool, path: Path, line: int, reason: str) -> None:
    if not cond:
        raise RecordError(str(path), line, reason)


def replay_record(
    path: Path, *, verify_deals: bool = False, deal_key: bytes | None = None
) -> ReplayReport:
    """Re-apply every hand of a record through the rules engine and verify every result.

    With ``verify_deals``, also check that the deal key (``deal_key``, else the one the record's
    ``match_end`` reveals) matches the header's commitment and re-derives every recorded deck.
    """
    lines = read_record_lines(path)
    first = next(lines, None)
    _check(first is not None, path, 1, "empty record")
    assert first is not None
    number, header = first
    _check(header.get("type") == "header", path, number, "the first line must be the header")
    _check(
        header.get("schema_version") == RECORD_SCHEMA_VERSION,
        path,
        number,
        f"unsupported schema_version {header.get('schema_version')!r}",
    )
    try:
        rules = RuleSet.from_dict(header["rules"])
    except (KeyError, TypeError, ValueError) as err:
        raise RecordError(str(path), number, f"bad rules: {err}") from err
    _check(rules.rules_hash == header.get("rules_hash"), path, number, "rules hash mismatch")
    report = ReplayReport(header=header)
    names = list(header.get("seats", ["seat0", "seat1"]))
    report.lines.append(
        "(games and hands are numbered from 1, as on the replay pages; the record counts from 0)"
    )
    games: dict[int, Any] = {}
    for number, rec in lines:
        kind = rec["type"]
        try:
            if kind == "seats":  # the names the bots gave in their hello: a detail
                for name, own in zip(names, [str(n) for n in rec["names"]], strict=False):
                    if own != name:
                        report.lines.append(f"{name} calls itself {own}")
            elif kind == "hand":
                _replay_hand(rec, rules, names, games, report)
                report.decks.append(
                    (number, rec["game"], rec["hand"], [Card.parse(t).index for t in rec["deck"]])
                )
            elif kind == "game":
                _verify_game(rec, rules, names, games, report)
            elif kind == "fault":
                report.faults += 1
                report.lines.append(
                    f"  FAULT seat {rec.get('seat')} ({names[rec.get('seat', 0)]}): "
                    f"{rec.get('kind')}: {rec.get('detail')}"
                )
            elif kind == "match_end":
                report.complete = True
                if rec.get("deal_key") is not None:
                    report.revealed = (number, rec["deal_key"])
                winner = rec.get("winner")
                who = "none" if winner is None else f"seat {winner} ({names[winner]})"
                error = f" ({rec['error']})" if rec.get("error") else ""
                report.lines.append(f"match end: {rec.get('reason')}{error}, winner {who}")
        except RecordError:
            raise
        except (RulesError, KeyError, TypeError, ValueError, IndexError) as err:
            raise RecordError(str(path), number, f"{type(err).__name__}: {err}") from err
    if verify_deals:
        _verify_deals(path, report, deal_key)
    return report


def _verify_deals(path: Path, report: ReplayReport, given: bytes | None) -> None:
    """The commitment check and the re-derivation of every deck (see docs/records.md)."""
    header = report.header
    promised, deal_id = header.get("deal_commitment"), header.get("deal_id")
    if not isinstance(promised, str) or not isinstance(deal_id, str):
        raise RecordError(str(path), 1, "the header has no deal_commitment and deal_id to verify")
    line, key = 1, given
    if key is None:
        if report.revealed is None:
            raise RecordError(
                str(path), 1, "no deal key: the record does not reveal one (a tournament's key is"
                " printed by `gin-referee results` once it has ended); pass --deal-key",
            )  # fmt: skip
        line = report.revealed[0]
        try:
            key = parse_key(str(report.revealed[1]))
        except ValueError as err:
            raise RecordError(str(path), line, f"bad deal_key: {err}") from err
    if commitment(key) != promised:
        raise RecordError(
            str(path), line, f"the deal key does not match the header's deal_commitment "
            f"{promised} (its commitment is {commitment(key)})",
        )  # fmt: skip
    for number, game, hand, deck in report.decks:
        derived = deck_order(key, deal_id, game, hand)
        if derived != deck:
            at = next(i for i, (a, b) in enumerate(zip(deck, derived, strict=True)) if a != b)
            raise RecordError(
                str(path), number, f"game {game + 1} hand {hand + 1}: the recorded deck is not "
                f"the one the deal key derives (position {at}: recorded {DECK[deck[at]]}, "
                f"derived {DECK[derived[at]]})",
            )  # fmt: skip
    kind = "secret" if header.get("deal_secret", True) else "NOT secret: from a public seed"
    report.deals = (
        f"deals: {len(report.decks)} deck(s) re-derived from the deal key, which matches the "
        f"commitment {promised} ({kind})"
    )


def _replay_hand(
    rec: dict[str, Any],
    rules: RuleSet,
    names: list[str],
    games: dict[int, Any],
    report: ReplayReport,
) -> None:
    game_no, hand_no, dealer = int(rec["game"]), int(rec["hand"]), int(rec["dealer"])
    deck = tuple(Card.parse(t) for t in rec["deck"])
    if sorted(c.index for c in deck) != list(range(len(DECK))):
        raise ValueError("deck is not a permutation of the 52 cards")
    game = games.setdefault(game_no, new_game(rules, first_dealer=dealer))
    scores = tuple(rec["scores_before"])
    if scores != game.scores:
        raise ValueError(f"scores before the hand are {scores}, expected {game.scores}")
    state = deal(rules, deck, dealer=dealer, scores=game.scores)
    report.lines.append(
        f"game {game_no + 1} hand {hand_no + 1}: {names[dealer]} deals; "
        f"{names[0]}: {state.hand(0)} | {names[1]}: {state.hand(1)} | upcard {state.upcard}"
    )
    actions: list[Action] = []
    for seat, text, _ms in rec["actions"]:
        if seat != state.actor:
            raise ValueError(f"action {text!r} by seat {seat} but seat {state.actor} was to act")
        action = parse_action(text)
        state = apply(state, action)
        actions.append(action)
    result = rec["result"]
    if result["termination"] == str(Termination.FORFEIT):
        if state.is_over:
            raise ValueError("a forfeited hand whose actions already end it")
        winner = result["winner"]
        report.lines.append(
            f"  {len(actions)} actions, then forfeit: seat {winner} ({names[winner]}) wins"
        )
    else:
        if state.result is None:
            raise ValueError("the actions do not finish the hand")
        got = state.result
        if (str(got.termination), got.winner, got.points) != (
            result["termination"],
            result["winner"],
            result["points"],
        ):
            raise ValueError(
                f"result mismatch: replay gives {got.termination} winner {got.winner} "
                f"{got.points} points, record says {result['termination']} winner "
                f"{result['winner']} {result['points']} points"
            )
        games[game_no] = record_hand(game, got)
        who = "nobody" if got.winner is None else names[got.winner]
        report.lines.append(
            f"  {len(actions)} actions, {got.termination}: {who} scores {got.points} "
            f"(deadwood {got.deadwood[0]}/{got.deadwood[1]})"
        )
    report.hands += 1


def _verify_game(
    rec: dict[str, Any],
    rules: RuleSet,
    names: list[str],
    games: dict[int, Any],
    report: ReplayReport,
) -> None:
    game_no = int(rec["game"])
    report.games += 1
    game = games.get(game_no)
    if rec.get("forfeit") or rec.get("winner") is None or game is None:
        winner = rec.get("winner")
        who = "none" if winner is None else f"seat {winner} ({names[winner]})"
        report.lines.append(f"game {game_no + 1}: winner {who} ({rec.get('how')})")
        return
    if not game.is_over:
        raise ValueError(f"game {game_no + 1} is recorded as over but no seat reached the target")
    final = final_score(game)
    if list(final.totals) != list(rec["totals"]) or final.winner != rec["winner"]:
        raise ValueError(f"game totals mismatch: replay {final.totals}, record {rec['totals']}")
    who = f"seat {final.winner} ({names[final.winner]})"
    report.lines.append(f"game {game_no + 1}: {who} wins, totals {final.totals}")
