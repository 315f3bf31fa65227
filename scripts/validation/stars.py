"""The precompiled CoCoA++ clients of the NITK CoCoA++ tree in Cooja beside the model:
validate-cooja's section on one-hop stars (runs `S-…` of validation/cooja, schema cooja-star/1).

Cooja ran the tree's own Z1 binaries (SamyakJ2512/Design-and-Implementation-of-Adaptive-CoCoA:
`er-example-client.z1` to the link-local server `er-example-server1.z1`, Cooja id 21) in MSPSim,
N clients 7 m around the server, no border router and no RPL, each client posting every 10 s
(its `etimer_reset`). The binaries' timers shrink by 0.7 at every retransmission (the "no
congestion" branch of CoCoA++'s probabilistic backoff factor, never its 1.42: the records count
the exceptions), so the model runs `cocoa_pp` with `up = 0.7` (both branches 0.7) and Betzler's
CoCoA constants of the NITK presets, on Z1 motes with the presets' stack (nullmac, nullrdc, the
CPU delays, MSPSim's partial frames), the clients periodic at 10 s. Both sides count the
exchanges whose first request went out from 20 s on (Cooja's clients send their first request
10 s after boot, once neighbour discovery has run; the model has no neighbour discovery).
"""

import csv
import json
import os
import statistics
import subprocess
from collections import defaultdict

REPS = 3
WINDOW_START_S = 20.0
# the client's own time around an exchange's frames in the model (the stack below: its CoAP work,
# the frame's preparation and the radio's turnaround before the request's first symbol, the
# response's reception after its last), ms: the model's exchange time less this is on the air,
# as Cooja's is measured
CLIENT_OWN_MS = 1.0 + 1.0 + 0.224 + 2.0
# (cocoa_pp keeps time in ns: it has no tick of 1/128 s to round to, as the binaries' timers do)
CC = ("cocoa_pp:up=0.7,ack_random_factor=1.5,max_retransmit=4,vbf_low=2.5,vbf_from=overall,weights=inverted,"
      "weak_max_retransmissions=4,strong_reset_after=3,blind_max=32")


def scenario(run):
    """The model's scenario of a star run: its motes (the server first), radio and clients."""
    motes = sorted(run["motes"], key=lambda m: (m["role"] != "server", m["cooja_id"]))
    nodes = ", ".join('{ id = %d, role = "%s", x = %.4f, y = %.4f }' % (k + 1, m["role"], m["x_m"], m["y_m"])
                      for k, m in enumerate(motes))
    return "\n".join([
        'env = "lln"', 'name = "%s"' % run["run_id"], "seed = %d" % run["cooja_random_seed"], "reps = %d" % REPS,
        "duration_s = %.1f" % run["duration_s_configured"], 'cc = "%s"' % CC,
        "[endpoint]", 'give_up = "at_last_send"',
        "[radio]", 'medium = "udgm"', "tx_range_m = %.1f" % run["udgm_range_m"],
        "interference_range_m = %.1f" % run["udgm_interference_m"], "success_ratio_tx = %.2f" % run["success_ratio_tx"],
        "success_ratio_rx = %.2f" % run["success_ratio_rx"], 'cca_range_m = "derived"', "tx_turnaround_us = 224",
        # the NITK presets' Z1 stack; the binaries print one number per retransmission, not a
        # line per exchange, so no console time is charged
        "[stack]", "partial_frame_stall = true", 'mac = "nullmac"', 'rdc = "nullrdc"', "rpl_hbh_option = false",
        "rx_process_us = 2000", "tx_prepare_us = 1000", "app_us = 1000", "rx_fifo_frames = 1", "client_app_us = 1000",
        "uart_byte_ns = 69125", "client_log_request_bytes = 0", "client_log_response_bytes = 0",
        "[topology]", "rpl_control = false", "rpl_startup = false", "nodes = [%s]" % nodes,
        # POST /actuators/toggle; the server's 2.05 carries no payload and no option
        "[workload]", 'kind = "periodic_blocking"', "interval_ms = %.1f" % (1000 * run["client_interval_s"]),
        'uri_path = ["actuators", "toggle"]', "token_len = 0", 'response_payload = ""', "response_etag_bytes = 0",
        "response_content_format = false", "start_spread_ms = 1000.0", "fct_successes = 50", ""])


def model(coapcc, run, tmp):
    """The model's figures of a run (means over its replications), counted as the record's."""
    path = os.path.join(tmp, run["run_id"] + ".toml")
    out = os.path.join(tmp, run["run_id"])
    with open(path, "w") as f:
        f.write(scenario(run))
    r = subprocess.run([coapcc, "sim", "--scenario", path, "--out", out, "-q"], capture_output=True, text=True)
    if r.returncode not in (0, 3):
        raise RuntimeError("coapcc sim %s: %s" % (run["run_id"], r.stderr[-400:]))
    with open(os.path.join(out, "exchanges.csv")) as f:
        ex = [e for e in csv.DictReader(f) if float(e["start_s"]) >= WINDOW_START_S]
    with open(os.path.join(out, "rto.csv")) as f:
        gaps = [1000 * float(t["rto_s"]) for t in csv.DictReader(f)
                if t["expired"] in ("1", "true") and float(t["armed_s"]) >= WINDOW_START_S]
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    done = [e for e in ex if e["rtt_s"] not in ("", "nan")]
    span = run["duration_s_configured"] - WINDOW_START_S
    return {"completed_per_s": len(done) / span / REPS, "success_ratio": len(done) / max(1, len(ex)),
            "retx_per_exchange": sum(int(e["retransmissions"]) for e in ex) / max(1, len(ex)),
            "exch_ms_median": (1000 * statistics.median(float(e["rtt_s"]) for e in done) - CLIENT_OWN_MS
                               if done else float("nan")),
            "gap_ms_median": statistics.median(gaps) if gaps else float("nan"), "pdr": summary["pdr"]}


