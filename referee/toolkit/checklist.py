"""The checklist of ``gin-referee check``: what was observed, judged item by item.

Each :class:`CheckItem` is ``pass``, ``fail`` (with the reason) or ``skip`` (the situation did
not arise, e.g. the bot never knocked, or ``multi_match`` was not asked for). A report with any
``fail`` is not ``ok``. The items and what makes each fail are listed in docs/protocol.md
("Checking a bot").
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.match.faults import FaultKind
from referee.match.result import MatchResult
from referee.rules import deadwood, parse_cards
from referee.toolkit.battery import BATTERY_GAMES
from referee.toolkit.probe import Decision, ProbeLink

__all__ = ["CheckItem", "CheckReport", "Observed", "evaluate"]

PASS, FAIL, SKIP = "pass", "fail", "skip"


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One line of the checklist."""

    key: str
    """Stable identifier (for tools)."""
    status: str
    """``pass``, ``fail`` or ``skip``."""
    detail: str
    """What was seen, or why it failed."""


@dataclass(slots=True)
class Observed:
    """Everything :func:`~referee.toolkit.check.run_check` saw."""

    move_ms: int
    exit_grace: float
    links: list[ProbeLink] = field(default_factory=list)
    results: list[MatchResult] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)
    sent_bye: bool = False
    exit_code: int | None = None
    exit_wait: float = 0.0
    exit_hint: str = ""
    stderr_tail: str = ""


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The checklist and the decision times."""

    name: str
    items: tuple[CheckItem, ...]
    times_ms: tuple[float, ...]
    move_ms: int
    stderr_tail: str = ""

    @property
    def ok(self) -> bool:
        """No item failed."""
        return all(item.status != FAIL for item in self.items)

    @property
    def median_ms(self) -> float | None:
        """Median decision time (None without decisions)."""
        return statistics.median(self.times_ms) if self.times_ms else None

    @property
    def max_ms(self) -> float | None:
        """Longest decision time (None without decisions)."""
        return max(self.times_ms) if self.times_ms else None

    def item(self, key: str) -> CheckItem:
        """The item with this key."""
        return next(i for i in self.items if i.key == key)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` form."""
        return {
            "bot": self.name,
            "ok": self.ok,
            "items": [{"key": i.key, "status": i.status, "detail": i.detail} for i in self.items],
            "decisions": len(self.times_ms),
            "median_ms": self.median_ms,
            "max_ms": self.max_ms,
            "move_ms": self.move_ms,
        }

    def lines(self) -> list[str]:
        """The readable checklist."""
        width = max(len(i.key) for i in self.items)
        out = [f"check of {self.name}:"]
        for i in self.items:
            out.append(f"  [{i.status.upper():4}] {i.key:<{width}}  {i.detail}")
        failed = sum(i.status == FAIL for i in self.items)
        verdict = "all checks passed" if failed == 0 else f"{failed} check(s) failed"
        out.append(f"{verdict} ({sum(i.status == PASS for i in self.items)} passed)")
        if failed and self.stderr_tail:
            out.append("the bot's stderr ends with:")
            out.extend("  | " + line for line in self.stderr_tail.splitlines()[-8:])
        return out


# ---------------------------------------------------------------------- situations


def _kinds(d: Decision) -> set[str]:
    return {a.kind for a in d.request.legal}


def _gin_legal(d: Decision) -> bool:
    hand = parse_cards(" ".join(d.request.view.hand))
    for action in d.request.legal:
        if action.kind == "knock" and action.card is not None:
            rest = [c for c in hand if str(c) != action.card]
            if deadwood(rest) == 0:
                return True
    return False


def _is_dealer(d: Decision) -> bool:
    return d.request.view.dealer == d.request.view.seat


SITUATIONS: tuple[tuple[str, str, Callable[[Decision], bool]], ...] = (
    (
        "first_upcard_nondealer",
        "first upcard as the non-dealer",
        lambda d: (
            d.request.decision == "first_upcard"
            and "pass_upcard" in _kinds(d)
            and not _is_dealer(d)
        ),
    ),
    (
        "first_upcard_dealer",
        "first upcard as the dealer",
        lambda d: (
            d.request.decision == "first_upcard" and "pass_upcard" in _kinds(d) and _is_dealer(d)
        ),
    ),
    (
        "first_upcard_draw_only",
        "first upcard passed by both (only draw_stock legal)",
        lambda d: d.request.decision == "first_upcard" and _kinds(d) == {"draw_stock"},
    ),
    ("draw", "draw decision", lambda d: d.request.decision == "draw"),
    ("discard", "discard decision", lambda d: d.request.decision == "discard"),
    ("knock_offered", "discard decision with a knock legal", lambda d: "knock" in _kinds(d)),
    ("gin_offered", "discard decision with gin legal", _gin_legal),
    ("big_gin_offered", "discard decision with big_gin legal", lambda d: "big_gin" in _kinds(d)),
)


