"""Soak: random and mutated frames into a live ``gin-referee serve`` daemon, before and after
hello, while the daemon plays its own games; the daemon must not crash and its memory must stay
flat.

Run: ``python -m bench.soak [--frames 1000000] [--clients 8] [--curve] [--ping-flood 32]``. It
starts the daemon itself (two local bots, a registered remote token per client, games on a
loop), then ``--clients`` connections at a time each: connect, say hello with its registered
token half of the time (so the frames reach a lobby connection or a seated remote game), send
frames until the daemon closes the connection, reconnect. With ``--curve`` the daemon requires
CURVE (no ``--insecure``), every client authenticates with its registered key and its frames
are boxed, so they reach the parser behind the handshake; one connection in four tries an
unknown key instead (refused during the handshake). Frames are drawn from: random bytes; valid
bot messages (hello, action, pong, bye) with bytes flipped, cut, repeated or appended; valid
messages with wrong values; malformed ZMTP (bad flags, lying sizes, multipart). With
``--ping-flood N``, N more connections (``bench/pingflood.py``, one process; under CURVE one
connection with a key of its own) send PINGs and never read, for the whole soak. The daemon's
RSS is sampled every 0.5 s. It prints one JSON line: frames and connections sent, the daemon's
status, RSS at start, peak and end (MiB), and the games it finished with the faults charged to
its own bots (none expected).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgpack

from bench.common import free_port, serving_line
from bench.zmtp_client import ZmtpClient, frame
from referee.net.keys import KeyPair, decode_key

__all__ = ["mutated_frames", "soak"]

TOKEN = "soak-token-0123456789"
VALID: list[dict[str, object]] = [
    {"type": "hello", "protocol_version": 1, "name": "soak", "token": TOKEN},
    {"type": "action", "request_id": 1, "action": {"kind": "draw_stock"}},
    {"type": "action", "request_id": 7, "action": {"kind": "discard", "card": "Qs"}},
    {"type": "action", "request_id": 3, "action": {"kind": "knock", "card": "2c", "melds": []}},
    {"type": "pong", "nonce": 5},
    {"type": "bye", "reason": "soak"},
]
ODD_VALUES: list[object] = [None, -1, 2**63, 1.5, "", "x" * 300, [], {}, b"\x00", True]


def mutated_frames(
    rng: random.Random, count: int, wrap: Callable[[bytes], bytes] = frame
) -> list[bytes]:
    """``count`` frames: bodies wrapped by ``wrap`` (a ZMTP frame, or a CURVE ``MESSAGE``), and
    malformed ZMTP written raw (under CURVE it fails the box, and the connection)."""
    out: list[bytes] = []
    for _ in range(count):
        kind = rng.randrange(6)
        base = msgpack.packb(rng.choice(VALID))
        if kind == 0:
            body = rng.randbytes(rng.randrange(0, 400))
        elif kind == 1:  # flip bytes
            data = bytearray(base)
            for _ in range(rng.randrange(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            body = bytes(data)
        elif kind == 2:  # cut or repeat or append
            body = rng.choice([base[: rng.randrange(len(base))], base * 2, base + rng.randbytes(9)])
        elif kind == 3:  # a valid shape with a wrong value
            msg: dict[str, object] = dict(rng.choice(VALID))
            msg[rng.choice(list(msg))] = rng.choice(ODD_VALUES)
            body = msgpack.packb(msg)
        elif kind == 4:  # malformed ZMTP: raw bytes written as they are
            out.append(
                rng.choice(
                    [
                        bytes((rng.choice((8, 16, 32, 128)), 1, 0)),
                        bytes((2,)) + rng.randbytes(8),
                        frame(b"part", 1) + frame(b"end"),
                        frame(b"\x04PING\x00", 4),
                    ]
                )
            )
            continue
        else:
            body = base
        out.append(wrap(body))
    return out


def _rss_mib(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    kb = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmRSS:"))
    return kb / 1024


def _start_daemon(config: Path, endpoint: str, out: Path, curve: bool) -> subprocess.Popen[str]:
    security = ["--key-dir", str(out.parent / "home")] if curve else ["--insecure"]
    return subprocess.Popen(
        [sys.executable, "-m", "referee", "serve", str(config), "--bind", endpoint,
         "--out", str(out), *security],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _config(directory: Path, keys: list[KeyPair]) -> Path:
    py = sys.executable
    path = directory / "soak.toml"
    remotes = "".join(
        f'[[bots]]\nname = "soak{i}"\nremote = true\ntoken = "{TOKEN}{i}"\n'
        f'public_key = "{pair.public_z85}"\n'
        for i, pair in enumerate(keys)
    )
    path.write_text(
        f"""
