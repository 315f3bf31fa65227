"""Controllers written in Python (coapcc.Controller): identity with the built-ins, parameters,
errors."""

import math
import sys
from pathlib import Path

import pytest

import coapcc

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
from default_coap import DefaultCoap  # noqa: E402


def numbers(run):
    """A run's results without what names the algorithm or measures the wall clock."""
    return {k: v for k, v in run.items() if k not in ("scenario", "wall_s", "events_per_s")}


@pytest.mark.parametrize("keys", [
    {"clients": 20, "reps": 2},
    {"clients": 10, "workload": "random", "errors": "medium", "reps": 2},
    {"clients": 40, "buffer": "infinite"},
])
def test_default_coap_in_python_gives_the_builtins_results_to_the_bit(keys):
    r = coapcc.sim(cc=["default", DefaultCoap], **keys)
    builtin, python = r.summary["runs"]
    assert python["scenario"]["cc"] == "py_default:max_retransmit=20"  # the testbed's default applied
    assert numbers(python) == numbers(builtin)
    c = r.clients()
    a = c[c.cc == "default"].drop(columns=["cc"]).reset_index(drop=True)
    b = c[c.cc == "py_default"].drop(columns=["cc"]).reset_index(drop=True)
    assert len(a) > 0 and a.equals(b)
    e = r.rtos()
    assert e[e.cc == "default"].drop(columns=["cc"]).reset_index(drop=True).equals(
        e[e.cc == "py_default"].drop(columns=["cc"]).reset_index(drop=True))


@pytest.mark.parametrize("preset,params", [
    ("nitk-gst-cooja", "ack_timeout=3,timer_tick=0.0078125"),  # Erbium's ticks
    ("cloud-m2m-nullrdc", ""),  # RFC 7252's values
])
@pytest.mark.filterwarnings("ignore::coapcc.ResultWarning")  # 120 s: most CLOUD clients are not done
def test_default_coap_in_python_gives_the_builtins_results_on_a_mesh(preset, params):
    r = coapcc.sim(preset=preset, cc=["default", DefaultCoap], duration=120.0, reps=2)
    builtin, python = r.summary["runs"]
    # the preset's keys the Python class has, the same; the built-in's carry keys (which
    # DefaultCoAP itself, carrying nothing, never reads) only on the built-in
    assert python["scenario"]["cc"].partition(":")[2] == params
    assert builtin["scenario"]["cc"].partition(":")[2].startswith(params)
    assert builtin["exchanges"] > 0
    assert numbers(python) == numbers(builtin)


class Shadows(DefaultCoap):
    """Keeps its smoothed RTT in an attribute named as the report method."""

    name = "py_shadows"

    def __init__(self, late=False):
        super().__init__()
        self.late = late
        if not late:
            self.srtt = 0.5

    def on_complete(self, now, ex, rtt, unambiguous):
        if self.late:
            self.srtt = rtt


def test_an_attribute_that_hides_a_method_is_refused():
    # set in __init__: refused as the instance is made; set later: when the reports read it
    for late, when in ((False, "making a controller"), (True, "hides")):
        with pytest.raises(coapcc.ControllerError, match=r"srtt is .*hides the Controller method srtt\(\)") as e:
            coapcc.sim(clients=2, exchanges=2, cc=(Shadows, {"late": late}))
        assert when in str(e.value)


class DefaultB(DefaultCoap):
    """default_b in Python: the 1-s first timer defines it."""

    name = "py_default_b"
    defines = ("ack_timeout",)

    def __init__(self, ack_timeout=1.0, ack_random_factor=1.5, max_retransmit=4, nstart=1, rto_max=60.0,
                 timer_tick=0.0):
        super().__init__(ack_timeout, ack_random_factor, max_retransmit, nstart, rto_max, timer_tick)


