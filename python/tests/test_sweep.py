"""coapcc.sweep: locally and on a Dask cluster, the same results directory as `coapcc sweep`."""

from pathlib import Path

import pandas as pd
import pytest

import coapcc
from conftest import load_json, without_wall_clock

PLAN = """seed = 7
reps = 2
[matrix]
cc = ["default", "fasor"]
clients = [3, 6]
buffer = [2500, 1410000]
"""


def cells(directory: Path):
    """Every finished cell's JSON, less the wall clock, by file name."""
    return {p.name: without_wall_clock(load_json(p)) for p in sorted((directory / "cells").glob("*.json"))}


def tidy(directory: Path):
    return pd.read_csv(directory / "clients.csv").sort_values(["cell", "rep", "client"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def reference(cli, tmp_path_factory):
    """The plan swept by the command line, unsharded."""
    d = tmp_path_factory.mktemp("cli")
    (d / "plan.toml").write_text(PLAN)
    cli("sweep", str(d / "plan.toml"), "--out", str(d / "out"))
    return d / "out"


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_a_local_sweep_equals_the_command_line(reference, tmp_path):
    df = coapcc.sweep(PLAN, tmp_path / "out")
    assert len(cells(reference)) == 8
    assert cells(tmp_path / "out") == cells(reference)
    assert df.sort_values(["cell", "rep", "client"]).reset_index(drop=True).equals(tidy(reference))


def test_a_dask_sweep_equals_the_unsharded_command_line_cell_by_cell(reference, dask_client, tmp_path):
    out = tmp_path / "out"
    df = coapcc.sweep(PLAN, out, client=dask_client)
    assert cells(out) == cells(reference)
    assert tidy(out).equals(tidy(reference))
    assert len(df) == 2 * 2 * 2 * (3 + 6)  # reps × algorithms × buffers × clients
    assert load_json(out / "plan.json") == load_json(reference / "plan.json")
    assert load_json(out / "run-all.json")["cells_run"] == 8


def test_a_worker_retired_mid_sweep_loses_nothing_and_a_rerun_completes(reference, dask_client, tmp_path):
    out = tmp_path / "out"
    seen = {}

    def retire_after_the_first(cell_id):
        if not seen:
            # what has finished so far, then a worker goes
            seen.update({p.name: p.read_bytes() for p in (out / "cells").glob("*")})
            workers = list(dask_client.scheduler_info()["workers"])
            dask_client.retire_workers(workers=workers[:1], close_workers=True)

    try:
        coapcc.sweep(PLAN, out, client=dask_client, on_cell=retire_after_the_first)
    except Exception:
        pass  # tasks on the retired worker may be lost: the re-run below finishes them
    assert seen, "at least one cell finished before the worker left"
    for name, data in seen.items():
        assert (out / "cells" / name).read_bytes() == data, f"{name} survived unchanged"
    # whatever is missing, the re-run completes (on the remaining worker)
    df = coapcc.sweep(PLAN, out, client=dask_client)
    assert cells(out) == cells(reference)
    assert len(df) == len(tidy(reference))


def test_another_plan_into_the_same_directory_is_refused(tmp_path):
    coapcc.sweep(PLAN, tmp_path / "out")
    with pytest.raises(ValueError, match="holds results of another plan"):
        coapcc.sweep(PLAN.replace("seed = 7", "seed = 8"), tmp_path / "out")


PY_PLAN = """seed = 3
reps = 2
[matrix]
cc = ["py_default", "py_default:ack_timeout=1"]
clients = [3, 5]
"""


def test_a_plan_runs_python_controllers_locally_and_on_dask_alike(dask_client, tmp_path):
    import sys

    import cloudpickle

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
    import default_coap

    # the workers cannot import the example's module: Dask ships the class by value
    cloudpickle.register_pickle_by_value(default_coap)
    local = coapcc.sweep(PY_PLAN, tmp_path / "local", controllers=[default_coap.DefaultCoap])
    dask = coapcc.sweep(PY_PLAN, tmp_path / "dask", client=dask_client, controllers=[default_coap.DefaultCoap])
    assert len(cells(tmp_path / "local")) == 4
    assert cells(tmp_path / "dask") == cells(tmp_path / "local")
    key = ["cell", "rep", "client"]
    assert dask.sort_values(key).reset_index(drop=True).equals(local.sort_values(key).reset_index(drop=True))
    assert set(local.cc) == {"py_default"}


def test_a_client_that_is_no_dask_client_and_a_python_class_without_controllers_are_named(tmp_path):
    with pytest.raises(ValueError, match="client must be a dask.distributed.Client"):
        coapcc.sweep(PY_PLAN, tmp_path / "a", client=42)
    plan = '[matrix]\ncc = ["never_registered_py"]\nclients = [2]\n'
    with pytest.raises(ValueError, match=r"unknown algorithm 'never_registered_py'.*controllers=\[\.\.\.\]"):
        coapcc.sweep(plan, tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


class Breaks(coapcc.Controller):
    """Fails at its third exchange."""

    def __init__(self):
        self.n = 0

    def start(self, now, ex, rng):
        self.n += 1
        if self.n == 3:
            raise KeyError("three")
        return 1.0


def test_a_failing_controller_stops_a_sweep_and_keeps_none_of_its_cells(tmp_path):
    plan = 'seed = 1\n[matrix]\ncc = ["breaks"]\nclients = [2, 3]\n'
    with pytest.raises(coapcc.ControllerError, match="Breaks.start at t = ") as e:
        coapcc.sweep(plan, tmp_path / "out", controllers=[Breaks])
    assert isinstance(e.value.__cause__, KeyError)
    assert list((tmp_path / "out" / "cells").glob("*.json")) == []
