"""coapcc from Python: the CoAP congestion-control simulator and sweeps, in-process.

The simulation runs in Rust (the experiment library the ``coapcc`` command line runs too, through
PyO3) with the GIL released; results come back in memory as plain dicts and pandas DataFrames with
the same fields and columns as ``coapcc sim --json`` and its CSV files (``docs/outputs.md``).

>>> import coapcc
>>> r = coapcc.sim(clients=100, buffer="infinite", cc=["default", "fasor"])
>>> r.summary["runs"][1]["fct_s"]["p50"]
>>> r.clients().groupby(["cc", "cc_params"]).fct_s.median()

Sweeps run a plan (the TOML of ``coapcc sweep``) on this machine, or on any Dask cluster:

>>> from dask.distributed import Client, LocalCluster
>>> df = coapcc.sweep("plans/example.toml", "results/ex", client=Client(LocalCluster()))
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import _native
from .controller import RTO_FLOOR, Controller, ControllerError, Exchange, Rng, clamp_rto, double

__all__ = [
    "SimResult", "sim", "load", "algorithms", "presets", "sweep", "league", "League", "IncompleteWarning", "ResultWarning", "Controller",
    "ControllerError", "Exchange", "Rng", "RTO_FLOOR", "clamp_rto", "double", "__version__",
]

#: The version of coapcc (the Python package and the simulator it carries).
__version__: str = _native.VERSION

PathLike = Union[str, "os.PathLike[str]"]

#: Bytes of the bottleneck's "infinite" buffer (the reference testbed's 1,410,000).
INFINITE_BUFFER = 1_410_000


class IncompleteWarning(UserWarning):
    """A run finished but not all of it: a replication was cut at the scenario's ``max_time_s``
    (``coapcc sim`` exits with status 3 then). The results are there; the message says what."""


class ResultWarning(UserWarning):
    """A run finished, but some of its figures describe almost nothing: a network that answered
    fewer than 5 % of the exchanges, a mesh PDR below 5 %, or half the clients or more without an
    FCT. The message names the figure; the summary's ``warnings`` lists them."""


class SimResult:
    """The results of :func:`sim`, in memory.

    ``summary`` is the object ``coapcc sim --json`` prints (with several algorithms,
    ``{"runs": [...]}``); :meth:`clients`, :meth:`exchanges`, :meth:`rtos` and (a mesh run)
    :meth:`nodes` are the tables of ``coapcc sim --out`` (``clients.csv``, ``exchanges.csv``,
    ``rto.csv``, ``nodes.csv``) as pandas DataFrames, built from the simulator's columns (no
    file in between): the same rows, columns and values a CSV reader gets from the files, except
    mote positions, kept at full precision (the files round them to 4 decimals).
    """

    def __init__(self, summary: Dict[str, Any], tables: Dict[str, Dict[str, list]], incomplete: Optional[str],
                 directory: Optional[Path] = None):
        #: What ``coapcc sim --json`` prints.
        self.summary: Dict[str, Any] = summary
        #: The message of an incomplete run (a truncated replication), else None.
        self.incomplete = incomplete
        #: Where the result files were written (``out=``), else None.
        self.directory = directory
        self._tables = tables

    def _table(self, name: str):
        import pandas as pd

        columns = self._tables.get(name)
        if columns is None:
            raise ValueError(f"this run has no {name} table (nodes is a mesh run's)")
        return pd.DataFrame(columns)

    def clients(self):
        """One row per client and replication (``clients.csv``) as a pandas DataFrame."""
        return self._table("clients")

    def exchanges(self):
        """One row per exchange and replication (``exchanges.csv``) as a pandas DataFrame."""
        return self._table("exchanges")

    def rtos(self):
        """One row per RTO armed for an exchange (``rto.csv``) as a pandas DataFrame."""
        return self._table("rto")

    def nodes(self):
        """A mesh run's motes, one row per mote and replication (``nodes.csv``: role, position,
        RPL parent and rank, packets and frames, drops, radio-on time) as a pandas DataFrame."""
        return self._table("nodes")

    def __repr__(self) -> str:
        runs = self.summary.get("runs", [self.summary])
        algos = ", ".join("tcp" if r["scenario"].get("transport") == "tcp" else r["scenario"]["cc"] for r in runs)
        return f"<coapcc.SimResult {algos}{' (incomplete)' if self.incomplete else ''}>"