@pytest.mark.filterwarnings("ignore::coapcc.ResultWarning")
def test_a_classs_defining_parameters_keep_their_values_under_a_presets_cc_defaults():
    # nitk-gst-cooja's cc_defaults give Erbium's ack_timeout = 3 s: DefaultCoap takes it (the
    # test above), DefaultB keeps its 1 s as the built-in default_b does, and its other
    # parameters still take the preset's
    r = coapcc.sim(preset="nitk-gst-cooja", cc=[DefaultB, "default_b"], duration=60.0, reps=1)
    python, builtin = r.summary["runs"]
    # (the resolved cc writes the values that differ from the class's: ack_timeout stayed 1)
    assert python["scenario"]["cc"] == "py_default_b:timer_tick=0.0078125"
    assert "ack_timeout=" not in builtin["scenario"]["cc"]
    assert numbers(python) == numbers(builtin)
    # given explicitly, the value is the caller's
    assert coapcc.controller.spec((DefaultB, {"ack_timeout": 3})) == "py_default_b:ack_timeout=3"

    class Typo(DefaultCoap):
        name = "py_typo"
        defines = ("ack_timout",)

    with pytest.raises(TypeError, match="ack_timout"):
        coapcc.controller.spec(Typo)


def test_parameters_are_keyword_arguments_and_work_as_the_builtins_do():
    r = coapcc.sim(clients=5, exchanges=5, cc=[(DefaultCoap, {"ack_timeout": 1.0}), "default:ack_timeout=1"])
    python, builtin = r.summary["runs"]
    assert python["scenario"]["cc"] == "py_default:ack_timeout=1,max_retransmit=20"
    assert numbers(python) == numbers(builtin)
    listed = {a["name"]: a for a in coapcc.algorithms()}["py_default"]
    assert [p["name"] for p in listed["parameters"]] == ["ack_timeout", "ack_random_factor", "max_retransmit", "nstart", "rto_max", "timer_tick"]
    with pytest.raises(ValueError, match="bad value"):
        coapcc.sim(clients=2, exchanges=2, cc="py_default:ack_timeout=soon")


class Fixed(coapcc.Controller):
    """A fixed RTO (for the tests)."""

    NAN, KEEP_RNG = 1, 2

    def __init__(self, rto=1.0, fail_at=-1, mode=0):
        self.rto, self.fail_at, self.mode = rto, fail_at, mode
        self.calls = 0

    def start(self, now, ex, rng):
        self.calls += 1
        if self.calls == self.fail_at:
            return 1 / 0
        if self.mode == Fixed.NAN:
            return math.nan
        if self.mode == Fixed.KEEP_RNG:
            Fixed.kept = rng
        return self.rto

    def on_timeout(self, now, ex, rng):
        return None if ex.retransmissions >= 4 else 2 * ex.rto


def test_an_exception_stops_the_run_with_the_simulated_time_and_its_cause():
    with pytest.raises(coapcc.ControllerError, match=r"Fixed.start at t = [0-9.]+ s raised") as e:
        coapcc.sim(clients=3, cc=(Fixed, {"fail_at": 7}))
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert e.value.__cause__.__traceback__ is not None


def test_a_timer_that_is_not_a_positive_number_stops_the_run():
    with pytest.raises(coapcc.ControllerError, match=r"Fixed.start returned NaN .*number of seconds > 0 and at most 3600"):
        coapcc.sim(clients=2, cc=(Fixed, {"mode": Fixed.NAN}))
    with pytest.raises(coapcc.ControllerError, match=r"returned -2 .*number of seconds > 0"):
        coapcc.sim(clients=2, cc=(Fixed, {"rto": -2.0}))
    # a timer no run could wait out (on the real network it would wait until Ctrl-C), and a bool
    with pytest.raises(coapcc.ControllerError, match=r"returned 1000000000000 .*at most 3600"):
        coapcc.sim(clients=2, cc=(Fixed, {"rto": 1e12}))
    with pytest.raises(coapcc.ControllerError, match=r"Yes.start returned True .*not a bool"):
        coapcc.sim(clients=2, cc=Yes)


class Yes(Fixed):
    """Answers True where an RTO is due (a bool is an int to Python: it must not pass for 1 s)."""

    def start(self, now, ex, rng):
        return True


class Wide(Fixed):
    """Fixed, with an NSTART of its class's choosing."""

    nstart = 1


@pytest.mark.parametrize("nstart", [0, 10**12, True, 2.5])
def test_an_nstart_out_of_range_is_refused(nstart):
    Wide.nstart = nstart
    with pytest.raises(coapcc.ControllerError, match=r"Wide.nstart is .*: NSTART must be a whole number from 1 to 1024"):
        coapcc.sim(clients=2, exchanges=2, cc=Wide)


