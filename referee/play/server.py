"""The page's server (aiohttp): the page, its WebSocket, and the replay once the match is over.

Every address but the static assets needs the seat's page token (``?t=TOKEN``, printed in the
URL): whoever has the URL plays the seat, no one else. The assets hold no card.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from referee.play.bridge import PersonSeat

__all__ = ["STATIC", "play_app"]

STATIC = Path(__file__).parent / "static"
REFUSED_TAB = 4409
"""The WebSocket close code of a second page for a seat that has one."""


def play_app(seat: PersonSeat, token: str, replay: Path | None) -> web.Application:
    """The application serving ``seat`` to the holder of ``token``; ``replay`` is the record
    the replay page shows once the match has ended."""

    def allowed(request: web.Request) -> bool:
        return hmac.compare_digest(request.query.get("t", ""), token)

    async def index(request: web.Request) -> web.StreamResponse:
        if not allowed(request):
            raise web.HTTPForbidden(text="this page needs the address printed by gin-referee play")
        return web.FileResponse(STATIC / "play.html")

    async def socket(request: web.Request) -> web.StreamResponse:
        if not allowed(request):
            raise web.HTTPForbidden(text="wrong or missing token")
        ws = web.WebSocketResponse(heartbeat=20.0)
        await ws.prepare(request)

        async def send(message: dict[str, Any]) -> None:
            await ws.send_str(json.dumps(message))

        if not await seat.attach(send):
            await ws.close(code=REFUSED_TAB, message=b"this seat is open in another tab")
            return ws
        try:
            async for frame in ws:
                if frame.type != WSMsgType.TEXT:
                    continue
                try:
                    answer = json.loads(frame.data)
                except ValueError:
                    answer = None
                why = await seat.choose(answer)
                if why is not None:
                    await send({"type": "refused", "reason": why})
        finally:
            seat.detach(send)
        return ws

    async def replay_page(request: web.Request) -> web.StreamResponse:
        if not allowed(request):
            raise web.HTTPForbidden(text="wrong or missing token")
        if replay is None or not seat.ended.is_set():
            raise web.HTTPNotFound(text="the replay is ready once the match is over")
        from referee.view.replay_html import render_viewer

        try:
            html = await asyncio.to_thread(render_viewer, replay)
        except Exception as err:
            raise web.HTTPNotFound(text=f"no replay: {err}") from None
        return web.Response(text=html, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", index)
    app.router.add_get("/ws", socket)
    app.router.add_get("/replay", replay_page)
    app.router.add_static("/static/", STATIC)
    return app
