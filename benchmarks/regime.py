"""Regime benchmark: gaussdp against dp_accounting over the space of DP-SGD runs (issue 24).

Run by hand (not by pytest)::

    python benchmarks/regime.py                      # the whole design, 3 rounds (hours)
    python benchmarks/regime.py --design             # print the design and exit
    python benchmarks/regime.py --quick              # 1 round, the 4 cheapest runs
    python benchmarks/regime.py --only 1,2,3 --rounds 5
    python benchmarks/regime.py --seed 7 --design    # a fresh design (nobody tunes to points)
    python benchmarks/regime.py --accuracy-sweep     # also the accuracy sweep
    python benchmarks/regime.py --sweep-only --sweep-runs 1,2 --update
    python benchmarks/regime.py --render benchmarks/regime.json   # rewrite the page only

The design: the three runs of issue 24, four corners of the box and a Latin
hypercube of ``--lhs`` runs (default 12, seeded by ``--seed``, default 24) in
log q ∈ [1e-6, 0.5], log T ∈ [1, 10⁶], log σ ∈ [0.5, 20] and log δ ∈ [1e-9,
1e-5]. A run whose dp_accounting composition at grid 1e-5 is predicted (see
:func:`dp_accounting_cost`) to exceed ``--max-seconds`` (30 s) or
``--max-gb`` (4 GB) has its T halved until it fits; the design table names the
T it was drawn with. A run still predicted infeasible keeps its point, and its
dp_accounting 1e-5 cell is reported as skipped with the prediction.

For each run it measures, each in a fresh child process, in ``--rounds``
rounds interleaved A B C D, D C B A, A B C D, ...:

- ``pld_fine``: dp_accounting ``PLDAccountant(value_discretization_interval=1e-5)``
  composing ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T)``,
  then ``get_epsilon(δ)`` (its "accurate" setting; pessimistic, an upper bound);
- ``pld_default``: the same at its default interval (1e-4);
- ``bounds``: ``gaussdp.account(gaussdp.DPSGD(σ, q, T)).epsilon_bounds(δ)`` (both
  certified bounds, default accuracy);
- ``report``: ``gaussdp.account(gaussdp.DPSGD(σ, q, T)).gdp(deltas=...)``, the full
  μ-GDP report at δ = 1e-5, 1e-6, 1e-9 and the run's δ;

and once per run (not in the rounds, untimed in the ratios) ``pld_optimistic``:
dp_accounting's optimistic PLD at interval 1e-5 (``from_gaussian_mechanism(σ,
sampling_prob=q, pessimistic_estimate=False, use_connect_dots=False).self_compose(T)``),
a lower bound on ε that gaussdp's upper bound must not go below; and ``exact``:
ε itself, by Laplace inversion of the composed privacy loss's exact moment
generating function (``tests/contour_reference.py``: no grid, no FFT; checked
against the Gaussian closed form at 50 digits), which gaussdp's certified
interval must hold. Where dp_accounting's pessimistic ε lies below it, that ε
is not an upper bound on the run, and the page says so.

Timing: inside the child, the imports come first (``import gaussdp`` or
``import dp_accounting, dp_accounting.pld``; timed and reported separately), then
the work is timed once with ``time.perf_counter`` (wall) and ``time.process_time``
(CPU, all threads). Nothing is subtracted: whatever the call imports or caches
on first use is in its time. The parent also records the whole process (wall,
CPU of the child from ``os.wait4``) and the child's peak resident memory
(``ru_maxrss``, imports included). Each child runs under an address-space limit
(``--memory-gb``, default 6; 0 for none: gaussdp sizes its grids to the memory
available, this limit included, so the limit can change its answer and time)
and a time-out (``--timeout``, default 900 s); a cell that fails or times out is
recorded as such and not retried in later rounds.
Times are medians over the rounds.

The accuracy sweep (``--accuracy-sweep`` or ``--sweep-only``) times
``account(DPSGD(σ, q, T), accuracy=a).epsilon_bounds(δ)`` for a = 3e-2, 1e-2,
3e-3, 1e-3, 1e-4, 5e-5, 1e-5 on ``--sweep-runs`` (default: issue runs 1 and 2),
rounds interleaved the same way, and flags any coarser accuracy costing more
than 1.2× a finer one and any gap above the accuracy asked without an
AccuracyWarning.

Writes ``docs/benchmarks-regime.md`` (``--output``) and ``benchmarks/regime.json``
(``--json``); with ``--update`` the runs measured now replace theirs in the
existing JSON and the others are kept.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_accountants import _machine, _versions, child_environment, compile_gaussdp

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "docs" / "benchmarks-regime.md"
DEFAULT_JSON = ROOT / "benchmarks" / "regime.json"

FINE, DEFAULT_INTERVAL = 1e-5, 1e-4
REPORT_DELTAS = (1e-5, 1e-6, 1e-9)
ACCURACIES = (3e-2, 1e-2, 3e-3, 1e-3, 1e-4, 5e-5, 1e-5)
SWEEP_SLACK = 1.2  # a coarser accuracy may cost this much more than a finer one (noise)

# issue 24's targets, as ratios to dp_accounting at grid 1e-5
TARGETS = {"bounds": 1.0, "report": 2.0, "memory": 1.25}

# the box the design covers (log-uniform in each)
BOX = {
    "sampling_probability": (1e-6, 0.5),
    "steps": (1, 10**6),
    "noise_multiplier": (0.5, 20.0),
    "delta": (1e-9, 1e-5),
}

CELLS = {
    "pld_fine": "dp_accounting PLD, grid 1e-5",
    "pld_default": "dp_accounting PLD, default grid 1e-4",
    "bounds": "gaussdp epsilon_bounds (default)",
    "report": "gaussdp gdp() report",
    "pld_optimistic": "dp_accounting optimistic PLD, grid 1e-5 (lower bound, once)",
    "fine_reference": "gaussdp epsilon_bounds at --fine-reference accuracy (once)",
    "exact": "exact ε by Laplace inversion of the MGF (once, untimed)",
}
ROUND_CELLS = ["pld_fine", "pld_default", "bounds", "report"]


@dataclass(frozen=True)
class Run:
    """One DP-SGD run: T steps of the Poisson-subsampled Gaussian (σ, q), ε at δ."""

    index: int
    origin: str
    noise_multiplier: float
    sampling_probability: float
    steps: int
    delta: float
    drawn_steps: int | None = None  # the T drawn, when halved for dp_accounting's sake

    @property
    def key(self) -> str:
        return f"run{self.index}"

    @property
    def label(self) -> str:
        return (
            f"{self.index}: σ={self.noise_multiplier:g}, q={self.sampling_probability:g}, "
            f"T={_steps(self.steps)}, δ={self.delta:g}"
        )

    def args(self) -> list[str]:
        return [
            repr(self.noise_multiplier),
            repr(self.sampling_probability),
            str(self.steps),
            repr(self.delta),
        ]


def _steps(steps: int) -> str:
    exponent = round(math.log10(steps)) if steps > 0 else 0
    return f"10^{exponent}" if steps == 10**exponent and exponent >= 3 else str(steps)


# --------------------------------------------------------------------------- cost screen


def dp_accounting_cost(
    sigma: float, q: float, steps: int, interval: float = FINE, tail: float = 1e-15
) -> dict:
    """Predicted size, time and memory of dp_accounting's composition at ``interval``.

    dp_accounting (0.6) discretises one step's privacy loss on a grid of
    ``interval`` over the losses of x ∈ [−zσ − 1, zσ], z = Φ⁻¹(1 − e⁻⁵⁰/2), then
    composes T steps with one FFT whose length is set by Chernoff bounds
    (``common.compute_self_convolve_bounds``: orders ±k/n₁, k = 1..20, tail mass
    1e-15). This repeats that bound on the remove direction's loss distribution
    (x ~ (1−q)N(0, σ²) + qN(1, σ²), loss log(1 − q + q·exp((2x − 1)/(2σ²)))),
    computed here by quadrature, and multiplies the composed length by 10 for the
    add direction, whose connect-the-dots tail is heavier (1× to 10× the remove
    length on four runs measured). A screen, not a measurement: the costs per
    point (6 μs per single-step point, 0.8 μs and 80 bytes per composed point,
    0.1 GB of imports) are from runs on this machine. On the 19 runs of seed 24
    (measured once, 2026-11-26, dp-accounting 0.6.0) it over-predicted the CPU
    time by up to 15× and under-predicted it by at most 1.4× (run 3: 8.2 s
    predicted, 11.2 s CPU); every run took ≤ 15 s CPU and ≤ 1.2 GB.
    """
    single, log_mgfs = _single_step(sigma, q, interval)
    upper, lower = (single - 1) * steps, 0
    for order, log_mgf in log_mgfs:
        bound = (steps * log_mgf + math.log(2.0 / tail)) / order
        if not math.isfinite(bound):
            continue
        if order > 0:
            upper = min(upper, math.ceil(bound))
        else:
            lower = max(lower, math.floor(bound))
    composed = 10 * max(upper - lower + 1, single)
    return {
        "single_points": single,
        "composed_points": composed,
        "seconds": 6e-6 * single + 0.8e-6 * composed,
        "gb": 0.1 + 80e-9 * composed,
    }


@functools.cache
def _single_step(sigma: float, q: float, interval: float) -> tuple[int, list[tuple[float, float]]]:
    """One step's grid length and log-MGF at dp_accounting's Chernoff orders (remove side)."""
    import numpy as np
    from scipy import special

    z = -float(special.ndtri(0.5 * math.exp(-50.0)))
    x = np.linspace(-z * sigma - 1.0, z * sigma, 100_001)
    log_weight = np.logaddexp(
        math.log1p(-q) - 0.5 * (x / sigma) ** 2,
        math.log(q) - 0.5 * ((x - 1.0) / sigma) ** 2,
    )
    log_weight -= special.logsumexp(log_weight)
    loss = np.logaddexp(math.log1p(-q), math.log(q) + (2.0 * x - 1.0) / (2.0 * sigma**2))
    low, high = float(loss.min()), float(loss.max())
    single = max(math.ceil((high - low) / interval) + 1, 2)
    index = (loss - low) / interval
    log_mgfs = []
    for k in [*range(-20, 0), *range(1, 21)]:
        order = k / single
        log_mgfs.append((order, float(special.logsumexp(log_weight + index * order))))
    return single, log_mgfs


def _feasible(cost: dict, args) -> bool:
    return cost["seconds"] <= args.max_seconds and cost["gb"] <= args.max_gb


# --------------------------------------------------------------------------- design

ISSUE_RUNS = [(0.8, 1e-4, 10**5, 1e-6), (1.0, 1e-5, 10**6, 1e-6), (0.5, 1e-6, 10**6, 1e-5)]
# corners of the box that matter: the issue's hardest corner at the smallest δ; one step
# with a large batch at high and at low noise; the longest run at the smallest rate and
# the highest noise (ε near 0, where a relative accuracy means least)
CORNERS = [
    (0.5, 1e-6, 10**6, 1e-9),
    (20.0, 0.5, 1, 1e-5),
    (0.5, 0.5, 1, 1e-9),
    (20.0, 1e-6, 10**6, 1e-5),
]


def _round_significant(value: float, digits: int) -> float:
    return float(f"{value:.{digits - 1}e}")


def latin_hypercube(seed: int, count: int) -> list[tuple[float, float, int, float]]:
    """``count`` (σ, q, T, δ) from a Latin hypercube in the logs of the box, seeded."""
    import numpy as np

    rng = np.random.default_rng(seed)
    columns = {}
    for name, (low, high) in BOX.items():
        strata = (rng.permutation(count) + rng.random(count)) / count
        columns[name] = 10 ** (math.log10(low) + strata * (math.log10(high) - math.log10(low)))
    points = []
    for i in range(count):
        points.append(
            (
                _round_significant(columns["noise_multiplier"][i], 2),
                _round_significant(columns["sampling_probability"][i], 2),
                max(1, int(_round_significant(columns["steps"][i], 2))),
                _round_significant(columns["delta"][i], 1),
            )
        )
    return points


def design(args) -> list[Run]:
    """The issue's runs, the corners, then the Latin hypercube; T halved where needed."""
    drawn = (
        [("issue 24", *p) for p in ISSUE_RUNS]
        + [("corner", *p) for p in CORNERS]
        + [("LHS", *p) for p in latin_hypercube(args.seed, args.lhs)]
    )
    runs = []
    for index, (origin, sigma, q, steps, delta) in enumerate(drawn, start=1):
        adjusted = steps
        if origin == "LHS":  # the fixed runs are kept as they are
            while adjusted > 1 and not _feasible(dp_accounting_cost(sigma, q, adjusted), args):
                adjusted = max(1, adjusted // 2)
        runs.append(
            Run(index, origin, sigma, q, adjusted, delta, None if adjusted == steps else steps)
        )
    return runs


def print_design(runs: list[Run], args, stream=sys.stderr) -> None:
    stream.write(
        f"design: seed {args.seed}, {len(runs)} runs (3 from issue 24, {len(CORNERS)} corners, "
        f"{args.lhs} Latin hypercube)\n"
    )
    for run in runs:
        cost = dp_accounting_cost(run.noise_multiplier, run.sampling_probability, run.steps)
        note = f" (drawn T={run.drawn_steps})" if run.drawn_steps else ""
        feasible = "" if _feasible(cost, args) else "  PREDICTED INFEASIBLE at 1e-5"
        stream.write(
            f"  {run.index:>2} {run.origin:<8} σ={run.noise_multiplier:<5g} "
            f"q={run.sampling_probability:<8g} T={run.steps:<8d} δ={run.delta:<6g}"
            f" dp_accounting 1e-5 predicted ~{cost['seconds']:.2g} s, ~{cost['gb']:.2g} GB"
            f"{note}{feasible}\n"
        )


# --------------------------------------------------------------------------- child work


def _dp_event(sigma, q, steps):
    import dp_accounting

    step = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    return dp_accounting.SelfComposedDpEvent(step, steps)


def _pld(interval):
    def work(sigma, q, steps, delta, accuracy=None):
        from dp_accounting.pld import pld_privacy_accountant

        accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
        accountant.compose(_dp_event(sigma, q, steps))
        return {"epsilon": float(accountant.get_epsilon(delta))}

    return work


def _pld_optimistic(sigma, q, steps, delta, accuracy=None):
    from dp_accounting.pld import privacy_loss_distribution

    pld = privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=sigma,
        sampling_prob=q,
        value_discretization_interval=FINE,
        pessimistic_estimate=False,
        use_connect_dots=False,  # connect-the-dots is pessimistic only
    ).self_compose(steps)
    return {"epsilon": float(pld.get_epsilon_for_delta(delta))}


