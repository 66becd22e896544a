"""A peer speaking ZMTP 2.0, as Debian's JeroMQ 0.3.6 does: the 10-byte signature, then
revision 1 and its socket type, and a reconnect each time the referee closes the connection.
It prints on stderr how many times it greeted."""

from __future__ import annotations

import os
import socket
import sys
import time


def main() -> None:
    """Greet, be refused, reconnect, for at most 30 s."""
    endpoint = os.environ["GIN_REFEREE_ENDPOINT"]
    greeted = 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if endpoint.startswith("ipc://"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address: str | tuple[str, int] = endpoint[len("ipc://") :]
        else:
            host, _, port = endpoint[len("tcp://") :].rpartition(":")
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            address = (host, int(port))
        try:
            sock.connect(address)
            sock.sendall(b"\xff" + bytes(8) + b"\x7f")
            sock.recv(10)  # the referee's signature
            sock.sendall(b"\x01\x05")  # ZMTP 2.0: revision 1, socket type DEALER
            greeted += 1
            print(f"zmtp2: greeted {greeted} time(s)", file=sys.stderr, flush=True)
            while sock.recv(4096):
                pass
        except OSError:
            pass
        finally:
            sock.close()
        time.sleep(0.1)  # JeroMQ's reconnect interval is 100 ms


if __name__ == "__main__":
    main()
