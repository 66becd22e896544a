"""A referee process's membership of a tournament: registered in the store, kept alive by a
heartbeat, and gone when it ends.

Leases fence *games*; membership tells which referee processes are alive, for two things:

- a second independent ``tournament`` command on a store whose first one is alive is refused
  (:class:`~referee.tournament.store.StoreBusy`), instead of releasing the first one's claims
  and playing its games twice;
- a run that starts releases at once the claims of runners that are dead: those of this machine
  whose process is gone, and those whose heartbeat expired; the claims of live runners (other
  workers, other machines) are left alone.

The heartbeat's period is a third of the lease; a runner missing its heartbeat for a whole lease
is dead to the others, and its games are claimed again (its leases have expired too).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time

from referee.net.pids import pid_alive
from referee.tournament.defaults import LEASE_SECONDS
from referee.tournament.store import Runner, Store

__all__ = ["LEASE_SECONDS", "Membership", "pid_alive"]

LOGGER = logging.getLogger(__name__)


class Membership:
    """This process in a store's runner registry (``role`` ``tournament`` or ``worker``)."""

    def __init__(self, store: Store, *, role: str, lease: float = LEASE_SECONDS) -> None:
        self.store = store
        self.role = role
        self.lease = lease
        self.host = socket.gethostname()
        self.owner = f"{self.host}-{os.getpid()}-{secrets.token_hex(3)}"
        """Stable id of this run: the ``owner`` of its claims."""

    def _me(self, now: float) -> Runner:
        return Runner(self.owner, self.host, os.getpid(), self.role, now + self.lease)

    def join(self, *, exclusive: bool) -> list[Runner]:
        """Register; release the claims of the dead. With ``exclusive`` (a ``tournament``
        command), refuse with :class:`StoreBusy` if another ``tournament`` runner is alive."""
        now = time.time()
        dead = [
            r.owner
            for r in self.store.runners(now=now)
            if r.host == self.host and r.pid != os.getpid() and not pid_alive(r.pid)
        ]
        others = self.store.join(self._me(now), now=now, exclusive=exclusive, dead=dead)
        LOGGER.info(
            "joined as %s (%s); %d other runner(s) alive, %d dead forgotten",
            self.owner, self.role, len(others), len(dead),
        )  # fmt: skip
        return others

    async def keep_alive(self) -> None:
        """Renew the heartbeat every third of the lease, until cancelled; re-join if the others
        declared this runner dead meanwhile (its old claims are fenced off anyway)."""
        while True:
            await asyncio.sleep(self.lease / 3)
            if not self.store.heartbeat(self.owner, expires=time.time() + self.lease):
                LOGGER.warning("%s was declared dead (a pause longer than the lease?)", self.owner)
                self.join(exclusive=False)

    def leave(self) -> None:
        """Unregister (graceful end)."""
        self.store.leave(self.owner)
