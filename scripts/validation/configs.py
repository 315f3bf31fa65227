"""Default CoAP on Cooja configurations of our own (Z1 motes in MSPSim running the author's
binaries, runs F-, G-, H- of validation/cooja): the 3×3 grid at intermediate link qualities, and
exact 10 m lattices of 4×4 and 5×5 motes. The model runs each as validate-cooja runs the
dataset's first runs (the `nitk-gst-cooja` stack, RPL forming its DODAG from boot), `REPS`
replications per Cooja seed; both sides count the exchanges whose first request went in Cooja's
steady window of each run, means over Cooja's seeds.
"""

import statistics
from collections import defaultdict

REPS = 4


def group(run):
    """(group letter and layout, TX, RX) of a run id such as F-grid3x3-tx0.90-rx0.90-s2."""
    parts = run["run_id"].split("-")
    return ("-".join(parts[:2]), run["success_ratio_tx"], run["success_ratio_rx"])


def measure(vc, coapcc, runs, tmp, log=print):
    """vc: validate-cooja's namespace (its scenario and model functions)."""
    out = {}
    by = defaultdict(list)
    for r in runs:
        by[group(r)].append(r)
    for key, rs in sorted(by.items()):
        model_rates, model_retx, model_done, parents = [], 0, 0, []
        for r in rs:
            for k in range(REPS):
                m = vc["model"](coapcc, dict(r, cooja_random_seed=r["cooja_random_seed"] + 1000 * k), tmp, startup=True)
                model_rates.append(m["completed_per_s"])
                model_retx += m["retx"]
                model_done += m["completed"]
                parents.append(tuple(m["server_parents"]))
        c_rates = [r["steady_completed_per_s"] for r in rs]
        c_retx = sum(r["steady_retransmissions"] for r in rs) / max(1, sum(r["steady_completed"] for r in rs))
        c_parents = [tuple(r["rpl_parent_end"][str(s)]["parent"] for s in r["server_ids"]) for r in rs]
        out[key] = {
            "seeds": len(rs),
            # retransmissions per completed exchange over all of them (not a mean of ratios)
            "model": (statistics.mean(model_rates), model_retx / max(1, model_done)),
            "cooja": (statistics.mean(c_rates), c_retx),
            "cooja_range": (min(c_rates), max(c_rates)),
            "model_parents": parents,
            "cooja_parents": c_parents,
        }
        log("%s TX %.2f RX %.2f: completed/s %.2f / %.2f" % (key[0], key[1], key[2], out[key]["model"][0], out[key]["cooja"][0]))
    return out


def describe(key):
    name, tx, rx = key
    layout = {"F-grid3x3": "3×3 grid", "G-lattice4x4": "4×4 lattice, 10 m", "H-lattice5x5": "5×5 lattice, 10 m"}.get(name, name)
    return "%s, TX %.2g / RX %.2g" % (layout, tx, rx)


def section(table):
    page = [HEAD, "| configuration (runs) | Cooja seeds | completed/s, model | completed/s, Cooja (seeds' range) | diff | retx per completed, model | retx per completed, Cooja | server's parent, model (share of replications) | server's parent, Cooja (per seed) |",
            "|---|---|---|---|---|---|---|---|---|"]
    for key, v in sorted(table.items()):
        mp = v["model_parents"]
        common = max(set(mp), key=mp.count)
        page.append("| %s (%s) | %d | %.2f | %.2f (%.2f–%.2f) | %+.0f %% | %.3f | %.3f | %s (%d of %d) | %s |" % (
            describe(key), key[0], v["seeds"], v["model"][0], v["cooja"][0], v["cooja_range"][0], v["cooja_range"][1],
            100 * (v["model"][0] / v["cooja"][0] - 1), v["model"][1], v["cooja"][1], ", ".join(str(p) for p in common),
            mp.count(common), len(mp), "; ".join(", ".join(str(p) for p in c) for c in v["cooja_parents"])))
    page.append(READING)
    return page


HEAD = """
## Default CoAP on configurations of our own (runs F-, G-, H-)

The author's Z1 binaries (default CoAP, as in the runs above) on configurations the model was
never calibrated on: the 3×3 grid at intermediate link quality (TX 1.0 / RX 0.8, TX = RX = 0.9,
TX = RX = 0.95), and motes on an exact 10 m lattice, every neighbour at exactly the range (4×4:
the border router in a corner, the server two diagonal steps in; 5×5 likewise), 600 s. The model
as for the runs above, RPL forming its DODAG from boot; 4 replications per Cooja seed. Server's
parent: by Cooja id.
"""

READING = """
Reading. On perfect links the lattices come close: the 5×5 11 % short, the 4×4 14 % short,
inside the wide scatter of Cooja's three seeds (12.9–21.9 completed/s), with about as many
retransmissions per exchange on both sides (0.096 and 0.156 against 0.098 and 0.140). At
intermediate link quality the model completes less than Cooja, and the more so the worse the
links: 16 % less at TX = RX = 0.95 (3×3), 18 % (4×4), 16 % at 0.9, 41 % at TX 1.0 / RX 0.8,
retransmitting 8–32 % more per exchange; every exchange there needs a retransmission and a few
hundred complete in a run, so single runs scatter (the seeds' range), and the means are
compared. RPL chooses parents on ETX here (`topology.rpl_etx`); these motes ask for no ACKs, so a
link's ETX only falls from its initial 2 towards 1 as it is used, and the first parent heard
among equals stays, as before (by hop count the model was 24 % short at 0.9, 17 % at 0.95 on
the 3×3 grid, 20 % and 18 % on the 4×4, 13 % over on the 5×5, 40 % short at RX 0.8).

Where the gap comes from, traced on F-grid3x3-tx1.00-rx0.80-s1 with Cooja's routes pinned: not
RPL's downward routes. The model's border router drops few requests for want of a route there
(7–31 a run); in F-grid3x3-tx0.90-rx0.90-s2 it dropped 131, but only in runs where the server's
parent was mote 6 and both of its first DAOs were lost (nullmac: one frame each, no retry)
before the next refresh, a lottery Cooja's run won (its border router forwarded 197 of the 199
requests it took). What is short is the success of an attempt on long routes: the clients three
hops from the server (through the border router and mote 8, the server's parent) have 24–26 %
of their attempts answered in the model against 38–40 % in Cooja, where UDGM's draws alone give
42 % (four lossy frames; the border router's CSMA retries its own), while the server's parent
itself, one hop away, has 59 % against 64 %. In the model mote 8 takes 67 % of the server's
responses (UDGM's draw: 80 %): 8 % are lost to MSPSim's partial frames, mote 8 starting to send
while it receives, as the border router's ContikiMAC copies and their duplicates keep it busy.
Whether Cooja's mote 8 loses as many there is not in the dataset (its radio logs are not kept
for these runs): the next Cooja run to make. MSPSim's partial frames (above) cost the model a few
points here as they cost Cooja; before they were modelled it was +4 … −24 % off at these three
link qualities, so part of that agreement was two errors cancelling. The server's parent: the
model gives Cooja's in the 5×5 lattice (mote 6 in 7 replications of 8, as in both of Cooja's
seeds) and, in the others, the parent Cooja's RPL gives in most seeds in about half of its
replications: for the model two equal-rank parents are a coin toss (which is heard first comes
from Contiki's id-seeded timers, which the model does not replay).
"""