def _check_whole(name: str, value: Any, low: int) -> None:
    """A whole number of at least ``low`` (and at most 2^64 − 1), or None."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < 2**64:
        raise ValueError(f"{name} must be a whole number ≥ {low}, not {value!r}")


def _check_finite(value: Any, where: str) -> None:
    """Scenario keys hold no NaN or infinity (TOML would carry them, and no key means them)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"scenario key {where}: must be a finite number, not {value!r}")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, (list, tuple)):
        for v in value:
            _check_finite(v, where)


def _buffer(buffer: Union[int, str, None]) -> Optional[int]:
    if buffer is None:
        return None
    if buffer in ("infinite", "inf"):
        return INFINITE_BUFFER
    if isinstance(buffer, bool) or not isinstance(buffer, int) or buffer < 1:
        raise ValueError(f"buffer must be a positive number of bytes or 'infinite', not {buffer!r}")
    return buffer


def sim(
    scenario: Optional[PathLike] = None,
    preset: Optional[str] = None,
    cc: Union[str, Any, Sequence[Any], None] = None,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    *,
    threads: Optional[int] = None,
    duration: Optional[float] = None,
    buffer: Union[int, str, None] = None,
    out: Optional[PathLike] = None,
    pcap: Optional[PathLike] = None,
    **keys: Any,
) -> SimResult:
    """Simulates a scenario, as ``coapcc sim`` does, and returns its results.

    Args:
        scenario: a TOML scenario file (``docs/scenario.md``); default: the ``thesis`` preset.
        preset: a named preset instead (:func:`presets` lists them), e.g. ``"nitk-gst-cooja"``.
        cc: an algorithm ``NAME[:key=value,...]`` or a list of them, compared on the same seeds
            (:func:`algorithms` lists them), ``tcp[:key=value,...]`` among them for CoAP over
            TCP (the scenario's ``transport``), or a :class:`Controller` subclass written in
            Python (alone, as ``(Class, {"key": value})`` or as ``functools.partial``);
            default: the scenario's.
        reps: replications; default: the scenario's.
        seed: master seed; default: the scenario's.
        threads: worker threads (default: all cores); results do not depend on it.
        duration: simulated seconds per replication of a mesh scenario.
        buffer: both bottleneck directions' buffer, bytes, or ``"infinite"``.
        out: a directory to write the result files into as well (summary.json and the CSV
            tables of ``coapcc sim --out``); the results come back in memory either way.
        pcap: a pcap file for replication 0 (``coapcc sim --pcap``), for Wireshark: every
            datagram sent, CoAP in UDP in IPv4 (the bottleneck), or every 802.15.4 frame on the
            air, 6LoWPAN hop by hop (a mesh); with several
            algorithms, a file each (``run.pcap`` gives ``run-cocoa.pcap``, ...).
        **keys: any scenario key over the scenario, e.g. ``clients=100``,
            ``workload="random"``, ``errors="low"``, ``downlink={"delay_ms": 100.0}``.

    Raises:
        ValueError: with the command line's message, for any bad input.
        ControllerError: a controller written in Python raised (its cause) or returned nonsense.
    """
    if scenario is not None and preset is not None:
        raise ValueError("give a scenario file or a preset, not both")
    if preset is not None and not isinstance(preset, str):
        raise ValueError(f"preset must be a preset's name (coapcc.presets()), not {preset!r}")
    for name, value, low in (("reps", reps, 1), ("seed", seed, 0), ("threads", threads, 1)):
        _check_whole(name, value, low)
    if duration is not None and not (isinstance(duration, (int, float)) and not isinstance(duration, bool)
                                     and math.isfinite(duration) and duration > 0):
        raise ValueError(f"duration must be a positive number of seconds, not {duration!r}")
    _check_finite(keys, "")
    text = origin = None
    if scenario is not None:
        path = Path(scenario)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ValueError(f"cannot read {path}: {e.strerror}") from None
        origin = str(path)
    from .controller import spec

    one_with_params = isinstance(cc, tuple) and len(cc) == 2 and isinstance(cc[1], dict)
    if isinstance(cc, list) or (isinstance(cc, tuple) and not one_with_params):
        given = list(cc)
    else:
        given = [] if cc is None else [cc]
    if (cc is not None and not given) or "" in given:
        # an empty list had run the scenario's algorithm as though nothing were asked
        raise ValueError(f"cc={cc!r} names no algorithm: give one or more, or leave cc out for the scenario's")
    try:
        ccs = [spec(c) for c in given]
    except TypeError as e:
        raise ValueError(
            f"cc must be an algorithm's name (NAME[:key=value,...]), a coapcc.Controller subclass, or a list of them: {e}"
        ) from None
    buffer_bytes = _buffer(buffer)
    directory = None
    if out is not None:
        directory = Path(out)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ValueError(f"cannot create the output directory {directory}: {e.strerror or e}") from None
    try:
        summary, tables, incomplete = _native.sim(
            origin or ("preset " + preset if preset else "coapcc.sim()"),
            text=text,
            preset=preset,
            keys=json.dumps(keys) if keys else None,
            cc=ccs,
            reps=reps,
            seed=seed,
            threads=threads,
            duration=duration,
            buffer=buffer_bytes,
            out=str(directory) if directory is not None else None,
            pcap=str(pcap) if pcap is not None else None,
        )
    except KeyboardInterrupt:
        # with out=, the replications that finished were written: say where
        if directory is not None and (directory / "summary.json").exists():
            raise KeyboardInterrupt(f"coapcc.sim interrupted: the replications that finished are in {directory}") from None
        raise
    import warnings

    if incomplete:
        warnings.warn(incomplete, IncompleteWarning, stacklevel=2)
    result = SimResult(json.loads(summary), tables, incomplete, directory)
    for run in result.summary.get("runs", [result.summary]):
        for w in run.get("warnings", []):
            warnings.warn(f"{run['scenario']['cc']}: {w}", ResultWarning, stacklevel=2)
    return result


