"""What the adapters share: loading a user's object from ``MODULE:NAME`` or ``FILE.py:NAME``,
seeds, and the refusal of rules a library cannot play.

>>> load_object("protocol.cards:RANKS")
'A23456789TJQK'
>>> load_object("no_colon")
Traceback (most recent call last):
...
ValueError: 'no_colon': expected MODULE:NAME or FILE.py:NAME
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import random
import sys
from pathlib import Path

from protocol.bot import ExitCode
from protocol.cards import ALL_CARDS

__all__ = ["REFUSED", "hand_order", "load_object", "refuse", "seed_int"]

REFUSED = ExitCode.USAGE
"""The exit status of an adapter that cannot play the match's rules (2: bad input)."""


def load_object(spec: str) -> object:
    """The object ``NAME`` (dotted: ``Class.method``) of module ``MODULE`` or of the file
    ``FILE.py`` (whose directory goes first on ``sys.path``, for its own imports);
    ``ValueError`` naming what could not be found."""
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise ValueError(f"{spec!r}: expected MODULE:NAME or FILE.py:NAME")
    try:
        if where.endswith(".py"):
            path = Path(where).resolve()
            if not path.is_file():
                raise ValueError(f"{spec!r}: no file {where}")
            sys.path.insert(0, str(path.parent))
            loader = importlib.util.spec_from_file_location(path.stem, path)
            if loader is None or loader.loader is None:
                raise ValueError(f"{spec!r}: {where} cannot be loaded as Python")
            module = importlib.util.module_from_spec(loader)
            sys.modules[path.stem] = module
            loader.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except ImportError as err:
        raise ValueError(f"{spec!r}: cannot import {where}: {err}") from err
    found: object = module
    for part in name.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise ValueError(f"{spec!r}: {where} has no {name}") from None
    return found


def seed_int(seed: str | int | None) -> int:
    """A 32-bit seed from a match's ``seed`` (or ``GIN_BOT_SEED``); a fresh random one for
    none."""
    if seed is None:
        return int.from_bytes(os.urandom(4), "little")
    digest = hashlib.sha256(str(seed).encode()).digest()
    return int.from_bytes(digest[:4], "little")


def hand_order(seed: int, game: int, hand: int) -> list[str]:
    """A shuffled deck, the same for the same seed, game and hand: where an adapter draws the
    cards it cannot see from (:meth:`~protocol.adapters.hand_log.HandLog.hidden_cards`)."""
    order = list(ALL_CARDS)
    random.Random(f"{seed}:{game}:{hand}").shuffle(order)
    return order


def refuse(name: str, why: str) -> SystemExit:
    """Say on stderr, at ``match_start``, that the bot cannot play the match's rules; the
    exit (:data:`REFUSED`) to raise at the bot's first request.

    Exiting there, when the referee waits for the bot's answer, makes the fault a crash that
    quotes this line; exiting at ``match_start`` raced the ``hand_start`` and ``request`` the
    referee sends right after, and a message it could not deliver is charged as a lost
    connection, without the line."""
    print(
        f"[{name}] cannot play these rules: {why} (docs/existing-bots.md says what maps)",
        file=sys.stderr,
        flush=True,
    )
    return SystemExit(REFUSED)
