"""A tournament's one deal key: where it lives during the run, and when it is revealed.

Without a configured ``seed``, the first run draws fresh secrets (:meth:`Deal.random`) and
writes them to ``deal.key`` in the output directory, created with mode 0600 (never readable by
another user; the bots run as the referee's user, so the sandbox is what keeps them from it).
The store holds only the commitment (``meta.deal_commitment``), so a resumed run checks that it
deals from the same key. ``results`` reveals the key once every game is played, never before.
With a ``seed`` the key derives from it (not secret) and no file is written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from referee.match import Deal, parse_key
from referee.tournament.store import Store, StoreError

__all__ = ["KEY_FILE", "DealStatus", "deal_status", "open_deal"]

KEY_FILE = "deal.key"
"""The key file's name in the output directory."""


def _write(path: Path, deal: Deal) -> None:
    text = json.dumps({"deal_key": deal.key_hex, "bot_key": deal.bot_key.hex()}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _read(path: Path) -> Deal:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Deal(parse_key(data["deal_key"]), parse_key(data["bot_key"]))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise StoreError(path, f"cannot read the tournament's deal key: {err}") from err


def open_deal(out: Path, seed: int | None, store: Store, *, created: bool) -> Deal:
    """The tournament's deal secrets: derived from ``seed``, or read from (on the first run:
    drawn into) ``out/deal.key``; the commitment is stored, and checked on a resumed run."""
    path = out / KEY_FILE
    if seed is not None:
        deal = Deal.from_seed(seed)
    elif path.exists():
        deal = _read(path)
    elif created or store.deal_commitment() is None:
        deal = Deal.random()
        _write(path, deal)
    else:
        raise StoreError(
            path,
            "is missing: this tournament's deals came from the key it held, so it cannot be"
            " resumed without it (restore the file, or start again in a new directory)",
        )
    stored = store.commit_deal(deal.commitment)
    if stored != deal.commitment:
        raise StoreError(
            store.location,
            f"was dealt from the key with commitment {stored}, but {path} holds another one"
            f" ({deal.commitment}); restore the original key file",
        )
    return deal


LADDER_META = "ladder"
"""The store's meta key a ladder sets (``referee.tournament.ladder.worker.LADDER_KEY``)."""


@dataclass(frozen=True, slots=True)
class DealStatus:
    """What ``results`` says about the deals."""

    commitment: str | None
    """The commitment the bots received (None if no game was dealt yet)."""
    secret: bool
    """False for a tournament dealt from a public seed."""
    key: str | None
    """The revealed key (hex) once every game is played; None while the games are open."""
    ladder: bool = False
    """A ladder's: it never ends, so its key is never revealed (each closed pair's is)."""

    def to_dict(self) -> dict[str, object]:
        """The ``deals`` object of ``results --format json``."""
        return {"deal_commitment": self.commitment, "deal_secret": self.secret,
                "deal_key": self.key}  # fmt: skip

    def lines(self) -> list[str]:
        """The table form."""
        if self.commitment is None:
            return ["deals: none dealt yet"]
        kind = "secret" if self.secret else "NOT secret (from a public seed)"
        reveal = self.key or (
            "never revealed (a ladder never ends); closed pairs' keys: gin-referee ladder deals"
            if self.ladder
            else "sealed until every game is played"
        )
        return [f"deals: {kind}; commitment {self.commitment}", f"deal key: {reveal}"]


def deal_status(out: Path, store: Store) -> DealStatus:
    """The deals' commitment, and the key if the tournament has ended (all games done)."""
    stored = store.config()
    seed = None if stored is None else stored[0].get("seed")
    commitment = store.deal_commitment()
    counts = store.counts()
    # A ladder is never over, whatever is pending now (an entrant away, one left alone): its
    # key derives every open pair's (docs/ladder.md, "Provable deals").
    ladder = store.get_meta(LADDER_META) is not None
    ended = not ladder and commitment is not None and counts["pending"] == counts["claimed"] == 0
    key = None
    if ended:
        deal = Deal.from_seed(seed) if isinstance(seed, int) else _read(out / KEY_FILE)
        if deal.commitment != commitment:
            raise StoreError(out / KEY_FILE, "holds a key that does not match the commitment")
        key = deal.key_hex
    return DealStatus(commitment, not isinstance(seed, int), key, ladder)
