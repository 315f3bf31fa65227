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
Reading. On perfect links the 5×5 lattice is 14 % short and the 4×4 25 % short, the latter
inside the wide scatter of Cooja's three seeds (12.9–21.9 completed/s), retransmitting 8 % and
24 % more per exchange (0.106 and 0.173 against 0.098 and 0.140). At intermediate link quality the
3×3 grid agrees at TX = RX = 0.9 (−5 %, five Cooja seeds) and 0.95 (+3 %), the 4×4 lattice at
0.95 is 12 % short, and at TX 1.0 / RX 0.8 the model completes 26 % less than Cooja's eight
seeds, retransmitting 17 % more per exchange; every exchange there needs a retransmission and a
few hundred complete in a run, so single runs scatter (the seeds' range), and the means are
compared. RPL chooses parents on ETX here (`topology.rpl_etx`); these motes ask for no ACKs, so a
link's ETX only falls from its initial 2 towards 1 as it is used, and the first parent heard
among equals stays. Each mote out of the DODAG solicits it (DIS) when Cooja's did
(`topology.rpl_dis_ms`, from `traces/grid6x6-noprefix.first-dis.csv`: a Z1 seeds Contiki's
generator with its id, so Cooja's motes send their DIS at the same instants in every seed). Before
MSPSim's turnaround between frames was modelled (`stack.rx_turnaround`, `docs/mesh.md`) and the
DIS times replayed, the model was 16 % short at 0.9 and at 0.95, 41 % at RX 0.8, 18 % and 14 % on
the 4×4 lattice and 11 % on the 5×5, with Cooja's first two or three seeds; with the turnaround
alone +3 %, +1 %, −26 %, −13 %, −11 % and −9 %.

What the turnaround changed, traced on F-grid3x3-tx0.95-rx0.95-s1 (run again in Cooja with the
server's parent's CC2420 read at every frame, `traces/F-grid3x3-tx0.95-rx0.95-s1.mote8-rxfifo.csv`):
the border router's ContikiMAC strobe sends its next copy 0.13–0.17 ms after a client's ACK it
missed, while the client's radio still calibrates after sending that ACK; MSPSim never
synchronises on such a copy (86 of 86 left the client's RX FIFO empty). The model took them, and
the server's parent, strobing its forward of the first copy meanwhile, kept each as a partial
frame and lost the frames behind it: 42–60 of the server's responses a run. Per hop the model now
passes on what Cooja does (a client's request to the border router forwarded within 50 ms: 70–71 %
of the frames sent, Cooja's eight seeds at RX 0.8 68–75 %).

What the DIS times changed: the server's parent. On the 3×3 grid it is the neighbour whose DIO it
hears first, and client 7's DIS (17 s after its boot) restarts mote 8's trickle, so mote 8's DIO
comes first: the model now gives the server mote 8 in all 12 replications at 0.95, as Cooja does
in its three seeds (about half with the DIS times drawn), and mote 6 in all 8 on the 5×5 lattice,
as Cooja does. Where Cooja's seeds disagree (0.9, RX 0.8, the 4×4 lattice on perfect links), so
do the model's replications; on the 4×4 lattice at 0.95 Cooja gives mote 10 in both seeds, the
model mote 7 in 5 of 8: which of motes 7 and 10 the server hears first is decided by when their
trickle timers fire (in a rerun of G-lattice4x4-tx1.00-rx1.00-s2: mote 10's DIO at 22.06 s, mote
7's at 22.85 s, 0.7 and 1.5 s after the server's DIS), draws of Contiki's id-seeded generator the
model does not replay.

What still separates them at RX 0.8 is RPL's downward route to the server. In 9 of the model's
32 runs its border router drops requests for the server for want of a route for most of the
window (72–221 a run; those runs complete 0.32 exchanges per second, the other 23 0.51, still
17 % below Cooja's 0.62), while Cooja's border router forwards 95–99 % of the requests it takes
in all eight seeds. The server's DAO crosses two links with no retry (nullmac), and it sends the
next one only when its parent's DIO carries a newer DTSN; the parent's DIOs are mostly suppressed
(trickle's redundancy of 10: each of the border router's ContikiMAC copies of a DIO counts; in the
traced run the server's parent took 20–24 copies of every train into its RX FIFO, and the model's
parent reaches the redundancy at every train too), so a lost first DAO can leave the route
missing for minutes. In Cooja the server's DAO reached the border router by its second try in
every seed (22.8–49.2 s), the second after the parent's DIO at about 40 s, in the trickle
interval client 7's DIS set going; the model's border router sends its first DIO train 2.3 s
earlier than Cooja's (it has its prefix at boot, Cooja's over SLIP a second after its banner), so
the parent's intervals fall differently against the trains that suppress its DIOs. Not modelled:
the motes' boot times on the grids and the border router's prefix delay.
"""
