"""Tests for referee.net.transport and referee.net.process."""
