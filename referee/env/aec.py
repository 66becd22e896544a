"""The PettingZoo AEC environment: the referee's own rules and views, in process.

A thin adapter over :mod:`referee.rules`: each step applies one rules action and the
observation is the encoding (:mod:`protocol.encoding`) of the seat's view, the same numbers a
bot's ``request`` gives a policy through :mod:`protocol.policy`. Agents ``player_0`` and
``player_1`` are seats 0 and 1.

>>> env = GinRummyEnv(rules="standard")
>>> env.reset(seed=1)
>>> obs, reward, terminated, truncated, info = env.last()
>>> obs["observation"].shape, int(obs["action_mask"].sum()), env.agent_selection
((331,), 2, 'player_1')
"""

from __future__ import annotations

import random
from typing import Any, Literal

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from protocol.encoding import NUM_ACTIONS, OBS_SIZE, hand_bits
from referee.env.observe import fixed_bytes, observation, stock_masks
from referee.env.spaces import ViewSpace, wire_view
from referee.rules import (
    BIG_GIN,
    DECK,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_DISCARD,
    Action,
    Card,
    GameState,
    HandState,
    IllegalAction,
    Phase,
    RuleSet,
    apply_unchecked,
    deal,
    discard_action,
    discard_options,
    final_score,
    knock_action,
    new_game,
    observe,
    record_hand,
    shuffled_deck,
)

__all__ = ["ACTIONS", "AGENTS", "GinRummyEnv", "env", "raw_env"]

RENDER_MODES = ("ansi", "human")
"""What ``render_mode`` may be (``ansi``: :meth:`GinRummyEnv.render` returns the text)."""

AGENTS = ("player_0", "player_1")
"""The agents, by seat."""

ACTIONS: tuple[Action, ...] = (
    DRAW_STOCK,
    TAKE_DISCARD,
    PASS_UPCARD,
    *(discard_action(card) for card in DECK),
    *(knock_action(card) for card in DECK),
    BIG_GIN,
)
"""The rules action of each action number (:mod:`protocol.encoding`)."""
_OVER = Phase.HAND_OVER
_DRAW = Phase.DRAW
_DISCARD = Phase.DISCARD
_DRAW_MASK = 0b11
"""draw_stock and take_discard."""
_FIRST_MASK = 0b110
"""take_discard and pass_upcard."""
_STOCK_MASK = 0b1
"""draw_stock alone (both seats passed the first upcard)."""
_KNOCK_SHIFT = 55
_BIG_GIN_BIT = 1 << 107


def legal_mask(state: HandState) -> int:
    """The legal actions of ``state`` as a mask over the action numbers (bit ``n`` for action
    ``n``): :func:`~referee.rules.legal_actions`, numbered, without building its tuple."""
    phase = state.phase
    if phase is _DISCARD:
        discards, knocks, big = discard_options(state)
        return discards << 3 | knocks << _KNOCK_SHIFT | (_BIG_GIN_BIT if big else 0)
    if phase is _DRAW:
        return _DRAW_MASK
    if phase is _OVER:
        return 0
    return _STOCK_MASK if state.passes >= 2 else _FIRST_MASK


Episode = Literal["hand", "game"]
Reward = Literal["points", "win"]


class GinRummyEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """Two-seat Gin Rummy on :mod:`referee.rules` (see docs/env.md).

    ``rules``: a preset name or a :class:`~referee.rules.RuleSet`. ``episode``: ``"hand"``
    (one hand per episode) or ``"game"`` (hands until a seat reaches the target). ``reward``:
    ``"points"`` (the hand's points, signed, as each hand ends; in a game the end-of-game
    bonuses come with the last hand, so an episode's return is the final margin) or ``"win"``
    (+1/-1 at the end of the episode, 0 for a void hand). ``view``: add the protocol's view
    (:class:`protocol.schema.WireView`) to each observation under ``"view"``. ``first_dealer``:
    the first hand's dealer (default: drawn from the seed). ``max_hands``: truncate a game
    episode after this many hands (random play under gin-only rules rarely ends a game).
    """

    metadata = {  # noqa: RUF012 (PettingZoo's convention: a class attribute)
        "name": "gin_rummy_referee_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
    }

    def __init__(
        self,
        rules: str | RuleSet = "standard",
        *,
        episode: Episode = "hand",
        reward: Reward = "points",
        view: bool = False,
        first_dealer: int | None = None,
        max_hands: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.rules = RuleSet.preset(rules) if isinstance(rules, str) else rules
        if episode not in ("hand", "game"):
            raise ValueError(f"episode must be 'hand' or 'game', not {episode!r}")
        if reward not in ("points", "win"):
            raise ValueError(f"reward must be 'points' or 'win', not {reward!r}")
        if first_dealer not in (None, 0, 1):
            raise ValueError(f"first_dealer must be 0, 1 or None, not {first_dealer!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"unknown render_mode {render_mode!r}")
        self.episode: Episode = episode
        self.reward: Reward = reward
        self.with_view = view
        self.first_dealer = first_dealer
        if max_hands is not None and max_hands < 1:
            raise ValueError(f"max_hands must be at least 1, not {max_hands!r}")
        self.max_hands = max_hands
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        obs = gymnasium.spaces.Box(0, 1, (OBS_SIZE,), np.int8)
        mask = gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)
        parts: dict[str, gymnasium.Space[Any]] = {"observation": obs, "action_mask": mask}
        if view:
            parts["view"] = ViewSpace()
        self.observation_spaces = {a: gymnasium.spaces.Dict(parts) for a in AGENTS}
        self.action_spaces = {a: gymnasium.spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self._rng = random.Random()
        self._rewarded = False
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self.game: GameState | None = None
        self.hands_played = 0
        self.agent_selection = AGENTS[0]
        self.state: HandState
        self._legal_mask = 0
        self._stock: list[int] = []
        self._fixed: tuple[bytes, ...] = ()
        self._deal(self.first_dealer or 0, (0, 0))

    # ------------------------------------------------------------------ PettingZoo API

    def observation_space(self, agent: str) -> gymnasium.Space[Any]:
        """The same object for every call (PettingZoo seeds it)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        """``Discrete(108)``: :mod:`protocol.encoding`'s action numbers."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new episode; ``seed`` reseeds the deals (and the first dealer).

        ``options`` may set the first hand: ``deck`` (52 cards, as :class:`~referee.rules.Card`
        or text, in deal order, as a record's ``deck``), ``dealer``, and, for a hand
        episode, ``scores`` (the game scores the views show, as a record's ``scores_before``).
        """
        if seed is not None:
            self._rng = random.Random(seed)
        deck: tuple[Card, ...] | None = None
        scores = (0, 0)
        if options and "deck" in options:
            deck = tuple(c if isinstance(c, Card) else Card.parse(c) for c in options["deck"])
            given = options.get("scores", (0, 0))
            scores = (int(given[0]), int(given[1]))
            if scores != (0, 0) and self.episode == "game":
                raise ValueError("a game episode starts at scores (0, 0)")
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self._rewarded = False
        self.hands_played = 0
        dealer = self._rng.randrange(2) if self.first_dealer is None else self.first_dealer
        if options and "dealer" in options:
            dealer = int(options["dealer"])
        self.game = new_game(self.rules, first_dealer=dealer) if self.episode == "game" else None
        self._deal(dealer, scores, deck)

    def observe(self, agent: str) -> dict[str, Any]:
        """The agent's observation: ``observation``, ``action_mask`` (and ``view``)."""
        seat = 0 if agent == "player_0" else 1
        obs, mask = observation(self.state, seat, self._stock, self._fixed[seat], self._legal_mask)
        if self.with_view:
            view = wire_view(observe(self.state, seat))
            return {"observation": obs, "action_mask": mask, "view": view}
        return {"observation": obs, "action_mask": mask}

    def is_legal(self, number: int) -> bool:
        """Whether action number ``number`` is in the mask of the agent to act."""
        return 0 <= number < NUM_ACTIONS and bool(self._legal_mask >> number & 1)

    def step(self, action: int | None) -> None:
        """Play action number ``action`` for :attr:`agent_selection` (None once it is done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to act: None is only for an agent that is done")
        number = int(action)
        if not (0 <= number < NUM_ACTIONS and self._legal_mask >> number & 1):
            raise IllegalAction(str(number), str(self.state.phase), "not in the action mask")
        if self._rewarded:
            self.rewards = {a: 0.0 for a in AGENTS}
            self._rewarded = False
        self._cumulative_rewards[agent] = 0.0
        state = apply_unchecked(self.state, ACTIONS[number])
        if state.result is None:
            self.state = state
            self._legal_mask = legal_mask(state)
            self.agent_selection = AGENTS[state.to_act]
            return
        self.state = state
        self._end_hand(state)
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The state as text (both hands: this is the table, not a seat's view)."""
        s = self.state
        pile = " ".join(str(DECK[i]) for i in s.discard_pile[-5:])
        text = (
            f"hand {self.hands_played} {s.phase} to act {AGENTS[s.to_act]} stock {s.stock_size}"
            f" pile ..{pile}\n  player_0 {s.hand(0)}\n  player_1 {s.hand(1)}"
        )
        if s.result is not None:
            text += f"\n  {s.result.termination} winner {s.result.winner} {s.result.points}"
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ inside

    def _deal(
        self, dealer: int, scores: tuple[int, int], deck: tuple[Card, ...] | None = None
    ) -> None:
        if deck is None:
            deck = shuffled_deck(self._rng)
        state = deal(self.rules, deck, dealer=dealer, scores=scores)
        self._stock = stock_masks(state.deck)
        target = self.rules.target
        doubled = state.multiplier > 1
        self._fixed = tuple(
            fixed_bytes(
                hand_bits(
                    dealer=dealer == seat,
                    doubled=doubled,
                    knock_limit=state.knock_limit,
                    scores=(scores[seat], scores[1 - seat]),
                    target=target,
                )
            )
            for seat in (0, 1)
        )
        self.state = state
        self._legal_mask = legal_mask(state)
        self.agent_selection = AGENTS[state.to_act]

    def _end_hand(self, state: HandState) -> None:
        result = state.result
        assert result is not None
        self.hands_played += 1
        self._legal_mask = 0
        winner = result.winner
        if self.game is None:
            if self.reward == "points":
                signed = float(result.points)
            else:
                signed = 1.0 if winner is not None else 0.0
            self._give(winner, signed)
            self.terminations = {a: True for a in AGENTS}
            return
        game = self.game = record_hand(self.game, result)
        if self.reward == "points":
            self._give(winner, float(result.points))
        if game.is_over:
            final = final_score(game)
            if self.reward == "points":
                # the hand points are already given: add the bonuses (box, game, shutout)
                lead = game.scores[final.winner] - game.scores[1 - final.winner]
                bonus = final.margin - lead
                self._give(final.winner, float(bonus), add=True)
            else:
                self._give(final.winner, 1.0)
            self.terminations = {a: True for a in AGENTS}
            return
        if self.max_hands is not None and self.hands_played >= self.max_hands:
            self.truncations = {a: True for a in AGENTS}
            return
        self._deal(game.dealer, game.scores)

    def _give(self, winner: int | None, amount: float, *, add: bool = False) -> None:
        if winner is None or amount == 0:
            return
        if not add:
            self.rewards = {a: 0.0 for a in AGENTS}
        self.rewards[AGENTS[winner]] += amount
        self.rewards[AGENTS[1 - winner]] -= amount
        self._rewarded = True


def raw_env(**kwargs: Any) -> GinRummyEnv:
    """The environment without PettingZoo's wrappers (what :func:`env` wraps)."""
    return GinRummyEnv(**kwargs)


def env(**kwargs: Any) -> Any:
    """The environment in PettingZoo's usual wrappers (order enforcing, action bounds), as
    ``pettingzoo.classic`` environments are made (:mod:`referee.env.wrapped`: the same checks,
    at a fraction of their cost)."""
    from referee.env.wrapped import Bounds, Ordered

    return Ordered(Bounds(GinRummyEnv(**kwargs)))
