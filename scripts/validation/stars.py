"""The precompiled CoCoA++ clients of the NITK CoCoA++ tree in Cooja beside the model:
validate-cooja's section on one-hop stars (runs `S-…` of validation/cooja, schema cooja-star/1).

Cooja ran the tree's own Z1 binaries (SamyakJ2512/Design-and-Implementation-of-Adaptive-CoCoA:
`er-example-client.z1` to the link-local server `er-example-server1.z1`, Cooja id 21) in MSPSim,
N clients 7 m around the server, no border router and no RPL, each client posting every 10 s
(its `etimer_reset`). The binaries' timers mostly shrink by 0.7 at a retransmission (the "no
congestion" branch of CoCoA++'s probabilistic backoff factor) and now and then grow by 1.42 (the
records count both). The CoCoA client of vishal623/contiki (76f780c), whose server address names
a Sky mote of which no binary is published, runs with that address patched to the Z1 server's
(7 bytes). The model runs `cocoa_pp` and `cocoa` with Betzler's CoCoA constants of the NITK
presets, on Z1 motes with the presets' stack (nullmac, nullrdc, the CPU delays, MSPSim's partial
frames), the clients periodic at 10 s and drawing from one random sequence (`workload.client_random
= "shared"`: the binaries seed their generator with one constant). Both sides count the
exchanges whose first request went out from 20 s on (Cooja's clients send their first request
10 s after boot, and it starts neighbour discovery). The model runs uIP's neighbour discovery with
the Z1's 15-entry neighbour table (`stack.neighbor_cache = 15`, docs/mesh.md): Cooja's server,
read from its memory, answers only the clients in its table.
"""

import csv
import os
import statistics
import subprocess
from collections import defaultdict

from .authors import mean, pct

REPS = 3
WINDOW_START_S = 20.0
# the model's Z1 stack (the NITK presets'), µs: a client's CoAP work, a frame's preparation, the
# radio's turnaround, a reception's processing
CLIENT_APP_US, TX_PREPARE_US, TX_TURNAROUND_US, RX_PROCESS_US = 1000, 1000, 224, 2000
TICK_US = 1e6 / 128  # the Z1's clock tick
# the client's own time around an exchange's frames in the model (the stack below: its CoAP work,
# the frame's preparation and the radio's turnaround before the request's first symbol, the
# response's reception after its last), ms: the model's exchange time less this is on the air,
# as Cooja's is measured
CLIENT_OWN_MS = (CLIENT_APP_US + TX_PREPARE_US + TX_TURNAROUND_US + RX_PROCESS_US) / 1000
# Betzler's CoCoA constants as the NITK presets set them (docs/algorithms.md), for both, and his
# code's weak sample of a failed exchange (`coap_clear_transaction` stores one for every CON it
# frees). (Neither keeps time in ticks of 1/128 s, as the binaries' timers do.) A backoff step is
# not limited to the draft's 32 s: the CoCoA binary's timers on the air grow 52.7, 79.0, 118.6 and
# 177.8 s (S-cocoa-star32-tx1.0-rx1.0-s1, client 10, its printed `Rto in` 6745, 10117 and 15175
# ticks; the tree's source caps them at 60 s, the published binary does not): no limit, written
# `backoff_limit=3600`, above any timer these exchanges can reach (a first timer of at most 60 s ×
# 1.5, then three steps of × 1.5: 304 s). The CoCoA++ binary stops a step at 60 s (it prints 7680
# ticks where × 1.42 gives more, 128 times in its star runs), as `cocoa_pp`'s `timer_ceiling`
# does once the draft's 32-s limit is lifted.
BETZLER = ("ack_random_factor=1.5,max_retransmit=4,vbf_low=2.5,vbf_from=overall,weights=inverted,"
           "weak_max_retransmissions=4,strong_reset_after=3,blind_max=32,weak_sample_on_failure=true,backoff_limit=3600")
CC = {"cocoa_pp": "cocoa_pp:" + BETZLER, "cocoa": "cocoa:" + BETZLER}
SHOWN = {"cocoa_pp": "CoCoA++", "cocoa": "CoCoA"}


# A mote's boot (its clock's start) from its boot banner's time (`boot_banner_us`): the banner
# less what the firmware takes to reach it, the offset that puts the model's first NS (tick 1,386
# of the clock, then 1.224 ms of preparation and turnaround) where Cooja's went, 10,044,168 µs
# after the banner on every client (validation/cooja/traces/star32-s1.boot-clock.csv).
BANNER_AFTER_BOOT_US = 1386 * TICK_US + TX_PREPARE_US + TX_TURNAROUND_US - 10_044_168


