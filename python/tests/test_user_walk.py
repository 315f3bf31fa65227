"""What a new user does with the results: the documented pandas idiom keeps every row, and runs
that are cut short or deliver almost nothing say so."""

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
    plan.write_text('seed = 1\n[matrix]\ncc = ["default", "tcp"]\nclients = [2]\n[base]\nexchanges = 5\n')
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
