"""Running the ``gin-referee`` program as a real process, as a user does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["REPO", "gin"]

REPO = Path(__file__).resolve().parent.parent


def gin(
    *args: str, cwd: Path | None = None, timeout: float = 90.0
) -> subprocess.CompletedProcess[str]:
    """``gin-referee ARGS...`` (``python -m referee``), its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "referee", *args],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        timeout=timeout,
        check=False,
    )