def scenario(run):
    """The model's scenario of a star run: its motes (the server first) booting when Cooja's did,
    radio and clients."""
    motes = sorted(run["motes"], key=lambda m: (m["role"] != "server", m["cooja_id"]))
    nodes = ", ".join('{ id = %d, role = "%s", x = %.4f, y = %.4f }' % (k + 1, m["role"], m["x_m"], m["y_m"])
                      for k, m in enumerate(motes))
    boots = ", ".join('%d = %.3f' % (k + 1, (m["boot_banner_us"] - BANNER_AFTER_BOOT_US) / 1000)
                      for k, m in enumerate(motes))
    return "\n".join([
        'env = "lln"', 'name = "%s"' % run["run_id"], "seed = %d" % run["cooja_random_seed"], "reps = %d" % REPS,
        "duration_s = %.1f" % run["duration_s_configured"], 'cc = "%s"' % CC[run["algorithm"]],
        "[endpoint]", 'give_up = "at_last_send"',
        "[radio]", 'medium = "udgm"', "tx_range_m = %.1f" % run["udgm_range_m"],
        "interference_range_m = %.1f" % run["udgm_interference_m"], "success_ratio_tx = %.2f" % run["success_ratio_tx"],
        "success_ratio_rx = %.2f" % run["success_ratio_rx"], 'cca_range_m = "derived"', "tx_turnaround_us = %d" % TX_TURNAROUND_US,
        # the NITK presets' Z1 stack; the binaries print one number per retransmission, not a
        # line per exchange, so no console time is charged
        "[stack]", "partial_frame_stall = true", 'mac = "nullmac"', 'rdc = "nullrdc"', "rpl_hbh_option = false",
        "rx_process_us = %d" % RX_PROCESS_US, "tx_prepare_us = %d" % TX_PREPARE_US, "app_us = 1000", "rx_fifo_frames = 1",
        "client_app_us = %d" % CLIENT_APP_US,
        "uart_byte_ns = 69125", "client_log_request_bytes = 0", "client_log_response_bytes = 0",
        # uIP's neighbour discovery and the Z1's 15-entry neighbour table (the binaries' Contiki);
        # the reachable time every one of these binaries holds in uip_ds6_if (read from their RAM
        # in Cooja: validation/cooja/traces/S-star4-tx1.0-rx1.0-s1.uip_ds6_if.csv)
        "neighbor_cache = 15", "neighbor_reachable_ms = 322247",
        "[topology]", "rpl_control = false", "rpl_startup = false", "nodes = [%s]" % nodes,
        "boots_ms = { %s }" % boots,
        # POST /actuators/toggle; the server's 2.05 carries no payload and no option
        "[workload]", 'kind = "periodic_blocking"', "interval_ms = %.1f" % (1000 * run["client_interval_s"]),
        'uri_path = ["actuators", "toggle"]', "token_len = 0", 'response_payload = ""', "response_etag_bytes = 0",
        "response_content_format = false", "start_spread_ms = 1000.0", "fct_successes = 50",
        # the client arms its 10-s timer when its process starts (102-103 ticks after its boot:
        # validation/cooja/traces/star32-s1.boot-clock.csv) and sends at its first expiry
        "first_after_interval = true",
        # every client binary seeds random_rand with the same constant: all 32 of star 32 print
        # the same first timer, 348 ticks
        'client_random = "shared"', ""])


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
    timers = defaultdict(list)   # an exchange's expired timers, in order
    with open(os.path.join(out, "rto.csv")) as f:
        for t in csv.DictReader(f):
            if t["expired"] in ("1", "true") and float(t["armed_s"]) >= WINDOW_START_S:
                timers[(t["rep"], t["client"], t["exchange"])].append(1000 * float(t["rto_s"]))
    gaps = [g for ts in timers.values() for g in ts]
    ratios = [b / a for ts in timers.values() for a, b in zip(ts, ts[1:]) if a > 0]
    with open(os.path.join(out, "nodes.csv")) as f:
        nodes = list(csv.DictReader(f))
    # the server's responses on the air per request on the air, retransmissions included
    requests = sum(int(m["frames_sent"]) for m in nodes if m["role"] == "client")
    responses = sum(int(m["frames_sent"]) for m in nodes if m["role"] == "server")
    done = [e for e in ex if e["rtt_s"] not in ("", "nan")]
    span = run["duration_s_configured"] - WINDOW_START_S
    return {"completed_per_s": len(done) / span / REPS, "success_ratio": len(done) / max(1, len(ex)),
            "retx_per_exchange": sum(int(e["retransmissions"]) for e in ex) / max(1, len(ex)),
            "exch_ms_median": (1000 * statistics.median(float(e["rtt_s"]) for e in done) - CLIENT_OWN_MS
                               if done else float("nan")),
            "gap_ms_median": statistics.median(gaps) if gaps else float("nan"),
            "gap_ratio_median": statistics.median(ratios) if ratios else float("nan"),
            "share_1_42": sum(abs(r - 1.42) <= 0.03 for r in ratios) / len(ratios) if ratios else float("nan"),
            "answered": responses / max(1, requests)}


