"""coapcc.league: a Python controller enters a suite; the league equals the command line's."""

import json
import sys
from pathlib import Path

import pytest

import coapcc

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
from default_coap import DefaultCoap  # noqa: E402

SUITE = """seed = 11
reps = 2
[[matrices]]
cc = ["default", "fasor"]
clients = [20]
buffer = [2500, 1410000]
"""


def test_a_python_controller_enters_and_equals_its_builtin(tmp_path, cli):
    league = coapcc.league(tmp_path / "out", controllers=[DefaultCoap], suite=SUITE, entrants=["cocoa"])
    cells = league.cells
    assert set(cells.algorithm) == {"default", "fasor", "cocoa", "py_default"}
    assert set(cells.cell) == {"W1", "W2"}
    for _, c in cells.groupby("cell"):
        best = c.value.min()
        assert c[c.value == best].regret.eq(0).all()
        assert ((c.value / best - 1 - c.regret).abs() < 1e-12).all()
    # the Python entrant's figure is the built-in DefaultCoAP's on its cell's seed, to the bit:
    # per replication the median FCT of the clients, then the mean
    checked = 0
    for js in (tmp_path / "out" / "cells").glob("*.json"):
        cell = json.loads(js.read_text())
        if cell["cell"]["params"]["cc"] != "py_default":
            continue
        s = cell["scenario"]
        r = coapcc.sim(cc="default", clients=20, buffer=s["downlink"]["buffer_bytes"], reps=2, seed=s["seed"])
        medians = r.clients().groupby("rep").fct_s.median()
        code = "W1" if s["downlink"]["buffer_bytes"] == 2500 else "W2"
        got = cells[(cells.cell == code) & (cells.algorithm == "py_default")].value.iloc[0]
        assert got == medians.mean()
        checked += 1
    assert checked == 2
    # the table: four algorithms, smallest worst-case regret first
    t = league.table
    assert list(t.worst_regret) == sorted(t.worst_regret)
    assert len(t) == 4
    # the command line ranks the same directory the same
    table = tmp_path / "out" / "league" / "table.csv"
    first = table.read_text()
    assert first.count("\n") == 1 + 4
    cli("league", "--out", str(tmp_path / "out"), "--score-only")
    assert table.read_text() == first


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="quick and reps"):
        coapcc.league(tmp_path, quick=True, reps=2)
    with pytest.raises(ValueError, match="reps"):
        coapcc.league(tmp_path, reps=0)
    with pytest.raises(TypeError, match="not a subclass of coapcc.Controller"):
        coapcc.league(tmp_path, controllers=[object])


class Unnamed(DefaultCoap):
    """A controller without a `name` of its own: it enters under its class name in snake case."""

    name = None


def test_a_controller_without_a_name_enters_under_its_class_name(tmp_path):
    suite = "seed = 3\nreps = 1\n[[matrices]]\ncc = [\"default\"]\nclients = [5]\n"
    league = coapcc.league(tmp_path / "out", controllers=[Unnamed], suite=suite)
    assert set(league.cells.algorithm) == {"default", "unnamed"}
