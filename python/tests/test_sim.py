"""coapcc.sim gives what `coapcc sim` gives, for the same scenario and seed."""

import json
import subprocess
from pathlib import Path
import warnings

import pytest

import coapcc
from conftest import without_wall_clock


def same_tables(r, directory, names):
    """The in-memory frames are what pandas reads from the command line's CSV files."""
    import pandas as pd

    for name, method in names:
        from_files = pd.read_csv(directory / name, dtype={"cc": str, "cc_params": str})
        pd.testing.assert_frame_equal(getattr(r, method)(), from_files, check_exact=True)


def test_sim_equals_the_command_line(cli, tmp_path):
    r = coapcc.sim(clients=3, cc=["default", "fasor"], reps=2, seed=5, out=tmp_path / "py")
    args = ["--clients", "3", "--cc", "default", "--cc", "fasor", "--reps", "2", "--seed", "5"]
    expected = json.loads(cli("sim", "--json", "--out", str(tmp_path / "cli"), *args))
    assert without_wall_clock(r.summary) == without_wall_clock(expected)
    # the tables built in memory are the files' tables, value for value
    same_tables(r, tmp_path / "cli", [("clients.csv", "clients"), ("exchanges.csv", "exchanges"), ("rto.csv", "rtos")])
    # and out= wrote the command line's files
    for name in ("clients.csv", "exchanges.csv", "rto.csv"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert r.directory == tmp_path / "py"
    # the tables have the CSV files' columns, one row per client / exchange and replication
    clients = r.clients()
    assert list(clients.columns[:4]) == ["cc", "cc_params", "rep", "client"]
    assert len(clients) == 2 * 2 * 3
    assert set(clients.cc) == {"default", "fasor"} and set(clients.cc_params) == {"max_retransmit=20"}
    assert len(r.exchanges()) == 2 * 2 * 3 * 50
    assert clients.groupby("cc").fct_s.median().loc["fasor"] == pytest.approx(
        r.summary["runs"][1]["fct_s"]["p50"], rel=1e-9
    )


def test_pcap_is_the_command_lines_capture(cli, tmp_path):
    coapcc.sim(clients=2, cc="cocoa", seed=3, pcap=tmp_path / "py.pcap")
    cli("sim", "--clients", "2", "--cc", "cocoa", "--seed", "3", "--pcap", str(tmp_path / "cli.pcap"))
    py, line = (tmp_path / "py.pcap").read_bytes(), (tmp_path / "cli.pcap").read_bytes()
    # a nanosecond pcap of raw IP: 100 requests of 38 bytes and 100 responses of 93, each after a
    # 16-byte record header
    assert py[:4] == bytes.fromhex("4d3cb2a1") and py[20] == 101
    assert len(py) == 24 + 200 * 16 + 100 * 38 + 100 * 93
    assert py == line


def test_a_mesh_preset_equals_the_command_line(cli, tmp_path):
    # 90 s: the preset's RPL forms its DODAG first, the clients' first requests wait for routes
    r = coapcc.sim(preset="nitk-gst-cooja", cc="gst", duration=90.0, reps=1, seed=3)
    args = ["--preset", "nitk-gst-cooja", "--cc", "gst", "--duration", "90", "--reps", "1", "--seed", "3"]
    expected = json.loads(cli("sim", "--json", "--out", str(tmp_path), *args))
    assert without_wall_clock(r.summary) == without_wall_clock(expected)
    assert len(r.exchanges()) > 0
    same_tables(r, tmp_path, [("clients.csv", "clients"), ("exchanges.csv", "exchanges"), ("rto.csv", "rtos")])
    # the motes: the same, positions at full precision (the file rounds them to 4 decimals)
    import pandas as pd

    nodes, from_file = r.nodes(), pd.read_csv(tmp_path / "nodes.csv", dtype={"cc": str, "cc_params": str})
    pd.testing.assert_frame_equal(nodes.drop(columns=["x", "y"]), from_file.drop(columns=["x", "y"]), check_exact=True)
    assert ((nodes[["x", "y"]] - from_file[["x", "y"]]).abs() <= 0.5e-4).all().all()
    with pytest.raises(ValueError, match="no nodes table"):
        coapcc.sim(clients=1).nodes()


def test_keyword_arguments_are_scenario_keys(cli, tmp_path):
    r = coapcc.sim(clients=2, buffer="infinite", downlink={"delay_ms": 100.0}, workload="random", seed=9)
    s = r.summary["scenario"]
    assert s["downlink"]["delay_ms"] == 100.0 and s["downlink"]["rate_bps"] == 30000
    assert s["uplink"]["buffer_bytes"] == s["downlink"]["buffer_bytes"] == 1410000
    assert s["workload"] == "random"
    # the same as a scenario file with those keys
    f = tmp_path / "s.toml"
    f.write_text('clients = 2\nworkload = "random"\nseed = 9\n[downlink]\ndelay_ms = 100.0\n')
    expected = json.loads(cli("sim", "--json", "--buffer", "infinite", "--scenario", str(f)))
    assert without_wall_clock(r.summary) == without_wall_clock(expected)


def test_errors_are_value_errors_with_the_command_lines_messages(tmp_path):
    with pytest.raises(ValueError, match="unknown algorithm 'fasr'"):
        coapcc.sim(cc="fasr")
    with pytest.raises(ValueError, match="unknown field `clientz`"):
        coapcc.sim(clientz=3)
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        coapcc.sim(preset="nope")
    with pytest.raises(ValueError, match="buffer must be"):
        coapcc.sim(buffer=-1)
    # an empty list of algorithms had silently run the scenario's
    for empty in ([], (), ""):
        with pytest.raises(ValueError, match="names no algorithm"):
            coapcc.sim(cc=empty)
    # a failed run writes nothing
    assert list(tmp_path.iterdir()) == []


def test_a_truncated_run_warns_and_still_reports():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = coapcc.sim(clients=2, max_time_s=5.0)
    assert r.incomplete and "cut at max_time_s = 5 s" in r.incomplete
    assert any(issubclass(x.category, coapcc.IncompleteWarning) for x in w)
    assert r.summary["truncated_reps"] == 1 and r.summary["clients_without_fct"] == 2


def test_algorithms_and_presets_list_what_the_command_line_lists(cli):
    # (classes other tests registered in this process are listed too, after the built-ins)
    listed = json.loads(cli("algorithms", "--json"))
    names = {a["name"] for a in listed}
    assert [a for a in coapcc.algorithms() if a["name"] in names] == listed
    listed = [line.split()[0] for line in cli("presets").splitlines() if line.strip()]
    assert list(coapcc.presets()) == listed


def test_the_package_installs_the_command_line(cli):
    # the console script next to the interpreter: the binary's commands, output and statuses
    import shutil
    import sys

    script = Path(sys.executable).with_name("coapcc")
    assert script.exists() or shutil.which("coapcc"), "the package's coapcc command"
    command = str(script) if script.exists() else shutil.which("coapcc")
    r = subprocess.run([command, "presets"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == cli("presets"), r.stderr
    r = subprocess.run([command, "sim", "--clients", "2", "--set", "exchanges=3", "--json", "-q"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert without_wall_clock(json.loads(r.stdout)) == without_wall_clock(
        json.loads(cli("sim", "--clients", "2", "--set", "exchanges=3", "--json", "-q")))
    # a usage error is status 2, as the binary's
    r = subprocess.run([command, "sim", "--clients", "2000000"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--clients: at most 1000000" in r.stderr
