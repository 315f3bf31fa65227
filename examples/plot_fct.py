"""Flow completion times of a sweep as boxplots, from Python.

    python examples/plot_fct.py PLAN RESULTS_DIR OUT.png [--dask N]

Runs the plan with coapcc.sweep (finished cells are skipped, so a second call only plots; with
``--dask N``, on a local Dask cluster of N workers), loads the tidy per-client table with pandas,
and draws one boxplot per buffer size: the FCT of every client of every replication, one box per
combination of the other parameters the plan varies (algorithm, its parameters, clients, ...).
Needs matplotlib (``pip install matplotlib``).
In Jupyter, run the same lines in cells and drop ``matplotlib.use("Agg")``.
"""

import argparse
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_fct.py needs matplotlib: pip install matplotlib (or pip install './python[examples]')")

matplotlib.use("Agg")  # no display needed (CI, a cluster's login node)
import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

import coapcc  # noqa: E402


def _shown(key: str, value) -> str:
    """A parameter's value as its plan wrote it: 100, not the 100.0 a column with gaps holds."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value) if key == "cc" else f"{key}={value}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plan")
    ap.add_argument("results")
    ap.add_argument("png")
    ap.add_argument("--dask", type=int, metavar="N", help="run the cells on a local Dask cluster of N workers")
    a = ap.parse_args()

    client = None
    if a.dask:
        from dask.distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=a.dask, threads_per_worker=1, dashboard_address=None))
    df = coapcc.sweep(a.plan, a.results, client=client)
    if client is not None:
        client.close()

    # the parameter columns: every column before `rep` (cc, cc_params, then each matrix key);
    # one panel per buffer (a cell's both directions), one box per combination of the others
    # that the plan varies, so that cells differing in any parameter are never pooled
    params = list(df.columns[: df.columns.get_loc("rep")])
    varying = [c for c in params if c != "buffer" and df[c].nunique(dropna=False) > 1] or ["cc"]
    buffers = sorted(df.buffer.unique()) if "buffer" in df else [None]
    groups = [(b, list((df if b is None else df[df.buffer == b]).groupby(varying, dropna=False))) for b in buffers]
    rows = max(len(g) for _, g in groups)
    # horizontal boxes: each label whole on the y axis, however long; one colour per algorithm
    algos = sorted(df.cc.unique())
    colour = {a: plt.get_cmap("tab10")(i % 10) for i, a in enumerate(algos)}
    fig, axes = plt.subplots(1, len(buffers), figsize=(6 * len(buffers), 1.5 + 0.4 * rows), squeeze=False)
    boxes = 0
    for ax, (b, grouped) in zip(axes[0], groups):
        labels, data, ccs = [], [], []
        for key, g in grouped:
            values = key if isinstance(key, tuple) else (key,)
            labels.append(" ".join(_shown(k, v) for k, v in zip(varying, values)))
            data.append(g.fct_s.dropna())
            ccs.append(g.cc.iloc[0])
        art = ax.boxplot(data, vert=False, whis=(10, 90), showfliers=False, patch_artist=True)
        for patch, cc in zip(art["boxes"], ccs):
            patch.set_facecolor(colour[cc])
            patch.set_alpha(0.7)
        for line in art["medians"]:
            line.set_color("black")
        boxes += len(data)
        ax.set_yticks(range(1, len(labels) + 1), labels)
        ax.invert_yaxis()  # the first combination on top
        ax.set_title("all buffers" if b is None else f"buffer {b} B")
        ax.set_xlabel("flow completion time (s)")
        ax.grid(axis="x", alpha=0.3)
    handles = [matplotlib.patches.Patch(facecolor=colour[a], alpha=0.7, label=a) for a in algos]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(algos), 5), frameon=False)
    fig.suptitle("box: quartiles, line: median, whiskers: 10th and 90th percentiles", fontsize="small")
    fig.tight_layout(rect=(0, 0.06 + 0.04 * ((len(algos) - 1) // 5), 1, 1))
    fig.savefig(a.png, dpi=100)
    print(f"{len(df)} clients of {df.cell.nunique()} cells; {boxes} boxes in {len(buffers)} panel(s); {a.png}")


if __name__ == "__main__":
    main()
