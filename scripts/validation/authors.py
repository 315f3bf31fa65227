"""The NITK author's own CoAP code in Cooja beside the model: validate-cooja's section on the
Full Backoff variants and GST-CoAP.

Cooja ran the author's Erbium changes (vishal623/CoAP-Fullbackoff-Variants, f7b517a), each
variant selected as the author selects it, compiled for Contiki's `cooja` platform (runs `N-…`
of validation/cooja; its README says how). The model runs the same motes as Cooja motes
(`stack.mote = "cooja"`) with each algorithm's parameters set to the author's code (the NITK
presets' values, `docs/algorithms.md`), RPL forming its DODAG from boot as the firmware's does.
Both sides: every figure is the mean over Cooja's seeds (the model: `REPS` replications for each
of Cooja's seeds); completed exchanges per second and retransmissions per exchange over the
whole run, the thesis's flow completion time (a client's first request to its 50th completed
exchange, mean over the clients that completed 50); the median RTO is over every timer armed in
all the seeds' runs (all the replications), pooled: the carrying algorithms' timers fall in two
groups (GST's halved ones below 2 s, the fresh draws of 3–4.5 s), and a run's median lands in
either when about half are in each.
"""

import csv
import gzip
import json
import os
import random
import shutil
import statistics
import subprocess
from collections import Counter, defaultdict

REPS = 16
ALGORITHMS = ["default", "fb1", "fb2", "gst", "gst_committed"]
NAMES = {"default": "default", "fb1": "default_fb1", "fb2": "default_fb2", "gst": "gst", "gst_committed": "gst"}
SHOWN = {"default": "default", "fb1": "FB1", "fb2": "FB2", "gst": "GST (count restarts)", "gst_committed": "GST (as published)"}
# the author's code as parameters: Erbium's 3 s + U{0..1500} ticks of 1 ms on a Cooja mote, 4
# retransmissions, and the four readings of er-coap-transactions.c
AUTHOR = "ack_timeout=3,timer_tick=0.001,max_retransmit=4,carry_dither=true,fb2_floor=ack_timeout,gst_divisor=u64"
# CoAP-Eifel as its published lines do it (docs/algorithms.md): COAP_INITIAL_RTO 2 s, 1-ms ticks, a
# fresh estimate from each clean exchange's RTT alone
EIFEL = "initial_rto=2,tick=0.001,max_retransmit=4,estimate=last_sample"
ROLES = {"br": "border_router", "server": "server", "relay": "router", "client": "client"}


def algorithm(run):
    """The algorithm a Cooja-mote run ran (`default` … `gst_committed`) and its request interval
    (ms; 0: back to back)."""
    return run["algorithm"], run["interval_ms"]


def cc(alg):
    if alg == "eifel":
        return "eifel:" + EIFEL
    # both counts named: a scenario's default cc_defaults are the nitk-gst-cooja preset's
    reset = {"gst_committed": ",gst_count_reset=never", "gst": ",gst_count_reset=retransmission"}.get(alg, "")
    return NAMES[alg] + ":" + AUTHOR + reset


def prefixes(data):
    """When each seed's border router took its prefix (s; the DODAG's start), by Cooja seed
    (`border-router-prefix.csv`: the router boots at the same instant in every run of a seed)."""
    with open(os.path.join(data, "border-router-prefix.csv")) as f:
        return {int(r["cooja_random_seed"]): float(r["prefix_s"]) for r in csv.DictReader(f)}


def scenario(run, prefix_s):
    """The model's scenario of a Cooja-mote run: its motes, radio and algorithm, and the DODAG
    starting when the run's border router took its prefix."""
    alg, interval = algorithm(run)
    motes = sorted(run["motes"], key=lambda m: m["cooja_id"])
    nodes = ", ".join('{ id = %d, role = "%s", x = %.4f, y = %.4f }' % (k + 1, ROLES[m["role"]], m["x_m"], m["y_m"])
                      for k, m in enumerate(motes))
    # the client arms its timer before its first request (`etimer_set`, then the loop), and
    # `etimer_reset` keeps the schedule: late, it catches up back to back
    workload = ['kind = "continuous"'] if not interval else [
        'kind = "periodic_blocking"', "interval_ms = %.1f" % interval, "first_after_interval = true"]
    return "\n".join([
        'env = "lln"', 'name = "%s"' % run["run_id"], "seed = %d" % run["cooja_random_seed"], "reps = %d" % REPS,
        "duration_s = %.1f" % run["duration_s_configured"], 'cc = "%s"' % cc(alg),
        "[endpoint]", 'give_up = "at_last_send"',
        "[radio]", "tx_range_m = %.1f" % run["udgm_range_m"], "interference_range_m = %.1f" % run["udgm_interference_m"],
        "success_ratio_tx = %.2f" % run["success_ratio_tx"], "success_ratio_rx = %.2f" % run["success_ratio_rx"],
        # Cooja motes; the platform's 16 packet buffers; the author's tables (project-conf.h)
        "[stack]", 'mote = "cooja"', "partial_frame_stall = false", 'mac = "nullmac"', 'rdc = "nullrdc"',
        "queuebuf_num = 16", "max_routes = 20",
        "[stack.br]", 'mac = "csma"', 'rdc = "nullrdc"', "queuebuf_num = 16", "max_routes = 48",
        "[workload]"] + workload + ["start_spread_ms = 1000.0", "fct_successes = 50",
        # Cooja motes' nullrdc asks for ACKs, so link-stats learns real ETX and MRHOF moves parents
        "[topology]", "rpl_control = true", "rpl_startup = true", "rpl_etx = true",
        "rpl_root_start_ms = %.1f" % (prefix_s * 1000), "nodes = [%s]" % nodes, ""])


