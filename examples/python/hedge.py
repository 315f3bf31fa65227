"""hedge, coapcc's own algorithm (docs/algorithms.md), written in Python: a coapcc.Controller, line
for line the built-in ``hedge``, so both give the same results to the bit on the same seeds. It is
the form to start from when trying a change of the design: edit, then enter the league beside the
built-in::

    import coapcc
    from hedge import Hedge
    coapcc.sim(clients=50, cc=["hedge", Hedge])          # the same numbers twice
    coapcc.league("results/mine", controllers=[(Hedge, {"carry_cap": 2.0})])

Accurate samples (transmissions numbered in the token), an RFC 6298 estimator over them without
the 1-s floor, binary exponential backoff, and a carry: after a retransmitted exchange whose
answered transmission came back slower than SRTT + 2·RTTVAR (or that failed), the next exchanges
start no lower than its last timer, at most ``carry_cap`` times the RTO; each clean exchange
halves the carried timer until it falls to the RTO.
"""

import coapcc

class Hedge(coapcc.Controller):
    """hedge: accurate samples, RFC 6298 without floor, a bounded carry after congestive losses."""

    name = "py_hedge"
    source = "coapcc (examples/python/hedge.py)"
    defines = ("rtt_marking",)

    def __init__(self, initial_rto=2.0, ack_random_factor=1.5, k=4.0, rto_max=60.0, dither=False,
                 carry="congestion", carry_cap=4.0, carry_failure=True, rtt_marking="token", max_retransmit=4,
                 nstart=1):
        self.initial_rto = initial_rto
        self.ack_random_factor = ack_random_factor
        self.k = k
        self.rto_max = rto_max
        self.dither = dither
        self.carry = carry
        self.carry_cap = carry_cap
        self.carry_failure = carry_failure
        self.marking = rtt_marking
        self.max_retransmit = max_retransmit
        self.nstart = nstart
        self._srtt = None
        self._rttvar = None
        self.carried = None

    def _rto(self, k):
        """SRTT + k·RTTVAR, or None before any sample."""
        if self._srtt is None:
            return None
        return self._srtt + max(0.0, k * self._rttvar)

    def _estimate(self):
        rto = self._rto(self.k)
        return None if rto is None else coapcc.clamp_rto(rto, self.rto_max)

    def _update(self, r):
        if self._srtt is None:
            self._srtt, self._rttvar = r, r / 2.0
        else:
            self._rttvar = (1.0 - 0.25) * self._rttvar + 0.25 * abs(self._srtt - r)
            self._srtt = (1.0 - 0.125) * self._srtt + 0.125 * r

    def _carry_over(self, ex):
        c = ex.rto
        estimate = self._estimate()
        if self.carry_cap > 0.0 and estimate is not None:
            c = min(c, self.carry_cap * estimate)
        self.carried = c

    def start(self, now, ex, rng):
        estimate = self._estimate()
        if estimate is None:
            rto = rng.uniform(self.initial_rto, self.initial_rto * self.ack_random_factor)
        elif self.dither:
            rto = estimate + rng.uniform(self._srtt / 4.0, self._srtt)
        else:
            rto = estimate
        if self.carried is not None:
            rto = max(rto, self.carried)
        return coapcc.clamp_rto(rto, self.rto_max)

    def on_timeout(self, now, ex, rng):
        return coapcc.double(ex, self.max_retransmit, self.rto_max)

    def on_complete(self, now, ex, rtt, unambiguous):
        usual = self._rto(2.0)
        if unambiguous:
            self._update(rtt)
        if ex.retransmissions > 0:
            if self.carry == "always":
                carry = True
            elif self.carry == "congestion":
                carry = not unambiguous or usual is None or rtt > usual
            else:
                carry = False
            if carry:
                self._carry_over(ex)
        elif self.carried is not None:
            half = self.carried / 2.0
            estimate = self._estimate()
            self.carried = None if estimate is not None and half <= estimate else half

    def on_failure(self, now, ex):
        if self.carry != "never" and self.carry_failure:
            self._carry_over(ex)

    def current_rto(self):
        estimate = self._estimate()
        rto = self.initial_rto if estimate is None else estimate
        return rto if self.carried is None else max(rto, self.carried)

    def srtt(self):
        return self._srtt