def load(
    server: str,
    cc: Any = None,
    clients: int = 10,
    exchanges: int = 50,
    *,
    workload: str = "continuous",
    seed: Optional[int] = None,
    bind: str = "0.0.0.0:0",
) -> Dict[str, Any]:
    """Real clients against a real server, as ``coapcc load --json`` runs them: ``clients``
    concurrent clients (each its own UDP socket, endpoint and controller) of ``exchanges`` GETs of
    the ``server`` URI each (``coap://HOST:PORT/PATH``; ``coap+tcp://`` for CoAP over TCP).
    Returns the object ``load --json`` prints: the statistics of ``sim --json`` that apply
    (the same definitions), requests sent, wall time.

    Args:
        cc: an algorithm's name, ``NAME[:key=value,...]``, or a :class:`Controller` subclass
            (alone or with parameters, as for :func:`sim`); default: ``default``.
        workload: ``"continuous"``, or ``"random"`` batches of 1 to 10 with the controller reset
            between them.
        seed: the clients' random streams (default: from the OS).
        bind: the local address of the clients' sockets.

    Raises:
        ValueError: bad input, or the server cannot be reached.
        ControllerError: a controller written in Python raised or returned nonsense.
    """
    from .controller import spec

    for name, value, low in (("clients", clients, 1), ("exchanges", exchanges, 1), ("seed", seed, 0)):
        _check_whole(name, value, low)
    for name, value in (("clients", clients), ("exchanges", exchanges)):
        if value >= 2**32:
            raise ValueError(f"{name} must be below 2^32, not {value}")
    try:
        text = spec(cc) if cc is not None else None
    except TypeError as e:
        raise ValueError(f"cc must be an algorithm's name or a coapcc.Controller subclass: {e}") from None
    return json.loads(_native.load(server, text, clients, exchanges, workload, seed, bind))


