"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` + ``pg_ctl`` in a temporary
directory, on a free TCP port of 127.0.0.1, trust authentication.

initdb refuses to run as root, so as root the server runs as the ``postgres`` user (created by
Debian's ``postgresql`` package) through ``runuser``. :func:`find_bindir` is None where the
server binaries are not installed (``.ci/run`` installs them); tests then skip loudly.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg

from bench.common import free_port

__all__ = ["PgServer", "find_bindir", "pg_server", "why_unavailable"]


def find_bindir() -> Path | None:
    """The newest installed PostgreSQL server's ``bin`` directory (Debian layout or PATH)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return None if initdb is None else Path(initdb).parent


def why_unavailable() -> str | None:
    """Why no server can be started here, or None."""
    if find_bindir() is None:
        return "the PostgreSQL server (initdb, pg_ctl) is not installed: apt-get install postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run initdb as"
    return None


class PgServer:
    """A running server; :meth:`database` creates a fresh database and returns its URL."""

    def __init__(self, bindir: Path, root: Path, port: int, user: str | None) -> None:
        self.bindir = bindir
        self.root = root
        self.port = port
        self.user = user
        self._count = 0

    def _run(self, *argv: str) -> None:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")

    def url(self, database: str = "postgres") -> str:
        """A URL for ``database`` (superuser ``postgres``, no password)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """Create a new empty database; its URL."""
        self._count += 1
        name = f"gin_{os.getpid()}_{self._count}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.url(name)

    def start(self, *settings: str) -> None:
        """initdb (trust auth) and start on the port; ``settings`` are ``name=value``."""
        data = self.root / "data"
        self._run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync")  # fmt: skip
        options = " ".join(
            [f"-p {self.port}", "-c listen_addresses=127.0.0.1", f"-k {self.root}",
             *(f"-c {s}" for s in settings)]
        )  # fmt: skip
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(data), "-l", log, "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        """Stop the server at once (its data is thrown away)."""
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")


@contextlib.contextmanager
def pg_server(*settings: str) -> Iterator[PgServer]:
    """A server for the duration of the block (``why_unavailable`` must be None)."""
    bindir = find_bindir()
    assert bindir is not None
    user = "postgres" if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="gin-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = PgServer(bindir, root, free_port(), user)
    try:
        server.start(*settings)
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
