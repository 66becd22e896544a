"""Tests for referee.transport and referee.process."""