def cooja(run):
    """A record's figures (validation/cooja/README.md defines them)."""
    nan = float("nan")
    return {"completed_per_s": run["completed_per_s"], "success_ratio": run["success_ratio"],
            "retx_per_exchange": run["retx_per_exchange"], "exch_ms_median": run["exch_ms_median"] or nan,
            "gap_ms_median": run["retx_gap_ms_median"] or nan, "gap_ratio_median": run["retx_gap_ratio_median"] or nan,
            "share_1_42": run["timer_ratios_1_42"] / run["timer_ratios"] if run.get("timer_ratios") else float("nan"),
            "answered": run["requests_answered"], "radio_pdr": run["pdr_requests"]}


def measure(coapcc, runs, tmp, log=print):
    """Per configuration (algorithm, clients, RX ratio): Cooja's means over its seeds, the model's
    over the same seeds, the seeds, and the CoCoA++ binaries' printed timer ratios within one
    exchange (× 1.42, of all)."""
    by = defaultdict(list)
    for r in runs:
        by[(r["algorithm"], r["clients"], r["success_ratio_rx"])].append(r)
    table = {}
    for key, rs in sorted(by.items()):
        c = [cooja(r) for r in rs]
        m = [model(coapcc, r, tmp) for r in rs]
        other = (sum(r.get("timer_ratios_1_42") or 0 for r in rs), sum(r.get("timer_ratios") or 0 for r in rs))
        table[key] = ({k: mean(x[k] for x in c) for k in c[0]}, {k: mean(x[k] for x in m) for k in m[0]}, len(rs), other)
        log("star %s, %d clients, RX %.2g: completed/s %.3f / %.3f" % (
            key[0], key[1], key[2], table[key][1]["completed_per_s"], table[key][0]["completed_per_s"]))
    return table


def num(v, fmt):
    return "—" if v != v else fmt % v


def share(alg, figures):
    """The share of backoff steps × 1.42, %: CoCoA++ only (CoCoA has no such factor)."""
    return num(100 * figures["share_1_42"], "%.0f %%") if alg == "cocoa_pp" else "—"


