"""The tree stays formatted and lint-clean (ruff, configured in pyproject.toml), so the test command
is also the style check: fix with `.venv/bin/ruff format . && .venv/bin/ruff check --fix .`."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


@pytest.mark.parametrize("command", [["format", "--check"], ["check"]], ids=["format", "lint"])
def test_ruff_passes(command):
    result = subprocess.run([str(RUFF), *command, "."], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
