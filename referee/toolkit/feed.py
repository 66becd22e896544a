"""``gin-referee replay RECORD --seat N --feed CMD``: a record's messages, played to a bot.

The record (docs/records.md) holds the header (rules, clocks, policy, deal commitment, the
bots' seeds), every hand's deck and every decision in order with its time. :func:`feed_record`
plays the match again through the real match machinery (:func:`~referee.match.runner.play_watched`)
with those decks: the recorded opponent is a :class:`~referee.toolkit.probe.PuppetLink` that
plays its recorded moves, and seat N is the bot under test on a :class:`FeedLink`. Seat N
therefore receives the messages it received in the match, byte for byte (the clocks in
``request`` are recomputed from the recorded times, so they may differ in the last
millisecond), and every reply the bot gives is shown beside the recorded one; the recorded move
is what the match goes on with, so the bot keeps receiving the recorded game after a
divergence. Its requests have no deadline (a bot may sit in a debugger).

With ``game`` (and ``hand``) only that part is sent to the bot: the other hands are played
from the record without a word to it (their request ids are used up all the same), and the
bot gets ``match_start``, that game's (hand's) messages and ``match_end``. ``game`` and ``hand``
are the record's indexes (from 0); the text this module writes numbers games and hands from 1,
as ``replay`` and the pages do (its ``--json`` form keeps the record's indexes). A hand the record
ends with a fault is played up to the fault, which is then recorded again as it was (under
the ``strike`` policy the default move played for a faulting bot is shown as its recorded
reply).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from protocol.errors import ErrorCode
from protocol.schema import Bye, MatchEnd, MatchStart, Message, Ping, Request, WireAction
from referee.match.bots import (
    curve_env,
    curve_transport,
    local_bot_keys,
    start_bot,
)
from referee.match.clock import TimeControl
from referee.match.config import MatchConfig
from referee.match.deals import Deal, parse_key
from referee.match.defence import defend_action
from referee.match.faults import FaultKind, FaultPolicy
from referee.match.hub import Hub
from referee.match.record import RecordError, read_record_lines, replay_record
from referee.match.result import MatchResult, RefereeError
from referee.match.runner import (
    BOT_EXIT_GRACE,
    play_watched,
    release_seats,
)
from referee.match.seat import SeatLink
from referee.match.wire import to_action, to_wire_action
from referee.net.keys import KeyPair, KeyRing
from referee.net.process import BotCommand, BotProcess
from referee.net.transport import RouterTransport, TransportConfig
from referee.rules import Card, RulesError, RuleSet, parse_action, parse_cards
from referee.toolkit.probe import ProbeLink, PuppetLink

__all__ = ["FedDecision", "FeedLink", "FeedReport", "feed_record"]


@dataclass(frozen=True, slots=True)
class FedDecision:
    """One request fed to the bot: the recorded reply and the new one."""

    game: int
    hand: int
    request_id: int
    decision: str
    recorded: str
    """The recorded move (``discard 7h``), or ``fault <kind>: <detail>``."""
    new: str | None
    """The bot's reply now (None: none came)."""

    @property
    def fault(self) -> bool:
        """The record has a fault here instead of a move."""
        return self.recorded.startswith("fault ")