def section(table):
    page = [HEAD % CLIENT_OWN_MS, "", "| binary | clients | RX | Cooja seeds | completed/s, model | completed/s, Cooja | diff"
            " | success ratio, model / Cooja | retx per exchange, model / Cooja | median exchange on the air (ms), model / Cooja"
            " | median retransmission timer (ms), model / Cooja | median ratio of consecutive timers, model / Cooja"
            " | backoff steps × 1.42, model / Cooja | requests answered, model / Cooja | requests the server's radio took, Cooja |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    order = sorted(table.items(), key=lambda kv: (kv[0][0] != "cocoa_pp", -kv[0][2], kv[0][1]))
    for (alg, n, rx), (c, m, seeds, _) in order:
        page.append("| %s | %d | %.2g | %d | %.3f | %.3f | %+.1f %% | %.3f / %.3f | %.3f / %.3f | %s / %s | %s / %s | %s / %s | %s / %s | %.3f / %.3f | %.3f |" % (
            SHOWN[alg], n, rx, seeds, m["completed_per_s"], c["completed_per_s"], pct(m["completed_per_s"], c["completed_per_s"]),
            m["success_ratio"], c["success_ratio"], m["retx_per_exchange"], c["retx_per_exchange"],
            num(m["exch_ms_median"], "%.1f"), num(c["exch_ms_median"], "%.1f"), num(m["gap_ms_median"], "%.0f"),
            num(c["gap_ms_median"], "%.0f"), num(m["gap_ratio_median"], "%.2f"), num(c["gap_ratio_median"], "%.2f"),
            share(alg, m), share(alg, c), m["answered"], c["answered"], c["radio_pdr"]))
    up = sum(v[3][0] for k, v in table.items() if k[0] == "cocoa_pp")
    ratios = sum(v[3][1] for k, v in table.items() if k[0] == "cocoa_pp")
    page.append("")
    page.append("The CoCoA++ binaries' printed timers, consecutive within one exchange: %d ratios, %d of them 1.42"
                " (the rest 0.7, within 0.02)." % (ratios, up))
    page.append(READING)
    return page


HEAD = """
## The precompiled CoCoA and CoCoA++ clients in one-hop stars

The NITK CoCoA++ tree (SamyakJ2512/Design-and-Implementation-of-Adaptive-CoCoA) publishes Z1
binaries of its CoCoA++ client and server, and the CoCoA tree (vishal623/contiki) a Z1 CoCoA
client whose server, a Tmote Sky, was never published: runs `S-…` of `validation/cooja` load
them in Cooja (MSPSim), the CoCoA client with its server address patched to the Z1 server's (7
bytes; the dataset's README). N clients on a circle of 7 m around the server (Cooja id 21), no
border router and no RPL (the clients address the server's link-local address), UDGM R = 10 m,
TX 1.0 and RX 1.0 or 0.5, 600 s, three seeds each. Each client posts `/actuators/toggle` every
10 s (`etimer_reset`) and waits for the answer; nullmac and nullrdc, no link-layer ACK. The
CoCoA++ binary prints its timer at each retransmission: 0.7 times the one before, now and then
1.42 (CoCoA++'s two factors). The model runs the same star (`cocoa_pp` and `cocoa` with Betzler's
constants of the NITK presets and his code's weak sample of a failed exchange
(`weak_sample_on_failure`), the presets' Z1 stack with uIP's neighbour discovery and the Z1's
15-entry neighbour table (`stack.neighbor_cache`, `docs/mesh.md`) and the binaries' reachable time
(322,247 ms, read from their RAM), every client drawing from one random sequence as the binaries
do, each mote booting when Cooja's did (its boot banner's time in the run's log, less the 785 ms
the firmware takes to print it: `topology.boots_ms`) and running the binaries' boot sequence, its
first request 10 s after its process starts (`workload.first_after_interval`);
`scripts/validation/stars.py` writes the scenario out); both count the exchanges whose first
request went out from 20 s on. *Requests answered*: the server's
responses on the air per request on the air, retransmissions included (the whole run; Cooja's
column beside it counts the requests the server's radio took).
*Exchange on the air*: from the request's first symbol to the response's last, completed
exchanges (the model's exchange time less the client's own %.3f ms around the frames).
*Retransmission timer*: the gap between two sends of one request (Cooja: on the air; the model:
every expired timer). *Retransmissions*: Cooja's records count the request frames on the air after
an exchange's first on the air; the model counts the client's, including the one after a first
send that never reached the air (its radio's CCA found the channel busy): a client whose timer
falls a few ms after another's sends while the server answers that one, every period (in
`S-star4-tx1.0-rx1.0-s2` client 3 boots 6.7 ms after client 4; in Cooja its exchanges then start
on the air 3–10 s after its timer, one send later). So with 4 and 8 clients the model shows
0.02–0.05 retransmissions per exchange where Cooja's records show none."""

READING = """
Reading. With 4 and 8 clients on perfect links (RX 1.0) every exchange completes, at the clients'
10-s period, its first frame on the air answered (the model's few retransmissions follow first sends
its radio's CCA refused, which Cooja's records do not see: *Retransmissions* above), and the model's
rate is Cooja's within 0.4 % for both binaries; an exchange takes 7.5 ms on the air in the model and
7.9–8.3 ms in Cooja. Cooja's frames are 48 bytes (1.5 ms) longer: the server's uncompressed IPv6
header (a 76-byte response against the model's 36) and the request's payload marker and 7 bytes,
which the model's GET lacks; so the model's motes spend 0.7–1.1 ms more than Cooja's around the
frames.

Where it parts, the measurement says where:

- **Requests that die inside the server: its neighbour table (16 and 32 clients).** Cooja's
  server radio takes 98–99 % of the requests and its firmware answers 86–94 % of them with 16
  clients, 58–71 % with 32. Read from the server's memory (`validation/cooja/traces/`), uIP's
  neighbour table of 15 entries holds 14 clients and one entry for the address it is trying to
  resolve, and the server answers exactly those 14: to any other client its response finds no
  entry and is dropped; the unresolved entry passes from client to client, each restarting its
  10-s NS timer (the Z1's `UIP_CONF_ND6_RETRANS_TIMER`), so its NS hardly ever goes out (7 in
  600 s); and the set changes when the clients' own neighbour probes (one reachable time for all,
  drawn from their shared random sequence) bring others in. With that table modelled the model's
  CoCoA++ server answers 88 % with 16 clients (Cooja 86 %) and 56 % with 32 (Cooja 58 %), and the
  model completes within 0.2 % and 4.2 % of Cooja's rate with 16 and 32 CoCoA++ clients on
  perfect links (+55 % at 32 before), with about as many retransmissions (0.57 against 0.51 per
  exchange at 32) and timers (8.8 s against 8.0 s): the clients the server cannot answer fail
  their exchanges, and their failures' weak samples (`weak_sample_on_failure`) stretch their
  timers as the binary's do. CoCoA: within 1 % with 4–16 clients, +2.0 % with 32 (+105 % before
  the table, +39 % before the backoff below).
- **The starved clients' timers: no backoff limit in the binaries.** With the motes booting when
  Cooja's did, the server's table over the run (read from its RAM every 500 ms in a rerun of
  S-cocoa-star32-tx1.0-rx1.0-s1) and the model's held nearly the same 14 clients for the first
  330 s; then Cooja's starved clients stayed out until about 500 s, the model's came in at 360 s
  and caught up back to back. A starved client returns when its own NUD probe (its first send
  after its entry for the server goes stale, at about 333 s) reaches the server, so how often it
  sends decides. The CoCoA binary's timers grow by ×1.5 past 60 s (client 10: 52.7, 79.0, 118.6
  and 177.8 s between its sends, its printed `Rto in` 6745, 10117 and 15175 ticks), where the
  model held them at the draft's 32-s step limit (55 s, 55 s, 55 s: a timer already above it
  stays); the CoCoA++ binary stops a step at 60 s (`cocoa_pp`'s `timer_ceiling`), not at 32 s.
  With no limit (`backoff_limit`, set by `scripts/validation/stars.py`; the NITK presets keep the
  draft's 32 s) the model's CoCoA star of 32 completes +2.0 % of Cooja's rate (from +39 %).
- **Start-up.** Cooja's clients boot within the run's first second and send their first request
  10 s after their process starts (the binaries' clocks, read from RAM: every mote's banner at tick
  100, tcpip's periodic runs at ticks ≡ 6 mod 12, the first request at tick 1,383, its NS 3 ticks
  later); an NS a frame received meanwhile overwrote goes again 9.2 s later, before the next
  request. The model boots the motes as Cooja did and runs that boot sequence (before, its clients
  sent at once from a uniform offset in the first second, and a lost NS went again after the next
  request: the start-ups took longer and their failures' weak samples stretched the timers).
- **The binaries' timers (RX 0.5).** With the neighbour table the model's timers come to the
  binaries' (CoCoA++: 5.4–10.9 s against 5.3–12.0 s; CoCoA: 12–28 s against 17–31 s; without it
  the model's were 2.9–3.6 s and 10.6–11.9 s), and its rates to Cooja's: CoCoA++ −6 … +3 % with
  4–32 clients, CoCoA +20 %, −4 % and −3 % with 4, 8 and 16 clients, −32 % with 32 (its server
  answers 47 % of the requests against Cooja's 54 %, its clients retransmit 1.09 times per
  exchange against 0.92: not traced). At RX
  0.5 neighbour discovery's own frames are lost too (an NS or NA lost, an entry probed out), and
  the exchanges that fail meanwhile feed the weak estimator the time they took to give up
  (Betzler's code, `weak_sample_on_failure`). The CoCoA client's own log showed its weak
  estimator reaching an SRTT of 11 s and an RTO of 23 s within 300 s; which of its rules still
  differs (the weak estimator's bounds, the CoCoA tree's rewrite of `coap_check_rto_state`, whose
  missing return value the MSP430 build resolves) is not traced.
- **CoCoA against CoCoA++, the thesis's comparison, as the binaries run it.** At RX 0.5 the
  CoCoA++ binary completes 1.7–2.3 times as many exchanges per second as the CoCoA binary (the
  thesis, Table 6.3: "more than double") and its timers are a third of CoCoA's (the thesis: RTOs
  up to 13 s against up to 38 s); the model gives 1.8–2.5 times. On perfect links both
  binaries complete alike. The tables' absolute rates (8.7 and 21.8 transactions per second) are
  out of these binaries' reach: a 10-s period caps 32 clients at 3.2 per second.
"""
