"""A match's local bots, started before the referee's event loop and the rest of its imports.

:func:`start_early` binds the local bots' private ``ipc://`` socket
(:class:`~referee.net.ipc.PrivateIpc`), makes each seat's token and seed, and starts each
local bot on that socket (:func:`referee.net.spawn.spawn`), with the standard library, the
configuration and the process code alone: no asyncio, no endpoint, no hub, no game. The bots'
interpreters then start while the referee imports the rest, and a bot that connects first
waits in the socket's backlog. :func:`~referee.match.runner.run_match` takes the result over
(the transport serves the socket, the hub opens the seats with these tokens, each started
bot is adopted, each failed start is its seat's startup fault); the command line calls this
before it imports anything else a match needs (docs/performance.md, "Start-up").

Whoever made an :class:`EarlyStart` ends it with :meth:`EarlyStart.discard` whatever happens:
it kills every bot not yet adopted and closes the socket if no transport took it. Only a match
whose bots all connect over the private socket starts early (``local_ipc`` with a ``tcp://``
endpoint); a remote seat gets its token from the hub as before. A match without a remote seat
that started early binds no other endpoint (:func:`binds_endpoint`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.match.bots import BotSpec, referee_env
from referee.match.config import MatchConfig
from referee.match.tokens import new_token
from referee.net import sandbox
from referee.net.ipc import PrivateIpc
from referee.net.private import private_dir
from referee.net.spawn import BotStartError, Spawned, spawn

__all__ = ["EarlyStart", "binds_endpoint", "can_start_early", "seat_stderr", "start_early"]


@dataclass(eq=False)
class EarlyStart:
    """A match's bots started before its loop: see the module docstring."""

    ipc: PrivateIpc | None
    """The bound socket, until a transport takes it (then None)."""
    endpoint: str
    """The address the bots were given."""
    tokens: list[str | None]
    """Each seat's token (None for a remote seat: the hub makes one)."""
    seeds: list[str | None]
    """Each local seat's ``GIN_BOT_SEED`` (None for a remote seat)."""
    started: list[Spawned | BotStartError | None] = field(default_factory=list)
    """Each seat's started bot, or why it could not start (None for a remote seat)."""

    def take_ipc(self) -> PrivateIpc | None:
        """Hand the socket over (to the transport, which owns it from then on)."""
        ipc, self.ipc = self.ipc, None
        return ipc

    def discard(self) -> None:
        """Kill every started bot not adopted, close the socket if nobody took it."""
        for started in self.started:
            if isinstance(started, Spawned):
                started.kill()
        if self.ipc is not None:
            self.ipc.close()
            self.ipc = None


def can_start_early(specs: Sequence[BotSpec], *, bind: str, local_ipc: bool) -> bool:
    """True if the match's local bots connect over the private socket (and there are some)."""
    local = any(spec.command is not None for spec in specs)
    return local and local_ipc and bind.startswith("tcp://")


def binds_endpoint(specs: Sequence[BotSpec], early: EarlyStart | None) -> bool:
    """True if a match binds its ``bind`` endpoint: a seat is remote, or its local bots were
    not started on the private socket (``early`` is None: they connect to that endpoint).
    A match whose bots are all local and on the private socket listens on nothing else: no
    TCP port, no CURVE keys (docs/security.md, "Keys: who may connect")."""
    return early is None or any(spec.command is None for spec in specs)


def seat_stderr(out_dir: Path | None, config: MatchConfig, seat: int) -> Path | None:
    """Where a seat's bot's stderr is kept: ``OUT/<match id>.seat<N>.stderr``."""
    return None if out_dir is None else out_dir / f"{config.match_id}.seat{seat}.stderr"


def start_early(
    config: MatchConfig, specs: Sequence[BotSpec], *, out_dir: Path | None
) -> EarlyStart | None:
    """Bind the private socket and start each local bot on it (see the module docstring);
    None when the socket cannot be bound (it said why: the match then starts its bots on
    its transport's endpoint). ``out_dir``, the match's record and logs, is made first: a
    sandboxed bot sees it empty only if it exists when the bot starts. Raises OSError if it
    cannot be made."""
    if out_dir is not None:
        private_dir(out_dir)
    ipc = PrivateIpc.open()
    if ipc is None:
        return None
    early = EarlyStart(ipc, ipc.endpoint, tokens=[], seeds=[])
    hide = () if out_dir is None else (str(out_dir),)
    try:
        for seat, spec in enumerate(specs):
            if spec.command is None:
                early.tokens.append(spec.token)
                early.seeds.append(None)
                early.started.append(None)
                continue
            token = spec.token or new_token()
            seed = config.deal.bot_seed(f"{config.match_id}/{seat}")
            early.tokens.append(token)
            early.seeds.append(seed)
            env = referee_env(ipc.endpoint, token, seed)
            try:
                level = sandbox.resolve(spec.command.sandbox)
                early.started.append(spawn(spec.command, level=level, env=env, hide=hide))
            except BotStartError as err:
                early.started.append(err)
    except BaseException:
        early.discard()
        raise
    return early
