"""The example script runs headless: a sweep, then FCT boxplots in a PNG."""

import subprocess
import sys

from conftest import ROOT


def run_example(tmp_path, plan_text: str) -> str:
    """Runs examples/plot_fct.py on a plan; its stdout (the PNG must be there)."""
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text)
    png = tmp_path / "fct.png"
    r = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "plot_fct.py"), str(plan), str(tmp_path / "out"), str(png)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    return r.stdout


def test_the_example_plots_fct_boxplots(tmp_path):
    out = run_example(tmp_path, 'seed = 2\nreps = 2\n[matrix]\ncc = ["default", "cocoa"]\nclients = [4]\nbuffer = [2500, 1410000]\n')
    # 2 algorithms × 2 buffers = 4 cells, each 2 replications × 4 clients
    assert "32 clients of 4 cells; 4 boxes in 2 panel(s)" in out


def test_the_example_never_pools_cells_that_differ_in_a_parameter(tmp_path):
    # two variants of one algorithm (they differ in cc_params only) × two client counts: four
    # boxes in the one panel, not two
    out = run_example(tmp_path, 'seed = 2\n[matrix]\ncc = ["fasor", "fasor:dither=false"]\nclients = [3, 4]\n')
    assert "14 clients of 4 cells; 4 boxes in 1 panel(s)" in out


def test_the_examples_labels_are_the_plans_values():
    # a column with gaps is float in pandas: 100.0 was drawn as a label, cut to "-100.0"
    import importlib.util

    spec = importlib.util.spec_from_file_location("plot_fct", ROOT / "examples" / "plot_fct.py")
    plot_fct = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot_fct)
    assert plot_fct._shown("clients", 100.0) == "clients=100"
    assert plot_fct._shown("downlink.delay_ms", 0.5) == "downlink.delay_ms=0.5"
    assert plot_fct._shown("cc", "fasor") == "fasor"
