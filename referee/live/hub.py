"""The live state of the games in progress, and its fan-out to spectators as server-sent events.

A :class:`LiveHub` is fed by each match's :data:`referee.match.Observer` (:meth:`observer`)
and by the tournament (:meth:`set_standings`, :meth:`seal`/:meth:`unseal`); it turns that into
events for the page, each encoded once and kept, so a spectator who connects gets the current
state as a run of ready bytes (nothing is encoded per spectator but a ``config`` event with
the card delay). Every spectator is sent the light events:

- ``match``: a game's header data (names, rules, time control), its progress (``at``: the game
  and hand in play, at most every ``flush_seconds``), its public faults (seat, kind, where; the
  detail once the game's cards are shown), game and match results: the first time in full, then
  only the keys that changed (a new spectator gets it in full);
- ``standings``: the tournament's standings (the fields of ``gin-referee results --format
  json`` the page shows), at most every ``standings_seconds``;
- ``drop``: a finished game leaves the page (only the last ``keep_finished`` are kept);
- ``over``: the tournament has ended (``complete``: every game was played) and the stream ends;
  the page stops reconnecting. Just before it, each stream gets the last hand of every other
  game on the page (a ``hand``, with its steps: the referee is about to go, and the page could
  no longer load them), if they fill at most half the room its queue has left.

A spectator watching a game (:meth:`subscribe` with ``game``: the one its page shows) is also
sent that game's hands, and no other's (a hand in full is 5 to 25 KB: sent to every spectator,
it was most of the stream):

- ``hand``: one hand in the replay page's form (:mod:`referee.view.replay_data`), masked while
  its cards are withheld (:class:`~referee.live.public.PublicHand`), complete once released;
- ``steps``: the steps of a masked hand in play since the last (``from``: the index of the
  first; a step without ``pile`` has the previous step's, with its discard added or its take
  removed: :func:`~referee.live.public.packed`), sent at most every ``flush_seconds``: each
  spectator's stream wakes ten times a second at most, however fast the bots play;
- ``end``: a masked hand is over: its public result and the scores after it (its steps were
  sent already).

**What is withheld** (docs/security.md): a hand's cards are released ``delay`` seconds after the
hand ends, and not before its deal is unsealed: a tournament seals every deal that a game still
to be played (a duplicate twin, or a game to be replayed after an interruption) will deal
again. Until then the hand is shown as both seats see it.

:class:`~referee.live.withheld.Withheld` holds and releases them; a released hand is replayed
through the rules in a worker thread (a deal unsealed at once releases every hand of two
games). **Bounds:** at most ``max_spectators`` streams; a spectator
whose unsent events exceed ``queue_bytes`` is dropped (its stream closed) rather than
buffered without limit. The observer only updates this state (encoding is done at most every
``flush_seconds``), on the referee's event loop: it never waits, and an error in it is logged
and stops that game's live feed, never the match.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections.abc import Iterable
from typing import Any

from referee.live.fields import LEADERBOARD_ROWS, leaderboard_page, standings_page
from referee.live.game import LiveGame
from referee.live.public import PublicHand, packed
from referee.live.stream import LiveConfig, Spectator, TooManySpectators, sse
from referee.live.withheld import Withheld
from referee.match import Observer
from referee.view.replay_data import Clocks

__all__ = ["LEADERBOARD_ROWS", "LiveConfig", "LiveHub", "Spectator", "TooManySpectators", "sse"]

LOGGER = logging.getLogger(__name__)
_GAME_KEYS = ("game", "winner", "how", "forfeit", "scores", "hands_won", "totals")
_END_KEYS = ("winner", "reason", "interrupted", "games_played", "games_won", "points")


class LiveHub:
    """Games in progress and the spectators' streams (see the module's docstring)."""

    def __init__(self, config: LiveConfig | None = None) -> None:
        self.config = config or LiveConfig()
        self.matches: dict[str, LiveGame] = {}
        self.spectators: set[Spectator] = set()
        self.standings = b""
        self._standings_due: dict[str, Any] | None = None
        self._standings_timer: asyncio.TimerHandle | None = None
        self._standings_at = float("-inf")
        self.over = b""
        """The ``over`` event, once the tournament has ended."""
        self.leaderboard = b""
        """A ladder's latest ``leaderboard`` event (sent first to each new spectator)."""
        self.leaderboard_json = b""
        """A ladder's whole latest leaderboard as JSON (``GET /leaderboard.json``)."""
        self.dropped = 0
        """Spectators dropped for falling behind (since start)."""
        self.peak = 0
        """Most spectators at once."""
        self._pending: dict[str, LiveGame] = {}
        """Games with steps played since the last flush."""
        self._progress: dict[str, LiveGame] = {}
        """Games whose progress (``at``) changed since the flush timer last fired."""
        self._flusher: asyncio.TimerHandle | None = None
        self.withheld = Withheld(
            self.matches, self.config.delay, on_hand=self._hand, on_meta=self._meta
        )
        """What is not shown yet (see "What is withheld" above)."""
        self.closed = False

    # ------------------------------------------------------------ spectators

    def subscribe(self, game: str | None = None) -> tuple[Spectator, bytes]:
        """A new stream (watching ``game``: see the module) and the current state to send
        first; :class:`TooManySpectators` at the cap."""
        if self.closed or len(self.spectators) >= self.config.max_spectators:
            raise TooManySpectators()
        spectator = Spectator(self.config.queue_bytes, game)
        return spectator, self.state(game, spectator)

    def state(self, game: str | None = None, joining: Spectator | None = None) -> bytes:
        """The current state as events, as a new spectator watching ``game`` gets it first
        (``joining`` is subscribed in the same step: it misses no event)."""
        self.flush()
        if joining is not None:
            self.spectators.add(joining)
        self.peak = max(self.peak, len(self.spectators))
        parts = [sse("config", {"delay": self.config.delay}), self.standings, self.leaderboard]
        for match in self.matches.values():
            parts += match.events(hands=match.id == game)
        parts.append(self.over)
        return b"".join(parts)

    def shown(self) -> str | None:
        """The game the page shows first: the first in play, else the last finished."""
        playing = [m.id for m in self.matches.values() if not m.over]
        return playing[0] if playing else next(reversed(self.matches), None)

    def unsubscribe(self, spectator: Spectator) -> None:
        """Forget a stream (its writer ended)."""
        self.spectators.discard(spectator)

    def flush(self, *, steps_only: bool = False) -> None:
        """Publish the steps played since the last flush, one ``steps`` event per hand, and
        the games' progress (``at``) unless ``steps_only`` (another event is to be published:
        the steps go first; the progress waits for the timer, so a game playing many hands
        within ``flush_seconds`` costs every spectator one ``match`` event, not one a hand)."""
        pending, self._pending = self._pending, {}
        for match in pending.values():
            if match.broken or self.matches.get(match.id) is not match:
                continue
            playing = match.playing
            if playing is None:
                continue
            steps = playing.data["steps"]
            start = match.sent.get(playing.id, 0)
            if start < len(steps):
                new = [packed(steps[i - 1], steps[i]) for i in range(max(start, 1), len(steps))]
                payload = {"id": match.id, "hand": playing.id, "from": start,
                           "steps": steps[:1] + new if start == 0 else new}  # fmt: skip
                match.steps[playing.id].append(self._send("steps", payload, match.id))
                match.sent[playing.id] = len(steps)
        if steps_only:
            return
        if self._flusher is not None:
            self._flusher.cancel()
            self._flusher = None
        progress, self._progress = self._progress, {}
        for match in progress.values():
            if not match.broken and self.matches.get(match.id) is match:
                self._meta(match, flushed=True)

    def _later(self, match: LiveGame, *, progress: bool = False) -> None:
        """Publish ``match``'s new steps (and its ``progress``) at the next flush."""
        if progress:
            self._progress[match.id] = match
        else:
            self._pending[match.id] = match
        if self._flusher is None:
            self._flusher = asyncio.get_running_loop().call_later(
                self.config.flush_seconds, self.flush
            )

    def _publish(self, kind: str, payload: Any, game: str | None = None) -> bytes:
        self.flush(steps_only=True)  # steps first: the spectators see every change in order
        return self._send(kind, payload, game)

    def _send(self, kind: str, payload: Any, game: str | None = None) -> bytes:
        """Encode an event once and queue it for every spectator (only for those watching
        ``game``, if given)."""
        data = sse(kind, payload)
        for spectator in list(self.spectators):
            if game is not None and spectator.game != game:
                continue
            if not spectator.push(data):
                self.dropped += 1
                self.spectators.discard(spectator)
                LOGGER.warning(
                    "live: a spectator fell %d bytes behind (more than %d) and was dropped;"
                    " %d spectator(s) left",
                    spectator.behind,
                    self.config.queue_bytes,
                    len(self.spectators),
                )
        return data

    # ------------------------------------------------------------ the tournament's side

    def set_standings(self, standings: dict[str, Any]) -> None:
        """Publish new standings (the fields the page shows), at most every
        ``standings_seconds``: newer ones wait for the rest of that time, replacing any that
        waited."""
        self._standings_due = standings_page(standings)
        if self._standings_timer is not None:
            return
        loop = asyncio.get_running_loop()
        wait = self._standings_at + self.config.standings_seconds - loop.time()
        if wait > 0:
            self._standings_timer = loop.call_later(wait, self._send_standings)
        else:
            self._send_standings()

    def set_leaderboard(self, board: dict[str, Any]) -> None:
        """Publish a ladder's leaderboard (names, ratings and counts: nothing of any deal)."""
        if self.closed:
            return
        self.leaderboard_json = json.dumps(board, separators=(",", ":")).encode()
        self.leaderboard = self._publish("leaderboard", leaderboard_page(board))

    def _send_standings(self) -> None:
        self._standings_timer = None
        if self._standings_due is None or self.closed:
            return
        self.standings = self._publish("standings", self._standings_due)
        self._standings_due = None
        self._standings_at = asyncio.get_running_loop().time()

    @property
    def sealed(self) -> set[str]:
        """Deals whose cards stay withheld (:class:`~referee.live.withheld.Withheld`)."""
        return self.withheld.sealed

    def seal(self, deal_ids: Iterable[str]) -> None:
        """Withhold the cards of every hand dealt from these deals until :meth:`unseal`."""
        self.withheld.seal(deal_ids)

    def unseal(self, deal_id: str) -> None:
        """No game still to be played deals from ``deal_id``: release what is due."""
        self.withheld.unseal(deal_id)

    def withholding(self) -> bool:
        """Whether a hand's cards (or a game's fault details) are still to be released, other
        than those of a sealed deal (which stay withheld)."""
        return self.withheld.pending()

    async def released(self) -> None:
        """Wait until everything withheld that is not sealed has been released and published
        (at most the card delay, once the games are over)."""
        await self.withheld.released()

    async def settled(self) -> None:
        """Wait until every hand being released has been published."""
        await self.withheld.settled()

    def finish(self, *, complete: bool) -> None:
        """The tournament has ended: send the last standings now and tell the spectators (see
        ``over`` in the module)."""
        if self._standings_timer is not None:
            self._standings_timer.cancel()
            self._send_standings()
        self.flush(steps_only=True)
        for spectator in list(self.spectators):  # the page's other games: see ``over`` above
            last = b"".join(m.last_hand() for m in self.matches.values() if m.id != spectator.game)
            if len(last) <= spectator.room // 2:
                spectator.push(last)
        self.over = self._publish("over", {"complete": complete})

    def close(self) -> None:
        """Stop: cancel the release timers and end every stream."""
        self.closed = True
        if self._flusher is not None:
            self._flusher.cancel()
            self._flusher = None
        if self._standings_timer is not None:
            self._standings_timer.cancel()
            self._standings_timer = None
        self.withheld.close()
        for spectator in self.spectators:
            spectator.end()
        self.spectators.clear()

    # ------------------------------------------------------------ the matches' side

    def observer(self, match_id: str) -> Observer:
        """The observer to give the recorder of match ``match_id``."""

        def observe(event: dict[str, Any]) -> None:
            match = self.matches.get(match_id)
            if self.closed or (match is not None and match.broken):
                return
            try:
                self._event(match_id, match, event)
            except Exception:  # a bug here must not end the match: stop its feed
                LOGGER.exception("live feed of %s stopped", match_id)
                if match_id in self.matches:
                    self.matches[match_id].broken = True

        return observe

    def _event(self, match_id: str, match: LiveGame | None, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "header":
            match = self._add(match_id, event)
        if match is None:
            return
        if kind == "seats":  # the bots' own names: a detail (the organiser's name the name)
            match.meta["self_names"] = [str(n) for n in event["names"]][:2]
        elif kind == "deal":
            game = int(event["game"])
            clocks = match.clocks.setdefault(game, Clocks(match.meta.get("time_control")))
            match.playing = PublicHand(event, clocks)
            match.start_clocks[match.playing.id] = copy.deepcopy(clocks)
            self._hand(match, match.playing.data)
            match.meta["at"] = {"game": game, "hand": match.playing.hand}
            self._later(match, progress=True)  # a human sees at most ten changes a second
            return
        elif kind == "action":
            playing = match.playing
            if playing is None or (playing.game, playing.hand) != (event["game"], event["hand"]):
                raise ValueError(f"an action outside the hand in play: {event}")
            playing.play(event)
            self._later(match)
            return
        elif kind == "hand":
            self._hand_over(match, event)
            return
        elif kind == "fault":
            fault = {k: event.get(k) for k in ("seat", "kind", "game", "hand")}
            seat = fault["seat"]
            names = match.meta["names"]
            fault["name"] = names[seat] if seat in (0, 1) else None
            fault["detail"] = "(shown with the game's cards)"
            match.meta["faults"].append(fault)
            match.details.append(str(event.get("detail", "")))
        elif kind == "game":
            match.meta["games"].append({k: event.get(k) for k in _GAME_KEYS})
        elif kind == "match_end":
            match_end = {k: event.get(k) for k in _END_KEYS}  # not the deal key
            match.meta.update(match_end=match_end, complete=True)
            match.meta["status"] = "over"
            match.over = True
            self.withheld.hold(match, "match", {})
        self._meta(match)
        if kind == "match_end":
            self._trim()

    def _add(self, match_id: str, header: dict[str, Any]) -> LiveGame:
        match = LiveGame.from_header(match_id, header)
        self.matches[match_id] = match
        return match

    def _meta(self, match: LiveGame, *, flushed: bool = False) -> None:
        """Publish the keys of a game's header data that changed since last sent (``flushed``:
        called by :meth:`flush`)."""
        changed: dict[str, Any] = {}
        for key, value in match.meta.items():
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            if match.meta_sent.get(key) != text:
                match.meta_sent[key] = text
                changed[key] = value
        if changed:
            match.meta_bytes = b""
            payload = {"id": match.id, "data": changed}
            if flushed:
                self._send("match", payload)
            else:
                self._publish("match", payload)

    def _hand(self, match: LiveGame, hand: dict[str, Any]) -> None:
        match.hands[hand["id"]] = self._publish("hand", {"id": match.id, "hand": hand}, match.id)
        match.steps[hand["id"]] = []
        match.sent[hand["id"]] = len(hand["steps"])

    def _hand_over(self, match: LiveGame, rec: dict[str, Any]) -> None:
        playing = match.playing
        if playing is None or (playing.game, playing.hand) != (rec["game"], rec["hand"]):
            raise ValueError(f"a hand line for a hand not in play: {rec['game']}/{rec['hand']}")
        self.flush(steps_only=True)  # its last steps first
        match.playing = None
        data = playing.end(rec["result"])
        end = {"id": match.id, "hand": playing.id, "used_ms": data["used_ms"],
               "result": data["result"], "scores_after": data["scores_after"]}  # fmt: skip
        match.steps[playing.id].append(self._publish("end", end, match.id))
        self.withheld.hold(match, playing.id, rec)

    def _trim(self) -> None:
        finished = [m for m in self.matches.values() if m.over]
        for match in finished[: max(0, len(finished) - self.config.keep_finished)]:
            del self.matches[match.id]
            self._publish("drop", {"id": match.id})
