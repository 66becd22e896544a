"""One person per seat: the page's token, a second tab refused, a closed tab's grace to return,
and a seat left for good is a lost bot under the match's fault policy."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest

from tests.play.table import record_lines, table

pytestmark = pytest.mark.timeout(60)


def ws_of(url: str) -> str:
    return url.replace("http://", "ws://").replace("/?t=", "/ws?t=")


async def first(ws: aiohttp.ClientWebSocketResponse, kind: str) -> dict[str, object]:
    async for frame in ws:
        message = json.loads(frame.data)
        if message["type"] == kind:
            return message  # type: ignore[no-any-return]
    raise AssertionError(f"no {kind}")


async def two_tabs_then_away(url: str) -> tuple[int, int, str, int | None]:
    async with aiohttp.ClientSession() as session:
        base = url.split("?", maxsplit=1)[0]
        async with session.get(base + "?t=wrong") as wrong:
            forbidden = wrong.status
        async with session.ws_connect(ws_of(url)) as tab:
            request = await first(tab, "request")
            async with session.ws_connect(ws_of(url)) as second:
                await second.receive()
                refused = second.close_code
        # The first tab closed; a new one within the grace gets the history and plays on.
        async with session.ws_connect(ws_of(url)) as back:
            again = await first(back, "request")
            assert again["request_id"] == request["request_id"]
        # Closed for good: after the grace the seat is lost, a fault under the policy.
        return forbidden, refused or 0, str(again["decision"]), None


def test_one_person_per_seat_and_a_grace_to_return(tmp_path: Path) -> None:
    with table(tmp_path, "--seed", "3", "--grace", "1", hands=1) as (url, proc):
        forbidden, refused, decision, _ = asyncio.run(two_tabs_then_away(url))
        assert forbidden == 403
        assert refused == 4409
        assert decision in ("first_upcard", "draw", "discard")
        assert proc.stdout.readline().startswith("match over:")  # it ended without the tab
    faults = [line for line in record_lines(tmp_path) if line["type"] == "fault"]
    end = record_lines(tmp_path)[-1]
    assert faults and faults[0]["seat"] == 0 and end["type"] == "match_end"


def test_bad_input_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from referee.cli.main import main
    from tests.e2e.helpers import RANDOM

    assert main(["play", "remote:you", "--out", str(tmp_path)]) == 2
    assert "remote:you: the person's seat is called you" in capsys.readouterr().err
    assert main(["play", RANDOM, "--bind", "nowhere", "--out", str(tmp_path)]) == 2
    assert "--bind nowhere: expected tcp://HOST:PORT" in capsys.readouterr().err
    assert main(["play", RANDOM, "--grace", "-1", "--out", str(tmp_path)]) == 2
    assert "--grace and --linger must not be negative" in capsys.readouterr().err


def test_a_wildcard_bind_names_the_hosts_own_addresses() -> None:
    """Bound to 0.0.0.0, the printed 127.0.0.1 is no address for another machine: ``play`` also
    prints the page on each of this host's other addresses (with the same port and token)."""
    import socket

    from referee.cli.addresses import host_addresses
    from referee.cli.play import other_urls

    url = "http://127.0.0.1:8765/?t=tok"
    assert other_urls(url, "127.0.0.1") == []
    expected = [a for a in host_addresses(socket.AF_INET) if not a.startswith("127.")]
    assert other_urls(url, "0.0.0.0") == [f"http://{a}:8765/?t=tok" for a in expected]