# ---------------------------------------------------------------------- evaluation


def evaluate(obs: Observed) -> CheckReport:
    """Judge what was observed (see the module docstring)."""
    links = obs.links
    link = links[0]
    decisions = [d for each in links for d in each.decisions]
    faults = [f for r in obs.results for f in r.seats[0].faults]
    bad = {f.request_id: f"{f.kind}: {f.detail[:200]}" for f in faults if f.request_id is not None}
    items: list[CheckItem] = []
    hello = link.hello

    def add(key: str, status: str, detail: str) -> None:
        items.append(CheckItem(key, status, detail))

    if hello is None:
        why = "; ".join(str(f.detail) for f in faults[:1]) or "no hello"
        if obs.rejections:
            why += "; its hello was rejected: " + "; ".join(obs.rejections[:2])
        add("start", FAIL, why)
    else:
        add("start", PASS, "connected to GIN_REFEREE_ENDPOINT and said hello with the token")
    _hello_item(add, hello, obs.rejections)
    for key, title, matches in SITUATIONS:
        _situation(add, key, title, [d for d in decisions if matches(d)], bad)
    _knock_item(add, decisions, bad)
    _ids_item(add, links, decisions)
    _error_item(add, link, bad)
    _heartbeat_item(add, links, faults)
    _hands_item(add, obs, faults, hello is not None)
    _multi_item(add, obs, hello is not None and hello.multi_match)
    _exit_item(add, obs, hello is not None)
    times = tuple(d.elapsed * 1000 for d in decisions if d.elapsed is not None)
    _time_item(add, times, obs.move_ms, faults)
    return CheckReport(link.name, tuple(items), times, obs.move_ms, obs.stderr_tail)


Add = Callable[[str, str, str], None]


def _hello_item(add: Add, hello: Any, rejections: list[str]) -> None:
    if hello is None:
        detail = rejections[0] if rejections else "no hello arrived"
        add("hello", FAIL, detail)
        return
    extras = [f"name {hello.name!r}"]
    extras.append(f"author {hello.author!r}" if hello.author else "no author")
    extras.append(f"version {hello.version!r}" if hello.version else "no version")
    asked = [
        flag for flag in ("inline_events", "multi_match", "declare_melds") if getattr(hello, flag)
    ]
    extras.append("asks " + " and ".join(asked) if asked else "asks for no options")
    add("hello", PASS, "protocol_version 1, " + ", ".join(extras))


def _situation(add: Add, key: str, title: str, found: list[Decision], bad: dict[int, str]) -> None:
    if not found:
        add(key, SKIP, f"not reached: no {title} arose")
        return
    for d in found:
        rid = d.request.request_id
        if rid in bad or d.reply is None:
            why = bad.get(rid, "no answer")
            add(key, FAIL, f"request {rid} ({title}): {why}")
            return
    chosen: dict[str, int] = {}
    for d in found:
        text = "nothing" if d.reply is None else d.reply.kind
        chosen[text] = chosen.get(text, 0) + 1
    summary = ", ".join(f"{k} x{n}" for k, n in sorted(chosen.items()))
    add(key, PASS, f"answered {len(found)} ({summary})")


def _knock_item(add: Add, decisions: list[Decision], bad: dict[int, str]) -> None:
    knocks = [d for d in decisions if d.reply is not None and d.reply.kind == "knock"]
    refused = [d for d in knocks if d.request.request_id in bad]
    if refused:
        d = refused[0]
        add("knock_played", FAIL, f"request {d.request.request_id}: {bad[d.request.request_id]}")
        return
    if not knocks:
        add("knock_played", SKIP, "the bot never knocked (each knock it was offered, it declined)")
        return
    declared = sum(1 for d in knocks if d.reply is not None and d.reply.melds)
    add(
        "knock_played",
        PASS,
        f"knocked {len(knocks)} time(s): {declared} with declared melds, "
        f"{len(knocks) - declared} leaving the arrangement to the referee",
    )


def _ids_item(add: Add, links: list[ProbeLink], decisions: list[Decision]) -> None:
    problems = [p for each in links for p in each.id_problems]
    if problems:
        add("request_ids", FAIL, "; ".join(problems[:3]))
    else:
        answered = sum(1 for d in decisions if d.reply is not None)
        if answered == 0:
            add("request_ids", SKIP, "not reached: the bot answered no request")
        else:
            add("request_ids", PASS, f"{answered} replies, each to the outstanding request, once")


