"""Rule sets: the variant's parameters as data, with named presets and a stable hash.

>>> RuleSet.preset("classic").gin_bonus
20
>>> len(STANDARD.rules_hash)
16
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any

__all__ = [
    "CLASSIC",
    "EAAI",
    "LEGACY_VALUES",
    "OKLAHOMA",
    "PRESETS",
    "STANDARD",
    "STRAIGHT",
    "NextDealer",
    "RuleSet",
]


class NextDealer(StrEnum):
    """Who deals the hand after a scored hand (a void hand is always redealt by the same)."""

    WINNER = "winner"
    LOSER = "loser"
    ALTERNATE = "alternate"


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleSet:
    """Every parameter of the variant; build from :data:`PRESETS` and ``dataclasses.replace``."""

    name: str = "standard"
    """Preset name, or a custom name."""
    knock_limit: int = 10
    """Highest deadwood a knocker may keep (0 = gin only)."""
    oklahoma: bool = False
    """The first upcard's value sets the knock limit (an ace: gin only)."""
    spade_doubles: bool = False
    """A spade first upcard doubles the hand's score (Oklahoma)."""
    gin_bonus: int = 25
    """Added to the defender's deadwood when a player goes gin."""
    big_gin_bonus: int | None = 31
    """Added for big gin (11 cards melded without discarding); None disables big gin."""
    undercut_bonus: int = 25
    """Added when the defender's deadwood is equal to or less than the knocker's."""
    target: int = 100
    """A game ends when a player's hand points reach this."""
    game_bonus: int = 100
    """Bonus for winning the game."""
    box_bonus: int = 25
    """Bonus per hand won, counted at the end of the game for both players."""
    shutout_bonus: int = 100
    """Extra bonus for the winner when the loser won no hand."""
    next_dealer: NextDealer = NextDealer.WINNER
    """Who deals the next hand after a scored hand."""
    turn_cap: int = 200
    """A hand with this many turns (discards) and no knock is void."""
    knock_hindsight: bool = False
    """A knock without declared melds is arranged with sight of the defender's hand: the
    arrangement that scores best against the defender's best response. Off in every preset: a
    knocker at a table lays its melds down before the defender shows a card, so the default is
    chosen from the knocker's ten cards alone (docs/rules.md, "After a knock"). On reproduces
    the rules before the option existed; such a rule set keeps the hash it had then."""

    def __post_init__(self) -> None:
        problems = []
        if not 0 <= self.knock_limit <= 100:
            problems.append("knock_limit must be 0..100")
        for name in ("gin_bonus", "undercut_bonus", "game_bonus", "box_bonus", "shutout_bonus"):
            if not 0 <= getattr(self, name) <= 10_000:
                problems.append(f"{name} must be 0..10000")
        if self.big_gin_bonus is not None and not 0 <= self.big_gin_bonus <= 10_000:
            problems.append("big_gin_bonus must be 0..10000 or None")
        if not 1 <= self.target <= 100_000:
            problems.append("target must be 1..100000")
        if not 1 <= self.turn_cap <= 10_000:
            problems.append("turn_cap must be 1..10000")
        if problems:
            raise ValueError("invalid rule set: " + "; ".join(problems))

    @staticmethod
    def preset(name: str) -> RuleSet:
        """The named preset; ``ValueError`` lists the known names."""
        try:
            return PRESETS[name]
        except KeyError:
            known = ", ".join(sorted(PRESETS))
            raise ValueError(f"unknown rules preset {name!r} (known: {known})") from None

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (str/int/bool/None values), as recorded and sent to bots.

        A field added after records existed is left out while it has the value that reproduces
        the rules from before it (:data:`LEGACY_VALUES`), so those records keep their meaning
        and their :attr:`rules_hash`.

        >>> "knock_hindsight" in STANDARD.to_dict()
        True
        >>> "knock_hindsight" in replace(STANDARD, knock_hindsight=True).to_dict()
        False
        """
        data = asdict(self)
        data["next_dealer"] = str(self.next_dealer)
        for key, legacy in LEGACY_VALUES.items():
            if data[key] == legacy:
                del data[key]
        return data

    @staticmethod
    def from_dict(data: dict[str, Any]) -> RuleSet:
        """Inverse of :meth:`to_dict`; unknown keys and bad values raise ``ValueError``.

        A missing key takes the standard preset's value, except a field of
        :data:`LEGACY_VALUES`, which takes its legacy value (data written before the field
        existed was played that way).
        """
        known = {f.name: f for f in fields(RuleSet)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown rule field(s): {', '.join(unknown)}")
        values: dict[str, Any] = {k: v for k, v in LEGACY_VALUES.items() if k not in data}
        for key, value in data.items():
            default = getattr(STANDARD, key)
            if key == "next_dealer":
                try:
                    values[key] = NextDealer(value)
                except ValueError:
                    choices = ", ".join(v.value for v in NextDealer)
                    raise ValueError(f"next_dealer must be one of {choices}") from None
            elif key == "big_gin_bonus":
                if value is not None and type(value) is not int:
                    raise ValueError("rule field big_gin_bonus must be an int or null")
                values[key] = value
            elif type(value) is not type(default):
                raise ValueError(f"rule field {key} must be {type(default).__name__}")
            else:
                values[key] = value
        return replace(STANDARD, **values)

    @staticmethod
    def from_table(table: dict[str, Any]) -> RuleSet:
        """A variant written as a table (a TOML ``[rules]`` table): ``preset`` (default
        ``standard``) and the fields that differ from it; its ``name`` defaults to
        ``PRESET-custom``. Unknown fields and bad values raise ``ValueError``.

        >>> RuleSet.from_table({"preset": "eaai", "target": 50}).name
        'eaai-custom'
        """
        fields_ = dict(table)
        preset = fields_.pop("preset", "standard")
        if not isinstance(preset, str):
            raise ValueError("rule field preset must be a preset name")
        base = RuleSet.preset(preset)
        merged = {**base.to_dict(), **fields_, "name": fields_.get("name", f"{preset}-custom")}
        return RuleSet.from_dict(merged)

    @property
    def rules_hash(self) -> str:
        """A stable 16-hex-digit hash of :meth:`to_dict` (canonical JSON, SHA-256).

        Equal hashes mean equal rules: a change to what a rule set does changes its hash, and a
        rule set that plays as one did before keeps that one's hash (docs/rules.md).
        """
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


LEGACY_VALUES: dict[str, Any] = {"knock_hindsight": True}
"""Fields added after records existed, each with the value that reproduces the rules from
before it: :meth:`RuleSet.to_dict` (and so the hash) leaves such a field out while it has that
value, and :meth:`RuleSet.from_dict` reads a missing one as that value."""

STANDARD = RuleSet()
"""The default: knock 10, gin 25, undercut 25, big gin 31, box 25, shutout +100."""
CLASSIC = replace(
    STANDARD, name="classic", gin_bonus=20, undercut_bonus=10, box_bonus=20, big_gin_bonus=None
)
"""Older Hoyle-style values: gin 20, undercut 10, box 20, no big gin."""
OKLAHOMA = replace(STANDARD, name="oklahoma", oklahoma=True, spade_doubles=True)
"""The first upcard sets the knock limit; a spade upcard doubles the hand."""
STRAIGHT = replace(STANDARD, name="straight", knock_limit=0)
"""Gin only: no knocking with deadwood."""
EAAI = replace(
    STANDARD,
    name="eaai",
    big_gin_bonus=None,
    game_bonus=0,
    box_bonus=0,
    shutout_bonus=0,
    next_dealer=NextDealer.ALTERNATE,
    turn_cap=10_000,
)
"""The EAAI Gin Rummy Challenge framework's game: knock 10, gin 25, undercut 25 (a tie is an
undercut), no big gin, a game is hand points to 100 with no game, box or shutout bonus, the
starting player alternates after each scored hand (a void hand is redealt as it was), and no
turn cap in practice (docs/rules.md, "The eaai preset")."""
PRESETS: dict[str, RuleSet] = {r.name: r for r in (STANDARD, CLASSIC, OKLAHOMA, STRAIGHT, EAAI)}
"""Named presets."""
