"""``python -m referee`` runs the command line."""

from __future__ import annotations

from referee.cli.main import run

if __name__ == "__main__":
    run()
