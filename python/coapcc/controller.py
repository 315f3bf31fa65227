"""Congestion-control algorithms written in Python, run by the simulator like the built-in ones.

Subclass :class:`Controller` and pass the class where an algorithm's name goes::

    class MinRtt(coapcc.Controller):
        '''RTO = factor x the smallest unambiguous RTT seen + margin; 2 s before any sample.'''
        def __init__(self, factor=2.0, margin=0.5, max_retransmit=4):
            self.factor, self.margin, self.max_retransmit = factor, margin, max_retransmit
            self.min_rtt = None
        def start(self, now, ex, rng):
            return 2.0 if self.min_rtt is None else self.factor * self.min_rtt + self.margin
        def on_timeout(self, now, ex, rng):
            return None if ex.retransmissions >= self.max_retransmit else 2 * ex.rto
        def on_complete(self, now, ex, rtt, unambiguous):
            if unambiguous:
                self.min_rtt = rtt if self.min_rtt is None else min(self.min_rtt, rtt)

    coapcc.sim(cc=[MinRtt, (MinRtt, {"margin": 0.1}), "cocoa"])

One instance serves one destination (a client's server), as a Rust controller does. Its
parameters are the keyword arguments of ``__init__``, each with a default (``int``, ``float``,
``bool`` or ``str``, a word such as ``"overall"``): scenario defaults such as the testbed's ``max_retransmit = 20`` apply to a parameter of
that name unless the class lists it in ``defines``, and ``NAME:key=value`` works as for the built-ins. The class is registered under
``name`` (default: its class name in snake case) the first time it is used.

Time is float seconds: ``now`` since the run's start, RTOs and RTTs in seconds. Randomness comes
only from the ``rng`` passed to :meth:`Controller.start` and :meth:`Controller.on_timeout` (the
simulator's stream for that client, the built-ins' draws), so a run is reproducible from its seed.
An exception, or an RTO that is not a finite number of seconds > 0, stops the run with
:class:`ControllerError` (its cause is the original exception, with its traceback).
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any, Callable, Dict, Optional, Tuple, Type, Union

from . import _native

#: One exchange as a controller sees it: ``rto`` (armed now, s), ``initial_rto``,
#: ``retransmissions``, ``confirmable``, ``outstanding`` (in ``start``: exchanges to the destination
#: already outstanding; 0 in later calls), ``state``, three floats of the algorithm's own, kept with the
#: exchange between calls (zeros at its start), and ``marking_active`` (the destination's transmissions
#: are numbered now: see :attr:`Controller.marking`). In ``on_complete`` also: ``sent`` (the send
#: time of every transmission, s, the original first), ``echo`` (the transmission number the
#: response named, 0 the original, or ``None``) and ``piggybacked``.
Exchange = _native.Exchange
#: The simulator's random stream, lent for one call: ``uniform(lo, hi)``, ``random()``,
#: ``next_u64()``.
Rng = _native.Rng
#: The smallest RTO any algorithm arms, s (coap-cc's ``RTO_FLOOR``).
RTO_FLOOR: float = _native.RTO_FLOOR


#: ``clamp_rto(rto, cap)``: an RTO within [:data:`RTO_FLOOR`, ``cap``], NaN read as ``cap``: how
#: every built-in bounds its timers (coap-cc's own ``clamp_rto``, called natively), so an
#: algorithm that bounds its own with it computes as they do, to the bit.
clamp_rto: Callable[[float, float], float] = _native.clamp_rto


def double(ex: "Exchange", max_retransmit: int, cap: float) -> Optional[float]:
    """Binary exponential backoff, the timeout rule of every algorithm that "doubles as usual"
    (coap-cc's ``double``): ``None`` (give up) once ``max_retransmit`` retransmissions went out,
    else the armed timer doubled, within :func:`clamp_rto`'s bounds. For ``on_timeout``."""
    if ex.retransmissions >= max_retransmit:
        return None
    return clamp_rto(ex.rto * 2.0, cap)


#: A controller written in Python failed (raised, or returned an RTO that is not a finite number
#: of seconds > 0); the run was stopped.
ControllerError = _native.ControllerError


class Controller:
    """The base class of a congestion-control algorithm written in Python (see the module)."""

    #: The name it is registered under; default: the class name in snake case.
    name: Optional[str] = None
    #: Where it comes from (shown by :func:`coapcc.algorithms`).
    source: str = "a Python class"
    #: One line on what it does.
    summary: str = ""
    #: Exchanges to a destination it lets be outstanding at once (RFC 7252's NSTART).
    nstart: int = 1
    #: The parameters whose defaults make the class what it is (``("ack_timeout",)`` for a
    #: variant with a 1-s first timer): a scenario's ``cc_defaults`` (a preset's Erbium
    #: ``ack_timeout = 3``) never replace them, as for the built-in variants. Every other
    #: parameter takes the scenario's value where it has one of that name.
    defines: Tuple[str, ...] = ()
    #: How transmissions are numbered, for accurate RTT samples (FASOR's; read once per
    #: instance, so a parameter may set it in ``__init__``): ``"none"``; ``"token"`` (the first
    #: token byte carries the transmission number; servers echo tokens); ``"option"`` (option
    #: 65028, probed on the first request: once a piggybacked response does not echo it, not sent
    #: again); ``"counter"`` (RTT-CoAP's transmission counter: critical option 65001 on every
    #: request, no probe; a server that does not know it refuses the request). With numbering,
    #: ``on_complete``'s ``rtt`` is measured from the transmission the response names, and
    #: ``unambiguous`` is true for it.
    marking: str = "none"

    def start(self, now: float, ex: Exchange, rng: Rng) -> float:
        """The RTO of a new exchange's first transmission, s. ``ex.state`` may be set here."""
        raise NotImplementedError(f"{type(self).__name__} must define start(now, ex, rng)")

    def on_timeout(self, now: float, ex: Exchange, rng: Rng) -> Optional[float]:
        """The armed RTO expired: the RTO of the retransmission, s, or ``None`` to give the
        exchange up. ``ex.retransmissions`` counts those before this one. Default: give up."""
        return None

    def on_complete(self, now: float, ex: Exchange, rtt: float, unambiguous: bool) -> None:
        """The exchange's answer arrived: its RTT, s, from the transmission it answers
        (``unambiguous``) or, after retransmissions, from the first (ambiguous)."""

    def on_failure(self, now: float, ex: Exchange) -> None:
        """The exchange was given up."""

    def earliest_start(self, now: float, confirmable: bool) -> Union[float, Tuple[float, float]]:
        """The earliest time a new exchange may start, s (pacing, as RTT-CoAP's rate control):
        asked before each start; a time at or before ``now`` lets it start now. Or a pair
        ``(t0, interval)``: not before ``t0 + interval``, added in the simulator's nanoseconds as
        a built-in adds them (``t0`` a time the controller was given, such as the last start's
        ``now``), for results equal to a built-in's to the bit. Defined only by classes that pace
        (the base class's is never called)."""
        return now

    def current_rto(self) -> float:
        """The RTO the next exchange starts from, s, for reports (default: unknown, 0)."""
        return 0.0

    def srtt(self) -> Optional[float]:
        """The smoothed RTT, s, if the algorithm keeps one."""
        return None


#: A Python algorithm where an algorithm's name goes: the class, or the class with parameters.
PyAlgorithm = Union[Type[Controller], Tuple[Type[Controller], Dict[str, Any]], "functools.partial[Controller]"]


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _register(cls: type) -> str:
    """Registers ``cls`` (again: a redefined class takes its name over) and returns the name."""
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise TypeError(f"{cls!r} is not a subclass of coapcc.Controller")
    name = cls.name or _snake(cls.__name__)
    params = list(_parameters(cls).items())
    overrides = [
        m for m in ("on_complete", "on_failure", "earliest_start") if getattr(cls, m) is not getattr(Controller, m)
    ]
    summary = cls.summary or (cls.__doc__ or "").strip().split("\n")[0]
    _native.register_controller(name, cls, params, cls.source, summary, overrides)
    return name


def _parameters(cls: type) -> Dict[str, Any]:
    """The class's parameters and their defaults (the keyword arguments of ``__init__``), its
    ``defines`` checked against them."""
    params = {}
    for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            raise TypeError(f"{cls.__name__}: parameter '{p.name}' needs a default (the algorithm's default configuration)")
        params[p.name] = p.default
    if isinstance(cls.defines, str):
        raise TypeError(f"{cls.__name__}.defines is a tuple of parameter names, e.g. ('{cls.defines}',)")
    for key in cls.defines:
        if key not in params:
            raise TypeError(f"{cls.__name__}.defines names '{key}', which is not a parameter of its __init__")
    return params


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str) and v and all(c.isalnum() or c in "_.-" for c in v):
        return v
    raise TypeError(f"a controller's parameter is an int, a float, a bool or a word, not {v!r}")


def spec(algorithm: Union[str, PyAlgorithm]) -> str:
    """The ``NAME[:key=value,...]`` of an algorithm given by name, by class, as ``(class,
    {parameters})`` or as ``functools.partial(class, **parameters)``; a class is registered."""
    if isinstance(algorithm, str):
        return algorithm
    if isinstance(algorithm, functools.partial):
        cls, params = algorithm.func, dict(algorithm.keywords)
        if algorithm.args:
            raise TypeError("give a controller's parameters by keyword")
    elif isinstance(algorithm, tuple) and len(algorithm) == 2 and isinstance(algorithm[1], dict):
        cls, params = algorithm[0], dict(algorithm[1])
    else:
        cls, params = algorithm, {}
    name = _register(cls)
    # the defining parameters written out, so the scenario's cc_defaults do not replace them
    defaults = _parameters(cls)
    for key in cls.defines:
        params.setdefault(key, defaults[key])
    if not params:
        return name
    return name + ":" + ",".join(f"{k}={_text(v)}" for k, v in params.items())
