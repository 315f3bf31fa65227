"""CoCoA (draft-ietf-core-cocoa; Betzler et al., 2013-2016) written in Python: a coapcc.Controller,
line for line the built-in ``cocoa``, so the two give the same results to the bit on the same
seeds, with the readings the scenario presets apply (Betzler's Contiki CoCoA on the NITK meshes,
CLOUD's Californium readings).

    import coapcc
    from cocoa import Cocoa
    coapcc.sim(clients=50, cc=["cocoa", Cocoa])   # the same numbers twice

How CoCoA times a retransmission:

* Two RFC 6298 estimators: the *strong* one learns from RTTs of exchanges without
  retransmission (E = SRTT + max(G, 4 RTTVAR)); the *weak* one from exchanges that needed
  retransmissions (measured from the first transmission, E = SRTT + max(G, 1 RTTVAR)).
* The overall RTO moves towards each new estimate: RTO = w E + (1 - w) RTO, w = 0.5 for a strong
  estimate, 0.25 for a weak one (``weights = "inverted"``: 1 - w, Betzler's Contiki reading).
* A new exchange's first timeout is drawn uniformly in [RTO, 1.5 RTO]. Each timeout multiplies
  the timer by the variable backoff factor (VBF): 3 below 1 s (``vbf_low``), 2 up to 3 s, 1.5
  above (``vbf_high``), chosen once per exchange from its first timeout (``vbf_from =
  "overall"``: from the RTO it was drawn from), and the timer stops growing at 32 s
  (``backoff_limit``).
* Aging: an RTO below 1 s left unused for 16 RTOs doubles; one above 3 s unused for 4 RTOs moves
  to 1 + RTO/2 (``aging_estimators``: an estimator idle 60 s with its RTO above 2 s moves halfway
  to 2 s).
* Before any RTT sample, an exchange started while ``outstanding`` others are (NSTART > 1) gets a
  blind RTO: 2 s x (outstanding + 1) (``blind = "exp"``: x 2^outstanding), at most 32 s.

Times are kept in integer nanoseconds where the built-in keeps instants (aging compares them),
and every rounding is the built-in's: that is what makes the results equal, not only close.
"""

import coapcc

def ns(seconds):
    """Seconds to whole nanoseconds, rounded half up (coap-cc's Duration::from_secs_f64)."""
    x = seconds * 1e9
    if x != x or x <= 0:
        return 0
    whole = int(x)
    return whole + 1 if x - whole >= 0.5 else whole


def vbf(rto, low, high):
    """The variable backoff factor of a timer: low below 1 s, 2 up to 3 s, high above."""
    if rto < 1.0:
        return low
    if rto <= 3.0:
        return 2.0
    return high


def step(timer, factor, limit):
    """One backoff step: the timer times the factor, not past the limit (a timer already past
    it stays)."""
    following = timer * factor
    return max(timer, limit) if following > limit else following


class Rfc6298:
    """RFC 6298's SRTT and RTTVAR (alpha 1/8, beta 1/4)."""

    def __init__(self):
        self.srtt = None
        self.rttvar = None

    def update(self, r):
        if self.srtt is None:
            self.srtt, self.rttvar = r, r / 2.0
        else:
            self.rttvar = (1.0 - 0.25) * self.rttvar + 0.25 * abs(self.srtt - r)
            self.srtt = (1.0 - 0.125) * self.srtt + 0.125 * r

    def rto(self, k, g):
        return None if self.srtt is None else self.srtt + max(g, k * self.rttvar)