def _exact(sigma, q, steps, delta, accuracy=None):
    """ε at δ by Laplace inversion (tests/contour_reference.py), from the Gaussian limit.

    Newton's method starts at the ε of μ = √(T·q²·(e^{1/σ²} − 1)) (the CLT's μ, no part of
    gaussdp), and converges to the root of the exact δ(ε) = δ.
    """
    import math

    from scipy import optimize, stats

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests import contour_reference

    mu = math.sqrt(steps * q * q * math.expm1(1.0 / (sigma * sigma)))

    def excess(e):  # δ_μ(ε) − δ, in logs
        value = stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2)
        return math.log(max(value, 1e-300)) - math.log(delta)

    guess = 1.0
    if 0.0 < mu < 30.0 and excess(1e-12) > 0.0:
        guess = optimize.brentq(excess, 1e-12, 50.0 * (1.0 + mu * mu))
    return {"epsilon": float(contour_reference.epsilon(sigma, q, steps, delta, guess=guess))}


def _bounds(sigma, q, steps, delta, accuracy=None):
    import warnings

    import gaussdp

    options = {} if accuracy is None else {"accuracy": accuracy}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lower, upper = gaussdp.account(gaussdp.DPSGD(sigma, q, steps), **options).epsilon_bounds(
            delta
        )
    return {
        "lower": float(lower),
        "epsilon": float(upper),
        "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
    }


