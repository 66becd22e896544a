"""A ladder's configuration: a TOML file like a tournament's, without bots (entrants are added
while it runs, :mod:`.book`), with a ``[ladder]`` table instead of ``[tournament]`` and the
``[matchmaking]`` and ``[ratings]`` parameters. docs/ladder.md lists every key.

The play itself (rules, clocks, fault policy, sandbox, limits, concurrency, duplicate deals)
is validated by the tournament's own parser (:func:`~referee.tournament.config.parse_config`):
a ladder plays its games exactly as a tournament does.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from referee.tournament.config import (
    BotEntry,
    ConfigError,
    TournamentConfig,
    parse_config,
    read_toml,
)

__all__ = [
    "LadderConfig",
    "MatchmakingParams",
    "RatingParams",
    "load_ladder",
    "parse_ladder",
]

_PLAY_KEYS = {
    "name", "duplicate", "seed", "concurrency", "max_hands_per_game", "local_transport",
    "reuse_bots", "out", "sandbox", "limits", "bot_uids", "require_sandbox",
}  # fmt: skip
_LADDER_KEYS = {"poll", "void_after"}
_LATER_DEFAULTS = {"max_share": 0.5}
"""Matchmaking keys added after ladders were first run, with their defaults (see ``to_dict``)."""
_PLACEHOLDERS = [{"name": "placeholder-a", "command": "true"},
                 {"name": "placeholder-b", "command": "true"}]  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchmakingParams:
    """How the referee chooses who plays whom (docs/ladder.md, "Matchmaking")."""

    explore: float = 0.1
    """Probability that a pick ignores the ratings (each of the two picks): the floor of
    randomness that makes everyone meet everyone eventually."""
    repeat_weight: float = 1.0
    """Weight factor of the opponent a player was drawn against in its previous round (1: no
    penalty, the default: a penalty on last round's pairs lets an entrant that chooses which
    rounds it is drawn in choose its odds; docs/ladder.md)."""
    max_share: float = 0.5
    """Two players who met twice or more are not drawn together again if that would make their
    meetings more than this share of either one's drawn pairs (unless every other candidate is
    capped too). 1: no cap."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RatingParams:
    """The Weng-Lin (OpenSkill Plackett-Luce) model's parameters (docs/ladder.md)."""

    mu: float = 25.0
    """A new player's mean skill."""
    sigma: float = 25.0 / 3.0
    """A new player's uncertainty (standard deviation)."""
    beta: float = 25.0 / 6.0
    """The spread of one pair's performance around the skill."""
    tau: float = 25.0 / 300.0
    """Added to sigma before every update: lets a rating keep moving (0: it settles)."""
    rank_sigmas: float = 3.0
    """The leaderboard sorts by ``mu - rank_sigmas * sigma`` (the conservative rank value)."""
    idle_sigma_per_day: float = 0.5
    """A player's uncertainty grows while it does not play: ``sigma`` becomes
    ``sqrt(sigma**2 + (idle_sigma_per_day * days)**2)`` (at most the initial ``sigma``), on the
    leaderboard and for its next update, so that a player cannot keep its rank by no longer
    playing. 0: ratings stay as they are."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LadderConfig:
    """A validated ladder configuration."""

    name: str
    """The ladder's name."""
    play: TournamentConfig
    """How games are played (no bots: they come from the store)."""
    matchmaking: MatchmakingParams = field(default_factory=MatchmakingParams)
    ratings: RatingParams = field(default_factory=RatingParams)
    poll: float = 2.0
    """Seconds between two looks at the store for added or retired entrants."""
    void_after: float = 86400.0
    """Seconds after which a pair left open by an earlier run, whose players are not both
    available, is voided: its recorded games are kept, it is never rated (docs/ladder.md).
    Not hashed, as ``poll``: an organiser may change it between runs (the audit log says the
    grace in force when it voids a pair)."""
    local: BotEntry = field(default_factory=lambda: BotEntry("template", "true"))
    """What every local entrant's command runs with: the ``[ladder]`` table's sandbox and
    limits (its name and command are the entrant's). Not hashed, as in a tournament."""

    @property
    def out(self) -> Path | None:
        """The output directory the file names, if any."""
        return self.play.out

    def to_dict(self) -> dict[str, Any]:
        """Canonical plain data: what the hash covers (play, matchmaking and ratings). A key
        added to a table later is left out while it has its default, so that a ladder started
        before it keeps its hash."""
        play = self.play.to_dict()
        del play["bots"], play["format"], play["candidate"], play["games_per_pairing"]
        matchmaking = asdict(self.matchmaking)
        for key, default in _LATER_DEFAULTS.items():
            if matchmaking[key] == default:
                del matchmaking[key]
        return {"ladder": play, "matchmaking": matchmaking,
                "ratings": asdict(self.ratings)}  # fmt: skip

    @property
    def config_hash(self) -> str:
        """SHA-256 (16 hex digits) of :meth:`to_dict` as canonical JSON."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _number(table: dict[str, Any], key: str, default: float, src: str, path: str,
            low: float, high: float) -> float:  # fmt: skip
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(src, path + key, f"expected a number, got {type(value).__name__}")
    if not (math.isfinite(value) and low <= value <= high):
        raise ConfigError(src, path + key, f"must be between {low:g} and {high:g}")
    return float(value)


def _table(data: dict[str, Any], key: str, src: str, allowed: set[str]) -> dict[str, Any]:
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise ConfigError(src, key, "expected a table")
    for name in table:
        if name not in allowed:
            known = ", ".join(sorted(allowed))
            raise ConfigError(src, f"{key}.{name}", f"unknown key (known: {known})")
    return table


def parse_ladder(data: dict[str, Any], *, source: str = "<config>") -> LadderConfig:
    """Validate parsed TOML data into a :class:`LadderConfig` (:class:`ConfigError` names the
    key and the problem)."""
    src = source
    for key in data:
        if key not in {"ladder", "matchmaking", "ratings", "rules", "time", "faults"}:
            hint = " (entrants are added with `gin-referee ladder add`)" if key == "bots" else ""
            raise ConfigError(src, key, f"unknown table{hint}")
    ladder = _table(data, "ladder", src, _PLAY_KEYS | _LADDER_KEYS)
    mm = _table(data, "matchmaking", src, {"explore", "repeat_weight", "max_share"})
    rt = _table(
        data, "ratings", src, {"mu", "sigma", "beta", "tau", "rank_sigmas", "idle_sigma_per_day"}
    )
    tournament = {k: v for k, v in ladder.items() if k in _PLAY_KEYS}
    duplicate = tournament.get("duplicate", True)
    tournament["games_per_pairing"] = 2 if duplicate is True else 1
    tournament.setdefault("name", "ladder")
    rest = {k: v for k, v in data.items() if k in {"rules", "time", "faults"}}
    try:
        play = parse_config({"tournament": tournament, "bots": _PLACEHOLDERS, **rest}, source=src)
    except ConfigError as err:
        key = err.key.replace("tournament.", "ladder.", 1)
        raise ConfigError(src, key, err.problem) from None
    matchmaking = MatchmakingParams(
        explore=_number(mm, "explore", 0.1, src, "matchmaking.", 0.0, 1.0),
        repeat_weight=_number(mm, "repeat_weight", 1.0, src, "matchmaking.", 0.0, 1.0),
        max_share=_number(mm, "max_share", 0.5, src, "matchmaking.", 0.0, 1.0),
    )
    ratings = RatingParams(
        mu=_number(rt, "mu", 25.0, src, "ratings.", -1e6, 1e6),
        sigma=_number(rt, "sigma", 25.0 / 3.0, src, "ratings.", 1e-6, 1e6),
        beta=_number(rt, "beta", 25.0 / 6.0, src, "ratings.", 1e-6, 1e6),
        tau=_number(rt, "tau", 25.0 / 300.0, src, "ratings.", 0.0, 1e6),
        rank_sigmas=_number(rt, "rank_sigmas", 3.0, src, "ratings.", 0.0, 10.0),
        idle_sigma_per_day=_number(rt, "idle_sigma_per_day", 0.5, src, "ratings.", 0.0, 1e6),
    )
    return LadderConfig(
        name=play.name,
        play=replace(play, bots=()),
        matchmaking=matchmaking,
        ratings=ratings,
        poll=_number(ladder, "poll", 2.0, src, "ladder.", 0.05, 3600.0),
        void_after=_number(ladder, "void_after", 86400.0, src, "ladder.", 0.0, 1e9),
        local=play.bots[0],
    )


def load_ladder(path: Path) -> LadderConfig:
    """Read and validate a ladder's TOML file; :class:`ConfigError` names what is wrong."""
    config = parse_ladder(read_toml(path), source=str(path))
    out = config.play.out
    if out is not None and not out.is_absolute():
        config = replace(config, play=replace(config.play, out=path.parent / out))
    return config