class Cocoa(coapcc.Controller):
    """CoCoA: strong and weak RTT estimators, variable backoff, aging."""

    name = "py_cocoa"
    source = "draft-ietf-core-cocoa; Betzler et al. (examples/python/cocoa.py)"

    def __init__(self, initial_rto=2.0, ack_random_factor=1.5, max_retransmit=4, nstart=1, rto_max=60.0,
                 backoff_limit=32.0, vbf="once", vbf_from="initial", vbf_low=3.0, vbf_high=1.5, strong_k=4.0,
                 weak_k=1.0, strong_weight=0.5, weak_weight=0.25, weights="draft", weak_max_retransmissions=2,
                 strong_reset_after=0, clock_granularity=0.0, aging=True, aging_estimators=False, blind="linear",
                 blind_max=60.0):
        for key, value, allowed in (("vbf", vbf, ("once", "per_step")), ("vbf_from", vbf_from, ("initial", "overall")),
                                    ("weights", weights, ("draft", "inverted")), ("blind", blind, ("exp", "linear"))):
            if value not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(allowed)}, not {value!r}")
        self.p = dict(locals())
        del self.p["self"]
        self.nstart = nstart
        self.rto = initial_rto  # the overall RTO, s
        self.strong, self.weak = Rfc6298(), Rfc6298()
        self.last_update = None  # ns: the RTO's last update (aging)
        self.strong_at = self.weak_at = None  # ns: each estimator's last sample
        self.missed = 0  # retransmissions since the last strong sample

    # -- aging ---------------------------------------------------------------------------------

    def age(self, now_ns):
        if self.last_update is None:
            return
        last = self.last_update
        for _ in range(64):  # each step moves the RTO towards [1, 3] s
            idle = max(now_ns - last, 0) / 1e9
            if self.rto < 1.0 and idle >= 16.0 * self.rto:
                last += ns(16.0 * self.rto)
                self.rto *= 2.0
            elif self.rto > 3.0 and idle >= 4.0 * self.rto:
                last += ns(4.0 * self.rto)
                self.rto = 1.0 + self.rto / 2.0
            else:
                break
        self.last_update = last

    def age_estimator(self, est, at, k, now_ns):
        if at is None:
            return None
        last = at
        for _ in range(64):
            rto = est.rto(k, self.p["clock_granularity"])
            if rto is None or rto <= 2.0 or now_ns - last < 60 * 10**9:
                break
            est.srtt, est.rttvar = (2.0 + est.srtt) / 2.0, est.rttvar / 2.0
            last += 60 * 10**9
        return last

    # -- the interface -------------------------------------------------------------------------

    def start(self, now, ex, rng):
        p, now_ns = self.p, round(now * 1e9)
        if p["aging"]:
            self.age(now_ns)
            if p["aging_estimators"]:
                self.strong_at = self.age_estimator(self.strong, self.strong_at, p["strong_k"], now_ns)
                self.weak_at = self.age_estimator(self.weak, self.weak_at, p["weak_k"], now_ns)
        has_sample = self.strong.srtt is not None or self.weak.srtt is not None
        base = self.blind(ex.outstanding) if not has_sample and ex.outstanding > 0 else self.rto
        initial = coapcc.clamp_rto(rng.uniform(base, base * p["ack_random_factor"]), p["rto_max"] * p["ack_random_factor"])
        chosen_from = initial if p["vbf_from"] == "initial" else base
        ex.state = [vbf(chosen_from, p["vbf_low"], p["vbf_high"]), 0.0, 0.0]
        return initial

    def blind(self, outstanding):
        p = self.p
        act = float(min(outstanding, 30))
        b = p["initial_rto"] * 2.0 ** act if p["blind"] == "exp" else p["initial_rto"] * (act + 1.0)
        return min(min(b, p["rto_max"]), p["blind_max"])

    def on_timeout(self, now, ex, rng):
        p = self.p
        if ex.retransmissions >= p["max_retransmit"]:
            return None
        factor = vbf(ex.rto, p["vbf_low"], p["vbf_high"]) if p["vbf"] == "per_step" else ex.state[0]
        following = step(ex.rto, factor, p["backoff_limit"])
        cap = max(p["rto_max"] * p["ack_random_factor"], p["backoff_limit"])
        return coapcc.clamp_rto(following, cap)

    def on_complete(self, now, ex, rtt, unambiguous):
        p, now_ns = self.p, round(now * 1e9)
        g = p["clock_granularity"]
        if unambiguous:
            self.missed = 0
            self.strong.update(rtt)
            self.strong_at = now_ns
            e = self.strong.rto(p["strong_k"], g)
            w = self.weight(p["strong_weight"])
            self.rto = w * e + (1.0 - w) * self.rto
            self.last_update = now_ns
        elif ex.retransmissions <= p["weak_max_retransmissions"]:
            self.count_missed(ex.retransmissions)
            self.weak.update(rtt)
            self.weak_at = now_ns
            e = self.weak.rto(p["weak_k"], g)
            w = self.weight(p["weak_weight"])
            self.rto = w * e + (1.0 - w) * self.rto
            self.last_update = now_ns
        else:
            self.count_missed(ex.retransmissions)
        self.rto = coapcc.clamp_rto(self.rto, p["rto_max"])

    def weight(self, w):
        return w if self.p["weights"] == "draft" else 1.0 - w

    def count_missed(self, retransmissions):
        if self.p["strong_reset_after"] == 0:
            return
        self.missed += retransmissions
        if self.missed > self.p["strong_reset_after"]:
            self.strong = Rfc6298()
            self.missed = 0

    def current_rto(self):
        return self.rto

    def srtt(self):
        return self.strong.srtt