def _report(sigma, q, steps, delta, accuracy=None):
    import warnings

    import gaussdp

    deltas = sorted({*REPORT_DELTAS, delta}, reverse=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = gaussdp.account(gaussdp.DPSGD(sigma, q, steps)).gdp(deltas=deltas)
    row = next(row for row in report.epsilons if row.delta == delta)
    lower = getattr(row, "epsilon_lower", None)
    return {
        "epsilon": float(row.epsilon),
        "lower": None if lower is None else float(lower),
        "mu": float(report.mu),
        "delta_tail": float(report.delta_tail),
        "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
    }


WORK = {
    "pld_fine": _pld(FINE),
    "pld_default": _pld(DEFAULT_INTERVAL),
    "pld_optimistic": _pld_optimistic,
    "bounds": _bounds,
    "report": _report,
    "sweep": _bounds,
    "fine_reference": _bounds,
    "exact": _exact,
}
IMPORTS = {
    "pld_fine": ["dp_accounting", "dp_accounting.pld"],
    "pld_default": ["dp_accounting", "dp_accounting.pld"],
    "pld_optimistic": ["dp_accounting", "dp_accounting.pld"],
    "bounds": ["gaussdp"],
    "report": ["gaussdp"],
    "sweep": ["gaussdp"],
    "fine_reference": ["gaussdp"],
    "exact": ["scipy.optimize"],
}


def _worker(cell: str, numbers: list[str], memory_gb: float) -> dict:
    """One cell in this (fresh) process: limit memory, import, then time the work once."""
    import importlib

    if memory_gb > 0:
        try:
            import resource

            limit = int(memory_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except ImportError:  # not POSIX: no limit
            pass
    start = time.perf_counter()
    for module in IMPORTS[cell]:
        importlib.import_module(module)
    imports = time.perf_counter() - start
    sigma, q, steps, delta = (
        float(numbers[0]),
        float(numbers[1]),
        int(numbers[2]),
        float(numbers[3]),
    )
    accuracy = float(numbers[4]) if len(numbers) > 4 else None
    start, cpu_start = time.perf_counter(), time.process_time()
    values = WORK[cell](sigma, q, steps, delta, accuracy)
    cpu = time.process_time() - cpu_start
    wall = time.perf_counter() - start
    return {"values": values, "import_seconds": imports, "seconds": wall, "cpu_seconds": cpu}


def measure(cell: str, run: Run, args, accuracy: float | None = None) -> dict:
    """Run one cell in a fresh child; the parent adds the child's rusage (CPU, peak memory)."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        cell,
        *run.args(),
        *([] if accuracy is None else [repr(accuracy)]),
        "--memory-gb",
        str(args.memory_gb),
    ]
    env = child_environment()  # PYTHONPATH passes through: the gaussdp it finds is timed
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err, env=env, text=True)
        usage = None
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > args.timeout:
                child.kill()
                os.wait4(child.pid, 0)
                child.returncode = -9
                return {"failed": f"time-out: did not finish within {args.timeout:g} s"}
            time.sleep(0.02)
        process_wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if child.returncode != 0:
        tail = (stderr.strip().splitlines() or ["(no message)"])[-1]
        if "MemoryError" in stderr or "Cannot allocate" in stderr or "bad_alloc" in stderr:
            return {"failed": f"out of memory under the {args.memory_gb:g} GB limit ({tail})"}
        return {"failed": f"exit {child.returncode}: {tail}"}
    record = json.loads(stdout.strip().splitlines()[-1])
    record["process_seconds"] = process_wall
    record["process_cpu_seconds"] = usage.ru_utime + usage.ru_stime
    record["peak_rss_mb"] = usage.ru_maxrss / 1024  # KiB on Linux
    return record


def combine(records: list[dict]) -> dict:
    """One cell from its rounds: the last values, medians of the times and memory."""
    done = [r for r in records if "failed" not in r]
    if not done:
        return dict(records[-1], rounds=0)
    result = {"values": done[-1]["values"], "rounds": len(done)}
    for key in (
        "seconds",
        "cpu_seconds",
        "import_seconds",
        "process_seconds",
        "process_cpu_seconds",
        "peak_rss_mb",
    ):
        result[key] = statistics.median(r[key] for r in done)
        result[f"{key}_all"] = [r[key] for r in done]
    failed = [r["failed"] for r in records if "failed" in r]
    if failed:
        result["failed_rounds"] = failed
    return result


def _interleaved(cells: list, rounds: int) -> list[tuple[int, object]]:
    return [
        (index, cell)
        for index in range(rounds)
        for cell in (cells if index % 2 == 0 else cells[::-1])
    ]


def measure_run(run: Run, args) -> dict:
    cost = dp_accounting_cost(run.noise_multiplier, run.sampling_probability, run.steps)
    skip = {}
    if not _feasible(cost, args) and not args.force:
        why = (
            f"predicted infeasible at grid 1e-5 (~{cost['seconds']:.3g} s, ~{cost['gb']:.3g} GB "
            f"> {args.max_seconds:g} s or {args.max_gb:g} GB); not run (--force runs it)"
        )
        skip = {"pld_fine": why, "pld_optimistic": why}
    raw: dict[str, list[dict]] = {cell: [] for cell in CELLS}
    wanted = args.cells or list(CELLS)
    schedule = []
    if not args.no_reference and "pld_optimistic" in wanted:
        schedule.append((0, "pld_optimistic"))
    if args.fine_reference and "fine_reference" in wanted:
        schedule.append((0, "fine_reference"))
    if not args.no_exact and "exact" in wanted:
        if run.steps >= args.exact_from_steps:
            schedule.append((0, "exact"))
        else:
            skip["exact"] = (
                f"not computed: T < {args.exact_from_steps} (on short runs the inversion's "
                "integrand decays slowly in t; grids are easy there)"
            )
            schedule.append((0, "exact"))
    schedule += _interleaved([c for c in ROUND_CELLS if c in wanted], args.rounds)
    for index, cell in schedule:
        if cell in skip:
            raw[cell] = [{"failed": skip[cell]}]
            continue
        if any("failed" in r for r in raw[cell]):
            continue  # failed once (memory, time-out): not paid for again
        sys.stderr.write(f"  run {run.index:>2} round {index + 1} {CELLS[cell]:<48} ")
        sys.stderr.flush()
        accuracy = args.fine_reference if cell == "fine_reference" else None
        record = measure(cell, run, args, accuracy=accuracy)
        raw[cell].append(record)
        sys.stderr.write(_progress(record) + "\n")
    cells = {cell: combine(records) for cell, records in raw.items() if records}
    return {"run": asdict(run), "label": run.label, "cost_prediction": cost, "cells": cells}


def _progress(record: dict) -> str:
    if "failed" in record:
        return f"FAILED: {record['failed']}"
    values = record["values"]
    shown = ", ".join(
        f"{k}={v:.6g}" for k, v in values.items() if isinstance(v, float) and v is not None
    )
    warned = " (warned)" if values.get("warnings") else ""
    return (
        f"{shown}{warned}  [{record['seconds']:.3g} s, CPU {record['cpu_seconds']:.3g} s, "
        f"{record['peak_rss_mb']:.0f} MB]"
    )


def measure_sweep(run: Run, args) -> dict:
    raw: dict[float, list[dict]] = {a: [] for a in args.accuracies}
    for index, accuracy in _interleaved(list(args.accuracies), args.rounds):
        if any("failed" in r for r in raw[accuracy]):
            continue
        sys.stderr.write(f"  sweep run {run.index:>2} round {index + 1} accuracy {accuracy:<8g} ")
        sys.stderr.flush()
        record = measure("sweep", run, args, accuracy=accuracy)
        raw[accuracy].append(record)
        sys.stderr.write(_progress(record) + "\n")
    return {
        "run": asdict(run),
        "label": run.label,
        "accuracies": {repr(a): combine(records) for a, records in raw.items() if records},
    }


# --------------------------------------------------------------------------- page


def _ok(record: dict | None) -> bool:
    return bool(record) and "failed" not in record and record.get("rounds", 1) > 0


def _value(record: dict | None, key: str = "epsilon") -> float | None:
    return record["values"].get(key) if _ok(record) else None


def _quotient(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b <= 0 else a / b


def _num(value: float | None, fmt: str = ".6g") -> str:
    return "—" if value is None else format(value, fmt)


def _mark(ratio: float | None, target: float) -> str:
    if ratio is None:
        return "—"
    return f"{ratio:.2f} {'✓' if ratio <= target else '✗'}"


def _cell_time(record: dict | None) -> str:
    if record is None:
        return "not run"
    if not _ok(record):
        return _short_failure(record)
    return f"{record['seconds']:.3g} s"


def _short_failure(record: dict) -> str:
    text = record.get("failed", "failed")
    if text.startswith("predicted infeasible"):
        return "infeasible (predicted)"
    if text.startswith("time-out"):
        return "time-out"
    if text.startswith("out of memory"):
        return "out of memory"
    if text.startswith("not computed"):
        return "not computed"
    return "failed"


def _reference(record: dict | None, settings: dict) -> str:
    if record is None:
        return "—"
    if not _ok(record):
        return _short_failure(record)
    accuracy = settings.get("fine_reference")
    return f"[{_value(record, 'lower'):.8g}, {_value(record):.8g}]" + (
        "" if accuracy is None else f" ({accuracy:g})"
    )


def _gap(lower: float | None, upper: float | None) -> float | None:
    if lower is None or upper is None or upper <= 0:
        return None
    return (upper - lower) / upper


#: Independent brackets computed once, outside this script (too slow to repeat), keyed by
#: (σ, q, T, δ): (name, lower, upper, how). The certified check compares against them too,
#: and where dp_accounting's ε lies below such a lower bound, the violation is its own.
EXTERNAL_REFERENCES = {
    (0.5, 1e-6, 1_000_000, 1e-9): (
        "PRV",
        0.560532145750047,
        0.5628163513355428,
        "prv_accountant 0.2.0, PRVAccountant(PoissonSubsampledGaussianMechanism(0.5, 1e-6), "
        "max_self_compositions=[10**6], eps_error=1e-3, delta_error=1e-12)"
        ".compute_epsilon(1e-9): (lower, estimate, upper) = (0.560532, 0.561674, 0.562816), "
        "428 s",
    ),
}


def _external(run: dict | None):
    if run is None:
        return None
    key = (run["noise_multiplier"], run["sampling_probability"], run["steps"], run["delta"])
    return EXTERNAL_REFERENCES.get(key)


#: The exact ε's relative uncertainty (Newton's tolerance and the quadratures'), allowed
#: for when a certified interval or dp_accounting's ε is checked against it.
EXACT_TOLERANCE = 1e-8


def _below_exact(cells: dict, name: str) -> bool:
    """Whether dp_accounting's ε (``name``: pld_fine or pld_default) is below the exact ε."""
    exact, value = _value(cells.get("exact")), _value(cells.get(name))
    if exact is None or value is None:
        return False
    return value < exact * (1.0 - EXACT_TOLERANCE)


def _below_external(row: dict, run: dict) -> str:
    """`` (below the exact ε)``: dp_accounting's ε at 1e-5 is not an upper bound here.

    No certified upper bound can then be at least as tight; the target stays counted missed.
    """
    if _below_exact(row["cells"], "pld_fine"):
        return " (dp_accounting's ε is below the exact ε)"
    external, fine = _external(run), _value(row["cells"].get("pld_fine"))
    if external is None or fine is None or fine >= external[1]:
        return ""
    return f" (dp_accounting's ε is below {external[0]}'s lower bound)"


def _misses(cells: dict, low: float, high: float, what: str) -> list[str]:
    """The cells (bounds, report) whose certified interval is disjoint from [low, high]."""
    problems = []
    for cell in ("bounds", "report"):
        lower, upper = _value(cells.get(cell), "lower"), _value(cells.get(cell))
        if lower is not None and upper is not None and (upper < low or lower > high):
            problems.append(
                f"{cell}: [{lower:.8g}, {upper:.8g}] misses {what} [{low:.8g}, {high:.8g}]"
            )
    return problems


def _checks(cells: dict, run: dict | None = None) -> list[str]:
    """Certified-bound violations: against dp_accounting, the fine reference's bracket and
    an external reference (:data:`EXTERNAL_REFERENCES`)."""
    problems = []
    external = _external(run)
    if external is not None:
        name, low, high, _ = external
        problems += _misses(cells, low, high, f"{name}'s bracket")
    reference = cells.get("fine_reference")
    if _ok(reference):
        low, high = _value(reference, "lower"), _value(reference)
        problems += _misses(cells, low, high, "the fine reference's certified bracket")
    exact = _value(cells.get("exact"))
    if exact is not None:
        low, high = exact * (1.0 - EXACT_TOLERANCE), exact * (1.0 + EXACT_TOLERANCE)
        problems += _misses(cells, low, high, "the exact ε")
    fine, default = _value(cells.get("pld_fine")), _value(cells.get("pld_default"))
    optimistic = _value(cells.get("pld_optimistic"))
    for cell in ("bounds", "report"):
        lower, upper = _value(cells.get(cell), "lower"), _value(cells.get(cell))
        for key, name, ceiling in (
            ("pld_fine", "dp_accounting 1e-5", fine),
            ("pld_default", "dp_accounting default", default),
        ):
            if external is not None and ceiling is not None and ceiling < external[1]:
                continue  # below the external lower bound: dp_accounting's violation, not ours
            if _below_exact(cells, key):
                continue  # below the exact ε: not an upper bound, so no check of ours
            if lower is not None and ceiling is not None and lower > ceiling:
                problems.append(f"{cell}: lower bound {lower:.8g} > {name} ε {ceiling:.8g}")
        if upper is not None and optimistic is not None and upper < optimistic:
            problems.append(
                f"{cell}: upper bound {upper:.8g} < dp_accounting optimistic ε {optimistic:.8g}"
            )
    return problems


def _targets(cells: dict) -> dict[str, tuple[float | None, bool | None]]:
    fine = cells.get("pld_fine")
    bounds, report = cells.get("bounds"), cells.get("report")

    def ratio(record, key):
        if not _ok(record) or not _ok(fine):
            return None
        return _quotient(record[key], fine[key])

    def verdict(value, target):
        return (value, None if value is None else value <= target)

    memory = [ratio(bounds, "peak_rss_mb"), ratio(report, "peak_rss_mb")]
    memory = None if None in memory else max(memory)
    tighter = None
    if _value(bounds) is not None and _value(fine) is not None:
        if _value(fine) > 0.0:
            tighter = _value(bounds) / _value(fine)
        else:  # dp_accounting's ε is 0 (below its grid): only ε = 0 is as tight
            tighter = 1.0 if _value(bounds) <= 0.0 else math.inf
    return {
        "bounds": verdict(ratio(bounds, "seconds"), TARGETS["bounds"]),
        "tighter": verdict(tighter, 1.0),
        "report": verdict(ratio(report, "seconds"), TARGETS["report"]),
        "memory": verdict(memory, TARGETS["memory"]),
    }


def _cpu_ratio(cells: dict, cell: str) -> str:
    """`` (CPU r)``: the same ratio in CPU time (less sensitive to a shared machine's load)."""
    record, fine = cells.get(cell), cells.get("pld_fine")
    if not _ok(record) or not _ok(fine):
        return ""
    ratio = _quotient(record["cpu_seconds"], fine["cpu_seconds"])
    return "" if ratio is None else f" (CPU {ratio:.2f})"


def _excess(pair: tuple[float | None, bool | None]) -> str:
    """upper / ε − 1 with its mark: ≤ 0 when gaussdp's upper bound is at least as tight."""
    value, ok = pair
    return "—" if value is None else f"{value - 1:+.1e} {'✓' if ok else '✗'}"


def _inside(cells: dict) -> str:
    """`` (inside)`` when dp_accounting's ε lies in gaussdp's certified bracket.

    Then either may be the nearer to the true ε, and only a narrower bracket (a
    finer accuracy) can put the upper bound below it.
    """
    fine, bounds = _value(cells.get("pld_fine")), cells.get("bounds")
    lower, upper = _value(bounds, "lower"), _value(bounds)
    if fine is None or lower is None or upper is None or fine >= upper:
        return ""
    return " (inside)" if fine >= lower else ""


def _verdict(pair: tuple[float | None, bool | None], fmt: str = ".2f") -> str:
    value, ok = pair
    if value is None:
        return "—"
    return f"{format(value, fmt)} {'✓' if ok else '✗'}"


def _rounds(results: dict, settings: dict) -> str:
    """The round counts of the cells measured (several when --update mixed them)."""
    counts = {
        record.get("rounds", 0)
        for row in results.values()
        for cell, record in row["cells"].items()
        if cell in ROUND_CELLS and _ok(record)
    }
    return " or ".join(str(c) for c in sorted(counts)) if counts else str(settings["rounds"])


def write_markdown(payload: dict, path: Path) -> None:
    settings = payload["settings"]
    runs = payload["design"]
    results = payload["results"]
    sweeps = payload.get("sweeps", {})
    lines = ["# Regime benchmark: gaussdp against dp_accounting over the space of DP-SGD runs", ""]
    if settings.get("label"):
        lines += [f'!!! warning "{settings["label"]}"', ""]
    partial = len(results) < len(runs)
    lines += [
        f"Generated by `benchmarks/regime.py` on {payload['date']} (issue 24). "
        + (
            f"**Partial run: {len(results)} of the {len(runs)} runs of the design"
            f"{', ' + _rounds(results, settings) + ' round(s)'}.** "
            if partial
            else ""
        )
        + "Every run is DP-SGD: T steps of a Poisson-subsampled Gaussian with noise multiplier "
        "σ and sampling rate q, add/remove neighbouring, ε at the run's δ.",
        "",
        "Commands that produced it (with `--update`, each adds its runs):",
        "",
        "```sh",
        *(
            "python benchmarks/regime.py " + shlex.join(argv)
            for argv in payload.get("invocations", [settings["argv"]])
        ),
        "```",
        "",
        "What is timed, each in a fresh process, in "
        f"{_rounds(results, settings)} round(s) interleaved A B C D, D C B A, …:",
        "",
        "- **dp_acc 1e-5**: dp_accounting `PLDAccountant(value_discretization_interval=1e-5)`, "
        "`compose(SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T))`, "
        "`get_epsilon(δ)`: its accurate setting, a pessimistic ε;",
        "- **dp_acc default**: the same at its default interval 1e-4;",
        "- **bounds**: `gaussdp.account(gaussdp.DPSGD(σ, q, T)).epsilon_bounds(δ)`, both "
        "certified bounds at the default accuracy;",
        "- **report**: `gaussdp.account(gaussdp.DPSGD(σ, q, T)).gdp(deltas=(1e-5, 1e-6, 1e-9, "
        "δ))`, the full μ-GDP report;",
        "- once per run, untimed in the ratios: dp_accounting's optimistic PLD at interval 1e-5 "
        "(`from_gaussian_mechanism(σ, sampling_prob=q, pessimistic_estimate=False, "
        "use_connect_dots=False).self_compose(T)`), a lower bound on ε; and the exact ε, by "
        "Laplace inversion of the composed privacy loss's exact moment generating function "
        "(`tests/contour_reference.py`: Newton's method on log δ(ε), each δ a Bromwich integral "
        "through the saddle point; no grid, no FFT; checked against the Gaussian closed form "
        "at 50 digits), which every certified interval must hold.",
        "",
        "Times are the work inside the child after its imports (`import gaussdp` or "
        "`import dp_accounting, dp_accounting.pld`, timed separately), once per process, "
        "wall (`time.perf_counter`); medians over the rounds. Nothing is subtracted; what "
        "the work imports lazily is in its time, from bytecode for both packages (pip wrote "
        "dp_accounting's; gaussdp's is compiled before the rounds). Peak "
        "memory is the child's `ru_maxrss` (imports included), from `os.wait4`. Each child runs "
        + (
            f"under a {settings['memory_gb']:g} GB address-space limit (gaussdp sizes its grids "
            "to the memory available, this limit included) and "
            if settings["memory_gb"] > 0
            else "with no address-space limit and "
        )
        + "a time-out (`--timeout` of the invocation that measured the cell: "
        + f"{settings['timeout']:g} s in the last one, 900 s by default).",
        "",
        "## Design",
        "",
        f"Seed {settings['seed']}: the three runs of issue 24, {len(CORNERS)} corners of the box, "
        f"and a Latin hypercube of {settings['lhs']} runs in log q ∈ [1e-6, 0.5], log T ∈ [1, "
        "10⁶], log σ ∈ [0.5, 20], log δ ∈ [1e-9, 1e-5] (values rounded to 2 significant "
        "digits, δ to 1). A hypercube run whose dp_accounting composition at grid 1e-5 is "
        f"predicted to need more than {settings['max_seconds']:g} s or {settings['max_gb']:g} "
        "GB has its T halved until it fits (the T drawn is shown). The prediction repeats "
        "dp_accounting's Chernoff truncation bound on one direction's loss distribution, "
        "times 10 for the other: a screen, not a measurement.",
        "",
        "| run | origin | σ | q | T | δ | dp_acc 1e-5 predicted | measured here |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        cost = run.get("cost") or {}
        drawn = f" (drawn {run['drawn_steps']})" if run.get("drawn_steps") else ""
        lines.append(
            f"| {run['index']} | {run['origin']} | {run['noise_multiplier']:g} | "
            f"{run['sampling_probability']:g} | {run['steps']}{drawn} | {run['delta']:g} | "
            f"~{cost.get('seconds', float('nan')):.2g} s, ~{cost.get('gb', float('nan')):.2g} GB | "
            f"{'yes' if 'run' + str(run['index']) in results else 'no'} |"
        )
    measured = [r for r in runs if f"run{r['index']}" in results]
    lines += [
        "",
        "## ε",
        "",
        "dp_accounting's ε at grid 1e-5 and at its default (pessimistic); gaussdp's certified "
        "[lower, upper] and relative gap (upper − lower)/upper from `epsilon_bounds`; the "
        "report's bounds at δ and its μ (at its δ_tail); dp_accounting's optimistic ε (a lower "
        "bound; at a grid of 1e-5 its downward rounding adds up over T steps, so it is 0 on "
        "long runs); the exact ε by Laplace inversion of the exact moment generating "
        "function (no grid, no FFT; † marks a dp_accounting ε below it, which is then no upper "
        "bound on the run); with `--fine-reference a`, gaussdp's own certified bracket at "
        "accuracy a (a self-consistency check, not an independent one).",
        "",
        "| run | dp_acc 1e-5 | dp_acc default | gaussdp [lower, upper] | gap | report [lower, "
        "upper] | report μ (δ_tail) | dp_acc optimistic 1e-5 | exact ε | gaussdp fine "
        "reference |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for run in measured:
        row = results[f"run{run['index']}"]
        cells = row["cells"]
        bounds, report = cells.get("bounds"), cells.get("report")
        interval = (
            f"[{_num(_value(bounds, 'lower'), '.7g')}, {_num(_value(bounds), '.7g')}]"
            if _ok(bounds)
            else _cell_time(bounds)
        )
        report_interval = (
            f"[{_num(_value(report, 'lower'), '.7g')}, {_num(_value(report), '.7g')}]"
            if _ok(report)
            else _cell_time(report)
        )
        mu = (
            f"{_value(report, 'mu'):.5g} ({_value(report, 'delta_tail'):g})" if _ok(report) else "—"
        )
        lines.append(
            f"| {row['label']} | "
            + " | ".join(
                [
                    _num(_value(cells.get("pld_fine")), ".7g")
                    + ("†" if _below_exact(cells, "pld_fine") else "")
                    if _ok(cells.get("pld_fine"))
                    else _cell_time(cells.get("pld_fine")),
                    _num(_value(cells.get("pld_default")), ".7g")
                    + ("†" if _below_exact(cells, "pld_default") else "")
                    if _ok(cells.get("pld_default"))
                    else _cell_time(cells.get("pld_default")),
                    interval,
                    _num(_gap(_value(bounds, "lower"), _value(bounds)), ".2e"),
                    report_interval,
                    mu,
                    _num(_value(cells.get("pld_optimistic")), ".7g")
                    if _ok(cells.get("pld_optimistic"))
                    else _cell_time(cells.get("pld_optimistic")),
                    _num(_value(cells.get("exact")), ".10g")
                    if _ok(cells.get("exact"))
                    else _cell_time(cells.get("exact")),
                    _reference(cells.get("fine_reference"), settings),
                ]
            )
            + " |"
        )
        for cell, record in cells.items():
            if record and record.get("failed", "").startswith("not computed"):
                continue  # said once below the table
            if record and "failed" in record:
                notes.append(f"- run {run['index']}, {CELLS[cell]}: {record['failed']}.")
            elif record and record.get("failed_rounds"):
                notes.append(
                    f"- run {run['index']}, {CELLS[cell]}: failed in some rounds: "
                    + "; ".join(record["failed_rounds"])
                )
            for message in (record or {}).get("values", {}).get("warnings", []) or []:
                notes.append(f"- run {run['index']}, {CELLS[cell]} warned: {message}")

    lines += [
        "",
        "## Time and memory",
        "",
        "Median wall time of the work (CPU time in parentheses, all threads); peak memory of "
        "the child. Ratios are gaussdp / dp_accounting at grid 1e-5 (and / its default).",
        "",
        "| run | dp_acc 1e-5 | dp_acc default | bounds | report | bounds / 1e-5 (/ default) "
        "| report / 1e-5 (/ default) | peak MB: 1e-5, default, bounds, report "
        "| memory bounds, report / 1e-5 (/ default) | imports: dp_acc, gaussdp |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in measured:
        row = results[f"run{run['index']}"]
        cells = row["cells"]

        def timed(cell, cells=cells):
            record = cells.get(cell)
            if not _ok(record):
                return _cell_time(record)
            return f"{record['seconds']:.3g} s ({record['cpu_seconds']:.3g})"

        def ratio(cell, key, over, cells=cells):
            a, b = cells.get(cell), cells.get(over)
            if not _ok(a) or not _ok(b):
                return None
            return _quotient(a[key], b[key])

        def peak(cell, cells=cells):
            record = cells.get(cell)
            return f"{record['peak_rss_mb']:.0f}" if _ok(record) else "—"

        imports = [
            cells.get("pld_default") if _ok(cells.get("pld_default")) else None,
            cells.get("bounds") if _ok(cells.get("bounds")) else None,
        ]
        lines.append(
            f"| {row['label']} | "
            + " | ".join(
                [
                    timed("pld_fine"),
                    timed("pld_default"),
                    timed("bounds"),
                    timed("report"),
                    f"{_num(ratio('bounds', 'seconds', 'pld_fine'), '.3g')} "
                    f"({_num(ratio('bounds', 'seconds', 'pld_default'), '.3g')})",
                    f"{_num(ratio('report', 'seconds', 'pld_fine'), '.3g')} "
                    f"({_num(ratio('report', 'seconds', 'pld_default'), '.3g')})",
                    ", ".join(peak(c) for c in ("pld_fine", "pld_default", "bounds", "report")),
                    f"{_num(ratio('bounds', 'peak_rss_mb', 'pld_fine'), '.2f')} "
                    f"({_num(ratio('bounds', 'peak_rss_mb', 'pld_default'), '.2f')}), "
                    f"{_num(ratio('report', 'peak_rss_mb', 'pld_fine'), '.2f')} "
                    f"({_num(ratio('report', 'peak_rss_mb', 'pld_default'), '.2f')})",
                    ", ".join(
                        "—" if r is None else f"{r['import_seconds']:.2g} s" for r in imports
                    ),
                ]
            )
            + " |"
        )

    lines += [
        "",
        "## Issue 24's targets",
        "",
        "Against dp_accounting at grid 1e-5, on every run (✓ met, ✗ missed, — not measurable):",
        "",
        f"- bounds time: `epsilon_bounds` wall time / dp_acc 1e-5's ≤ {TARGETS['bounds']:g} "
        "(judged on wall time; the CPU-time ratio in parentheses);",
        "- tighter: gaussdp's upper bound / dp_acc 1e-5's ε − 1 ≤ 0 (at least as tight); "
        "*(inside)*: dp_accounting's ε lies inside gaussdp's certified [lower, upper], so "
        "either may be nearer the truth and only a narrower bracket can meet this target;",
        f"- report time: the report's wall time / dp_acc 1e-5's ≤ {TARGETS['report']:g};",
        f"- memory: the larger of the bounds' and the report's peak memory / dp_acc 1e-5's ≤ "
        f"{TARGETS['memory']:g};",
        "- certified: no gaussdp lower bound (bounds or report) above dp_accounting's "
        "pessimistic ε (1e-5 or default), no upper bound below dp_accounting's optimistic ε "
        "at 1e-5, and (with `--fine-reference`) no default interval disjoint from the fine "
        "reference's bracket; a ✗ here is a certified-bound violation (of one of the "
        "accountants).",
        "",
        "Where gaussdp failed (out of memory, time-out) and dp_accounting answered, its "
        "targets count as missed.",
        "",
        "Where ε is near or below dp_accounting's grid (1e-5), its optimistic ε is 0 and its "
        "pessimistic ε is mostly grid, so the certified check against it is weak there; and "
        "where dp_accounting takes a few milliseconds, the time ratios compare fixed costs.",
        "",
        "| run | bounds time | tighter | report time | memory | certified |",
        "|---|---|---|---|---|---|",
    ]
    met = total = 0
    violations = []
    for run in measured:
        row = results[f"run{run['index']}"]
        targets = _targets(row["cells"])
        problems = _checks(row["cells"], run)
        checked = any(
            _value(row["cells"].get(c)) is not None
            for c in ("pld_fine", "pld_default", "pld_optimistic", "fine_reference")
        ) and any(_value(row["cells"].get(c)) is not None for c in ("bounds", "report"))
        certified = "—" if not checked else ("✗ " + "; ".join(problems) if problems else "✓")
        violations += [f"- run {run['index']}: {p}" for p in problems]
        marks = [
            _verdict(targets["bounds"]) + _cpu_ratio(row["cells"], "bounds"),
            # below the exact ε (or an outside bracket): that says why, "inside" adds nothing
            _excess(targets["tighter"]) + (_below_external(row, run) or _inside(row["cells"])),
            _verdict(targets["report"]) + _cpu_ratio(row["cells"], "report"),
            _verdict(targets["memory"]),
        ]
        for _ratio, ok in targets.values():
            if ok is not None:
                total += 1
                met += bool(ok)
        # gaussdp failing (memory, time-out) where dp_accounting at 1e-5 answered: missed
        if _ok(row["cells"].get("pld_fine")):
            failed = {
                cell: _short_failure(row["cells"][cell])
                for cell in ("bounds", "report")
                if row["cells"].get(cell) and not _ok(row["cells"][cell])
            }
            for position, cell in ((0, "bounds"), (1, "bounds"), (2, "report")):
                if cell in failed and marks[position] == "—":
                    marks[position] = f"✗ {failed[cell]}"
                    total += 1
            if failed and marks[3] == "—":
                marks[3] = "✗ " + ", ".join(sorted(set(failed.values())))
                total += 1
        lines.append(f"| {row['label']} | " + " | ".join([*marks, certified]) + " |")
    lines += ["", f"{met} of {total} measured targets met." if total else "No target measured."]
    if violations:
        lines += ["", "**Certified-bound violations:**", "", *violations]
    else:
        lines += ["", "No certified-bound violation on the runs measured."]
    for run in measured:
        external = _external(run)
        if external is None:
            continue
        name, low, high, how = external
        fine = _value(results[f"run{run['index']}"]["cells"].get("pld_fine"))
        below = (
            f" dp_accounting's pessimistic ε at grid 1e-5, {fine:.8g}, lies below its lower "
            "bound: that ε is not an upper bound here, so gaussdp's lower bound is not "
            "checked against it."
            if fine is not None and fine < low
            else ""
        )
        lines += [
            "",
            f"Run {run['index']} is also checked against {name}'s bracket "
            f"[{low:.8g}, {high:.8g}] ({how}).{below}",
        ]
    below_exact = [
        f"{run['index']} ({which})"
        for run in measured
        for which, key in (("1e-5", "pld_fine"), ("default", "pld_default"))
        if _below_exact(results[f"run{run['index']}"]["cells"], key)
    ]
    exact_runs = sum(_ok(results[f"run{run['index']}"]["cells"].get("exact")) for run in measured)
    if exact_runs:
        lines += [
            "",
            f"The exact ε was computed on {exact_runs} of the {len(measured)} runs measured "
            "(not where an invocation's `--exact-from-steps` left it out, 1000 steps by "
            "default: on short runs the inversion's integrand decays slowly and grids are "
            "easy; nor where it timed out); every gaussdp interval "
            "(bounds and report) holds it"
            + (" except where listed above." if violations else ".")
            + (
                " dp_accounting's pessimistic ε lies below it, so is no upper bound, on run(s) "
                + ", ".join(below_exact)
                + "; gaussdp's lower bound is not checked against those."
                if below_exact
                else ""
            ),
        ]

    if sweeps:
        lines += [
            "",
            "## Accuracy sweep",
            "",
            "`gaussdp.account(gaussdp.DPSGD(σ, q, T), accuracy=a).epsilon_bounds(δ)`, each "
            "accuracy in a fresh process, rounds interleaved; median wall time (CPU), the "
            "relative gap delivered, and whether it is within what a promises — upper − lower "
            "≤ a·max(ε, 1), absolute below ε = 1 (or an AccuracyWarning says "
            f"why not). Cost follows accuracy: a coarser accuracy must not take more than "
            f"{SWEEP_SLACK:g}× any finer one (✗ names the finer one it exceeds).",
            "",
            "| run | accuracy | time | peak MB | [lower, upper] | gap | gap ≤ accuracy "
            "| cost follows accuracy |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for sweep in sweeps.values():
            accuracies = sweep["accuracies"]
            ordered = sorted(accuracies, key=float, reverse=True)
            for key in ordered:
                record = accuracies[key]
                accuracy = float(key)
                if not _ok(record):
                    lines.append(
                        f"| {sweep['label']} | {accuracy:g} | {_cell_time(record)} |" + " — |" * 5
                    )
                    continue
                lower, upper = _value(record, "lower"), _value(record)
                gap = _gap(lower, upper)
                warned = bool(record["values"].get("warnings"))
                # gaussdp's accuracy: upper − lower ≤ accuracy·max(ε, 1) (absolute below ε = 1)
                allowed = None if upper is None else accuracy * max(upper, 1.0) / max(upper, 1e-300)
                within = (
                    "—"
                    if gap is None
                    else "✓"
                    if gap <= allowed
                    else ("warned" if warned else "✗ (no warning)")
                )
                slower = [
                    float(other)
                    for other in ordered
                    if float(other) < accuracy
                    and _ok(accuracies[other])
                    and record["seconds"] > SWEEP_SLACK * accuracies[other]["seconds"]
                ]
                follows = (
                    "✓"
                    if not slower
                    else "✗ > " + ", ".join(f"{SWEEP_SLACK:g}× {a:g}" for a in slower)
                )
                lines.append(
                    f"| {sweep['label']} | {accuracy:g} | {record['seconds']:.3g} s "
                    f"({record['cpu_seconds']:.3g}) | {record['peak_rss_mb']:.0f} | "
                    f"[{lower:.7g}, {upper:.7g}] | {_num(gap, '.2e')} | {within} | {follows} |"
                )
                for message in record["values"].get("warnings", []) or []:
                    notes.append(f"- sweep {sweep['label']}, accuracy {accuracy:g}: {message}")
    if notes:
        lines += ["", "## Notes", "", *notes]
    lines += ["", "## Machine and versions", ""]
    lines += [f"- {key}: {value}" for key, value in payload["machine"].items()]
    lines += [f"- {key}: {value}" for key, value in payload["versions"].items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- main


def _indices(text: str | None) -> list[int] | None:
    if not text:
        return None
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 round, the 4 cheapest runs")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 3; quick 1)")
    parser.add_argument("--seed", type=int, default=24, help="seed of the Latin hypercube")
    parser.add_argument("--lhs", type=int, default=12, help="Latin hypercube runs")
    parser.add_argument("--only", default=None, help="run numbers, e.g. 1,2,5")
    parser.add_argument("--design", action="store_true", help="print the design and exit")
    parser.add_argument("--accuracy-sweep", action="store_true", help="also the accuracy sweep")
    parser.add_argument("--sweep-only", action="store_true", help="only the accuracy sweep")
    parser.add_argument("--sweep-runs", default=None, help="runs of the sweep (default 1,2)")
    parser.add_argument(
        "--accuracies",
        default=",".join(f"{a:g}" for a in ACCURACIES),
        help="accuracies of the sweep",
    )
    parser.add_argument("--no-reference", action="store_true", help="skip the optimistic PLD")
    parser.add_argument(
        "--no-exact", action="store_true", help="skip the exact ε (Laplace inversion)"
    )
    parser.add_argument(
        "--exact-from-steps",
        type=int,
        default=1000,
        help="compute the exact ε only on runs of at least this many steps (default 1000)",
    )
    parser.add_argument(
        "--fine-reference",
        type=float,
        default=None,
        metavar="ACCURACY",
        help="also gaussdp's bounds at this accuracy, once per run (a self-consistency check)",
    )
    parser.add_argument(
        "--cells",
        default=None,
        help="measure only these cells, comma-separated: " + ", ".join(CELLS),
    )
    parser.add_argument("--force", action="store_true", help="run predicted-infeasible cells")
    parser.add_argument("--max-seconds", type=float, default=30.0, help="dp_acc 1e-5 budget")
    parser.add_argument("--max-gb", type=float, default=4.0, help="dp_acc 1e-5 memory budget")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per child")
    parser.add_argument(
        "--memory-gb",
        type=float,
        default=6.0,
        help="address-space limit of each child (0: none); gaussdp sizes its grids to fit it",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="Markdown page")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="JSON results")
    parser.add_argument("--update", action="store_true", help="keep other runs of --json")
    parser.add_argument("--label", default=None, help="a banner for the page (e.g. partial)")
    parser.add_argument("--render", type=Path, default=None, metavar="JSON", help="page only")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        record = _worker(args.worker[0], args.worker[1:], args.memory_gb)
        sys.stdout.write(json.dumps(record) + "\n")
        return 0
    if args.render:
        payload = json.loads(args.render.read_text(encoding="utf-8"))
        write_markdown(payload, args.output)
        sys.stderr.write(f"wrote {args.output}\n")
        return 0

    args.rounds = args.rounds or (1 if args.quick else 3)
    if args.cells:
        args.cells = [c.strip() for c in args.cells.split(",") if c.strip()]
        unknown = sorted(set(args.cells) - set(CELLS))
        if unknown:
            parser.error(f"--cells: unknown {', '.join(unknown)}; known: {', '.join(CELLS)}")
    args.accuracies = [float(a) for a in args.accuracies.split(",")]
    runs = design(args)
    print_design(runs, args)
    compile_gaussdp()
    if args.design:
        return 0
    by_index = {run.index: run for run in runs}
    costs = {
        run.index: dp_accounting_cost(run.noise_multiplier, run.sampling_probability, run.steps)
        for run in runs
    }
    only = _indices(args.only)
    if only is None and args.quick:  # the four runs cheapest for dp_accounting
        only = sorted(sorted(by_index, key=lambda i: costs[i]["seconds"])[:4])
    chosen = [by_index[i] for i in only] if only else runs
    sweep_runs = _indices(args.sweep_runs) or ([chosen[0].index] if args.quick else [1, 2])

    payload = {"results": {}, "sweeps": {}}
    if args.update and args.json.exists():
        payload = json.loads(args.json.read_text(encoding="utf-8"))
        if payload["settings"]["seed"] != args.seed or payload["settings"]["lhs"] != args.lhs:
            parser.error("--update needs the same --seed and --lhs as the JSON it updates")
    payload["invocations"] = [*payload.get("invocations", []), list(argv)]
    payload.update(
        {
            "date": datetime.date.today().isoformat(),
            "settings": {
                "argv": list(argv),
                "seed": args.seed,
                "lhs": args.lhs,
                "rounds": args.rounds,
                "timeout": args.timeout,
                "memory_gb": args.memory_gb,
                "max_seconds": args.max_seconds,
                "max_gb": args.max_gb,
                "label": args.label,
                "fine_reference": args.fine_reference,
                "exact_from_steps": args.exact_from_steps,
            },
            "design": [dict(asdict(run), cost=costs[run.index]) for run in runs],
            "machine": _machine(),
            "versions": _versions(),
        }
    )

    def save():
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        write_markdown(payload, args.output)

    if not args.sweep_only:
        for run in chosen:
            sys.stderr.write(f"{run.label}\n")
            measured = measure_run(run, args)
            earlier = payload["results"].get(run.key)
            if args.cells and earlier is not None:  # only these cells again: keep the others
                earlier["cells"].update(measured["cells"])
                measured = earlier
            payload["results"][run.key] = measured
            save()  # partial results stay on disk
    if args.accuracy_sweep or args.sweep_only:
        for index in sweep_runs:
            run = by_index[index]
            sys.stderr.write(f"accuracy sweep, {run.label}\n")
            payload["sweeps"][run.key] = measure_sweep(run, args)
            save()
    save()
    sys.stderr.write(f"wrote {args.output} and {args.json}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
