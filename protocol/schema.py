"""Wire protocol v1: one frozen dataclass per message type (nested maps: protocol.values).

These classes are plain data, and the one description of every message: field names equal
the wire keys, in wire order; a field without a default is required (always written, nil
allowed only if its type admits ``None``); a field with a default is optional (omitted when
it holds it). Limits that the Python type does not say are in ``Annotated[..., Check(...)]``
(see :mod:`protocol.fields`, which derives the parser's and encoders' tables from here).
:mod:`protocol.codec` turns the messages into msgpack bytes and back, validating everything
it decodes. Card lists are tuples of card strings (see :mod:`protocol.cards`), pairs indexed
by seat are 2-tuples.

>>> Hello.TYPE, ActionMsg.TYPE, MESSAGE_CLASSES["ping"] is Ping
('hello', 'action', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, ClassVar, TypeAlias

from protocol.checks import (
    check_by_seat,
    check_cards,
    check_enum,
    check_hand,
    check_list,
    check_meld_cards,
    check_melds,
    check_rules,
    check_str,
)
from protocol.errors import VersionMismatch
from protocol.fields import Check
from protocol.values import (
    ACTION_KINDS,
    DECISIONS,
    MATCH_END_REASONS,
    MATCH_RESULTS,
    PHASES,
    TERMINATIONS,
    Card,
    CardList,
    Cards,
    Fault,
    Hand,
    IntPair,
    Melds,
    Pair,
    RuleValue,
    Seat,
    TimeControl,
    WireAction,
    WireView,
)

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
    "LINK_PATIENCE_MS",
]

PROTOCOL_VERSION = 1
"""The protocol version this package speaks."""

SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
"""Every protocol version this package can speak, ascending."""

LINK_PATIENCE_MS = 60_000
"""How long a bot keeps a connection on which it hears nothing from the referee (its
``ZMQ_HEARTBEAT_TIMEOUT``, and the TTL the referee's ZMTP PINGs carry): a referee stalled for
less (stopped, swapping, in a long pause of its machine) loses no link, and resumes every game
where it was (docs/protocol.md, "Liveness"). The referee's own limit on a bot's silence is
short, but leaves the referee's stalls out."""


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


# --------------------------------------------------------------------- bot -> referee


@dataclass(frozen=True, slots=True)
class Hello:
    """First message of a bot: identifies it (``token``) and its protocol version.

    ``inline_events`` asks the referee to deliver the opponent's moves inside the bot's next
    :class:`Request` (``Request.events``) instead of as separate :class:`Event` messages.
    ``multi_match`` says the bot can play several matches over this connection: after
    ``match_end`` it stays connected, answering pings, until the next ``match_start`` or ``bye``.
    ``declare_melds`` asks to declare its own melds when the opponent knocks (a ``request``
    with decision ``defend``).
    """

    TYPE: ClassVar[str] = "hello"
    protocol_version: int
    name: Annotated[str, Check(check_str, 1, 64)]
    token: Annotated[str, Check(check_str, 1, 128)]
    author: Annotated[str | None, Check(check_str, 0, 128)] = None
    version: Annotated[str | None, Check(check_str, 0, 128)] = None
    inline_events: bool = False
    multi_match: bool = False
    declare_melds: bool = False


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
    (it never grants what was not asked; a bot not granted ``multi_match`` plays one match),
    ``declare_melds`` when it will ask the bot for its melds after the opponent's knocks.
    """

    TYPE: ClassVar[str] = "welcome"
    protocol_version: int
    referee: str
    heartbeat_ms: int
    inline_events: bool = False
    multi_match: bool = False
    declare_melds: bool = False


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
    ``knocker_melds`` (only with decision ``defend``) are the knocker's melds as scored.
    """

    TYPE: ClassVar[str] = "request"
    request_id: int
    decision: Annotated[str, Check(check_enum, DECISIONS)]
    legal: tuple[WireAction, ...]
    view: WireView
    time_left_ms: int
    bank_ms: int
    events: tuple[Event, ...] = ()
    knocker_melds: Annotated[Melds | None, Check(check_melds)] = None


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
    """One entry per card the defender laid off: that card, then the knocker's meld it extends
    (as the knocker declared it)."""
    deadwood: Pair
    scores: Pair
    layoff_melds: Annotated[tuple[Cards, ...] | None, Check(check_list, check_meld_cards)] = None
    """One entry per entry of ``layoffs``, in the same order: the knocker's meld as it stands
    after that layoff (earlier layoffs onto it and this card included), in card order."""


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