def algorithms() -> List[Dict[str, Any]]:
    """Every algorithm (and ``tcp``) with its source and its parameters' defaults, as
    ``coapcc algorithms --json`` lists them."""
    return json.loads(_native.algorithms_json())


def presets() -> Dict[str, str]:
    """Every named preset with its one-line description, as ``coapcc presets`` lists them."""
    return dict(_native.presets())


def _plan_text(plan: Union[PathLike, str]) -> str:
    if isinstance(plan, str) and ("\n" in plan or "=" in plan or "[" in plan) and not os.path.exists(plan):
        return plan
    path = Path(plan)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror}") from None


def _run_cell(text: str, cell_id: str, controllers: Sequence[type] = ()) -> Tuple[str, str, bytes]:
    """A Dask task: one cell of the plan, run on the worker; its files come back to the client
    (no shared filesystem needed). The plan's Python controllers are registered on the worker
    first (Dask ships the classes: by reference to an importable module, or by value)."""
    from . import _native as native
    from .controller import _register

    for cls in controllers:
        _register(cls)
    js, csv = native.run_cell(text, cell_id)
    return cell_id, js, bytes(csv)


def sweep(
    plan: Union[PathLike, str],
    out: PathLike,
    client: Any = None,
    *,
    threads: Optional[int] = None,
    force: bool = False,
    on_cell: Optional[Callable[[str], None]] = None,
    controllers: Sequence[type] = (),
):
    """Runs a plan, as ``coapcc sweep`` does, and returns its tidy table (``clients.csv``).

    The results directory is the command line's: ``cells/ID.json``, ``cells/ID.clients.csv``,
    ``clients.csv``, ``plan.toml``, ``plan.json``, ``run-all.json``. Finished cells are
    skipped, so a sweep that was stopped (or lost a worker) is completed by running it again.

    Args:
        plan: the plan's TOML file, or its text.
        out: the results directory.
        client: a ``dask.distributed.Client``: one task per unfinished cell on its cluster (any
            deployment: ``LocalCluster``, ``dask_jobqueue.SLURMCluster``, Kubernetes). Workers
            need coapcc installed, not a shared filesystem: each cell's files come back to this
            process, which writes them as they finish. Default: this machine's cores.
        threads: with no client, worker threads (default: all cores).
        force: mix results with another plan's already in ``out`` (refused otherwise).
        on_cell: called with each cell's id once its files are written.
        controllers: :class:`Controller` subclasses the plan names (by their ``name``, in
            ``cc`` or ``stack``), registered here and on every Dask worker.

    Raises:
        ValueError: with the command line's message, for a bad plan or a directory of another plan.
        ControllerError: a controller written in Python failed; the cells that finished before
            are kept, none after.
    """
    import pandas as pd

    from .controller import _register

    controllers = list(controllers)
    for cls in controllers:
        _register(cls)
    text = _plan_text(plan)
    _check_whole("threads", threads, 1)
    try:
        _native.plan_cells(text)
    except ValueError as e:
        if "unknown algorithm" in str(e):
            raise ValueError(
                f"{e} (an algorithm written in Python: pass its class in controllers=[...], and the plan names it by "
                "its `name`)"
            ) from None
        raise
    out = Path(out)
    stopped = KeyboardInterrupt(
        f"coapcc.sweep interrupted: the cells that finished are kept in {out}; the same call again runs the rest"
    )
    if client is not None and not callable(getattr(client, "submit", None)):
        raise ValueError(f"client must be a dask.distributed.Client (or None: this machine's cores), not {client!r}")
    if client is None:
        try:
            _native.sweep_local(text, str(out), threads=threads, force=force)
        except KeyboardInterrupt:
            raise stopped from None
    else:
        from dask.distributed import as_completed

        todo = _native.prepare(text, str(out), force)
        _, cells = _native.plan_cells(text)
        start = time.monotonic()
        futures = [client.submit(_run_cell, text, cid, controllers, key=f"coapcc-cell-{cid}", pure=False) for cid in todo]
        ran = 0
        try:
            for fut in as_completed(futures):
                cid, js, csv = fut.result()
                _native.store_cell(str(out), cid, js, csv)
                ran += 1
                if on_cell is not None:
                    on_cell(cid)
        except KeyboardInterrupt:
            client.cancel(futures)
            _native.finish(text, str(out), ran, len(cells) - len(todo), time.monotonic() - start)
            raise stopped from None
        _native.finish(text, str(out), len(todo), len(cells) - len(todo), time.monotonic() - start)
    _warn_of_cells(text, out)
    table = out / "clients.csv"
    return pd.read_csv(table, dtype={"cc": str, "cc_params": str}) if table.exists() else pd.DataFrame()