def test_a_buffer_beyond_any_router_is_refused():
    with pytest.raises(ValueError, match=r"--buffer: at most 1099511627776 bytes, not 9223372036854775808"):
        coapcc.sim(clients=2, exchanges=2, buffer=2**63)
    with pytest.raises(ValueError, match=r"buffer_bytes \(4611686018427387904\) is more than 2\^40"):
        coapcc.sim(clients=2, exchanges=2, downlink={"buffer_bytes": 2**62})


def test_the_random_stream_is_lent_for_the_call_only():
    coapcc.sim(clients=1, exchanges=1, cc=(Fixed, {"mode": Fixed.KEEP_RNG}))
    with pytest.raises(coapcc.ControllerError, match="for the call only"):
        Fixed.kept.uniform(0.0, 1.0)


def test_a_name_of_a_builtin_and_bad_classes_are_refused():
    class Cocoa(coapcc.Controller):
        def start(self, now, ex, rng):
            return 1.0

    with pytest.raises(ValueError, match="names an algorithm already"):
        coapcc.sim(clients=1, cc=Cocoa)
    with pytest.raises(ValueError, match="not a subclass of coapcc.Controller"):
        coapcc.sim(clients=1, cc=[int])

    class NoDefault(coapcc.Controller):
        def __init__(self, k):
            self.k = k

    with pytest.raises(ValueError, match="needs a default"):
        coapcc.sim(clients=1, cc=NoDefault)


def test_the_tutorials_min_rtt_arms_what_its_rule_says():
    from min_rtt import MinRtt

    r = coapcc.sim(clients=10, exchanges=20, cc=(MinRtt, {"margin": 0.25}))
    ex, rto = r.exchanges(), r.rtos()
    first = rto.sort_values("armed_s").groupby(["rep", "client", "exchange"]).rto_s.first()
    checked = 0
    for (rep, client), rows in ex.groupby(["rep", "client"]):
        seen = []  # the unambiguous RTTs so far (no retransmission: the only transmission's)
        for _, e in rows.sort_values("exchange").iterrows():
            expected = 2.0 if not seen else min(2.0 * min(seen) + 0.25, 60.0)
            assert first[(rep, client, e.exchange)] == pytest.approx(expected, abs=2e-9), (client, e.exchange)
            checked += 1
            if e.retransmissions == 0 and not math.isnan(e.rtt_s):
                seen.append(e.rtt_s)
    assert checked == 10 * 20


def test_the_tutorial_script_draws_its_plot(tmp_path):
    pytest.importorskip("matplotlib")
    import subprocess

    script = Path(__file__).resolve().parents[2] / "examples" / "python" / "min_rtt.py"
    out = tmp_path / "min_rtt.png"
    p = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert out.stat().st_size > 10_000 and "GST 3x3 mesh" in p.stdout


