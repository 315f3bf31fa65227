"""What a new user does with the results: the documented pandas idiom keeps every row, and runs
that are cut short or deliver almost nothing say so."""

import os
import signal
import threading
import time
import warnings

import pandas as pd
import pytest

import coapcc


def test_every_row_groups_under_the_documented_idiom(tmp_path):
    # tcp runs with its defaults: its cc_params is a word, not an empty field read as NaN
    r = coapcc.sim(clients=2, exchanges=5, cc=["default", "tcp"])
    clients = r.clients()
    sizes = clients.groupby(["cc", "cc_params"]).fct_s.size()
    assert sizes.sum() == len(clients) == 2 * 2
    assert ("tcp", "defaults") in sizes.index
    # a sweep's table, through coapcc.sweep and through pandas directly
    plan = tmp_path / "plan.toml"
    plan.write_text('seed = 1\n[matrix]\nstack = ["default", "tcp"]\nclients = [2]\n[base]\nexchanges = 5\n')
    df = coapcc.sweep(plan, tmp_path / "out", threads=1)
    assert df.groupby(["cc", "cc_params"]).size().sum() == len(df) == 2 * 2
    raw = pd.read_csv(tmp_path / "out" / "clients.csv")
    assert raw.groupby(["cc", "cc_params"]).size().sum() == len(raw) == 2 * 2


def test_a_sweep_of_cut_cells_warns_as_the_command_line_exits_3(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text('seed = 1\n[base]\nmax_time_s = 5.0\n[matrix]\nclients = [4]\n')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        coapcc.sweep(plan, tmp_path / "out", threads=1)
    kinds = {x.category for x in w}
    assert coapcc.IncompleteWarning in kinds and coapcc.ResultWarning in kinds
    assert any("cut at max_time_s = 5.0 s" in str(x.message) for x in w)


def test_a_network_that_delivers_almost_nothing_warns():
    with pytest.warns(coapcc.ResultWarning, match="delivered almost nothing"):
        r = coapcc.sim(
            clients=2, exchanges=20, errors="custom", uplink={"loss": {"model": "bernoulli", "p": 0.9999}}
        )
    assert any("failed_exchanges" in w for w in r.summary["warnings"])


def _sigint_after(seconds: float) -> threading.Timer:
    """Ctrl-C, as a terminal sends it, to this process after ``seconds``."""
    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_ctrl_c_stops_a_sim_within_a_second_and_keeps_what_finished(tmp_path):
    out = tmp_path / "o"
    timer = _sigint_after(1.0)
    start = time.monotonic()
    # 200,000 replications of 10 clients: minutes. The run stops within a second of the signal,
    # then writes the tables of the replications that finished (as long again, on a busy
    # machine longer): 10 s bound the whole
    with pytest.raises(KeyboardInterrupt, match="the replications that finished are in"):
        coapcc.sim(clients=10, reps=200_000, threads=1, out=out)
    timer.join()
    assert time.monotonic() - start < 1.0 + 10.0, "stopped soon after the signal"
    clients = pd.read_csv(out / "clients.csv")
    assert 0 < len(clients) < 10 * 200_000 and len(clients) % 10 == 0


def test_ctrl_c_stops_a_sweep_within_a_second_and_keeps_the_finished_cells(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text("seed = 1\nreps = 300\n[matrix]\nclients = [%s]\n" % ", ".join(str(c) for c in range(1, 401)))
    timer = _sigint_after(1.0)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt, match="the cells that finished are kept"):
        coapcc.sweep(plan, tmp_path / "out", threads=1)
    timer.join()
    assert time.monotonic() - start < 1.0 + 10.0
    kept = sorted((tmp_path / "out" / "cells").glob("*.json"))
    assert 0 < len(kept) < 400
    assert len(pd.read_csv(tmp_path / "out" / "clients.csv").cell.unique()) == len(kept)


def test_a_result_without_out_is_in_memory_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = coapcc.sim(clients=2, exchanges=3)
    assert r.directory is None and len(r.clients()) == 2 and len(r.exchanges()) == 6
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_bad_arguments_are_value_errors(tmp_path):
    for kwargs, message in [
        ({"seed": -1}, "seed must be a whole number"),
        ({"reps": 0}, "reps must be a whole number ≥ 1"),
        ({"cc": 123}, "cc must be an algorithm's name"),
        ({"downlink": {"delay_ms": float("nan")}}, "downlink.delay_ms: must be a finite number"),
        ({"duration": float("inf")}, "duration must be a positive number"),
        ({"out": "/proc/coapcc-cannot-be-here"}, "cannot create the output directory"),
    ]:
        with pytest.raises(ValueError, match=message):
            coapcc.sim(clients=2, **kwargs)
    with pytest.raises(ValueError, match="threads must be a whole number"):
        coapcc.sweep("seed = 1\n", tmp_path / "s", threads=0)


def test_version_and_a_mesh_runs_motes(cli):
    assert coapcc.__version__ == cli("--version").split()[1]
    r = coapcc.sim(preset="nitk-gst-cooja", cc="default", duration=10.0, reps=2)
    nodes = r.nodes()
    assert len(nodes) == 2 * 9 and set(nodes.role) == {"border_router", "server", "client"}
    assert len(r.clients()) == 2 * 7
