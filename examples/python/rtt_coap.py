"""RTT-CoAP (Ancillotti & Bruno, WWIC 2018; constants chosen, not from the paper) written in
Python: a coapcc.Controller, line for line the built-in ``rtt_coap``, so both give the same
results to the bit on the same seeds. It paces its requests (``earliest_start``) and numbers its
transmissions with RTT-CoAP's own counter (``marking = "counter"``)::

    import coapcc
    from rtt_coap import RttCoap
    coapcc.sim(clients=50, cc=["rtt_coap", RttCoap])   # the same numbers twice

Per destination: a short-term and a long-term SRTT and the long-term RTTVAR; each accurate sample
places the short-term SRTT in a region (low congestion, normal, medium or high variation) against
the long-term boundaries, which moves the rate R (messages/s) up or down around one message per
long-term SRTT; decreases wait until a share of retransmitted exchanges (mu) shows. Exchanges
start 1/R apart; retransmissions follow an RFC 6298 RTO (1-s floor, K = 4), doubling.
"""

import coapcc

LC, NO, MV, HV = "lc", "no", "mv", "hv"


class RttCoap(coapcc.Controller):
    """RTT-CoAP: rate-based pacing from short- and long-term RTT, accurate samples."""

    name = "py_rtt_coap"
    source = "Ancillotti & Bruno, WWIC 2018 (examples/python/rtt_coap.py)"
    marking = "counter"

    def __init__(self, alpha_s=0.5, alpha_l=1.0 / 16.0, beta_l=1.0 / 8.0, mu_gain=1.0 / 8.0, l_low=0.01, l_high=0.1,
                 inc_fast=0.5, inc_slow=0.125, dec_slow=0.125, dec_fast=0.5, rate_min=1.0 / 60.0, rate_max=100.0,
                 initial_rto=2.0, rto_min=1.0, rto_max=60.0, max_retransmit=4, nstart=1):
        self.alpha_s, self.alpha_l, self.beta_l, self.mu_gain = alpha_s, alpha_l, beta_l, mu_gain
        self.l_low, self.l_high = l_low, l_high
        self.inc_fast, self.inc_slow, self.dec_slow, self.dec_fast = inc_fast, inc_slow, dec_slow, dec_fast
        self.rate_min, self.rate_max = rate_min, rate_max
        self.initial_rto, self.rto_min, self.rto_max = initial_rto, rto_min, rto_max
        self.max_retransmit, self.nstart = max_retransmit, nstart
        self.srtt_s = self.srtt_l = self.rttvar_l = 0.0
        self.has_sample = False
        self.mu = 0.0
        self.rate = None
        self.last_start = None
        self._srtt = None  # the RFC 6298 estimator of the retransmission timer
        self._rttvar = None

    def _rto(self):
        if self._srtt is None:
            return self.initial_rto
        rto = self._srtt + max(0.0, 4.0 * self._rttvar)
        return min(max(rto, self.rto_min), self.rto_max)

    def _region(self):
        def t(g):
            return self.srtt_l + g * self.rttvar_l

        if self.srtt_s < t(-1.0):
            return LC
        if self.srtt_s < t(1.0):
            return NO
        if self.srtt_s < t(2.0):
            return MV
        return HV

    def _sample(self, r):
        if self.has_sample:
            self.rttvar_l = (1.0 - self.beta_l) * self.rttvar_l + self.beta_l * abs(self.srtt_l - r)
            self.srtt_l = (1.0 - self.alpha_l) * self.srtt_l + self.alpha_l * r
            self.srtt_s = (1.0 - self.alpha_s) * self.srtt_s + self.alpha_s * r
        else:
            self.srtt_s, self.srtt_l, self.rttvar_l, self.has_sample = r, r, r / 2.0, True
        base = 1.0 / max(self.srtt_l, 1e-6)
        rate = base if self.rate is None else self.rate

        def inc(frac):
            return frac * (base - rate) if rate < base else frac * base

        can_decrease = self.mu >= self.l_low
        region = self._region()
        if region == LC:
            rate = rate + inc(self.inc_fast)
        elif region == NO and self.mu <= self.l_high:
            rate = rate + inc(self.inc_slow)
        elif region == MV and can_decrease:
            rate = rate - self.dec_slow * base
        elif region == HV and can_decrease:
            rate = rate - self.dec_fast * base
        self.rate = min(max(rate, self.rate_min), self.rate_max)

    def earliest_start(self, now, confirmable):
        if self.last_start is None or self.rate is None:
            return now
        # the last start and the interval: the simulator adds them in nanoseconds, as the built-in
        return (self.last_start, 1.0 / self.rate)

    def start(self, now, ex, rng):
        self.last_start = now
        return self._rto()

    def on_timeout(self, now, ex, rng):
        return coapcc.double(ex, self.max_retransmit, self.rto_max)

    def on_complete(self, now, ex, rtt, unambiguous):
        x = 1.0 if ex.retransmissions > 0 else 0.0
        self.mu = (1.0 - self.mu_gain) * self.mu + self.mu_gain * x
        if unambiguous:
            if self._srtt is None:
                self._srtt, self._rttvar = rtt, rtt / 2.0
            else:
                self._rttvar = (1.0 - 0.25) * self._rttvar + 0.25 * abs(self._srtt - rtt)
                self._srtt = (1.0 - 0.125) * self._srtt + 0.125 * rtt
            self._sample(rtt)

    def on_failure(self, now, ex):
        self.mu = (1.0 - self.mu_gain) * self.mu + self.mu_gain

    def current_rto(self):
        return self._rto()

    def srtt(self):
        return self.srtt_s if self.has_sample else None
