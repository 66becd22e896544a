"""Many matches: the schedule of duplicate deals, workers that claim games from the store and
play them, bot processes kept between a pairing's games, ratings and reports.

``runner`` (schedule and workers), ``bots`` (kept processes), ``config`` (the TOML file),
``store`` (SQLite, claim with a lease), ``stats`` (Elo, LOS, SPRT; pure), ``report`` and
``progress`` (what the user reads).
"""
