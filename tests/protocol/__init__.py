"""Tests of the wire protocol package, the Python bot SDK and docs/protocol.md."""
