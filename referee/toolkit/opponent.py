"""Train against a real bot: a single-agent Gymnasium environment whose opponent is a bot
process playing through the real protocol.

:class:`BotOpponentEnv` plays real matches between the bot a
:class:`~referee.net.process.BotCommand` starts and a seat the learner plays from
:meth:`~BotOpponentEnv.step`: the match machinery of ``gin-referee match`` (the hub, the
transport with CURVE on TCP, the bot's process in its sandbox, its clocks, heartbeat and fault
policy, :func:`~referee.match.runner.play_watched`), so the bot cannot tell it from a match.
The learner's seat is a :class:`~referee.toolkit.probe.LearnerLink`: no process, no deadline;
its requests are handed to the environment and its actions come back from
:meth:`~BotOpponentEnv.step`.
The matches run in a thread of their own, on their own event loop.

The observation is the one :class:`~referee.env.GinRummyEnv` gives (the same spaces):
:func:`~protocol.encoding.encode_view` of each request the learner's seat receives, which
tests/env checks equal to the in-process environment's for the same state. Rewards are the
wrapper's (:class:`~referee.env.GinRummySingleEnv`): ``points`` (each hand's signed points as
it ends; with ``episode="game"`` the game's bonuses come at its end, so an episode's return is
the final margin) or ``win`` (+1/-1 at the end of the episode, 0 for a void hand).

Episodes are hands or games of a running match: :meth:`~BotOpponentEnv.reset` with a seed
starts a new match whose deals derive from it (``MatchConfig.seed``: the deals of
``gin-referee match --seed``), as does the first reset; a reset without a seed goes on with
the next hand (game) of the running match, after playing out the learner's part of an
unfinished episode with the first of draw_stock, pass_upcard and the lowest legal discard.
:meth:`~BotOpponentEnv.close` ends the match and the bot's process group. Unless the program
configured structlog itself, the matches log warnings only (a match logs every decision).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, SupportsFloat

import gymnasium
import numpy as np
import numpy.typing as npt
import structlog

from protocol.encoding import LAYOUT, NUM_ACTIONS, PHASE_INDEX, encode_view, wire_action
from protocol.schema import GameEnd, HandEnd, MatchEnd, Request, WireAction
from referee.env import AGENTS, GinRummyEnv
from referee.env.illegal import check_choice, ended
from referee.match.bots import curve_env, curve_transport, local_bot_keys, start_bot
from referee.match.clock import TimeControl
from referee.match.config import MatchConfig
from referee.match.hub import Hub
from referee.match.result import MatchResult
from referee.match.runner import BOT_EXIT_GRACE, play_watched, release_seats
from referee.match.seat import SeatLink
from referee.net.keys import KeyPair, KeyRing
from referee.net.process import BotCommand, BotProcess
from referee.net.transport import RouterTransport, TransportConfig
from referee.rules import RuleSet
from referee.toolkit.probe import LearnerLink

__all__ = ["BotOpponentEnv"]

Episode = Literal["hand", "game"]
Reward = Literal["points", "win"]
_PHASE = LAYOUT["phase"][0]
_TO_ACT = LAYOUT["to_act"][0]
_DEFAULTS = ("draw_stock", "pass_upcard")


@dataclass(frozen=True, slots=True)
class _Finished:
    """The match thread is done: its result, or what went wrong."""

    result: MatchResult | None
    error: BaseException | None


class BotOpponentEnv(gymnasium.Env[dict[str, Any], int]):
    """One seat learns, a bot process plays the other, in real matches (module docstring).

    ``command``: the bot (a :class:`~referee.net.process.BotCommand` or its argv). ``rules``:
    a preset name or a :class:`~referee.rules.RuleSet`. ``seat``: the learner's seat.
    ``episode``, ``reward``, ``view``: as :class:`~referee.env.GinRummyEnv`'s. ``time``: the
    bot's clocks (the learner has none). ``games``: the games of each match (a match that
    ends mid-episode truncates it). ``wait``: seconds to wait for the match before
    :meth:`step` gives up (RuntimeError). ``illegal_action``, ``illegal_reward``: what an
    action outside the mask does (:mod:`referee.env.illegal`: ``"raise"``, the default, or
    ``"end"`` the episode).
    """

    metadata = {"render_modes": []}  # noqa: RUF012 (Gymnasium's convention)

    def __init__(
        self,
        command: BotCommand | Sequence[str],
        *,
        rules: str | RuleSet = "standard",
        seat: int = 0,
        episode: Episode = "hand",
        reward: Reward = "points",
        view: bool = False,
        time: TimeControl | None = None,
        games: int = 1000,
        wait: float = 60.0,
        kill_grace: float = 1.0,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
    ) -> None:
        if seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, not {seat!r}")
        self.illegal_action = check_choice(illegal_action)
        self.illegal_reward = float(illegal_reward)
        spaces = GinRummyEnv(rules, episode=episode, reward=reward, view=view)
        self.rules = spaces.rules
        self.observation_space = spaces.observation_space(AGENTS[seat])
        self.action_space = spaces.action_space(AGENTS[seat])  # type: ignore[assignment]
        self.command = command if isinstance(command, BotCommand) else BotCommand(tuple(command))
        self.seat = seat
        self.episode: Episode = episode
        self.reward: Reward = reward
        self.with_view = view
        self.time = time or TimeControl()
        self.games = games
        self.wait = wait
        self.kill_grace = kill_grace
        self.result: MatchResult | None = None
        """The latest match's result, once it has ended."""
        self.process: BotProcess | None = None
        """The bot's process in the running match (None before it starts)."""
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._abort: asyncio.Event | None = None
        self._link: LearnerLink | None = None
        self._ready = threading.Event()
        self._match_over = True
        self._pending: Request | None = None
        self._last: dict[str, Any] | None = None
        self._game_points = 0.0

    # ------------------------------------------------------------------ Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The learner's first observation of the next episode (module docstring)."""
        super().reset(seed=seed)
        if options:
            raise ValueError("a match against a bot takes no reset options")
        fresh = seed is not None or self._match_over
        if fresh:
            self._stop_match()
            self._start_match(seed)
        elif self._pending is not None:
            self._play_out()
        self._game_points = 0.0
        while True:
            item = self._get()
            if isinstance(item, Request):
                return self._observe(item), {}
            if isinstance(item, MatchEnd):
                self._match_over = True
                if fresh:  # a bot that cannot play (no start, no hello): say why, once
                    self._stop_match()
                    seats = () if self.result is None else self.result.seats
                    faults = [f"{f.kind}: {f.detail}" for seat in seats for f in seat.faults]
                    why = faults[0] if faults else item.reason
                    raise RuntimeError(f"the match against the bot ended at once: {why}")
                self._stop_match()  # the match ended between episodes: a new one
                self._start_match(None)
                fresh = True

    def step(self, action: int) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        """Play the learner's action; the bot plays until the learner is to act again or the
        episode ends."""
        request = self._pending
        if request is None or self._last is None:
            raise RuntimeError("no decision is pending: call reset() first")
        number = int(action)
        if not (0 <= number < NUM_ACTIONS and self._last["action_mask"][number]):
            if self.illegal_action == "end":
                return ended(self._last, number, self.illegal_reward)
            raise ValueError(f"action {number} is not legal here (see the action mask)")
        self._pending = None
        self._call(self._answer, request.request_id, wire_action(number))
        return self._advance()

    def action_masks(self) -> npt.NDArray[np.int8]:
        """The learner's action mask (all zeros once the episode is over)."""
        if self._last is None:
            return np.zeros(NUM_ACTIONS, np.int8)
        mask: npt.NDArray[np.int8] = self._last["action_mask"]
        return mask

    def close(self) -> None:
        """End the match and the bot's process group."""
        self._stop_match()

    # ------------------------------------------------------------------ the episode

    def _advance(self) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        reward = 0.0
        while True:
            item = self._get()
            if isinstance(item, Request):
                return self._observe(item), reward, False, False, {}
            if isinstance(item, HandEnd):
                reward += self._hand_reward(item)
                if self.episode == "hand":
                    return self._final(), reward, True, False, {"hand_end": item}
            elif isinstance(item, GameEnd):
                if self.episode == "hand":  # no hand_end first: the hand was cut short
                    return self._final(), reward, False, True, {"game_end": item}
                reward += self._game_reward(item)
                return self._final(), reward, True, False, {"game_end": item}
            elif isinstance(item, MatchEnd):
                self._match_over = True
                return self._final(), reward, False, True, {"match_end": item}

    def _hand_reward(self, end: HandEnd) -> float:
        if end.winner is None:
            return 0.0
        sign = 1.0 if end.winner == self.seat else -1.0
        if self.reward == "win":
            return sign if self.episode == "hand" else 0.0
        self._game_points += sign * end.points
        return sign * end.points

    def _game_reward(self, end: GameEnd) -> float:
        if self.reward == "win":
            return 0.0 if end.winner is None else (1.0 if end.winner == self.seat else -1.0)
        margin = end.scores[self.seat] - end.scores[1 - self.seat]
        return margin - self._game_points  # the bonuses not given with the hands

    def _observe(self, request: Request) -> dict[str, Any]:
        self._pending = request
        obs, mask = encode_view(request.view, request.legal, target=self.rules.target)
        out: dict[str, Any] = {"observation": obs, "action_mask": mask}
        if self.with_view:
            out["view"] = request.view
        self._last = out
        return out

    def _final(self) -> dict[str, Any]:
        """The last observation marked over: phase hand_over, not to act, an empty mask."""
        assert self._last is not None
        obs = self._last["observation"].copy()
        obs[_PHASE : _PHASE + len(PHASE_INDEX)] = 0
        obs[_PHASE + PHASE_INDEX["hand_over"]] = 1
        obs[_TO_ACT] = 0
        out = {**self._last, "observation": obs, "action_mask": np.zeros(NUM_ACTIONS, np.int8)}
        self._last = out
        self._pending = None
        return out

    def _play_out(self) -> None:
        """Finish an unfinished episode with the default moves (module docstring)."""
        while self._pending is not None:
            legal = [a for a in self._pending.legal if a.kind in _DEFAULTS]
            legal = legal or [a for a in self._pending.legal if a.kind == "discard"]
            number = int(np.flatnonzero(self.action_masks())[0])
            if legal:
                number = next(n for n in range(NUM_ACTIONS) if wire_action(n) == legal[0])
            _, _, terminated, truncated, _ = self.step(number)
            if terminated or truncated:
                return

    def _get(self) -> Any:
        try:
            item = self._inbox.get(timeout=self.wait)
        except queue.Empty:
            raise RuntimeError(f"the match against the bot was silent for {self.wait} s") from None
        if isinstance(item, _Finished):
            self._match_over = True
            if item.error is not None:
                raise RuntimeError(f"the match against the bot failed: {item.error}") from None
            reason = "no result" if item.result is None else item.result.reason
            raise RuntimeError(f"the match against the bot ended ({reason}) mid-episode")
        return item

    # ------------------------------------------------------------------ the match thread

    def _call(self, function: Callable[..., None], *args: Any) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(function, *args)

    def _answer(self, request_id: int, action: WireAction) -> None:
        if self._link is not None:
            self._link.answer(request_id, action)

    def _start_match(self, seed: int | None) -> None:
        if not structlog.is_configured():  # a match logs every decision at debug level
            structlog.configure(
                wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING)
            )
        self._inbox = queue.Queue()
        self._ready.clear()
        self._match_over = False
        self._pending = self._last = None
        config = MatchConfig(
            rules=self.rules, games=self.games, seed=seed, time=self.time, match_id="training"
        )
        self._thread = threading.Thread(
            target=self._run, args=(config, self._inbox), name="bot-opponent", daemon=True
        )
        self._thread.start()
        self._ready.wait()

    def _stop_match(self) -> None:
        thread = self._thread
        if thread is None:
            return
        if self._loop is not None and self._abort is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._abort.set)
        thread.join()
        self._thread = self._loop = self._abort = self._link = None
        self._match_over = True
        self._pending = None

    def _run(self, config: MatchConfig, inbox: queue.Queue[Any]) -> None:
        result: MatchResult | None = None
        error: BaseException | None = None
        try:
            result = asyncio.run(self._serve(config, inbox))
        except BaseException as err:  # handed to the environment's thread, not lost
            error = err
        finally:
            if result is not None:
                self.result = result
            self._ready.set()
            inbox.put(_Finished(result, error))

    async def _serve(self, config: MatchConfig, inbox: queue.Queue[Any]) -> MatchResult:
        """One match: the transport, the bot's seat and process, the learner's seat, play,
        teardown (as ``gin-referee replay --feed`` does it)."""
        self._loop = asyncio.get_running_loop()
        self._abort = abort = asyncio.Event()
        server, ring = KeyPair.generate(), KeyRing()
        transport = RouterTransport(
            TransportConfig(
                endpoint="tcp://127.0.0.1:0", curve=curve_transport(server, ring), local_ipc=True
            )
        )
        hub: Hub | None = None
        links: list[SeatLink] = []
        processes: list[BotProcess | None] = [None, None]
        result: MatchResult | None = None
        bot = 1 - self.seat
        try:
            await transport.start()
            hub = Hub(transport, keys=ring)
            keys = local_bot_keys(server, transport.local_endpoint)
            other = hub.open_seat(
                bot, config.time, name="bot", seed=config.deal.bot_seed(f"training/{bot}"),
                public_key=None if keys is None else keys.public,
            )  # fmt: skip
            self._link = learner = LearnerLink(
                seat=self.seat, control=config.time, name="learner", inbox=inbox
            )
            links = [other, learner]
            self._ready.set()
            processes[bot] = self.process = await start_bot(
                other, self.command, endpoint=transport.local_endpoint, stderr_path=None,
                extra_env=curve_env(server, keys),
            )  # fmt: skip
            pair = (learner, other) if self.seat == 0 else (other, learner)
            result = await play_watched(config, pair, processes, abort=abort)
            return result
        finally:
            await release_seats(
                hub, links, processes, grace=self.kill_grace, result=result,
                exit_grace=BOT_EXIT_GRACE,
            )  # fmt: skip
            await transport.close()
