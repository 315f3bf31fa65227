"""FASOR with accurate RTT samples (Järvinen et al., GLOBECOM 2018; draft-ietf-core-fasor-02)
written in Python: a coapcc.Controller, line for line the built-in ``fasor_token`` (and, with
``rtt_marking="option"``, ``fasor_option``; with ``"none"``, ``fasor``), so they give the same
results to the bit on the same seeds.

    import coapcc
    from fasor import Fasor
    coapcc.sim(clients=50, cc=["fasor_token", Fasor])   # the same numbers twice

State per destination: fastrto (an RFC 6298 RTO with K = 4 and no 1-s floor), slowrto, and the
state NORMAL / FAST_SLOW_FAST / SLOW_FAST. An exchange's fast series starts at fastrto plus a
dither drawn from U[SRTT/4, SRTT] (SRTT taken as fastrto/3 before any sample) and doubles; after
one ambiguous ACK the second transmission waits max(slowrto, 2·fastrto), after two or more the
first waits slowrto = 1.5 × the ambiguous RTT. With numbered transmissions (the class's
``marking``) every sample names its transmission, and the fast series starts from max(fastrto,
the previous exchange's RTT). The per-exchange state rides in ``ex.state``: the series' base,
the exchange's dither and the state it started in.
"""

import coapcc

NORMAL, FAST_SLOW_FAST, SLOW_FAST = 0.0, 1.0, 2.0


class Fasor(coapcc.Controller):
    """FASOR, transmissions numbered in the token: every RTT sample unambiguous."""

    name = "py_fasor"
    source = "draft-ietf-core-fasor-02 (examples/python/fasor.py)"
    defines = ("rtt_marking",)

    def __init__(self, initial_rto=2.0, max_retransmit=4, nstart=1, rto_max=60.0, k=4.0, slow_factor=1.5,
                 rtt_marking="token"):
        self.initial_rto = initial_rto
        self.max_retransmit = max_retransmit
        self.nstart = nstart
        self.rto_max = rto_max
        self.k = k
        self.slow_factor = slow_factor
        self.marking = rtt_marking
        self.fastrto = initial_rto
        self.slowrto = initial_rto
        self._srtt = None
        self._rttvar = None
        self.phase = NORMAL
        self.last_sample = None

    def _smoothed(self):
        return self._srtt if self._srtt is not None else self.fastrto / 3.0

    def _dither(self, rng):
        s = self._smoothed()
        return rng.uniform(s / 4.0, s)

    def _update_fast(self, r):
        k = self.k
        if self._srtt is None:
            # the draft's text: the first sample sets RTTVAR = R/2K
            self._srtt, self._rttvar = r, r / (2.0 * k)
            fast = r + k * r / (2.0 * k)
        else:
            # RFC 6298: RTTVAR from the old SRTT first, then SRTT
            self._rttvar = (1.0 - 0.25) * self._rttvar + 0.25 * abs(self._srtt - r)
            self._srtt = (1.0 - 0.125) * self._srtt + 0.125 * r
            fast = self._srtt + max(0.0, k * self._rttvar)
        self.fastrto = coapcc.clamp_rto(fast, self.rto_max)

    def _ambiguous(self, rtt_from_original):
        self.slowrto = coapcc.clamp_rto(self.slow_factor * rtt_from_original, self.rto_max)
        self.phase = FAST_SLOW_FAST if self.phase == NORMAL else SLOW_FAST

    def _armed(self, state, n):
        """The RTO of transmission n (0 = the original) of the exchange whose state is given."""
        base, dither, phase = state

        def fast(j):
            return (base + dither) * 2.0 ** j

        if phase == NORMAL:
            rto = fast(n)
        elif phase == FAST_SLOW_FAST:
            rto = fast(0) if n == 0 else max(self.slowrto, 2.0 * self.fastrto) if n == 1 else fast(n - 1)
        else:
            rto = self.slowrto if n == 0 else fast(n - 1)
        return coapcc.clamp_rto(rto, self.rto_max)

    def start(self, now, ex, rng):
        base = self.fastrto
        if self.last_sample is not None and ex.marking_active:
            base = max(self.fastrto, self.last_sample)
        ex.state = [base, self._dither(rng), self.phase]
        return self._armed(ex.state, 0)

    def on_timeout(self, now, ex, rng):
        if ex.retransmissions >= self.max_retransmit:
            return None
        return self._armed(ex.state, ex.retransmissions + 1)

    def on_complete(self, now, ex, rtt, unambiguous):
        if unambiguous:
            self._update_fast(rtt)
            self.last_sample = rtt
            self.phase = NORMAL
        else:
            self._ambiguous(rtt)

    def current_rto(self):
        return self.fastrto

    def srtt(self):
        return self._srtt
