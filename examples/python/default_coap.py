"""DefaultCoAP (RFC 7252 §4.2, §4.8) written in Python: a coapcc.Controller, line for line the
built-in ``default`` algorithm, so the two give the same results to the bit on the same seeds.

    import coapcc
    from default_coap import DefaultCoap
    coapcc.sim(clients=50, cc=["default", DefaultCoap])   # the same numbers twice

RFC 7252 §4.2: a Confirmable request's first timeout is drawn uniformly between ACK_TIMEOUT and
ACK_TIMEOUT x ACK_RANDOM_FACTOR; each timeout doubles it, and after MAX_RETRANSMIT
retransmissions the exchange is given up. No RTT is measured: completions teach it nothing.
Erbium (Contiki's CoAP) draws the first timeout in ticks of its clock: ``timer_tick`` > 0 draws
a whole number of ticks, each as likely, from ACK_TIMEOUT to ACK_TIMEOUT x ACK_RANDOM_FACTOR.
"""

import coapcc


class DefaultCoap(coapcc.Controller):
    """RFC 7252's retransmission timer: initial RTO U[2, 3] s, binary exponential backoff."""

    name = "py_default"
    source = "RFC 7252 §4.2, §4.8 (examples/python/default_coap.py)"

    def __init__(self, ack_timeout=2.0, ack_random_factor=1.5, max_retransmit=4, nstart=1, rto_max=60.0,
                 timer_tick=0.0):
        self.ack_timeout = ack_timeout
        self.ack_random_factor = ack_random_factor
        self.max_retransmit = max_retransmit
        self.nstart = nstart
        self.rto_max = rto_max
        self.timer_tick = timer_tick

    def start(self, now, ex, rng):
        # the same draws as the built-in, from the client's stream
        longest = self.ack_timeout * self.ack_random_factor
        if self.timer_tick > 0:
            ticks = int((longest - self.ack_timeout) / self.timer_tick + 0.5)
            return self.ack_timeout + (rng.next_u64() % (ticks + 1)) * self.timer_tick
        return rng.uniform(self.ack_timeout, longest)

    def on_timeout(self, now, ex, rng):
        # doubled, within [RTO_FLOOR, rto_max]; None after max_retransmit
        return coapcc.double(ex, self.max_retransmit, self.rto_max)

    def current_rto(self):
        return self.ack_timeout
