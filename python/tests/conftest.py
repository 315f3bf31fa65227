"""Shared helpers: the `coapcc` command line (the same results must come from both)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _binary() -> str:
    explicit = os.environ.get("COAPCC_BIN")
    if explicit:
        return explicit
    path = ROOT / "target" / "debug" / "coapcc"
    if not path.exists():
        subprocess.run(["cargo", "build", "-q", "-p", "coapcc"], cwd=ROOT, check=True, timeout=1800)
    return str(path)


@pytest.fixture(scope="session")
def cli():
    """Runs `coapcc ARGS...` and returns its stdout; fails the test on a non-zero exit."""
    binary = _binary()

    def run(*args: str) -> str:
        r = subprocess.run([binary, *args], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        return r.stdout

    return run


def without_wall_clock(v):
    """A results object less its wall-clock fields (the only ones that differ between runs)."""
    if isinstance(v, dict):
        return {k: without_wall_clock(x) for k, x in v.items() if k not in ("wall_s", "events_per_s")}
    if isinstance(v, list):
        return [without_wall_clock(x) for x in v]
    return v


def load_json(path: Path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