def model(coapcc, run, tmp, prefix_s):
    path = os.path.join(tmp, run["run_id"] + ".toml")
    with open(path, "w") as f:
        f.write(scenario(run, prefix_s))
    files = os.path.join(tmp, run["run_id"])
    out = subprocess.run([coapcc, "sim", "--scenario", path, "--json", "--out", files, "-q"], capture_output=True,
                         text=True)
    if out.returncode not in (0, 3):
        raise RuntimeError("coapcc sim %s: %s" % (run["run_id"], out.stderr[-400:]))
    r = json.loads(out.stdout)
    with open(os.path.join(files, "rto.csv")) as f:
        column = next(csv.reader(f)).index("rto_s")
        timers = Counter(round(float(row[column]) * 1000) for row in csv.reader(f))
    shutil.rmtree(files)
    # as Cooja's records count them: changes of the parent a mote's DAOs go to
    switches = sum(n.get("rpl_dao_parent_changes", 0) for n in r["network"]["nodes"]) / REPS
    return {"completed_per_s": r["transactions_per_s"], "fct_s": r["fct_mean_s"],
            "retx_per_exchange": r["retransmissions_total"] / max(1, r["exchanges"] / REPS),
            "retx": r["retransmissions_total"], "timers_ms": timers, "switches": switches,
            # each replication's own, for the spread of a mean over as many runs as Cooja has
            "reps": {"completed_per_s": [x["transactions_per_s"] for x in r["per_rep"]],
                     "fct_s": [x["fct_mean_s"] for x in r["per_rep"] if x.get("fct_mean_s") is not None]}}


def cooja(run, data):
    """A run's figures; every timer armed, from its exchanges' file."""
    path = os.path.join(data, "exchanges", run["run_id"] + ".exchanges.csv.gz")
    with gzip.open(path, "rt") as f:
        timers = Counter(int(x) for row in csv.DictReader(f) for x in row["rto_ms"].split())
    # parent changes: the record's parent history (a new DAO parent), so one undone before the
    # mote's next DAO is not seen
    switches = sum(max(0, len(m["parent_history"]) - 1) for m in run["rpl_parent_end"].values())
    return {"completed_per_s": run["full_completed_per_s"], "fct_s": run["full_fct50_s_mean"],
            "retx_per_exchange": run["full_retransmissions"] / max(1, run["full_exchanges_started"]),
            "retx": run["full_retransmissions"], "timers_ms": timers, "switches": switches}


def mean(values):
    v = [x for x in values if x is not None and x == x]
    return statistics.mean(v) if v else float("nan")


def configuration(run):
    """A Cooja-mote run's configuration: (layout, TX, RX, interval); the layout is its id's third part."""
    return (run["run_id"].split("-")[2], run["success_ratio_tx"], run["success_ratio_rx"], run["interval_ms"])


def runs_of(runs):
    """The runs this section compares: those on the author's two 3×3 layouts."""
    return [r for r in runs if configuration(r)[0] in ("grid3x3", "grid3x3v2")]


def cells(runs):
    """Cooja-mote runs by configuration (layout, TX, RX, interval), then algorithm."""
    out = defaultdict(lambda: defaultdict(list))
    for r in runs:
        out[configuration(r)][r["algorithm"]].append(r)
    return out


def measure(coapcc, data, runs, tmp, log=print, algorithms=ALGORITHMS, named=None):
    """Every configuration's figures per algorithm: (Cooja means, model means, seeds)."""
    named = named or describe
    prefix = prefixes(data)
    table = {}
    for key, by_alg in sorted(cells(runs).items()):
        for alg in algorithms:
            rs = by_alg.get(alg, [])
            if not rs:
                continue
            c = [cooja(r, data) for r in rs]
            m = [model(coapcc, r, tmp, prefix[r["cooja_random_seed"]]) for r in rs]
            table[key + (alg,)] = (figures(c), figures(m), len(rs))
        log("Cooja motes %s: %s" % (named(key), ", ".join(
            "%s %.2f/%.2f" % (a, table[key + (a,)][1]["completed_per_s"], table[key + (a,)][0]["completed_per_s"])
            for a in algorithms if key + (a,) in table)))
    return table


def figures(runs):
    """The runs' means, and the median of every timer they armed, pooled (the model's: also
    each seed's replications, `reps`)."""
    out = {k: mean(x[k] for x in runs) for k in runs[0] if k not in ("timers_ms", "reps")}
    out["rto_median_s"] = pooled_median(sum((x["timers_ms"] for x in runs), Counter())) / 1000
    if "reps" in runs[0]:
        out["reps"] = {k: [x["reps"][k] for x in runs] for k in runs[0]["reps"]}
    return out


SPREAD_DRAWS = 4000


def drawn_means(per_seed, seed):
    """SPREAD_DRAWS means over one replication per seed, each drawn from that seed's replications
    (a fixed generator, so the page is reproducible); None without a replication in every seed."""
    if not per_seed or not all(per_seed):
        return None
    rng = random.Random(seed)
    return [statistics.fmean(rng.choice(reps) for reps in per_seed) for _ in range(SPREAD_DRAWS)]


def spread_quantile(per_seed, value):
    """Where `value`, a mean over one run per seed (Cooja's), falls among the model's means over
    one replication per seed: the share of them at or below it (NaN without a value or draws)."""
    means = drawn_means(per_seed, 0) if value == value else None
    return float("nan") if means is None else sum(x <= value for x in means) / len(means)


def within_chance(per_seed, centre, tolerance=0.15):
    """How often a mean over one replication per seed lands within `tolerance` of `centre`: were
    Cooja's runs the model's own, the chance that its mean comes within 15 % of the model's."""
    means = drawn_means(per_seed, 1) if centre == centre else None
    return float("nan") if means is None else sum(abs(x / centre - 1) <= tolerance for x in means) / len(means)


def expected_within(table, metric):
    """Over the carrying algorithms' cells at RX 0.95 and 1.0: how many would be within 15 % were
    Cooja's runs the model's own (the sum of each cell's chance), and how many are, of how many."""
    chance, measured, cells = 0.0, 0, 0
    for key, (c, m, _) in table.items():
        if key[4] == "default" or key[2] < 0.95:
            continue
        p = within_chance(m["reps"][metric], m[metric])
        if p != p or c[metric] != c[metric]:
            continue
        chance += p
        measured += abs(pct(m[metric], c[metric])) <= 15
        cells += 1
    return chance, measured, cells


def spread(m, c, metric):
    """Cooja's mean of `metric` among the model's means over as many runs (percentile)."""
    return spread_quantile(m["reps"][metric], c[metric])