[tournament]
name = "soak"
games_per_pairing = 2000
concurrency = 1
[time]
move = 2.0
bank = 5.0
startup = 60.0
[[bots]]
name = "greedy"
command = "{py} -m sample_bots.greedy_bot"
[[bots]]
name = "random"
command = "{py} -m sample_bots.random_bot"
{remotes}"""
    )
    return path


async def _client(
    endpoint: str,
    who: tuple[int, KeyPair, bytes | None],
    budget: list[int],
    rng: random.Random,
    stats: dict[str, int],
) -> None:
    """One client's loop: connect (as client ``index`` with its key, under CURVE when the
    referee's ``server`` key is given), maybe hello, frames until closed, again."""
    index, pair, server = who
    hello = msgpack.packb({**VALID[0], "token": f"{TOKEN}{index}"})
    while budget[0] > 0:
        unknown = server is not None and rng.random() < 0.25
        keys = KeyPair.generate() if unknown else pair
        try:
            client = await asyncio.wait_for(
                ZmtpClient.connect(endpoint, server_key=server, keys=(keys.public, keys.secret)), 5
            )
        except (OSError, ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            stats["refused_unknown_key" if unknown else "connect_failures"] += 1
            await asyncio.sleep(0.05)
            continue
        if unknown:
            stats["unknown_key_admitted"] += 1  # must stay 0
            client.writer.transport.abort()
            continue
        stats["connections"] += 1
        try:
            if rng.random() < 0.5:
                client.send(hello)
            while budget[0] > 0 and not client.reader.at_eof():
                batch = mutated_frames(rng, 64, client.box)
                client.send_raw(b"".join(batch))
                budget[0] -= len(batch)
                stats["frames"] += len(batch)
                await client.writer.drain()
        except (OSError, ConnectionError):
            pass
        finally:
            client.writer.transport.abort()


async def soak(
    frames: int, clients: int, seed: int, curve: bool = False, ping_flood: int = 0
) -> dict[str, object]:
    """Run the daemon and the clients; the report (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="gin-soak-") as tmp:
        directory = Path(tmp)
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        keys = [KeyPair.generate() for _ in range(clients + (1 if ping_flood else 0))]
        daemon = _start_daemon(_config(directory, keys), endpoint, directory / "out", curve)
        try:
            assert daemon.stderr is not None
            line = await asyncio.to_thread(serving_line, daemon.stderr.readline)
            server = decode_key(line.rsplit("referee key ", 1)[1].strip()) if curve else None
            await asyncio.sleep(2.0)  # its first game is under way
            stats = dict.fromkeys(
                ("frames", "connections", "connect_failures", "refused_unknown_key",
                 "unknown_key_admitted"), 0,
            )  # fmt: skip
            flood = _ping_flood(endpoint, ping_flood, line if curve else "", keys[-1])
            start_rss = peak = _rss_mib(daemon.pid)
            budget = [frames]
            rng = random.Random(seed)
            tasks = [
                asyncio.ensure_future(
                    _client(
                        endpoint, (i, keys[i], server), budget, random.Random(rng.random()), stats
                    )
                )
                for i in range(clients)
            ]
            started = time.monotonic()
            while not all(t.done() for t in tasks):
                await asyncio.sleep(0.5)
                peak = max(peak, _rss_mib(daemon.pid))
                if daemon.poll() is not None:
                    break
            seconds = time.monotonic() - started
            await asyncio.gather(*tasks, return_exceptions=True)
            flooded: dict[str, object] = {}
            if flood is not None:
                flood.send_signal(signal.SIGINT)
                out, _ = await asyncio.to_thread(flood.communicate, timeout=30)
                flooded = json.loads(out) if out.strip() else {"connections_held": ping_flood}
            end_rss = _rss_mib(daemon.pid)
            alive = daemon.poll() is None
        finally:
            if daemon.poll() is None:
                daemon.terminate()
            try:
                _, err = await asyncio.to_thread(daemon.communicate, timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                _, err = daemon.communicate()
        games, faults = _games(directory / "out" / "tournament.sqlite")
    return {
        "curve": curve,
        **stats,
        "seconds": round(seconds, 1),
        "frames_per_s": round(stats["frames"] / max(seconds, 1e-9)),
        "daemon_alive_at_end": alive,
        "daemon_exit": daemon.returncode,
        "rss_mib": {"start": round(start_rss, 1), "peak": round(peak, 1), "end": round(end_rss, 1)},
        "games_done": games,
        "local_bot_faults": faults,
        "ping_flood": flooded if ping_flood else None,
        "stderr_tail": err[-500:] if not alive else "",
    }


def _ping_flood(
    endpoint: str, connections: int, serving: str, pair: KeyPair
) -> subprocess.Popen[str] | None:
    """``bench.pingflood`` for as long as the soak runs (stopped with SIGINT), or None."""
    if not connections:
        return None
    args = ["--processes", "1", "--connections", str(connections)]
    if serving:
        server = serving.rsplit("referee key ", 1)[1].strip()
        args = ["--processes", "1", "--connections", "1", f"--server-key={server}"]
        args += [f"--client-secret={pair.secret_z85}"]  # as --opt=KEY: a key may begin with -
    return subprocess.Popen(
        [sys.executable, "-m", "bench.pingflood", endpoint, "3600", *args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip


def _games(path: Path) -> tuple[int, list[str]]:
    """Games done, and the faults charged to the daemon's own (local) bots."""
    from referee.tournament.store import SqliteStore

    store = SqliteStore.open(path)
    try:
        rows = store.games()
    finally:
        store.close()
    done = [r for r in rows if r.status == "done" and r.result is not None]
    faults = [
        f"{r.result['seats'][f['seat']]}: {f['kind']} {f['detail']}"
        for r in done
        if r.result is not None
        for f in r.result["faults"]
        if not r.result["seats"][f["seat"]].startswith("soak")
    ]
    return len(done), faults


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--curve", action="store_true", help="CURVE clients (default: plain)")
    parser.add_argument("--ping-flood", type=int, default=0, help="connections PINGing")
    args = parser.parse_args()
    report = asyncio.run(soak(args.frames, args.clients, args.seed, args.curve, args.ping_flood))
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