def _error_item(add: Add, link: ProbeLink, bad: dict[int, str]) -> None:
    if link.error_sent is None:
        game = "?" if link.error_game is None else link.error_game + 1
        add("error_survived", SKIP, f"not reached: game {game} was not played")
        return
    stale, after = link.error_sent
    named = [p for p in link.id_problems if f"request {stale} " in p]
    reply = next((d for d in link.decisions if d.request.request_id == after), None)
    if named:
        add("error_survived", FAIL, f"after an error naming request {stale}: {named[0]}")
    elif reply is None or reply.reply is None or after in bad:
        why = bad.get(after, "no answer")
        text = f"after an error naming request {stale}, request {after}: {why}"
        add("error_survived", FAIL, text)
    else:
        add(
            "error_survived",
            PASS,
            f"read an error naming request {stale}, then answered request {after} once",
        )


def _heartbeat_item(add: Add, links: list[ProbeLink], faults: list[Any]) -> None:
    stalls = [f for f in faults if f.kind == FaultKind.STALL]
    pings = [n for each in links for n in each.pings]
    pongs = [n for each in links for n in each.pongs]
    wrong = [n for n in pongs if n not in pings]
    if wrong:
        add("heartbeat", FAIL, f"pong with nonce {wrong[0]}, which no ping carried")
    elif stalls:
        add("heartbeat", FAIL, f"{stalls[0].detail} ({len(pings)} ping(s), {len(pongs)} pong(s))")
    elif not pings:
        add("heartbeat", SKIP, "never idle long enough to be pinged")
    elif len(set(pongs)) < len(set(pings)) - 1:
        add("heartbeat", FAIL, f"answered {len(set(pongs))} of {len(pings)} pings")
    else:
        add("heartbeat", PASS, f"answered {len(set(pongs))} of {len(pings)} ping(s)")


def _hands_item(add: Add, obs: Observed, faults: list[Any], started: bool) -> None:
    if not obs.results or not started:
        add("hand_end", SKIP, "no match was played")
        return
    first = obs.results[0]
    hands = sum(1 for each in obs.links for _ in {(d.game, d.hand) for d in each.decisions})
    if faults:
        f = faults[0]
        where = f"game {f.game + 1}" if f.game >= 0 else "before the first game"
        where += f" hand {f.hand + 1}" if f.game >= 0 and f.hand >= 0 else ""
        add(
            "hand_end",
            FAIL,
            f"fault {f.kind} {'' if f.game < 0 else 'in '}{where}: {f.detail[:200]}",
        )
    elif first.games_played < BATTERY_GAMES:
        text = f"the match stopped after {first.games_played} game(s): {first.reason}"
        add("hand_end", FAIL, text)
    else:
        add(
            "hand_end",
            PASS,
            f"played on after hand_end/game_end: {first.games_played} games, decisions in "
            f"{hands} hand(s), no fault",
        )


def _multi_item(add: Add, obs: Observed, asked: bool) -> None:
    if not asked:
        add("multi_match", SKIP, "not asked for in hello")
    elif len(obs.results) < 2:
        add("multi_match", FAIL, "asked for, but not kept after the first match")
    elif obs.results[1].seats[0].faults:
        fault = obs.results[1].seats[0].faults[0]
        add("multi_match", FAIL, f"second match: {fault.kind}: {fault.detail[:200]}")
    else:
        add("multi_match", PASS, "played a second match on the same connection")


def _exit_item(add: Add, obs: Observed, started: bool) -> None:
    if not started:
        add("exit", SKIP, "the bot never said hello")
        return
    last = "the referee's bye" if obs.sent_bye else "match_end"
    code, wait = obs.exit_code, obs.exit_wait
    if code is None:
        add("exit", FAIL, f"still running {obs.exit_grace:g} s after {last}")
    elif code != 0:
        add("exit", FAIL, f"after {last}: {obs.exit_hint}")
    elif not obs.sent_bye and not obs.links[-1].said_bye:
        add("exit", FAIL, "exited 0 after match_end without sending bye")
    elif obs.sent_bye and obs.links[-1].said_bye:
        add("exit", FAIL, "sent bye after match_end although multi_match was granted")
    else:
        said = "" if obs.sent_bye else "sent bye and "
        add("exit", PASS, f"{said}exited 0 {wait:.2f} s after {last}")


def _time_item(add: Add, times: tuple[float, ...], move_ms: int, faults: list[Any]) -> None:
    timeouts = [f for f in faults if f.kind == FaultKind.TIMEOUT]
    if not times:
        add("decision_time", SKIP if not timeouts else FAIL, "no decision answered")
        return
    median, worst = statistics.median(times), max(times)
    text = f"median {median:.1f} ms, max {worst:.1f} ms over {len(times)} (move time {move_ms} ms)"
    if timeouts:
        add("decision_time", FAIL, f"{timeouts[0].detail}; {text}")
    elif worst > move_ms:
        add("decision_time", PASS, f"{text}: the slowest drew on the bank")
    else:
        add("decision_time", PASS, text)
