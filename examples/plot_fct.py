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
import matplotlib.pyplot as plt  # noqa: E402

import coapcc  # noqa: E402


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
    fig, axes = plt.subplots(1, len(buffers), figsize=(5 * len(buffers), 4), squeeze=False, sharey=True)
    boxes = 0
    for ax, b in zip(axes[0], buffers):
        part = df if b is None else df[df.buffer == b]
        labels, data = [], []
        for key, g in part.groupby(varying, dropna=False):
            values = key if isinstance(key, tuple) else (key,)
            labels.append(" ".join(f"{k}={v}" if k != "cc" else str(v) for k, v in zip(varying, values)))
            data.append(g.fct_s.dropna())
        ax.boxplot(data, whis=(10, 90), showfliers=False)
        boxes += len(data)
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=45, ha="right")
        ax.set_title("all buffers" if b is None else f"buffer {b} B")
        ax.set_ylabel("flow completion time (s)")
    fig.tight_layout()
    fig.savefig(a.png, dpi=100)
    print(f"{len(df)} clients of {df.cell.nunique()} cells; {boxes} boxes in {len(buffers)} panel(s); {a.png}")


if __name__ == "__main__":
    main()