class League(NamedTuple):
    """The league of a results directory (``coapcc league``): ``table`` (one row per algorithm,
    best first: worst and mean regret, cells within 3 % and 5 % of the best, ties, mean Jain
    index and retransmissions per exchange) and ``cells`` (one row per algorithm and league cell:
    the figure ranked with its 95 % confidence interval, the regret, FCT p50/p90 or completed/s,
    Jain, retransmissions per exchange), as pandas data frames; ``league/*.csv`` hold the same."""

    table: Any
    cells: Any


def league(
    out: PathLike,
    client: Any = None,
    *,
    controllers: Sequence[type] = (),
    entrants: Sequence[str] = (),
    suite: Union[PathLike, str, None] = None,
    reps: Optional[int] = None,
    quick: bool = False,
    threads: Optional[int] = None,
    force: bool = False,
) -> League:
    """Runs the league, as ``coapcc league`` does: every built-in algorithm (and yours) on every
    cell of the suite (``plans/league.toml``), then ranks them by regret and writes
    ``out/league/`` and the report. A sweep: finished cells are skipped, ``client`` runs it on a
    Dask cluster.

    Args:
        out: the results directory.
        client: a ``dask.distributed.Client``, as for :func:`sweep`.
        controllers: :class:`Controller` subclasses entering the league (by their ``name``).
        entrants: more entrants by name (built-ins with other parameters, ``"fasor:dither=false"``).
        suite: another suite instead of the league's: a plan (file or text) whose matrices list the
            entrants in ``cc`` (the cells outside the suite where a lead should hold, say).
        reps: replications (the league's: a wired cell's, 10; the other cells keep their ratio).
        quick: 3 replications a wired cell.
        threads, force: as for :func:`sweep`.
    """
    import pandas as pd

    from .controller import _register

    if quick and reps is not None:
        raise ValueError("quick and reps: choose one")
    if reps is not None:
        _check_whole("reps", reps, 1)
    # registered here (a class without `name` enters under its snake-case class name)
    names = [_register(c) for c in controllers]
    extra = list(dict.fromkeys([*names, *entrants]))
    text = _native.league_plan(extra, reps, None if suite is None else _plan_text(suite), quick)
    sweep(text, out, client, threads=threads, force=force, controllers=controllers)
    _native.league_write(str(out))
    folder = Path(out) / "league"
    return League(table=pd.read_csv(folder / "table.csv"), cells=pd.read_csv(folder / "cells.csv"))


def _warn_of_cells(text: str, out: Path) -> None:
    """Warns of the plan's finished cells that were cut at ``max_time_s`` (IncompleteWarning, as
    ``coapcc sweep`` exits with status 3) or whose figures describe almost nothing (ResultWarning)."""
    import warnings

    truncated, notes = _native.notes(text, str(out))
    if truncated:
        warnings.warn(
            f"{len(truncated)} cell(s) finished incomplete: " + "; ".join(truncated), IncompleteWarning, stacklevel=3
        )
    for n in notes:
        warnings.warn(n, ResultWarning, stacklevel=3)
