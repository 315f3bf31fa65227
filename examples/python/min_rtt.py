"""A new algorithm in thirty lines of Python, tried on the wired testbed and a mesh against CoCoA.

    python examples/python/min_rtt.py OUT.png

MinRtt arms factor x the smallest unambiguous RTT it has seen, plus a margin (2 s before the
first sample), and doubles it at each timeout. The script runs it and CoCoA on the reference
testbed's bottleneck (50 and 200 continuous clients, 2,500-byte buffers) and on a NITK mesh
preset (the 3x3 GST grid, 600 s), on the same seeds, and draws each client's flow completion
time as boxplots with pandas and matplotlib (docs/python.md walks through it).
Needs matplotlib (``pip install matplotlib``).
"""

import sys

import coapcc


class MinRtt(coapcc.Controller):
    """RTO = factor x the smallest unambiguous RTT seen + margin; 2 s before the first sample."""

    name = "min_rtt_py"

    def __init__(self, factor=2.0, margin=0.5, initial=2.0, max_retransmit=4, rto_max=60.0):
        self.factor, self.margin, self.initial = factor, margin, initial
        self.max_retransmit, self.rto_max = max_retransmit, rto_max
        self.min_rtt = None  # seconds; no sample yet

    def start(self, now, ex, rng):
        if self.min_rtt is None:
            return self.initial
        return min(self.factor * self.min_rtt + self.margin, self.rto_max)

    def on_timeout(self, now, ex, rng):
        if ex.retransmissions >= self.max_retransmit:
            return None  # give the exchange up
        return min(2.0 * ex.rto, self.rto_max)

    def on_complete(self, now, ex, rtt, unambiguous):
        # Karn: an RTT after retransmissions may belong to any of them; learn only from the others
        if unambiguous:
            self.min_rtt = rtt if self.min_rtt is None else min(self.min_rtt, rtt)

    def current_rto(self):
        return self.initial if self.min_rtt is None else self.factor * self.min_rtt + self.margin


def fcts():
    """Every client's FCT, one row per client and replication, for each network and algorithm."""
    import pandas as pd

    frames = []
    algorithms = ["cocoa", MinRtt, (MinRtt, {"margin": 0.1})]
    for label, kwargs in [
        ("bottleneck, 50 clients", dict(clients=50, reps=5)),
        ("bottleneck, 200 clients", dict(clients=200, reps=3)),
        ("GST 3x3 mesh", dict(preset="nitk-gst-cooja", duration=600.0, reps=10)),
    ]:
        r = coapcc.sim(cc=algorithms, **kwargs)
        c = r.clients()
        c["network"] = label
        # the algorithm's name, and the margin where the call set it (the scenario's own
        # parameters, such as the testbed's max_retransmit = 20, are in cc_params too)
        margin = c.cc_params.str.extract(r"(margin=[0-9.]+)", expand=False)
        c["algorithm"] = c.cc.where(margin.isna(), c.cc + " (" + margin + ")")
        frames.append(c[["network", "algorithm", "fct_s"]])
    return pd.concat(frames, ignore_index=True)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        import matplotlib
    except ImportError:
        sys.exit("min_rtt.py needs matplotlib: pip install matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = fcts()
    # the quantiles describe the clients that finished; how many did not is said beside them
    stats = df.groupby(["network", "algorithm"], sort=False).fct_s
    table = stats.describe(percentiles=[0.1, 0.5, 0.9]).round(1)
    table.insert(0, "no FCT", stats.apply(lambda f: int(f.isna().sum())))
    print(table.to_string())
    networks = list(dict.fromkeys(df.network))
    fig, axes = plt.subplots(1, len(networks), figsize=(4.2 * len(networks), 4.2))
    for ax, net in zip(axes, networks):
        every = df[df.network == net]
        d = every.dropna(subset=["fct_s"])
        names = list(dict.fromkeys(every.algorithm))
        ax.boxplot([d[d.algorithm == a].fct_s for a in names], whis=(10, 90), showfliers=False)
        # each box says of how many clients it is: those without an FCT are not in it
        counts = [f"{(d.algorithm == a).sum()} of {(every.algorithm == a).sum()}" for a in names]
        ax.set_xticks(range(1, len(names) + 1), [n.replace(" ", "\n") + "\n" + k for n, k in zip(names, counts)],
                      fontsize=8)
        ax.set_title(net, fontsize=10)
        ax.set_ylabel("flow completion time (s)")
    fig.suptitle("MinRtt (Python) against CoCoA: each client's FCT (box: quartiles, whiskers: p10-p90)", fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)
    print(f"wrote {sys.argv[1]}")


if __name__ == "__main__":
    main()
