"""The tournament constants the command line needs to build its parsers: importable without
the tournament's own modules (the store, the statistics), so that ``gin-referee match`` does
not pay for them at start-up."""

from __future__ import annotations

from typing import Literal

__all__ = ["ELO_MODELS", "LEASE_SECONDS", "REPORT_PAGES", "STORE_ENV", "EloModel"]

LEASE_SECONDS = 60.0
"""Default lease of a claim and life of a heartbeat, seconds."""

REPORT_PAGES = 1000
"""Replay pages ``gin-referee report`` writes by default (``--pages``): a page takes 5-60 ms
and 60-500 KB (a short game to a long one), so 100,000 games would take up to an hour and a
half and 6-50 GB of pages."""

STORE_ENV = "GIN_REFEREE_STORE"
"""Environment variable ``gin-referee worker`` takes its store from when ``--store`` is absent
(bots never see it: they get only the variables their configuration names)."""

EloModel = Literal["logistic", "normalized"]
"""The units of an SPRT's Elo bounds: logistic Elo, or normalized Elo."""

ELO_MODELS: tuple[EloModel, ...] = ("logistic", "normalized")
"""Every :data:`EloModel`, for ``--elo-model``."""