@dataclass(slots=True)
class FeedReport:
    """What the bot answered, request by request."""

    seat: int
    name: str
    decisions: list[FedDecision] = field(default_factory=list)
    complete: bool = False
    """The feed reached the record's end with every request answered."""
    problem: str = ""
    """Why it did not, if it did not."""
    no_start: bool = False
    """The bot could not start (a startup fault): nothing was fed."""

    @property
    def divergence(self) -> int | None:
        """Index of the first reply that differs from the recorded move (faults aside)."""
        for i, d in enumerate(self.decisions):
            if not d.fault and d.new != d.recorded:
                return i
        return None

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` form."""
        first = self.divergence
        return {
            "seat": self.seat,
            "bot": self.name,
            "complete": self.complete,
            "problem": self.problem or None,
            "first_divergence": None if first is None else self.decisions[first].request_id,
            "decisions": [
                {
                    "game": d.game,
                    "hand": d.hand,
                    "request_id": d.request_id,
                    "decision": d.decision,
                    "recorded": d.recorded,
                    "new": d.new,
                }
                for d in self.decisions
            ],
        }

    def lines(self) -> list[str]:
        """The side-by-side listing, the first divergence marked."""
        first = self.divergence
        out = [f"seat {self.seat} fed to {self.name}:  game hand request decision: recorded | new"]
        for i, d in enumerate(self.decisions):
            mark = "  "
            if i == first:
                mark = ">>"
            elif d.fault:
                mark = "!!"
            elif d.new != d.recorded:
                mark = " *"
            new = "(no reply)" if d.new is None else d.new
            out.append(
                f"{mark} g{d.game + 1} h{d.hand + 1} #{d.request_id:<4} {d.decision:<12} "
                f"{d.recorded:<28} | {new}"
            )
        if first is None:
            out.append(f"no divergence in {len(self.decisions)} request(s)")
        else:
            d = self.decisions[first]
            out.append(
                f"first divergence: game {d.game + 1} hand {d.hand + 1} request {d.request_id}: "
                f"recorded {d.recorded}, the bot now says {d.new or '(nothing)'}"
            )
        if self.problem:
            out.append(f"feed stopped: {self.problem}")
        return out


class _Script:
    """The record's moves, hand by hand, handed out in order to whichever seat is asked."""

    def __init__(self, hands: dict[tuple[int, int], list[Any]], faults: list[dict[str, Any]]):
        self.hands = hands
        self.faults = faults
        self.pos: dict[tuple[int, int], int] = {}
        self.links: tuple[SeatLink, SeatLink] | None = None

    def next(self, seat: int, game: int, hand: int) -> tuple[str, float] | None:
        """The recorded move of ``seat`` now, with its seconds; None when the hand's moves are
        used up (a fault ended it)."""
        moves = self.hands.get((game, hand), [])
        at = self.pos.get((game, hand), 0)
        if at >= len(moves):
            return None
        who, text, ms = moves[at]
        if who != seat:
            where = f"game {game + 1} hand {hand + 1}"
            raise RecordError("record", 0, f"{where}: move {at} is not seat {seat}'s")
        self.pos[(game, hand)] = at + 1
        return str(text), float(ms) / 1000

    def defends_next(self, seat: int, game: int, hand: int) -> bool:
        """Whether the hand's next recorded move is ``seat`` declaring its melds after a knock
        (then that seat is asked for them, as it was in the match)."""
        moves = self.hands.get((game, hand), [])
        at = self.pos.get((game, hand), 0)
        return at < len(moves) and moves[at][0] == seat and str(moves[at][1]).startswith("defend")

    def puppet_move(self, puppet: PuppetLink, request: Request) -> WireAction | None:
        """The recorded opponent's move (a :data:`~referee.toolkit.probe.PuppetPolicy`)."""
        step = self.next(puppet.seat, puppet.game, puppet.hand)
        if step is None:
            self.exhausted(puppet)
            return None
        return _wire(step[0])

    def fault_at(self, game: int, hand: int) -> dict[str, Any] | None:
        """The recorded fault that ended this hand, if any."""
        return next((f for f in self.faults if (f["game"], f["hand"]) == (game, hand)), None)

    def exhausted(self, asked: SeatLink) -> None:
        """The hand's moves ran out at ``asked``'s request: record the fault that ended it."""
        assert self.links is not None
        found = self.fault_at(asked.game, asked.hand)
        if found is None:
            asked.record_fault(FaultKind.PROTOCOL, "the record has no more moves in this hand")
            return
        seat = int(found["seat"])
        kind, detail = FaultKind(found["kind"]), str(found["detail"])
        rid = found.get("request_id")
        if kind is FaultKind.ILLEGAL and seat == asked.seat and isinstance(rid, int):
            asked.reply_error(ErrorCode.ILLEGAL_ACTION, detail, rid)  # as the match did
        fault = self.links[seat].record_fault(kind, detail)
        if seat != asked.seat:
            asked.fail_ask(fault)


def _wire(text: str) -> WireAction:
    return to_wire_action(parse_action(text))


class _Puppet(PuppetLink):
    """The recorded opponent: asked for its melds after a knock where the record has them."""

    script: _Script

    def asks_defence(self) -> bool:
        return self.script.defends_next(self.seat, self.game, self.hand)


class FeedLink(ProbeLink):
    """The bot's seat in a feed: its replies are noted, the recorded moves are played."""

    script: _Script
    focus: Callable[[int, int], bool]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fed: list[FedDecision] = []
        self.muted = False
        self._step: tuple[str, float] | None = None

    def asks_defence(self) -> bool:
        """As the match did: when the record holds this seat's melds after a knock."""
        return self.script.defends_next(self.seat, self.game, self.hand)

    def enter(self, game: int, hand: int) -> None:
        """Move on; hands outside the focus are played without a word to the bot."""
        super().enter(game, hand)
        self.muted = not self.focus(game, hand)

    def send(self, msg: Message | bytes) -> bool:
        """Send, except inside muted hands (``match_start``, ``match_end``, ``bye`` and pings
        always go)."""
        if self.muted and not isinstance(msg, MatchStart | MatchEnd | Bye | Ping):
            return True
        return super().send(msg)

    def ask(
        self,
        request_id: int,
        request: bytes,
        on_reply: Callable[[WireAction, float], None],
        on_fault: Callable[[Exception], None],
        after_send: Callable[[], None] | None = None,
    ) -> None:
        """Send the request; a muted hand's request is answered from the record at once."""
        step = self._step = self.script.next(self.seat, self.game, self.hand)
        super().ask(request_id, request, on_reply, on_fault, after_send)
        if self.muted:
            asyncio.get_running_loop().call_soon(self._play_recorded, request_id)
            return
        if step is not None and self._watchdog is not None:
            self._watchdog.cancel()  # no deadline: the bot may sit in a debugger
            self._watchdog = None
        if step is None:  # the recorded fault: its deadline is kept, a timeout may recur
            found = self.script.fault_at(self.game, self.hand)
            recorded = "fault " + ("?" if found is None else f"{found['kind']}: {found['detail']}")
        else:
            recorded = step[0]
        decision = self.decisions[-1].request.decision
        self.fed.append(
            FedDecision(self.game, self.hand, request_id, decision, recorded[:120], None)
        )

    def _play_recorded(self, request_id: int) -> None:
        if self._pending_id != request_id or self.finished:
            return
        if self._step is None:
            self.script.exhausted(self)
        else:
            self._deliver(self._step)

    def _deliver(self, step: tuple[str, float]) -> None:
        on_reply, on_fault = self._on_reply, self._on_fault
        self.cancel_ask()
        if on_reply is not None:
            self._reply_to_asker(on_reply, on_fault, _wire(step[0]), step[1])
        else:
            self.clock.charge(step[1])

    def _on_action(self, rid: int, action: WireAction, arrived: float) -> None:
        if rid != self._pending_id or self._on_reply is None or self.muted:
            super()._on_action(rid, action, arrived)
            return
        self._answered.add(rid)
        try:
            if action.kind == "defend":
                declared = defend_action(action)
                new = "defend (the referee arranges)" if declared is None else str(declared)
            else:
                new = str(to_action(action))
        except RulesError:
            new = repr(action)
        self.fed[-1] = replace(self.fed[-1], new=new)
        step = self._step
        if step is None:
            self.script.exhausted(self)
        else:
            self._deliver(step)


_Decks = dict[tuple[int, int], tuple[Card, ...]]
_Loaded = tuple[dict[str, Any], list[str], "_Script", _Decks, dict[str, Any] | None]


def _load(path: Path) -> _Loaded:
    """The header, the seats' names, the moves, the decks and the ``match_end`` line."""
    lines = list(read_record_lines(path))
    header = lines[0][1]
    names = list(header.get("seats", ["seat0", "seat1"]))
    hands: dict[tuple[int, int], list[Any]] = {}
    decks: _Decks = {}
    faults: list[dict[str, Any]] = []
    end: dict[str, Any] | None = None
    for _, line in lines[1:]:
        kind = line["type"]
        if kind == "seats":
            names = list(line["names"])
        elif kind == "hand":
            key = (int(line["game"]), int(line["hand"]))
            hands[key] = list(line["actions"])
            decks[key] = tuple(parse_cards(" ".join(line["deck"])))
        elif kind == "fault":
            faults.append(line)
        elif kind == "match_end":
            end = line
    return header, names, _Script(hands, faults), decks, end


@dataclass(frozen=True, slots=True)
class _RecordedDeal(Deal):
    """The record's deal: its commitment as recorded (the key may be sealed)."""

    recorded: str = ""

    @property
    def commitment(self) -> str:
        return self.recorded


def _config(header: dict[str, Any], end: dict[str, Any] | None, games: int) -> MatchConfig:
    tc = header["time_control"]
    time = TimeControl(
        move=tc["move_ms"] / 1000,
        bank=tc["bank_ms"] / 1000,
        grace=tc["grace_ms"] / 1000,
        startup=tc["startup_ms"] / 1000,
        heartbeat=header.get("heartbeat_ms", 1000) / 1000,
    )
    key_hex = None if end is None else end.get("deal_key")
    key = bytes(32) if key_hex is None else parse_key(key_hex)
    return MatchConfig(
        rules=RuleSet.from_dict(header["rules"]),
        games=max(1, games),
        target_points=header.get("target_points"),
        deal=_RecordedDeal(key, bytes(32), recorded=header["deal_commitment"]),
        deal_id=header.get("deal_id"),
        reveal_key=key_hex is not None,
        time=time,
        policy=FaultPolicy(header["policy"]),
        max_hands_per_game=header.get("max_hands_per_game", 200),
        match_id=header["match_id"],
    )


async def feed_record(
    path: Path,
    seat: int,
    command: BotCommand,
    *,
    game: int | None = None,
    hand: int | None = None,
    kill_grace: float = 1.0,
    verified: bool = False,
) -> FeedReport:
    """Play seat ``seat``'s messages of the record at ``path`` to the bot ``command`` starts
    (only game ``game``, hand ``hand`` when given); see the module docstring. The record must
    verify first (``verified``: the caller has checked it with ``replay_record``)."""
    if not verified:
        replay_record(path)
    header, names, script, decks, end = _load(path)
    if game is not None and not any(g == game and hand in (None, h) for g, h in decks):
        where = f"game {game + 1}" + ("" if hand is None else f" hand {hand + 1}")
        raise RecordError(str(path), 0, f"the record has no {where}")
    config = _config(header, end, len({g for g, _ in decks}))
    last = max(decks) if decks else (0, 0)
    stop = asyncio.Event()

    def deck(g: int, h: int) -> tuple[Card, ...]:
        if (g, h) >= last:
            stop.set()  # an interrupted record ends here
        return decks[(g, h)]

    server, ring = KeyPair.generate(), KeyRing()  # CURVE on TCP: only the fed bot's fresh key
    transport = RouterTransport(
        TransportConfig(
            endpoint="tcp://127.0.0.1:0", curve=curve_transport(server, ring), local_ipc=True
        )
    )
    report = FeedReport(seat, names[seat])
    hub: Hub | None = None
    links: list[SeatLink] = []
    processes: list[BotProcess | None] = [None, None]
    result: MatchResult | None = None
    try:
        await transport.start()
        hub = Hub(transport, keys=ring)
        seeds = header.get("bot_seeds") or [None, None]
        bot_keys = local_bot_keys(server, transport.local_endpoint)
        link = hub.open_seat(
            seat, config.time, name=names[seat], seed=seeds[seat], link_type=FeedLink,
            public_key=None if bot_keys is None else bot_keys.public,
        )  # fmt: skip
        assert isinstance(link, FeedLink)
        link.script = script
        link.focus = lambda g, h: (game is None or g == game) and (hand is None or h == hand)
        other = _Puppet(
            seat=1 - seat, control=config.time, name=names[1 - seat],
            policy=script.puppet_move, seed=seeds[1 - seat],
        )  # fmt: skip
        other.script = script
        pair = (link, other) if seat == 0 else (other, link)
        links = [link, other]
        script.links = pair
        endpoint = transport.local_endpoint
        processes[seat] = await start_bot(
            link, command, endpoint=endpoint, stderr_path=None,
            extra_env=curve_env(server, bot_keys),
        )  # fmt: skip
        try:
            result = await play_watched(config, pair, processes, deck_source=deck, stop=stop)
        except KeyError as err:
            raise RecordError(str(path), 0, f"the record has no hand {err}") from None
        RefereeError.check(result)  # a referee bug: the bot did not diverge, nothing was fed
        report.name = link.name
        report.decisions = link.fed
        recorded = {(f["game"], f["hand"]) for f in script.faults if f["seat"] == seat}
        new = [f for f in result.seats[seat].faults if (f.game, f.hand) not in recorded]
        if new:
            report.problem = f"{new[0].kind}: {new[0].detail[:200]}"
            report.no_start = any(f.kind == FaultKind.STARTUP for f in new)
        report.complete = not report.problem
    finally:
        await release_seats(
            hub, links, processes, grace=kill_grace, result=result, exit_grace=BOT_EXIT_GRACE
        )
        await transport.close()
    return report