def inside(q):
    """Whether a percentile lies in the central 95 %."""
    return 0.025 <= q <= 0.975


def percentile(q):
    return "—" if q != q else ("%.0f %%" % (100 * q)) + ("" if inside(q) else " (out)")


def pooled_median(counts):
    """The median of values given as {value: count} (the mean of the two middle ones when even).

    Written here because `statistics.median(counts.elements())` would build and sort a list of
    every timer: a configuration's runs arm tens of millions of them.
    """
    n = sum(counts.values())
    if not n:
        return float("nan")
    middle, seen, out = ((n - 1) // 2, n // 2), 0, []
    for v in sorted(counts):
        lo, seen = seen, seen + counts[v]
        out += [v for i in middle if lo <= i < seen]
    return sum(out) / 2


def describe(key):
    layout, tx, rx, interval = key
    return "%s, TX %.2g / RX %.2g, %s" % (
        "the 3×3 grid (New-Grid-topo.csc)" if layout == "grid3x3" else "the 3×3 grid (Variant2_Grid.csc)",
        tx, rx, "back to back" if not interval else "every %d ms" % interval)


def num(v):
    return "—" if v != v else "%.1f" % v


def signed(v):
    return "—" if v != v else "%+.0f %%" % v


def pct(a, b):
    return 100.0 * (a / b - 1.0) if b else float("nan")


def rank(table, key, metric, lower_is_better):
    algs = [a for a in ALGORITHMS if key + (a,) in table]
    return {side: sorted(algs, key=lambda a: table[key + (a,)][side][metric] * (1 if lower_is_better else -1))
            for side in (0, 1)}


def section(table):
    """The page's section: a table per configuration, then the orderings."""
    page = [HEAD]
    for key in sorted({k[:4] for k in table}):
        page.append("")
        page.append("**%s**" % describe(key))
        page.append("")
        page.append("| algorithm | Cooja seeds | completed/s, model | completed/s, Cooja | diff | FCT (s), model | FCT (s), Cooja | diff | Cooja's mean among the model's, completed/s / FCT | retx per exchange, model | retx per exchange, Cooja | median RTO (s), model / Cooja | RPL parent changes per run, model / Cooja |")
        page.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for alg in ALGORITHMS:
            if key + (alg,) not in table:
                continue
            c, m, n = table[key + (alg,)]
            page.append("| %s | %d | %.2f | %.2f | %+.0f %% | %s | %s | %s | %s / %s | %.3f | %.3f | %.2f / %.2f | %.1f / %.1f |" % (
                SHOWN[alg], n, m["completed_per_s"], c["completed_per_s"], pct(m["completed_per_s"], c["completed_per_s"]),
                num(m["fct_s"]), num(c["fct_s"]), signed(pct(m["fct_s"], c["fct_s"])),
                percentile(spread(m, c, "completed_per_s")), percentile(spread(m, c, "fct_s")), m["retx_per_exchange"],
                c["retx_per_exchange"], m["rto_median_s"], c["rto_median_s"], m["switches"], c["switches"]))
    page.append("")
    page.append("Orderings: for every pair of algorithms, whether the model puts them in Cooja's order (pairs whose"
                " Cooja figures are within 10 % of each other count as a tie, which any order matches), and the"
                " order, best first (model / Cooja):")
    page.append("")
    page.append("| configuration | by completed/s | by FCT | by retransmissions per exchange |")
    page.append("|---|---|---|---|")
    for key in sorted({k[:4] for k in table}):
        cols = []
        for metric, low in (("completed_per_s", False), ("fct_s", True), ("retx_per_exchange", True)):
            r = rank(table, key, metric, low)
            agree, pairs = pairs_alike(table, key, metric)
            cols.append("%d of %d: %s / %s" % (agree, pairs, " > ".join(short(a) for a in r[1]),
                                               " > ".join(short(a) for a in r[0])))
        page.append("| %s | %s |" % (describe(key), " | ".join(cols)))
    rate, fct = expected_within(table, "completed_per_s"), expected_within(table, "fct_s")
    page.append("")
    page.append("Were Cooja's runs the model's own (each seed's run one of the model's replications of that seed's"
                " scenario), the carrying algorithms' means at RX 0.95 and 1.0 would land within 15 %% of the"
                " model's in %.1f of the %d cells on average for the completed rate and %.1f of %d for the FCT;"
                " measured: %d and %d." % (rate[0], rate[2], fct[0], fct[2], rate[1], fct[1]))
    page.extend(goal(table))
    page.extend(summary(table))
    page.append(READING)
    return page


def pair_alike(table, key, a, b, metric):
    """Whether the model orders algorithms a and b as Cooja does by `metric` in configuration
    `key` (a Cooja tie, within 10 %, matches any order); None where a side lacks a figure."""
    if not key_has(table, key, a, b):
        return None
    ca, cb = table[key + (a,)][0][metric], table[key + (b,)][0][metric]
    ma, mb = table[key + (a,)][1][metric], table[key + (b,)][1][metric]
    if any(v != v for v in (ca, cb, ma, mb)):
        return None
    return abs(ca - cb) <= 0.1 * max(abs(ca), abs(cb)) or (ca < cb) == (ma < mb)


def pairs_alike(table, key, metric):
    """Pairs of algorithms the model orders as Cooja does, and the pairs with both figures."""
    algs = [a for a in ALGORITHMS if key + (a,) in table]
    verdicts = [pair_alike(table, key, a, b, metric) for i, a in enumerate(algs) for b in algs[i + 1:]]
    return sum(v is True for v in verdicts), sum(v is not None for v in verdicts)


def short(alg):
    return {"default": "def", "fb1": "FB1", "fb2": "FB2", "gst": "GST", "gst_committed": "GSTp"}[alg]


# the four figures, as this section measures them
GOAL_FIGURES = (("completed_per_s", "completed/s"), ("fct_s", "FCT"), ("retx_per_exchange", "retx per exchange"),
                ("rto_median_s", "median RTO"))


def within(m, c, tolerance=15.0):
    """Whether the model's figure is within `tolerance` % of Cooja's (None: a side has none)."""
    d = pct(m, c)
    return None if d != d else abs(d) <= tolerance


CARRYING = ("fb1", "fb2", "gst", "gst_committed")


def config_name(key):
    """A configuration (layout, TX, RX, interval), short: "NG 0.95 b2b"."""
    return "%s %.2g %s" % ("NG" if key[0] == "grid3x3" else "V2", key[2], "b2b" if not key[3] else "%d ms" % key[3])


def cell_name(key):
    """A configuration and algorithm, short: "FB2 on NG 0.95 b2b"."""
    return "%s on %s" % (short(key[4]), config_name(key))


def span_pct(values):
    return "%+.0f … %+.0f %%" % (min(values), max(values)) if values else "—"


def summary(table):
    """The section's counts, computed from the tables (the reading refers to them)."""
    keys = sorted(table)
    lossless = [k for k in keys if k[2] >= 0.95]

    def diffs(ks, metric):
        return [pct(table[k][1][metric], table[k][0][metric]) for k in ks
                if table[k][1][metric] == table[k][1][metric] and table[k][0][metric] == table[k][0][metric]]

    default = [k for k in keys if k[4] == "default"]
    carrying = [k for k in lossless if k[4] in CARRYING]
    close = [k for k in carrying if within(table[k][1]["completed_per_s"], table[k][0]["completed_per_s"])]
    by_alg = ", ".join("%s %d of %d" % (short(a), sum(k[4] == a for k in close), sum(k[4] == a for k in carrying))
                       for a in CARRYING)
    over = ", ".join("%s %+.0f %%" % (cell_name(k), pct(table[k][1]["completed_per_s"], table[k][0]["completed_per_s"]))
                     for k in carrying if k not in close) or "none"
    rto = [abs(d) for d in diffs(carrying, "rto_median_s")]
    pairs = {}
    for metric in ("completed_per_s", "fct_s", "retx_per_exchange"):
        agree = total = 0
        for config in sorted({k[:4] for k in keys}):
            a, n = pairs_alike(table, config, metric)
            agree, total = agree + a, total + n
        pairs[metric] = (agree, total)
    spreads = {}
    for metric in ("completed_per_s", "fct_s"):
        qs = [(k, spread(table[k][1], table[k][0], metric)) for k in keys]
        qs = [(k, q) for k, q in qs if q == q]
        spreads[metric] = (sum(inside(q) for _, q in qs), len(qs),
                           sum(inside(q) for k, q in qs if k[2] >= 0.95), sum(k[2] >= 0.95 for k, _ in qs),
                           ", ".join("%s (%s)" % (cell_name(k), percentile(q).replace(" (out)", "")) for k, q in qs
                                     if not inside(q)) or "none")
    rate, fct = spreads["completed_per_s"], spreads["fct_s"]
    return ["", "Summary, computed from the tables. Default CoAP: the model's completed rate %s of Cooja's (%s at"
            " RX 0.95 and 1.0), its FCT %s (%s). The carrying algorithms at RX 0.95 and 1.0: the completed rate"
            " within 15 %% in %d of the %d cells (%s; outside: %s), the median RTO within 4 %% in %d of them and within 8 %%"
            " in %d. The orderings agree pair by pair in %d of %d pairs by completed rate, %d of %d by FCT and %d"
            " of %d by retransmissions. Cooja's mean lies within the central 95 %% of the model's means over as"
            " many runs in %d of %d cells for the completed rate (%d of %d at RX 0.95 and 1.0) and %d of %d for"
            " the FCT (%d of %d); outside, by completed rate: %s; by FCT: %s." % (
                span_pct(diffs(default, "completed_per_s")), span_pct(diffs([k for k in default if k[2] >= 0.95],
                                                                            "completed_per_s")),
                span_pct(diffs(default, "fct_s")), span_pct(diffs([k for k in default if k[2] >= 0.95], "fct_s")),
                len(close), len(carrying), by_alg, over, sum(d <= 4 for d in rto), sum(d <= 8 for d in rto),
                *pairs["completed_per_s"], *pairs["fct_s"], *pairs["retx_per_exchange"],
                rate[0], rate[1], rate[2], rate[3], fct[0], fct[1], fct[2], fct[3], rate[4], fct[4])]


def goal(table):
    """Per algorithm, the configurations where each figure is within 15 % of Cooja's, those where all
    four are, and whether the latter span two layouts and two link qualities (the goal)."""
    page = ["", "Against the goal (each figure within 15 % of Cooja's on at least two layouts and two link"
            " qualities): per algorithm, in how many configurations each figure is within 15 % (of those"
            " where both sides have it), and the configurations where all four are (layout, RX, requests;"
            " NG New-Grid, V2 Variant2; b2b back to back):", "",
            "| algorithm | " + " | ".join(name for _, name in GOAL_FIGURES) + " | all four within 15 % | goal |",
            "|---|" + "---|" * (len(GOAL_FIGURES) + 2)]
    for alg in ALGORITHMS:
        keys = sorted(k[:4] for k in table if k[4] == alg)
        if not keys:
            continue
        counts, passing = [], []
        for metric, _ in GOAL_FIGURES:
            verdicts = [within(table[k + (alg,)][1][metric], table[k + (alg,)][0][metric]) for k in keys]
            counts.append("%d of %d" % (sum(v is True for v in verdicts), sum(v is not None for v in verdicts)))
        for k in keys:
            c, m, _ = table[k + (alg,)]
            if all(within(m[metric], c[metric]) for metric, _ in GOAL_FIGURES):
                passing.append(k)
        met = len({k[0] for k in passing}) >= 2 and len({k[2] for k in passing}) >= 2
        page.append("| %s | %s | %s | %s |" % (SHOWN[alg], " | ".join(counts),
                                               ", ".join(config_name(k) for k in passing) or "none",
                                               "met" if met else "not met"))
    page.extend(["", "And the orderings against the goal (the same order as Cooja on at least two layouts and two link"
                 " qualities): per pair of algorithms, the configurations where the model orders the pair as Cooja"
                 " does by all three figures of the orderings above (completed/s, FCT, retransmissions per"
                 " exchange; a Cooja tie matching any order):", "",
                 "| pair | configurations with the same order by all three | goal |", "|---|---|---|"])
    configs = sorted({k[:4] for k in table})
    for i, a in enumerate(ALGORITHMS):
        for b in ALGORITHMS[i + 1:]:
            both = [k for k in configs if key_has(table, k, a, b)]
            alike = [k for k in both if all(pair_alike(table, k, a, b, metric) is not False
                                            for metric in ("completed_per_s", "fct_s", "retx_per_exchange"))]
            met = len({k[0] for k in alike}) >= 2 and len({k[2] for k in alike}) >= 2
            page.append("| %s, %s | %d of %d: %s | %s |" % (short(a), short(b), len(alike), len(both),
                                                         ", ".join(config_name(k) for k in alike) or "none",
                                                         "met" if met else "not met"))
    return page


def key_has(table, key, a, b):
    """Whether both algorithms ran in configuration `key`."""
    return key + (a,) in table and key + (b,) in table


def claims(table, published):
    """The NITK thesis's Cooja claims on the default family, against Cooja and the model."""
    rows = [r for r in csv.DictReader(open(published)) if r["section"].startswith("3.")]
    ours = {"default": "default", "default_fb1": "fb1", "default_fb2": "fb2", "gst": "gst"}
    metric = {"FCT (50 exchanges)": "fct_s", "retransmissions (all clients)": "retx"}
    page = ["", "The thesis's claims on the default family (chapter 3, `reproduce/published/nitk-cooja.csv`), with GST as"
            " published (its count never restarts; with the count restarting, `gst` above, in brackets), against Cooja"
            " running the author's code and against the model, in each configuration (holds: the same direction; the"
            " relative difference measured, model / Cooja):", "",
            "| claim | published | " + " | ".join(describe(k) for k in sorted({k[:4] for k in table})) + " |",
            "|---|---|" + "---|" * len({k[:4] for k in table})]
    for r in rows:
        if r["metric"] not in metric:
            continue
        subj, ref, m = ours[r["subject"]], ours[r["reference"]], metric[r["metric"]]
        cells_ = []
        for key in sorted({k[:4] for k in table}):
            def verdict(subject):
                if key + (subject,) not in table or key + (ref,) not in table:
                    return None
                vals = []
                for side in (1, 0):
                    a, b = table[key + (subject,)][side][m], table[key + (ref,)][side][m]
                    vals.append((a < b, 100.0 * (1 - a / b) if b else float("nan")))
                return vals
            v = verdict("gst_committed" if subj == "gst" else subj)
            extra = verdict("gst") if subj == "gst" else None
            text = "—" if v is None else "%s %.0f %% / %s %.0f %%" % (
                "holds" if v[0][0] else "no", v[0][1], "holds" if v[1][0] else "no", v[1][1])
            if extra:
                text += " (%s %.0f %% / %s %.0f %%)" % ("holds" if extra[0][0] else "no", extra[0][1],
                                                     "holds" if extra[1][0] else "no", extra[1][1])
            cells_.append(text)
        stated = ("%s lower by %s %%" % (r["subject"], r["value"])) if r["value"] else "%s lower than %s" % (r["subject"], r["reference"])
        if r["value"]:
            stated = "%s: %s %% lower than %s" % (r["subject"], r["value"], r["reference"])
        page.append("| %s (%s, %s) | %s | %s |" % (r["metric"], r["figure_or_table"], r["id"], stated, " | ".join(cells_)))
    page.append(CLAIMS_READING)
    return page


HEAD = """
## The author's Full Backoff variants and GST-CoAP in Cooja (runs N-…)

The NITK author's own Erbium code (`er-coap-transactions.c` of vishal623/CoAP-Fullbackoff-Variants:
default CoAP, Full Backoff 1 and 2, GST-CoAP; each variant selected as the author selects it, by
uncommenting its lines), compiled for Contiki's `cooja` platform and run by Cooja as Cooja motes
(no MSP430 compiler can be installed here, so the variants cannot run as Z1 binaries), on the
author's two 3×3 layouts (the border router, the server and seven clients with its server
address), UDGM 10 / 20 m, 600 s, the clients back to back as the firmware's 0.5 s timer
truncated to 0 ticks makes them (and at the thesis's 100 ms in the runs so marked). GST twice:
as published, its count never restarts (the `count = 1` line is commented out), and with it
restarting at each retransmission as the thesis's Algorithm 1 describes it. The model runs the
same motes as Cooja motes (`stack.mote = "cooja"`, `docs/mesh.md`) with the author's code as
parameters (`docs/algorithms.md`: the carried RTO gets the random part, FB2 halves down to
ACK_TIMEOUT, GST's 64-bit divisor) and RPL choosing parents as Contiki's MRHOF does on each
link's ETX (`topology.rpl_etx`, `docs/mesh.md`: a Cooja mote's nullrdc asks for ACKs, so a lost
ACK raises a link's ETX and can move the mote to another parent), the DODAG starting when the
run's border router took its prefix (`topology.rpl_root_start_ms`). Whole runs, start-up included
(the thesis's FCT is from each client's first request), means over Cooja's seeds; the model: 16
replications per seed. FCT: a client's first request to its 50th completed exchange, mean over
the clients with 50. Median RTO: of every timer armed in the configuration's runs, pooled. Parent changes, on both sides as Cooja's records can count them: changes of
the parent each mote's DAOs go to (a change undone before the mote's next DAO is not seen; the
model's summary also counts every change, `rpl_parent_switches`). Cooja's mean among the model's:
a single run scatters widely (a carrying algorithm's completed rate by a quarter to a third of its
mean from run to run, on both sides), so beside the difference stands where Cooja's mean over its
seeds falls among the model's means over as many runs, one replication for each Cooja seed's
scenario (4,000 such means drawn from the replications), as a percentile: in the central 95 %,
Cooja's mean is one the model gives with that few runs; outside it (out), the difference is more
than the runs' scatter explains.
"""

READING = """
Reading. RPL moves parents on both sides: Cooja's motes change the parent their DAOs go to 4–22
times a run on average over a configuration's seeds, the model's 8–25 times, counted the same
way (1.15 times Cooja's in the median configuration and algorithm, 0.82–1.96); before the model chose parents on ETX (by hop count, the first heard among
equals kept) it changed none. Cooja's parent histories are what showed the mechanism: in
N-fb2-grid3x3v2-tx1.0-rx1.0-s1 mote 3 takes mote 2 as its parent at 100 s while mote 2's parent
is mote 3, a loop that lasts until 120 s, and four clients give up exchanges between 74 and
142 s on perfect links. Parents on ETX (the same runs, parents by hop count before) brought the
orderings into agreement in more pairs (completed rate 67 → 71 of 80, FCT 50 → 54 of 66,
retransmissions 71 → 73 of 80) and the carrying algorithms' completed rate at RX 1.0 and 0.95
within 15 % in 17 of 24 cells (15 before), but left default CoAP 12–19 % short at RX 0.95: every
parent change sent a No-Path DAO up the old path, and the model removed the route at once, so
the border router dropped the requests for a mote that had just changed parent until its new
DAO arrived (2–6 s later), or for good when that DAO was lost. Contiki's `dao_input` keeps such a
route in use for RPL_NOPATH_REMOVAL_DELAY (60 s) and the model now does (`docs/mesh.md`): default
CoAP came within 5 % of Cooja at RX 0.95 and 1.0 in all six configurations (−19, −12 and −19 %
at RX 0.95 before), the carrying algorithms within 15 % in 18 of the 24 cells (17), with the
model's motes changing parent 1.4 times as often as Cooja's (median). Contiki selects the parent
again after a link's outcome only at its periodic timer's next second (`rpl_recalculate_ranks`),
and the model had done it at once; done as Contiki does it, the model's parent changes come to
1.2 times Cooja's, default CoAP is within 9 % at RX 0.95 and 1.0, the carrying algorithms within
15 % in 18 of the 24 cells (FB2 in 2 of 6 where it was 4, GST in 10 of 12 where it was 9, FB1 in
all 6), and the orderings agree in 68 of 80 pairs by completed rate (69 before), 49 of 66 by FCT
(55) and 70 of 80 by retransmissions (75). Last, the cap: the model had capped every backed-off
timer at 60 s, the reference testbed's value, and Erbium has none (`interval <<= 1`, unbounded).
A carried timer grows with every exchange that fails (a failed exchange keeps 8 times the timer it
started with, and the next starts from that), and in Cooja 3,420 exchanges of the carrying
variants (of 956,500) armed 4,734 timers over 60 s, up to 590 s (default CoAP: at most 36 s).
Without the cap (`rto_capped = false`, the NITK presets' value, as in `docs/algorithms.md`) the
carrying algorithms are within 15 % in 21 of the 24 cells (FB2 in 5 of 6), and the orderings
agree in 71 of 80 pairs by completed rate, 50 of 66 by FCT and 74 of 80 by retransmissions;
default CoAP, whose timers stay below 60 s, is unchanged. Then the border router's pace: its
CSMA had sent its next frame (a retry, or the next packet queued) as soon as a unicast's ACK
wait ended, 2 ms after the frame; Cooja's border router sends it 2 ms later still, 4.000 ms
after an unacknowledged frame and 4.096 ms after an acknowledged one, never sooner than 3.0 ms
(the frames of the half-dumbbell and grid runs, `docs/mesh.md`). Sent that way, a client's
next request, 3.096 ms after its response, no longer finds the border router on the air: on the
half dumbbell at RX 0.95 (runs `N-…-halfdumbbell-…`, below) the model had lost 3.5–4 % of the
clients' and the server's frames to a busy channel (Cooja: 0.2 % of the clients' first sends)
and completed 45 % less than Cooja (its first three seeds); now 6 % less over five. Here default
CoAP comes to −4 … +19 % of Cooja's rate (−20 … +19 % before; RX 0.8 on New-Grid −20 → −4 %,
at 0.95 every 100 ms +9 → +16 %), the median timers within 8 % in 23 of the 24 cells (21), GST
with a restarting count at RX 1.0 back to back at 2.48 and 2.63 s against Cooja's 2.42 and 2.72
(3.15 and 3.21 before), and the carrying algorithms' completed rate within 15 % in 17 of 24
cells (21): FB2 in 3 of 6, GST in 8 of 12, FB1 in all 6; the orderings agree in 66 of 80 pairs
by completed rate, 48 of 66 by FCT and 72 of 80 by retransmissions. Last, the clients' timers and
the model's share of the noise. Erbium arms a timer when its blocking send returns, after the
request's frame and its ACK wait (2.096 ms after the frame, `docs/mesh.md`); the model had armed
it when the request was handed to the stack, 4–6 ms sooner, which matters to CoAP-Eifel's
millisecond timers (below) and hardly to these 2–4.5 s ones. And the carrying algorithms' rates
scatter widely from run to run: FB2 on New-Grid at RX 1.0 back to back gave 27.98 completed/s
over 4 replications per seed before the timers moved and 31.75 after, and 29.09 and 27.58 over
24, so the model now runs 16 replications per Cooja seed (4 before). Both together: default CoAP
at −5 … +29 % of Cooja's rate (−3 … +9 % at RX 0.95 and 1.0), the carrying algorithms within
15 % in 18 of the 24 cells (FB1 in all 6, FB2 in 3, GST in 9 of 12), the orderings in agreement
in 69 of 80 pairs by completed rate, 51 of 66 by FCT and 73 of 80 by retransmissions. Cooja has
as much noise of its own, and the 100-ms configurations had three seeds each where the others
have five: with seeds 4 and 5 of every algorithm there (`validation/cooja`), Cooja's GST with a
restarting count at RX 0.95 comes to 2.04 completed/s where its first three gave 1.74 (1.18,
1.68, 2.35; then 2.57 and 2.44), FB2 to 2.24 (1.97), GST as published to 6.78 (5.69), and the
model is within 15 % of them in 20 of the 24 cells (FB1 6 of 6, FB2 4, GST 5 and as published 5),
default CoAP within 5 % at RX 0.95 and 1.0, the orderings in 72 of 80 pairs by completed rate,
52 of 66 by FCT and 73 of 80 by retransmissions. The median
RTO is now that of every timer of the configuration's runs pooled (it was the mean of each run's
median): the carrying algorithms' timers fall in two groups, and a run's median lands in either
when about half are in each. GST with a restarting count on perfect links had read 1.70 s
against Cooja's 2.42 on New-Grid and 1.42 against 2.72 on Variant2, where its timers are alike
on both sides: 53.5 and 53.2 % below 2 s in the model, 54.1 and 53.3 % in Cooja, their quartiles
0.69, 1.40, 3.72 s against 0.67, 1.39, 3.70 on New-Grid (the model: each seed's scenario run
once, 8 replications on New-Grid and 4 on Variant2); pooled, 1.39 against 1.39 s and 1.41 against 1.41.
Last, when the DODAG starts. The border router waits for its prefix over SLIP and starts the
DODAG when it comes (`set_prefix_64` calls `rpl_set_root`); the test script feeds it 1 s after the
router's boot, 1.13–1.97 s into the run by seed (`validation/cooja/border-router-prefix.csv`), and
the model had started it at 0: its motes' first DAOs came 9.2–9.6 s into the run on average on
the two layouts, Cooja's 10.4–10.8 s. Started at the prefix's instant
(`topology.rpl_root_start_ms`), the model's clients on New-Grid at RX 1.0 fail as many exchanges
before their first completion as Cooja's (0.43, 0.43 and 0.47 a client with default CoAP, FB1 and
FB2, Cooja's 0.43, 0.46 and 0.43; 0.38–0.42 before), their first completion at 39, 91 and 101 s
(Cooja 39, 82 and 68 s; 36, 97 and 80 s before); the table's figures move within the model's
noise: the carrying algorithms within 15 % in 20 of the 24 cells as before, the same four out
(FB2 +23 % on New-Grid at RX 0.95 and +32 % on Variant2 at RX 1.0, +18 and +23 % before; GST
+18 %; as published +21 %), default CoAP −4 … +6 % at RX 0.95 and 1.0, the orderings in 72 of 80
pairs by completed rate, 51 of 66 by FCT and 74 of 80 by retransmissions. Last, routes that follow
the links (`docs/mesh.md`, parents on ETX): a mote ends its routes through a child whose link's ETX
is above 8 and tells its parent with a No-Path DAO, as Contiki's `rpl_process_parent_event` and
`rpl_purge_routes` do, and drops a packet on its way down that finds no route, with a No-Path DAO
back. Read in Cooja with RPL's debug output on: on New-Grid at RX 0.8 the border router had
dropped 6.9 % of the requests it took for want of a route to the server, and the server's
neighbours 1.9 % of those the border router sent them (seeds 4–10), the model 4.0 % and 0.5 %
before these mechanisms and 2.9 % and 1.0 % with them (seeds 4–10, two replications each): the
neighbours' drops come nearer, the border router's do not, and what leaves Cooja's border router
without a route more often is not found. With them, and Cooja's seeds 4–10 at RX 0.8 (three
before), default CoAP at RX 0.8 comes from
+12 to +2 % of Cooja's rate on New-Grid and from +31 to +24 % on Variant2 (its retransmissions
from −10 to −6 % and from −22 to −19 %), the carrying algorithms within 15 % at RX 0.95 and 1.0 in
22 of the 24 cells (21), and the orderings agree in 77 of 80 pairs by completed rate (76), 60 of 76
by FCT (56) and 75 of 80 by retransmissions (74). And MaxRankIncrease: a mote whose rank through
its parent rises more than 896 above its lowest leaves the parent (a No-Path DAO) and repairs
locally until a DIO lets it join again, as Contiki's `rpl_select_dag` and `rpl_local_repair` do
(`docs/mesh.md`); RPL's debug output shows Cooja's motes doing it 3, 3 and 2 times in seeds 4, 6
and 7 on New-Grid at RX 0.8 (the server once: its No-Path DAO, a DAO that was lost, and the
border router without a route to it from 317 to 402 s), the model 2.7 times a run on average
(before, it kept the parent). Default CoAP at RX 0.8 came to −2 % of Cooja's rate on New-Grid
and +19 % on Variant2 (+2 and +24 % before), its retransmissions to −4 and −17 % (−6 and −19 %).

What decides the carrying algorithms is rare: an exchange that loses a frame leaves the next one
a timer two to eight times as long, and the start-up, where the first exchanges time out before
RPL has routes, leaves every client one; and a single run scatters widely, a carrying algorithm's
completed rate by a quarter to a third of its mean from one run to the next on both sides (the
model's replications on perfect links: a standard deviation of 5.4–10.4 completed/s around
27–35; Cooja's ten seeds of FB1 on Variant2 18.1–53.5). At RX 0.8 a run completes a few dozen to
a few hundred exchanges; the FCT is mostly start-up. The counts of the summary above are
computed from the tables. And Cooja's five builds share their start-up: a Cooja mote
seeds Contiki's generator with the run's seed plus its id, and the variants differ only once an
exchange has failed, so a client's first exchange comes out alike in every build's run of a seed
(on perfect links, the same outcome after the same number of retransmissions in all five builds
for 43 of Variant2's 70 clients-and-seeds, 22 of New-Grid's 35): the five algorithms' start-ups on
a layout are as many draws as seeds, not five times as many.

That is what the carrying algorithms' surplus on Variant2 at RX 1.0 was. With Cooja's first five
seeds the model completed 32 % more than Cooja with FB2 and 21 % more with GST as published, and
Cooja's clients failed more exchanges before their first completion than the model's (0.60, 0.83
and 0.69 a client with default CoAP, FB1 and FB2, the model's 0.41, 0.40 and 0.39; their first
completion at 46, 167 and 133 s against 39, 84 and 83 s). Five seeds more (`validation/cooja`,
seeds 6–10 of the five builds, made again and checked against seed 1's exchanges files) brought
Cooja to the model: FB2 21.5 → 24.5 completed/s (the model +13 %), GST as published 26.9 → 34.9
(−7 %), FB1 26.5 → 31.3 (−13 %), default CoAP 26.2 → 26.5 (−2 %); over the ten seeds Cooja's clients
fail 0.47, 0.57 and 0.53 exchanges before their first completion, the model's 0.45, 0.39 and 0.40
(4 replications of each seed), the first completion at 41, 115 and 106 s against 40, 82 and 85 s,
and 26 of Cooja's 70 first exchanges fail with default CoAP (37 %), the model's 36 %. What fails a
first exchange, read in `N-default-grid3x3v2-tx1.0-rx1.0-s1` run again (the fourth harness gives
its exchanges file byte for byte) for clients 2 and 14, whose first exchanges Erbium gave up: a
first request goes at boot and its first retransmission 3–4.5 s later, both dropped at the client,
which has no parent yet; the second, at 10.3 and 10.7 s, reaches the border router, which has no
route to the server yet (the server takes its parent at 13.0 s); the third, at 23.1 and 24.3 s,
collides with a frame its sender cannot hear (client 16's at mote 3, the server's at the border
router), as the other clients' exchanges fill the channel by then; the fourth, at 48.6 and 51.4 s,
gets through, but Erbium gives up as it sends the last one. So a client's first exchange turns on
when the server's route appears against the second retransmission, and on one collision at the
third; a run, on which clients start with a long carried timer.

On New-Grid at RX 0.95 the surplus is FB2's and GST's. Cooja's back-to-back and 100-ms runs there
are nearly one configuration: a client behind its 100-ms schedule (after any retransmission)
sends back to back until it catches up, which at RX 0.95 it seldom does, so the model gives the two
within 2 % of each other (default CoAP 4.06 and 4.09 completed/s), and so does Cooja for default
CoAP (3.89 and 3.91), FB1 (2.74 and 2.85), FB2 (1.98 and 2.00) and GST as published (6.70 and 6.73),
but not for GST with a restarting count: 2.41 and 1.87, ten seeds each, 2.3 standard errors apart
(pooled 2.14, the model 2.37–2.38: 11 % over). FB2's surplus is in both sets (twenty runs, 1.99;
the model 2.25–2.36, two to three standard errors over), and not on Variant2 at RX 0.95 (+1 %); there the
model's FB2 retransmits less than Cooja's (0.210 an exchange against 0.228–0.246). Where
it is: in the server's two neighbours (motes 6 and 8), which make two thirds of FB2's exchanges
there. Cooja's complete 372 (back to back) and 436 (every 100 ms) exchanges a run, the model's 499
and 489, and 5 of Cooja's 40 neighbour runs stall below 50 completed exchanges (back to back: seed
1's mote 8, seeds 5, 8 and 10's mote 6; every 100 ms: seed 3's mote 6), the model's 32 of 640
(5.0 %: two in 40). A stall is a chain of exchanges that need retransmissions: FB2 keeps each one's
last timer, eight times its start after a failure, so in `N-fb2-grid3x3-tx1.0-rx0.95-s10` mote 6
waits 36 s at 44 s and 74 s at 80 s, then 148, 296 and 592 s, and each of its four tries there is
lost on one of the six links of its path. The paths are the same on both sides: a neighbour
reaches the server directly while it is the server's parent and through the border router while
the other neighbour is, each about half the run in Cooja, and Cooja's neighbours need a
retransmission in 10 % of their direct exchanges (two frames at RX 0.95: 9.75 %) and 19–21 % of
the others (four frames without retries, the border router's two with CSMA's: 18.5 %), the
model's in 12 % of theirs over both; runs of consecutive lost tries come about as often (six or
more in a row: 2.5 per 1,000 tries in Cooja, 2.0 in the model; FB1 2.7 and 2.5). Why five of
Cooja's 40 stall where the model's rate gives two is not found. GST with a restarting count every
100 ms is alike in kind: Cooja's other five clients stall below 50 in 58 % of their runs there (36 %
back to back), the model's in 38 % (39 %).

What the author's code does, on both sides: on perfect links FB1 and FB2 complete about what
default CoAP does (Cooja: 24.5–31.3 against 23.7–26.5 completed/s), with longer FCTs (80–90 s
against 64–66 s: start-up with a carried timer), and GST completes more (30.3–32.7, as published
30.7–34.9, against 23.7–26.5). At RX 0.95 FB1, FB2 and GST with a restarting count complete 30–50 % less than default
CoAP; GST as published completes 1.7–1.8 times as much (Cooja 6.7 and 7.8 against 3.9 and 4.5):
after 64 clean exchanges its 64-bit divisor is 0, the MSP430's division by zero gives all ones
and its timer wraps round to 0–1.5 s (median RTO 1.0 s against default's 3.9 s), so it
retransmits early and often, and on lossy links that recovers losses sooner.
"""

CLAIMS_READING = """
Reading. The thesis's FCT claims do not hold in Cooja running the author's code, start-up
included as the thesis defines the FCT: GST's FCT is below default CoAP's in none of the eight
configurations (as published or with a restarting count), FB1's in none; default CoAP has the
shortest FCT in every one. Only the orderings among the variants hold in part (in Cooja: GST
below FB1 in 3 of 8 with a restarting count and 1 of 8 as published, GST below FB2 in 2 of 8
either way, FB2 below FB1 in 4 of 8).
The model gives the same verdict on the claims against default CoAP in every configuration but
one: at RX 0.8 on Variant2, where a few hundred exchanges complete in a run, it has GST's FCT 5 %
below default's as published and 4 % with a restarting count (Cooja: 26 % and 47 % above). The
retransmission claims hold: FB1 retransmits less than default CoAP in all eight configurations
(41–81 %), FB2 less than FB1 in all eight, GST with a restarting count less than default in all
eight (the model agrees in all eight; back to back on perfect links by 8 % and 9 % where Cooja's
is 8 % and 8 %); GST as published only on the lossiest links, elsewhere it retransmits more (its
wrapped timer). Under which setup the FCT
claim could have been measured: counted after the start-up (each client's first exchange in
Cooja's steady window), GST's FCT on the New-Grid layout at RX 1.0 is 18–43 % below default
CoAP's (GST as published 29 s, with a restarting count 20 s, default 35 s; the thesis: 31 %), and
FB2's too (29 s) though not FB1's (37 s); on the Variant2 layout none is below default's (the
first five seeds: the later ones' records hold no steady-window FCT). These are
measurements of the published code; the thesis's runs may have used another build of it.
"""
