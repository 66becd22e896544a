"""Wire protocol v1: one frozen dataclass per message type, plus the action and view maps.

These classes are plain data, and the one description of every message: field names equal
the wire keys, in wire order; a field without a default is required (always written, nil
allowed only if its type admits ``None``); a field with a default is optional (omitted when
it holds it). Limits that the Python type does not say are in ``Annotated[..., Check(...)]``
(see :mod:`protocol.fields`, which derives the parser's and encoders' tables from here).
:mod:`protocol.codec` turns the messages into msgpack bytes and back, validating everything
it decodes. Card lists are tuples of card strings (see :mod:`protocol.cards`), pairs indexed
by seat are 2-tuples.

>>> WireAction.knock("7h", (("3c", "3d", "3h"),))
WireAction(kind='knock', card='7h', melds=(('3c', '3d', '3h'),))
>>> Hello.TYPE, ActionMsg.TYPE, MESSAGE_CLASSES["ping"] is Ping
('hello', 'action', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, ClassVar, TypeAlias

from protocol.checks import (
    check_by_seat,
    check_card,
    check_cards,
    check_enum,
    check_hand,
    check_int,
    check_list,
    check_melds,
    check_pair,
    check_rules,
    check_seat,
    check_str,
)
from protocol.errors import VersionMismatch
from protocol.fields import Check

__all__ = [
    "ACTION_KINDS",
    "BOT_MESSAGE_TYPES",
    "DECISIONS",
    "MATCH_END_REASONS",
    "MATCH_RESULTS",
    "MESSAGE_CLASSES",
    "PHASES",
    "PROTOCOL_VERSION",
    "REFEREE_MESSAGE_TYPES",
    "SUPPORTED_VERSIONS",
    "TERMINATIONS",
    "ActionMsg",
    "BotMessage",
    "Bye",
    "Card",
    "CardList",
    "Cards",
    "Error",
    "Event",
    "Fault",
    "GameEnd",
    "Hand",
    "HandEnd",
    "HandStart",
    "Hello",
    "IntPair",
    "MatchEnd",
    "MatchStart",
    "Melds",
    "Message",
    "Pair",
    "Ping",
    "Pong",
    "RefereeMessage",
    "Reject",
    "Request",
    "RuleValue",
    "Seat",
    "TimeControl",
    "Welcome",
    "WireAction",
    "WireView",
    "check_version",
]

PROTOCOL_VERSION = 1
"""The protocol version this package speaks."""

SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
"""Every protocol version this package can speak, ascending."""

Cards: TypeAlias = tuple[str, ...]
"""A list of card strings, e.g. ``("As", "Td")``."""

Melds: TypeAlias = tuple[Cards, ...]
"""A meld arrangement: a list of melds, each a list of cards."""

IntPair: TypeAlias = tuple[int, int]
"""Two ints indexed by seat (seat 0 first)."""

RuleValue: TypeAlias = int | str | bool | None
"""A value in the ``match_start.rules`` map."""

ACTION_KINDS = ("pass_upcard", "take_discard", "draw_stock", "discard", "knock", "big_gin")
"""Every ``WireAction.kind``."""

DECISIONS = ("first_upcard", "draw", "discard")
"""Every ``Request.decision``."""

PHASES = ("first_upcard", "draw", "discard", "hand_over")
"""Every ``WireView.phase``."""

TERMINATIONS = ("knock", "gin", "big_gin", "undercut", "wall", "turn_cap", "forfeit")
"""Every ``HandEnd.termination``."""

MATCH_RESULTS = ("win", "loss", "draw")
"""Every ``MatchEnd.result`` (from the receiving bot's point of view)."""

MATCH_END_REASONS = ("normal", "opponent_forfeit", "your_fault", "aborted")
"""Every ``MatchEnd.reason``."""

Seat: TypeAlias = Annotated[int, Check(check_seat)]
"""A seat: 0 or 1."""

Card: TypeAlias = Annotated[str, Check(check_card)]
"""One canonical card string."""

Hand: TypeAlias = Annotated[Cards, Check(check_hand)]
"""Up to eleven distinct cards."""

CardList: TypeAlias = Annotated[Cards, Check(check_cards)]
"""Up to 52 distinct cards."""

Pair: TypeAlias = Annotated[IntPair, Check(check_pair)]
"""Two non-negative ints indexed by seat."""


def check_version(version: int) -> None:
    """Raise :class:`~protocol.errors.VersionMismatch` unless ``version`` is supported.

    >>> check_version(1)
    >>> check_version(2)
    Traceback (most recent call last):
    ...
    protocol.errors.VersionMismatch: version_unsupported: protocol version 2 is not \
supported (supported: 1)
    """
    if version not in SUPPORTED_VERSIONS:
        raise VersionMismatch(version, SUPPORTED_VERSIONS)


@dataclass(frozen=True, slots=True)
class WireAction:
    """A move as it travels on the wire (the "action map").

    ``card`` is required for ``discard`` and ``knock``; in events it may also be set for
    ``take_discard`` and ``draw_stock`` (the card taken, when the receiver may know it).
    ``melds`` is only for ``knock``: an explicit arrangement, or ``None`` to let the
    referee pick the best one.
    """

    kind: Annotated[str, Check(check_enum, ACTION_KINDS)]
    card: Card | None = None
    melds: Annotated[Melds | None, Check(check_melds)] = None

    @staticmethod
    def pass_upcard() -> WireAction:
        """Decline the first upcard."""
        return WireAction("pass_upcard")

    @staticmethod
    def take_discard(card: str | None = None) -> WireAction:
        """Take the top of the discard pile (``card`` only appears in events)."""
        return WireAction("take_discard", card)

    @staticmethod
    def draw_stock(card: str | None = None) -> WireAction:
        """Draw the top card of the stock (``card`` only appears in events)."""
        return WireAction("draw_stock", card)

    @staticmethod
    def discard(card: str) -> WireAction:
        """Discard ``card`` and end the turn."""
        return WireAction("discard", card)

    @staticmethod
    def knock(card: str, melds: Melds | None = None) -> WireAction:
        """Discard ``card`` face down and knock, optionally with an explicit arrangement."""
        return WireAction("knock", card, melds)

    @staticmethod
    def big_gin() -> WireAction:
        """Declare big gin: all eleven cards melded, no discard."""
        return WireAction("big_gin")


@dataclass(frozen=True, slots=True)
class WireView:
    """Everything the receiving seat may know about the hand (the "view map")."""

    seat: Seat
    phase: Annotated[str, Check(check_enum, PHASES)]
    to_act: Seat
    dealer: Seat
    hand: Hand
    discard_pile: CardList
    """Bottom to top: the last card is the one that can be taken."""
    stock_size: Annotated[int, Check(check_int, 0, 52)]
    opponent_hand_size: Annotated[int, Check(check_int, 0, 11)]
    opponent_known: Hand
    """Cards the opponent is known to hold because it took them from the pile."""
    knock_limit: int
    multiplier: Annotated[int, Check(check_int, 1)]
    turn: int
    scores: Pair
    """Game scores by seat before this hand."""
    taken_card: Card | None
    """The card this seat took from the pile this turn (it may not discard it)."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """The match's clock settings, all in integer milliseconds."""

    move_ms: int
    bank_ms: int
    grace_ms: int
    startup_ms: int


@dataclass(frozen=True, slots=True)
class Fault:
    """Why a match ended abnormally: an error code and a human-readable detail."""

    code: Annotated[str, Check(check_str, 1)]
    detail: str


# --------------------------------------------------------------------- bot -> referee


@dataclass(frozen=True, slots=True)
class Hello:
    """First message of a bot: identifies it (``token``) and its protocol version.

    ``inline_events`` asks the referee to deliver the opponent's moves inside the bot's next
    :class:`Request` (``Request.events``) instead of as separate :class:`Event` messages.
    ``multi_match`` says the bot can play several matches over this connection: after
    ``match_end`` it stays connected, answering pings, until the next ``match_start`` or ``bye``.
    """

    TYPE: ClassVar[str] = "hello"
    protocol_version: int
    name: Annotated[str, Check(check_str, 1, 64)]
    token: Annotated[str, Check(check_str, 1, 128)]
    author: Annotated[str | None, Check(check_str, 0, 128)] = None
    version: Annotated[str | None, Check(check_str, 0, 128)] = None
    inline_events: bool = False
    multi_match: bool = False


@dataclass(frozen=True, slots=True)
class ActionMsg:
    """A bot's answer to a request (wire type ``action``)."""

    TYPE: ClassVar[str] = "action"
    request_id: int
    action: WireAction


@dataclass(frozen=True, slots=True)
class Pong:
    """A bot's answer to a ping, echoing its nonce."""

    TYPE: ClassVar[str] = "pong"
    nonce: int


@dataclass(frozen=True, slots=True)
class Bye:
    """Polite end of the conversation; either side may send it."""

    TYPE: ClassVar[str] = "bye"
    reason: str | None = None


# --------------------------------------------------------------------- referee -> bot


@dataclass(frozen=True, slots=True)
class Welcome:
    """The referee accepts a hello.

    ``inline_events`` is True when the referee grants the hello's ``inline_events`` request,
    ``multi_match`` when it may seat this connection in another match after ``match_end``
    (it never grants what was not asked; a bot not granted ``multi_match`` plays one match).
    """

    TYPE: ClassVar[str] = "welcome"
    protocol_version: int
    referee: str
    heartbeat_ms: int
    inline_events: bool = False
    multi_match: bool = False


@dataclass(frozen=True, slots=True)
class Reject:
    """The referee refuses a hello; the connection is then ignored."""

    TYPE: ClassVar[str] = "reject"
    code: Annotated[str, Check(check_str, 1)]
    message: str
    supported_versions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MatchStart:
    """A match begins: the seat, the opponent, the rules and the clock.

    ``rules`` is a mapping (not hashable, so neither is this message). ``seed``, when given,
    is the seed for the bot's own randomness in this match (the ``GIN_BOT_SEED`` a freshly
    started bot gets): a bot that seeds from it plays a replayed match the same way, whichever
    matches its process played before. ``deal_commitment`` (hex SHA-256) commits the referee
    to the deal key that every deck of the match derives from, under ``deal_id``; the key is
    revealed after the match (``MatchEnd.deal_key``) or after the tournament.
    """

    TYPE: ClassVar[str] = "match_start"
    match_id: Annotated[str, Check(check_str, 1)]
    seat: Seat
    opponent: str
    games: int
    rules: Annotated[Mapping[str, RuleValue], Check(check_rules, out=dict)]
    rules_hash: str
    time_control: TimeControl
    seed: Annotated[str | None, Check(check_str, 1, 64)] = None
    deal_commitment: Annotated[str | None, Check(check_str, 1, 128)] = None
    deal_id: Annotated[str | None, Check(check_str, 1, 256)] = None


@dataclass(frozen=True, slots=True)
class HandStart:
    """A hand is dealt: the receiver's ten cards and the first upcard."""

    TYPE: ClassVar[str] = "hand_start"
    game: int
    hand: int
    dealer: Seat
    hand_cards: Annotated[Cards, Check(check_cards, 10, 10)]
    upcard: Card
    scores: Pair


@dataclass(frozen=True, slots=True)
class Request:
    """The referee asks the receiving seat to decide; answer with :class:`ActionMsg`.

    ``events`` (only for a bot granted ``inline_events``) holds the opponent's moves since
    the referee's previous message to this bot, oldest first: handle them before deciding.
    """

    TYPE: ClassVar[str] = "request"
    request_id: int
    decision: Annotated[str, Check(check_enum, DECISIONS)]
    legal: tuple[WireAction, ...]
    view: WireView
    time_left_ms: int
    bank_ms: int
    events: tuple[Event, ...] = ()


@dataclass(frozen=True, slots=True)
class Event:
    """The opponent (``seat``) made a move."""

    TYPE: ClassVar[str] = "event"
    seat: Seat
    action: WireAction


@dataclass(frozen=True, slots=True)
class HandEnd:
    """A hand is over: how, who won, the final hands and the running game scores."""

    TYPE: ClassVar[str] = "hand_end"
    game: int
    hand: int
    termination: Annotated[str, Check(check_enum, TERMINATIONS)]
    winner: Seat | None
    points: int
    hands: Annotated[tuple[Cards, Cards], Check(check_by_seat, check_hand)]
    melds: Annotated[tuple[Melds, Melds], Check(check_by_seat, check_melds)]
    layoffs: Annotated[tuple[Cards, ...], Check(check_list, check_hand)]
    """One entry per card the defender laid off: that card, then the knocker's meld it extends."""
    deadwood: Pair
    scores: Pair


@dataclass(frozen=True, slots=True)
class GameEnd:
    """A game is over (final scores include bonuses)."""

    TYPE: ClassVar[str] = "game_end"
    game: int
    winner: Seat | None
    scores: Pair
    hands_won: Pair


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """The match is over; ``result`` is from the receiver's point of view. ``deal_key``, when
    given, is the revealed deal key (hex) that ``MatchStart.deal_commitment`` committed to."""

    TYPE: ClassVar[str] = "match_end"
    result: Annotated[str, Check(check_enum, MATCH_RESULTS)]
    games_won: Pair
    points: Pair
    reason: Annotated[str, Check(check_enum, MATCH_END_REASONS)]
    fault: Fault | None
    deal_key: Annotated[str | None, Check(check_str, 1, 128)] = None


@dataclass(frozen=True, slots=True)
class Error:
    """The referee reports a problem with something the bot sent."""

    TYPE: ClassVar[str] = "error"
    code: Annotated[str, Check(check_str, 1)]
    message: str
    request_id: int | None = None


@dataclass(frozen=True, slots=True)
class Ping:
    """Application-level liveness check; answer with a :class:`Pong` at once."""

    TYPE: ClassVar[str] = "ping"
    nonce: int


BotMessage: TypeAlias = Hello | ActionMsg | Pong | Bye
"""Messages a bot sends to the referee."""

RefereeMessage: TypeAlias = (
    Welcome
    | Reject
    | MatchStart
    | HandStart
    | Request
    | Event
    | HandEnd
    | GameEnd
    | MatchEnd
    | Error
    | Ping
    | Bye
)
"""Messages the referee sends to a bot."""

Message: TypeAlias = BotMessage | RefereeMessage
"""Any protocol message."""

MESSAGE_CLASSES: Mapping[str, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        Hello,
        ActionMsg,
        Pong,
        Bye,
        Welcome,
        Reject,
        MatchStart,
        HandStart,
        Request,
        Event,
        HandEnd,
        GameEnd,
        MatchEnd,
        Error,
        Ping,
    )
}
"""Wire ``type`` string to message class."""

BOT_MESSAGE_TYPES = frozenset({"hello", "action", "pong", "bye"})
"""``type`` values a bot may send."""

REFEREE_MESSAGE_TYPES = frozenset(MESSAGE_CLASSES) - {"hello", "action", "pong"}
"""``type`` values the referee may send (``bye`` goes both ways)."""
