"""referee.net.router_socket: monitor frames, bind failures, the private ipc directory."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
import zmq

from referee.net.router_socket import monitor_event, open_router, remove_ipc_dir
from referee.net.types import MonitorEvent, TransportConfig, TransportError

from .conftest import TrackingContext


def test_monitor_frames_are_parsed_or_ignored() -> None:
    accepted = struct.pack("=Hi", zmq.EVENT_ACCEPTED, 12)
    assert monitor_event([accepted, b"tcp://127.0.0.1:5555"]) == MonitorEvent(
        "accepted", zmq.EVENT_ACCEPTED, 12, "tcp://127.0.0.1:5555"
    )
    assert monitor_event([struct.pack("=Hi", zmq.EVENT_LISTENING, 3), b"x"]) is None
    assert monitor_event([accepted]) is None  # one frame: not libzmq 4.x's format
    assert monitor_event([b"\x00\x01", b"x"]) is None  # short first frame
    garbled = monitor_event([accepted, b"\xff\xfe"])  # an endpoint that is not UTF-8
    assert garbled is not None and garbled.endpoint == "\ufffd\ufffd"


def test_an_unbindable_endpoint_is_a_transport_error(zmq_context: TrackingContext) -> None:
    first = open_router(zmq_context, TransportConfig())
    try:
        taken = TransportConfig(endpoint=first.endpoint)
        with pytest.raises(TransportError, match=re.escape(f"cannot bind {first.endpoint}")):
            open_router(zmq_context, taken)
    finally:
        first.monitor.close(0)
        first.sock.close(0)


def test_a_too_long_ipc_path_falls_back_to_tcp(
    zmq_context: TrackingContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    monkeypatch.setenv("TMPDIR", str(deep))  # a unix socket path is limited to ~107 bytes
    monkeypatch.setattr("tempfile.tempdir", None)
    bound = open_router(zmq_context, TransportConfig(local_ipc=True))
    try:
        assert bound.local_endpoint == bound.endpoint and bound.ipc_dir is None
        assert list(deep.iterdir()) == []  # the private directory was removed again
    finally:
        bound.monitor.close(0)
        bound.sock.close(0)


def test_remove_ipc_dir_tolerates_a_missing_directory(tmp_path: Path) -> None:
    remove_ipc_dir(str(tmp_path / "gone"))
    assert not (tmp_path / "gone").exists()
