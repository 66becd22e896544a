"""The spectators' HTTP server (aiohttp), on the referee's event loop, on its own address.

Three resources, nothing else: ``GET /`` is the live page (one HTML document, the replay
page's style and script and the live script inline, built once at start), ``GET /events`` the
server-sent event stream of the :class:`~referee.live.hub.LiveHub`, and ``GET
/leaderboard.json`` a ladder's whole leaderboard (404 for a tournament). A stream over the
hub's cap is refused with 503, and so is a connection over the connection caps
(:mod:`referee.live.connections`); a stream whose spectator falls behind is ended by the hub;
a write that cannot complete within ``write_timeout`` ends the stream too, so a client that
stops reading costs a bounded buffer and never blocks anything else. Handlers do no work per
event: the hub encodes each event once.

``GET /events?game=ID`` watches a game: its hands and decisions are sent too (the page asks for
the game it shows). ``GET /snapshot[?game=ID]`` is the page at that moment with no stream
(:mod:`referee.live.snapshot`): it finishes loading, so a headless browser's screenshot returns.
A snapshot is built at most once per :data:`SNAPSHOT_TTL` for each game it can show, so a flood
of requests costs the referee's loop a lookup each, not a page each (a cached page is older,
never ahead of the card delay).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import ipaddress
import time
from importlib import resources

from aiohttp import web

from referee.live.connections import CappedFactory, default_cap
from referee.live.hub import LiveHub, TooManySpectators
from referee.live.snapshot import snapshot_data, watched
from referee.live.stream import Gzip, accepts_gzip
from referee.view.page import asset, page

__all__ = ["LiveServer", "live_page", "parse_address"]

PING_SECONDS = 15.0
"""An idle stream gets an SSE comment this often (proxies and dead peers notice)."""

_BODY = """<div id="live" class="live">
<header class="live-top"><h1>gin-referee <span class="live-dot">live</span></h1>
<span id="live-status" class="live-status" aria-live="polite">connecting...</span></header>
<section id="standings" class="panel live-standings" aria-label="standings"></section>
<section id="leaderboard" class="panel live-standings" aria-label="leaderboard"></section>
<nav id="games" class="live-games" aria-label="games"></nav>
<p id="live-note" class="live-note"></p>
</div>
<div id="app"><noscript>The live page needs JavaScript.</noscript></div>"""


def _live_asset(name: str) -> str:
    return resources.files("referee.live").joinpath("static", name).read_text(encoding="utf-8")


def live_page(data: str = "") -> tuple[bytes, str]:
    """The page's bytes and its Content-Security-Policy (the inline scripts by hash); ``data``
    (a snapshot's data element) goes at the end of its body."""
    scripts = [asset("viewer.js"), _live_asset("live.js")]
    text = page(
        title="gin-referee live",
        styles=[asset("viewer.css"), _live_asset("live.css")],
        body=_BODY + data,
        scripts=scripts,
    )
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in scripts
    )
    policy = (
        f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
    return text.encode(), policy


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1), ``[v6]:PORT``; ValueError names
    what is wrong."""
    host, sep, port_text = text.strip().rpartition(":")
    if not sep:
        host, port_text = "", text.strip()
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        why = f"the port {port_text!r} is not a number"
        raise ValueError(f"spectator address {text!r}: {why}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"spectator address {text!r}: port {port} is out of range")
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ValueError(f"spectator address {text!r}: {host!r} is not an IP address") from None
    return host, port


SNAPSHOT_TTL = 0.5
"""Seconds a built snapshot is served again to later requests for the same game."""


class LiveServer:
    """Serves a hub's page and event stream on ``host:port`` (port 0: any free port)."""

    def __init__(
        self,
        hub: LiveHub,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        write_timeout: float = 10.0,
        max_connections: int | None = None,
    ) -> None:
        self.hub = hub
        self.max_connections = max_connections
        """Connections at once (None: :func:`~referee.live.connections.default_cap`)."""
        self.connections: CappedFactory | None = None
        self._listener: asyncio.Server | None = None
        self.host, self.port = host, port
        self.write_timeout = write_timeout
        self._page, self._policy = live_page()
        self._runner: web.AppRunner | None = None
        self._snapshots: dict[str | None, tuple[float, bytes]] = {}
        """Game shown -> (when built, page): at most one entry per game on the page."""
        self.snapshots_built = 0
        self.url = ""

    async def start(self) -> str:
        """Bind and serve; returns the page's URL."""
        app = web.Application(client_max_size=1024)
        app.router.add_get("/snapshot", self._snapshot)
        app.router.add_get("/", self._index)
        app.router.add_get("/events", self._events)
        app.router.add_get("/leaderboard.json", self._leaderboard)
        runner = web.AppRunner(
            app, access_log=None, keepalive_timeout=15.0, max_field_size=4096, shutdown_timeout=2.0,
            handler_cancellation=True,  # a page that goes (or watches another game) frees its slot
        )  # fmt: skip
        await runner.setup()
        self._runner = runner
        assert runner.server is not None
        self.connections = CappedFactory(runner.server, self.max_connections or default_cap())
        try:
            loop = asyncio.get_running_loop()
            server = await loop.create_server(self.connections, self.host, self.port, backlog=64)
        except BaseException:
            await runner.cleanup()
            self._runner = None
            raise
        self._listener = server
        sockets = getattr(server, "sockets", None) or []
        port = sockets[0].getsockname()[1] if sockets else self.port
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{host}:{port}/"
        return self.url

    async def close(self) -> None:
        """End every stream and stop serving."""
        self.hub.close()
        if self._listener is not None:
            self._listener.close()  # no new connection; the runner ends the others
            self._listener = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _headers(self) -> dict[str, str]:
        return {
            "Content-Security-Policy": self._policy,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        }

    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(
            body=self._page, content_type="text/html", charset="utf-8", headers=self._headers()
        )

    async def _leaderboard(self, request: web.Request) -> web.Response:
        if not self.hub.leaderboard_json:
            return web.Response(status=404, text="no leaderboard: this is not a ladder\n")
        return web.Response(
            body=self.hub.leaderboard_json,
            content_type="application/json",
            headers={**self._headers(), "Access-Control-Allow-Origin": "*"},
        )

    async def _events(self, request: web.Request) -> web.StreamResponse:
        try:
            spectator, first = self.hub.subscribe(watched(request.query.get("game")))
        except TooManySpectators:
            return web.Response(
                status=503,
                text=f"too many spectators (at most {self.hub.config.max_spectators})\n",
                headers={"Retry-After": "30"},
            )
        headers = {**self._headers(), "Content-Type": "text/event-stream; charset=utf-8"}
        gzip = Gzip() if accepts_gzip(request.headers.get("Accept-Encoding", "")) else None
        if gzip is not None:
            headers.update({"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})
        response = web.StreamResponse(headers=headers)
        stalled = True
        try:
            async with asyncio.timeout(self.write_timeout):
                await response.prepare(request)
                data = b"retry: 3000\n\n" + first
                await response.write(gzip(data) if gzip else data)
            del first, data
            while True:
                chunk = await spectator.take(PING_SECONDS)
                if chunk is None:
                    stalled = not self.hub.closed  # dropped for falling behind, or shutdown
                    break
                chunk = chunk or b": ping\n\n"
                async with asyncio.timeout(self.write_timeout):
                    await response.write(gzip(chunk) if gzip else chunk)
            if gzip is not None and not stalled:
                async with asyncio.timeout(self.write_timeout):
                    await response.write(gzip.end())
        except (TimeoutError, ConnectionError):
            pass  # a spectator that stopped reading or went away
        finally:
            self.hub.unsubscribe(spectator)
        # Dropped, too slow or gone: close the connection at once, discarding what is buffered
        # for it (waiting for a client that does not read would hold the handler). At shutdown
        # the stream ends cleanly.
        if stalled and request.transport is not None:
            request.transport.abort()
        return response

    async def _snapshot(self, request: web.Request) -> web.Response:
        asked = watched(request.query.get("game"))
        shown = asked if asked in self.hub.matches else self.hub.shown()
        now = time.monotonic()
        cached = self._snapshots.get(shown)
        if cached is not None and now - cached[0] < SNAPSHOT_TTL:
            page = cached[1]
        else:
            page, _ = live_page(snapshot_data(self.hub, shown))
            self.snapshots_built += 1
            self._snapshots = {
                game: built
                for game, built in self._snapshots.items()
                if now - built[0] < SNAPSHOT_TTL and game in self.hub.matches
            }
            self._snapshots[shown] = (now, page)
        return web.Response(
            body=page, content_type="text/html", charset="utf-8", headers=self._headers()
        )