def cooja(run):
    """A record's figures (validation/cooja/README.md defines them)."""
    nan = float("nan")
    return {"completed_per_s": run["completed_per_s"], "success_ratio": run["success_ratio"],
            "retx_per_exchange": run["retx_per_exchange"], "exch_ms_median": run["exch_ms_median"] or nan,
            "gap_ms_median": run["retx_gap_ms_median"] or nan, "pdr": run["pdr_requests"]}


def mean(values):
    v = [x for x in values if x == x]
    return statistics.mean(v) if v else float("nan")


def measure(coapcc, runs, tmp, log=print):
    """Per configuration (clients, RX ratio): Cooja's means over its seeds, the model's over the
    same seeds, the seeds, and the binaries' timer ratios other than 0.7 (of all)."""
    by = defaultdict(list)
    for r in runs:
        by[(r["clients"], r["success_ratio_rx"])].append(r)
    table = {}
    for key, rs in sorted(by.items()):
        c = [cooja(r) for r in rs]
        m = [model(coapcc, r, tmp) for r in rs]
        other = (sum(r["timer_ratios_not_0_7"] for r in rs), sum(r["timer_ratios"] for r in rs))
        table[key] = ({k: mean(x[k] for x in c) for k in c[0]}, {k: mean(x[k] for x in m) for k in m[0]}, len(rs), other)
        log("star %d clients, RX %.2g: completed/s %.3f / %.3f" % (key[0], key[1], table[key][1]["completed_per_s"],
                                                                    table[key][0]["completed_per_s"]))
    return table


def pct(a, b):
    return 100.0 * (a / b - 1.0) if b else float("nan")


def num(v, fmt):
    return "—" if v != v else fmt % v


def section(table):
    page = [HEAD % CLIENT_OWN_MS, "", "| clients | RX | Cooja seeds | completed/s, model | completed/s, Cooja | diff | success ratio, model / Cooja"
            " | retx per exchange, model / Cooja | median exchange on the air (ms), model / Cooja | median retransmission timer (ms),"
            " model / Cooja | request PDR, model / Cooja | binaries' timer ratios other than 0.7 |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (n, rx), (c, m, seeds, (other, ratios)) in sorted(table.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
        page.append("| %d | %.2g | %d | %.3f | %.3f | %+.1f %% | %.3f / %.3f | %.3f / %.3f | %s / %s | %s / %s | %.3f / %.3f | %d of %d |" % (
            n, rx, seeds, m["completed_per_s"], c["completed_per_s"], pct(m["completed_per_s"], c["completed_per_s"]),
            m["success_ratio"], c["success_ratio"], m["retx_per_exchange"], c["retx_per_exchange"],
            num(m["exch_ms_median"], "%.1f"), num(c["exch_ms_median"], "%.1f"), num(m["gap_ms_median"], "%.0f"),
            num(c["gap_ms_median"], "%.0f"), m["pdr"], c["pdr"], other, ratios))
    page.append(READING)
    return page


HEAD = """
## The precompiled CoCoA++ clients in one-hop stars

The NITK CoCoA++ tree (SamyakJ2512/Design-and-Implementation-of-Adaptive-CoCoA) publishes Z1
binaries of its CoCoA++ client and server; runs `S-…` of `validation/cooja` load them in Cooja
(MSPSim), N clients on a circle of 7 m around the server (Cooja id 21), no border router and no
RPL (the client addresses the server's link-local address), UDGM R = 10 m, TX 1.0 and RX 1.0 or
0.5, 600 s, three seeds each. Each client posts `/actuators/toggle` every 10 s (`etimer_reset`)
and waits for the answer; nullmac and nullrdc, no link-layer ACK. The binaries print their timer
at each retransmission: it shrinks by 0.7 every time (CoCoA++'s factor when it infers no
congestion; its 1.42 never shows). The model runs the same star (`cocoa_pp` with `up = 0.7`, the
NITK presets' Z1 stack; `scripts/validation/stars.py` writes the scenario out); both count the
exchanges whose first request went out from 20 s on. *Exchange on the air*: from the request's
first symbol to the response's last, completed exchanges (the model's exchange time less the
client's own %.3f ms around the frames). *Retransmission timer*: the gap between two
sends of one request (Cooja: on the air; the model: every expired timer)."""

READING = """
Reading. On perfect links (RX 1.0) every exchange completes at its first attempt on both sides,
and the rate is the clients' 10-s period: the star carries its load. At RX 0.5 the binaries'
timers (their first from CoCoA's estimators, then ×0.7 at each retransmission) and the losses
decide; the table says how close the model's channel (UDGM's draws, MSPSim's partial frames, CCA)
and its CoCoA++ (estimators and the 0.7 steps) come. What the model does not reproduce: the
server binary answers with an uncompressed IPv6 header (76-byte frames, about 1.2 ms more on the
air than the model's compressed ones), and the client's request carries a 7-byte payload the
model's GET does not (8 bytes, 0.26 ms).
"""