@pytest.fixture
def server():
    """`coapcc server` on a free loopback port (UDP), stopped after the test."""
    import socket
    import subprocess
    import time

    from conftest import _binary

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([_binary(), "server", "--bind", f"127.0.0.1:{port}", "--no-echo"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):  # until it answers (at most 10 s)
            try:
                coapcc.load(f"coap://127.0.0.1:{port}/test", clients=1, exchanges=1, bind="127.0.0.1:0")
                break
            except ValueError:
                time.sleep(0.1)
        yield f"coap://127.0.0.1:{port}/test"
    finally:
        p.terminate()
        p.wait(timeout=10)


def test_a_python_controller_drives_real_exchanges(server):
    v = coapcc.load(server, cc=(DefaultCoap, {"ack_timeout": 1.0}), clients=3, exchanges=5, seed=1, bind="127.0.0.1:0")
    assert (v["exchanges"], v["failed_exchanges"], v["clients"]) == (15, 0, 3)
    assert v["cc"] == "py_default:ack_timeout=1"
    # the controller armed what it returned: on loopback nothing times out, so no retransmission
    assert v["retransmissions_hist"] == [15]


def test_load_refuses_bad_input_with_value_errors():
    for bad in ({"clients": 0}, {"exchanges": 2**32}, {"workload": "bursty"}, {"bind": "nowhere"}):
        with pytest.raises(ValueError):
            coapcc.load("coap://127.0.0.1:9/test", **bad)
    with pytest.raises(ValueError, match="only coap:// and coap\\+tcp://"):
        coapcc.load("http://127.0.0.1/test", clients=1, exchanges=1)


def test_a_python_controller_that_fails_on_the_real_stack_raises(server):
    with pytest.raises(coapcc.ControllerError, match="Fixed.start at t = ") as e:
        coapcc.load(server, cc=(Fixed, {"fail_at": 2}), clients=1, exchanges=5, bind="127.0.0.1:0")
    assert isinstance(e.value.__cause__, ZeroDivisionError)


@pytest.mark.parametrize("keys", [
    {"clients": 20, "reps": 2},
    {"clients": 10, "workload": "random", "errors": "medium", "reps": 2},
    {"clients": 100, "buffer": "infinite"},
    {"preset": "nitk-gsrtc-cooja", "duration": 300.0, "reps": 2},  # Betzler's Contiki readings, aging on
    {"preset": "cloud-m2m-nullrdc", "duration": 300.0, "reps": 2},  # CLOUD's: estimator aging, exp blind RTO
])
@pytest.mark.filterwarnings("ignore::coapcc.ResultWarning")
def test_cocoa_in_python_gives_the_builtins_results_to_the_bit(keys):
    from cocoa import Cocoa

    r = coapcc.sim(cc=["cocoa", Cocoa], **keys)
    builtin, python = r.summary["runs"]
    # the scenario's readings applied to both alike
    assert builtin["scenario"]["cc"].partition(":")[2] == python["scenario"]["cc"].partition(":")[2]
    assert builtin["exchanges"] > 0
    assert numbers(python) == numbers(builtin)


from fasor import Fasor  # noqa: E402 (examples/python, on the path above)


@pytest.mark.parametrize("builtin,cls", [
    ("fasor_token", Fasor),
    ("fasor_option", (Fasor, {"rtt_marking": "option"})),
    ("fasor", (Fasor, {"rtt_marking": "none"})),
])
@pytest.mark.parametrize("keys", [
    {"clients": 20, "reps": 2},
    {"clients": 10, "errors": "high", "reps": 3},  # retransmissions: the echo decides the sample
    {"clients": 100, "workload": "random", "buffer": "infinite", "reps": 1},
])
def test_fasor_with_numbered_transmissions_in_python_gives_the_builtins_results_to_the_bit(builtin, cls, keys):
    r = coapcc.sim(cc=[builtin, cls], **keys)
    a, b = r.summary["runs"]
    assert a["exchanges"] > 0
    assert numbers(a) == numbers(b)


@pytest.mark.filterwarnings("ignore::coapcc.ResultWarning")  # 120 s: half the clients not done
def test_fasor_token_in_python_equals_the_builtin_on_a_mesh():
    r = coapcc.sim(preset="nitk-gst-cooja", cc=["fasor_token", Fasor], duration=120.0, reps=2)
    a, b = r.summary["runs"]
    assert a["retransmissions_total"] > 0
    assert numbers(a) == numbers(b)


class Numbered(DefaultCoap):
    """DefaultCoAP that numbers its transmissions in the token and records what it is told."""

    name = "py_numbered"
    marking = "token"
    seen = []

    def on_complete(self, now, ex, rtt, unambiguous):
        type(self).seen.append((now, rtt, unambiguous, ex.sent, ex.echo, ex.piggybacked, ex.marking_active,
                                ex.retransmissions))


def test_a_completion_tells_every_transmission_and_the_echo():
    Numbered.seen = []
    coapcc.sim(cc=Numbered, clients=10, errors="high", reps=1)
    assert len(Numbered.seen) == 10 * 50
    retransmitted = 0
    for now, rtt, unambiguous, sent, echo, piggybacked, active, retx in Numbered.seen:
        assert len(sent) == retx + 1 and list(sent) == sorted(sent) and sent[0] < now
        assert active and piggybacked  # the token is always in use; the testbed's server piggybacks
        assert unambiguous, "every response names its transmission"
        assert echo is not None and 0 <= echo <= retx
        # the sample runs from the transmission the response names
        assert rtt == pytest.approx(now - sent[echo], abs=1e-9)
        retransmitted += retx > 0
    assert retransmitted > 0, "the high error profile retransmits some"


class Paced(DefaultCoap):
    """DefaultCoAP whose client starts an exchange at most once every `gap` seconds."""

    name = "py_paced"

    def __init__(self, gap=3.0, **kw):
        super().__init__(**kw)
        self.gap = gap
        self.last = None

    def earliest_start(self, now, confirmable):
        return now if self.last is None else self.last + self.gap

    def start(self, now, ex, rng):
        self.last = now
        return super().start(now, ex, rng)


def test_pacing_holds_each_start_until_earliest_start():
    r = coapcc.sim(cc=["default", Paced], clients=5, reps=1)
    e = r.exchanges()
    paced = e[e.cc == "py_paced"].sort_values(["client", "exchange"])
    gaps = paced.groupby("client").start_s.diff().dropna()
    assert len(gaps) == 5 * 49
    assert (gaps >= 3.0 - 1e-9).all()
    plain = e[e.cc == "default"].sort_values(["client", "exchange"])
    assert (plain.groupby("client").start_s.diff().dropna() < 3.0).any(), "unpaced, back to back"


def test_a_bad_marking_or_pacing_time_is_refused():
    class BadMarking(DefaultCoap):
        name = "py_bad_marking"
        marking = "tokens"

    with pytest.raises(coapcc.ControllerError, match="marking"):
        coapcc.sim(cc=BadMarking, clients=2, reps=1)

    class NowhereNear(Paced):
        name = "py_nowhere_near"

        def earliest_start(self, now, confirmable):
            return float("inf")

    with pytest.raises(coapcc.ControllerError, match="earliest_start"):
        coapcc.sim(cc=NowhereNear, clients=2, reps=1)


from hedge import Hedge  # noqa: E402 (examples/python)


@pytest.mark.parametrize("cls", [Hedge, (Hedge, {"carry": "always", "carry_cap": 0.0, "dither": True})])
@pytest.mark.parametrize("keys", [
    {"clients": 10, "errors": "high", "reps": 3},  # random losses: the echo's RTT decides the carry
    {"clients": 400, "buffer": 2500, "reps": 1},  # congestive losses and failures carry
])
def test_hedge_in_python_gives_the_builtins_results_to_the_bit(cls, keys):
    params = "" if cls is Hedge else ":carry=always,carry_cap=0,dither=true"
    r = coapcc.sim(cc=["hedge" + params, cls], **keys)
    a, b = r.summary["runs"]
    assert sum(a["retransmissions_hist"][1:]) > 0  # exchanges that needed retransmissions
    assert numbers(a) == numbers(b)


@pytest.mark.filterwarnings("ignore::coapcc.ResultWarning")  # 120 s: not every client done
def test_hedge_in_python_equals_the_builtin_on_a_mesh():
    r = coapcc.sim(preset="nitk-gst-cooja", cc=["hedge", Hedge], duration=120.0, reps=2)
    a, b = r.summary["runs"]
    assert a["failed_exchanges"] > 0
    assert numbers(a) == numbers(b)


from rtt_coap import RttCoap  # noqa: E402 (examples/python)


@pytest.mark.parametrize("keys,losses", [
    ({"clients": 20, "reps": 2}, False),
    ({"clients": 400, "buffer": 2500, "reps": 1}, True),  # paced: the rate falls and holds requests back
    ({"clients": 10, "errors": "high", "reps": 2}, True),
])
def test_rtt_coap_in_python_gives_the_builtins_results_to_the_bit(keys, losses):
    r = coapcc.sim(cc=["rtt_coap", RttCoap], **keys)
    a, b = r.summary["runs"]
    assert a["exchanges"] > 0 and (sum(a["retransmissions_hist"][1:]) > 0) == losses
    assert numbers(a) == numbers(b)


@pytest.mark.filterwarnings("ignore::coapcc.ResultWarning")  # 900 of 6,900 s: the collection unfinished
def test_rtt_coap_in_python_equals_the_builtin_on_its_collection():
    # 900 s: past the first 300, where the sources' rate is still too low for pacing to bind
    r = coapcc.sim(preset="rttcoap-homog-57", cc=["rtt_coap", RttCoap], duration=900.0, reps=1)
    a, b = r.summary["runs"]
    assert a["exchanges"] > 0
    assert numbers(a) == numbers(b)


def test_a_marking_of_another_name_is_refused():
    class Bad(DefaultCoap):
        name = "py_bad_marking"
        marking = "tokens"

    with pytest.raises(Exception, match='"none", "token", "option" or "counter"'):
        coapcc.sim(cc=Bad, clients=1, reps=1)
