"""Accuracy and speed of gaussdp against other DP-SGD accountants, in one run.

Run by hand (not by pytest)::

    python benchmarks/run_accountants.py            # every workload
    python benchmarks/run_accountants.py --quick    # CIFAR-10 rows only
    python benchmarks/run_accountants.py --skip gaussdp --skip pld_converged

For every workload (Poisson-subsampled Gaussian, σ, q, T steps, target δ) it
records ε and the time taken by

- ``rdp``: dp_accounting's RDP accountant (``RdpAccountant``, default orders);
- ``pld_default``: dp_accounting's PLD accountant with its defaults
  (``PLDAccountant()``, value_discretization_interval = 1e-4, pessimistic);
- ``pld_converged``: the same with value_discretization_interval = 1e-5, the
  "converged" reference (skipped with a note where it runs out of time or memory);
- ``pld_optimistic``: dp_accounting's optimistic PLD (the same construction with
  ``pessimistic_estimate=False``, default interval): a lower bound, the
  competitor of gaussdp's lower bound;
- ``prv``: prv_accountant's ``PRVAccountant`` with
  ``PoissonSubsampledGaussianMechanism``, eps_error = 0.01 and
  delta_error = δ/1000 (its documentation's recommendation), reporting its
  (lower, estimate, upper);
- ``gaussdp``: :func:`gaussdp_epsilon`, i.e.
  ``gaussdp.account(gaussdp.DPSGD(σ, q, T)).epsilon_bounds(δ)`` → (lower, upper).

Each (accountant, workload) pair runs in a fresh worker process (so a memory
blow-up or a time-out costs one cell, not the run) with an address-space limit;
inside it, imports happen first and each repetition is timed with
``time.perf_counter``. Repetitions: 5 if the first takes under 2 s, 3 if under
60 s, else 1; the tables report the median and the count.

Results go to ``docs/benchmarks.md`` (values, median times, ratios, machine,
versions, the command) and, with ``--json``, to a JSON file.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "docs" / "benchmarks.md"


@dataclass(frozen=True)
class Workload:
    """One DP-SGD configuration: Poisson rate q, noise multiplier σ, T steps, target δ."""

    key: str
    label: str
    group: str
    noise_multiplier: float
    sampling_probability: float
    steps: int
    delta: float


CIFAR_Q = 16384 / 50000  # De et al. (2022): batch 16384 of N = 50000
IMAGENET_Q = 16384 / 1281167

WORKLOADS = [
    *(
        Workload(f"cifar_{sigma:g}", f"CIFAR-10 σ={sigma:g}", "cifar", sigma, CIFAR_Q, steps, 1e-5)
        for sigma, steps in [(40, 906), (24, 1156), (20, 1656), (16, 1765), (12, 2007), (9.4, 2000)]
    ),
    Workload("imagenet", "ImageNet σ=2.5", "imagenet", 2.5, IMAGENET_Q, 71589, 8e-7),
    Workload("long", "long run σ=0.8", "long", 0.8, 0.01, 10**6, 1e-6),
]

ACCOUNTANT_LABELS = {
    "rdp": "dp_accounting RDP",
    "pld_default": "dp_accounting PLD default (1e-4)",
    "pld_converged": "dp_accounting PLD converged (1e-5)",
    "pld_optimistic": "dp_accounting PLD optimistic (1e-4)",
    "prv": "prv_accountant (eps_error 0.01)",
    "gaussdp": "gaussdp (lower / upper bounds)",
    "gaussdp_upper": "gaussdp ε only (upper bound)",
    "gaussdp_report": "gaussdp full μ-GDP report (ε upper bound; μ)",
}


# --------------------------------------------------------------------------- the accountants
# Each takes (σ, q, T, δ) and returns a dict of values; "epsilon" is the
# accountant's headline (pessimistic) value, "lower"/"estimate" where it has them.


def gaussdp_epsilon(sigma: float, q: float, steps: int, delta: float) -> tuple[float, float]:
    """gaussdp's (lower, upper) bounds on ε(δ) for DP-SGD(σ, q, T)."""
    import gaussdp

    if not hasattr(gaussdp, "account"):
        raise RuntimeError(
            "gaussdp.account is not importable yet (the accountant is being written); "
            "run with --skip gaussdp"
        )
    lower, upper = gaussdp.account(gaussdp.DPSGD(sigma, q, steps)).epsilon_bounds(delta)
    return float(lower), float(upper)


def _dp_event(sigma, q, steps):
    import dp_accounting

    step = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    return dp_accounting.SelfComposedDpEvent(step, steps)


def _rdp(sigma, q, steps, delta):
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant()
    accountant.compose(_dp_event(sigma, q, steps))
    return {"epsilon": float(accountant.get_epsilon(delta))}


def _pld(interval):
    def run(sigma, q, steps, delta):
        from dp_accounting.pld import PLDAccountant

        if interval is None:
            accountant = PLDAccountant()
        else:
            accountant = PLDAccountant(value_discretization_interval=interval)
        accountant.compose(_dp_event(sigma, q, steps))
        return {"epsilon": float(accountant.get_epsilon(delta))}

    return run


def _pld_optimistic(sigma, q, steps, delta):
    # PLDAccountant exposes only the pessimistic estimate; this is the same
    # construction (from_gaussian_mechanism(..., sampling_prob=q).self_compose(T))
    # with pessimistic_estimate=False, whose answers lower-bound the truth.
    from dp_accounting.pld import privacy_loss_distribution

    pld = privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=sigma,
        sampling_prob=q,
        pessimistic_estimate=False,
        use_connect_dots=False,  # connect-the-dots is pessimistic only
    ).self_compose(steps)
    return {"epsilon": float(pld.get_epsilon_for_delta(delta))}


def _prv(sigma, q, steps, delta):
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    prv = PoissonSubsampledGaussianMechanism(sampling_probability=q, noise_multiplier=sigma)
    accountant = PRVAccountant(
        prvs=[prv], max_self_compositions=[steps], eps_error=0.01, delta_error=delta / 1000
    )
    lower, estimate, upper = accountant.compute_epsilon(delta=delta, num_self_compositions=[steps])
    return {"lower": float(lower), "estimate": float(estimate), "epsilon": float(upper)}


def _gaussdp(sigma, q, steps, delta):
    lower, upper = gaussdp_epsilon(sigma, q, steps, delta)
    return {"lower": lower, "epsilon": upper}


def _gaussdp_upper(sigma, q, steps, delta):
    # The headline number alone: what dp_accounting's PLD default computes.
    import gaussdp

    return {"epsilon": float(gaussdp.account(gaussdp.DPSGD(sigma, q, steps)).epsilon(delta))}


def _gaussdp_report(sigma, q, steps, delta):
    # The whole report of issue 6: tight μ with δ_tail, exact regret, ε bounds at
    # the three default δs and the workload's δ, the tier and its table.
    import gaussdp

    deltas = sorted({1e-5, 1e-6, 1e-9, delta}, reverse=True)
    report = gaussdp.account(gaussdp.DPSGD(sigma, q, steps)).gdp(deltas=deltas)
    upper = {row.delta: row.epsilon for row in report.epsilons}
    return {
        "epsilon": float(upper[delta]),
        "mu": float(report.mu),
        "regret": float(report.regret),
        "delta_tail": float(report.delta_tail),
    }


ACCOUNTANTS = {
    "rdp": _rdp,
    "pld_default": _pld(None),
    "pld_converged": _pld(1e-5),
    "pld_optimistic": _pld_optimistic,
    "prv": _prv,
    "gaussdp": _gaussdp,
    "gaussdp_upper": _gaussdp_upper,
    "gaussdp_report": _gaussdp_report,
}

# imports done before timing, so the first repetition does not pay for them
_WARM_IMPORTS = {
    "rdp": ["dp_accounting", "dp_accounting.rdp"],
    "pld_default": ["dp_accounting", "dp_accounting.pld"],
    "pld_converged": ["dp_accounting", "dp_accounting.pld"],
    "pld_optimistic": ["dp_accounting", "dp_accounting.pld"],
    "prv": ["prv_accountant", "prv_accountant.privacy_random_variables"],
    "gaussdp": ["gaussdp"],
    "gaussdp_upper": ["gaussdp"],
    "gaussdp_report": ["gaussdp"],
}


# cells repeated in every round (the ones the targets compare); the others run once
ROUND_ACCOUNTANTS = ["pld_default", "gaussdp", "gaussdp_upper", "gaussdp_report"]
# at most this many repetitions inside one worker (default 5)
_MAX_REPEATS: dict[str, int] = {}


# --------------------------------------------------------------------------- worker


def _limit_memory(gigabytes: float) -> None:
    try:
        import resource
    except ImportError:  # not on POSIX: no limit
        return
    limit = int(gigabytes * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _worker(accountant: str, workload_key: str, memory_gb: float, slow_after: float) -> dict:
    """Run one (accountant, workload) cell in this process and return its record."""
    import importlib

    _limit_memory(memory_gb)
    for module in _WARM_IMPORTS[accountant]:
        importlib.import_module(module)
    workload = next(w for w in WORKLOADS if w.key == workload_key)
    run = ACCOUNTANTS[accountant]
    args = (
        workload.noise_multiplier,
        workload.sampling_probability,
        workload.steps,
        workload.delta,
    )
    times, cpu_times, values = [], [], None
    while True:
        # CPU time is user + sys of the whole worker, all threads (scipy.fft's workers too)
        start, cpu_start = time.perf_counter(), time.process_time()
        values = run(*args)
        cpu_times.append(time.process_time() - cpu_start)
        times.append(time.perf_counter() - start)
        wanted = 5 if times[0] < 2 else 3 if times[0] < slow_after else 1
        if len(times) >= min(wanted, _MAX_REPEATS.get(accountant, 5)):
            break
    record = {
        "values": values,
        "times": times,
        "median_time": statistics.median(times),
        "cpu_times": cpu_times,
        "median_cpu_time": statistics.median(cpu_times),
    }
    try:
        import resource

        # Peak resident memory of this worker (imports included): KiB on Linux.
        record["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except ImportError:  # not on POSIX
        pass
    return record


def _measure(accountant: str, workload: Workload, args) -> dict:
    """Run one cell in a fresh worker process; a failure or time-out becomes a note."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        accountant,
        workload.key,
        "--memory-gb",
        str(args.memory_gb),
        "--slow-after",
        str(args.slow_after),
    ]
    env = dict(os.environ)
    env["PYTHONWARNINGS"] = "ignore"
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=args.timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"skipped": f"did not finish within {args.timeout:g} s (time-out)"}
    wall = time.perf_counter() - started
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        if "MemoryError" in done.stderr or "Cannot allocate" in done.stderr:
            return {"skipped": f"out of memory under the {args.memory_gb:g} GB limit ({tail})"}
        return {"skipped": f"failed: {tail}"}
    record = json.loads(done.stdout.strip().splitlines()[-1])
    record["wall_time"] = wall
    return record


def _combine(rounds: list[dict]) -> dict:
    """One cell's record from its rounds: medians across rounds of the per-round medians."""
    done = [r for r in rounds if "skipped" not in r]
    if not done:
        return rounds[-1]
    record = dict(done[-1])  # the values are the same in every round
    record["rounds"] = len(done)
    record["repeats"] = [len(r["times"]) for r in done]
    record["times"] = [t for r in done for t in r["times"]]
    record["round_times"] = [r["median_time"] for r in done]
    record["median_time"] = statistics.median(record["round_times"])
    if all("median_cpu_time" in r for r in done):
        record["cpu_times"] = [t for r in done for t in r["cpu_times"]]
        record["round_cpu_times"] = [r["median_cpu_time"] for r in done]
        record["median_cpu_time"] = statistics.median(record["round_cpu_times"])
    peaks = [r["peak_rss_mb"] for r in done if "peak_rss_mb" in r]
    if peaks:
        record["peak_rss_mb"] = statistics.median(peaks)
        record["peak_rss_mb_max"] = max(peaks)
    record["wall_time"] = statistics.median(r["wall_time"] for r in done)
    failed = [r["skipped"] for r in rounds if "skipped" in r]
    if failed:
        record["failed_rounds"] = failed
    return record


def _schedule(accountants: list[str], rounds: int) -> list[tuple[int, str]]:
    """(round, accountant) in running order for one workload.

    The cells outside ROUND_ACCOUNTANTS run once, first; then the compared cells
    run in ``rounds`` rounds, in order A B C D, D C B A, A B C D, ... so that a
    change in the machine's load falls on all of them alike.
    """
    once = [(0, a) for a in accountants if a not in ROUND_ACCOUNTANTS]
    timed = [a for a in accountants if a in ROUND_ACCOUNTANTS]
    repeated = [
        (index, a) for index in range(rounds) for a in (timed if index % 2 == 0 else timed[::-1])
    ]
    return once + repeated


# --------------------------------------------------------------------------- report


def _versions() -> dict[str, str]:
    result = {"python": platform.python_version()}
    for package in ["gaussdp", "numpy", "scipy", "dp-accounting", "prv-accountant", "mpmath"]:
        try:
            result[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            result[package] = "not installed"
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        result["gaussdp"] += f" (git {commit}{', with uncommitted changes' if dirty else ''})"
    except (OSError, subprocess.CalledProcessError):
        pass
    return result


def _machine() -> dict[str, str]:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = "unknown"
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal"):
                    memory = f"{int(line.split()[1]) / 2**20:.0f} GB"
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": f"{usable} usable (shared with other jobs; times are noisy)",
        "memory": memory,
    }


def _num(value: float | None, digits: int = 5) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def _time(record: dict | None) -> str:
    if record is None:
        return "not run yet"
    if "skipped" in record:
        return "skipped"
    runs = len(record["times"])
    repeats = record.get("repeats")
    if repeats and len(set(repeats)) == 1:
        return f"{record['median_time']:.3g} s ({len(repeats)}×{repeats[0]})"
    if repeats:
        return f"{record['median_time']:.3g} s ({len(repeats)} rounds, {runs} runs)"
    return f"{record['median_time']:.3g} s ({runs}×)"


def _cpu(record: dict | None) -> str:
    if record is None or "skipped" in record or "median_cpu_time" not in record:
        return "—"
    cpu, wall = record["median_cpu_time"], record["median_time"]
    return f"{cpu:.3g} s ({cpu / wall:.2f}× wall)" if wall > 0 else f"{cpu:.3g} s"


def _memory(record: dict | None) -> str:
    if record is None or "skipped" in record or "peak_rss_mb" not in record:
        return "—"
    return f"{record['peak_rss_mb']:.0f} MB"


def _value(accountant: str, record: dict | None) -> str:
    if record is None:
        return "not run yet"
    if "skipped" in record:
        return "skipped"
    values = record["values"]
    if accountant == "prv":
        return f"{_num(values['lower'])} / {_num(values['estimate'])} / {_num(values['epsilon'])}"
    if accountant == "gaussdp":
        return f"{_num(values['lower'])} / {_num(values['epsilon'])}"
    if accountant == "gaussdp_report":
        return f"{_num(values['epsilon'])} (μ {values['mu']:.4f}, regret {values['regret']:.2g})"
    return _num(values["epsilon"])


def _ratio(numerator: float | None, denominator: float | None, fmt: str, minus_one=False) -> str:
    if numerator is None or denominator is None or denominator == 0:
        return "—"
    ratio = numerator / denominator
    return format(ratio - 1 if minus_one else ratio, fmt)


def _get(record: dict | None, key: str, where: str = "values") -> float | None:
    if not record or "skipped" in record:
        return None
    if where == "values":
        return record["values"].get(key)
    return record.get(key)


def write_markdown(results, accountants, args, path: Path) -> None:
    workloads = [w for w in WORKLOADS if w.key in results]
    lines = [
        "# Benchmarks: gaussdp against other DP-SGD accountants",
        "",
        f"Generated by `benchmarks/run_accountants.py` on "
        f"{datetime.date.today().isoformat()}. Every workload is DP-SGD: T steps of a "
        "Poisson-subsampled Gaussian with noise multiplier σ and sampling rate q, under "
        "add/remove neighbouring, ε reported at the target δ.",
        "",
        "Command to reproduce:",
        "",
        "```sh",
        "python benchmarks/run_accountants.py " + " ".join(args.argv),
        "```",
        "",
        "Accountants:",
        "",
        "- **RDP**: `dp_accounting.rdp.RdpAccountant()` (default orders); an upper bound, loose.",
        "- **PLD default**: `dp_accounting.pld.PLDAccountant()` (value_discretization_interval "
        "1e-4, pessimistic: an upper bound).",
        "- **PLD converged**: `PLDAccountant(value_discretization_interval=1e-5)`, the "
        "reference value (still an upper bound, close to the truth).",
        "- **PLD optimistic**: `privacy_loss_distribution.from_gaussian_mechanism(σ, "
        "sampling_prob=q, pessimistic_estimate=False).self_compose(T)` at the default "
        "interval 1e-4 (privacy buckets): a lower bound.",
        "- **PRV**: `prv_accountant.PRVAccountant` with `PoissonSubsampledGaussianMechanism`, "
        "eps_error = 0.01, delta_error = δ/1000; shown as lower / estimate / upper.",
        "- **gaussdp**: `gaussdp.account(gaussdp.DPSGD(σ, q, T)).epsilon_bounds(δ)`; shown as "
        "certified lower / upper.",
        "- **gaussdp full μ-GDP report**: `gaussdp.account(gaussdp.DPSGD(σ, q, T)).gdp(deltas=...)`"
        ": tight μ with δ_tail, exact regret, ε bounds at δ = 1e-5, 1e-6, 1e-9 and the "
        "workload's δ, tier and table (both bounds, so both compositions).",
        "",
        "Each cell runs in a fresh worker process, imports excluded from its times, "
        f"under a {args.memory_gb:g} GB address-space limit and a {args.timeout:g} s "
        "time-out. Inside a worker each repetition is timed in wall time "
        "(`time.perf_counter`) and in CPU time (`time.process_time`: user + sys of the "
        "whole worker, all threads, so scipy.fft's worker threads count); 5 repetitions if "
        f"one takes under 2 s, 3 if under {args.slow_after:g} s, else 1. The cells that the "
        "targets compare (PLD default and gaussdp's three) run in "
        f"{getattr(args, 'rounds', 1)} rounds, interleaved (A B C D, D C B A, ...), a fresh "
        "process each time, and report the median across rounds of each round's median "
        "(in parentheses: rounds × repetitions); the other cells run once. The machine is "
        "shared, so wall time depends on its load; CPU time much less so.",
        "",
        "## ε",
        "",
    ]
    columns = [a for a in ACCOUNTANT_LABELS if a in accountants]
    header = (
        "| workload | σ | q | T | δ | " + " | ".join(ACCOUNTANT_LABELS[a] for a in columns) + " |"
    )
    lines += [header, "|" + "---|" * (5 + len(columns))]
    for w in workloads:
        cells = [_value(a, results[w.key].get(a)) for a in columns]
        lines.append(
            f"| {w.label} | {w.noise_multiplier:g} | {w.sampling_probability:.6g} | {w.steps} | "
            f"{w.delta:g} | " + " | ".join(cells) + " |"
        )
    lines += ["", "## Median time", "", header.replace("| σ | q | T | δ ", "")]
    lines.append("|" + "---|" * (1 + len(columns)))
    for w in workloads:
        cells = [_time(results[w.key].get(a)) for a in columns]
        lines.append(f"| {w.label} | " + " | ".join(cells) + " |")

    lines += [
        "",
        "## Median CPU time",
        "",
        "User + sys CPU time of the worker over one repetition (all threads), median as above, "
        "and its ratio to the wall time (above 1 when the FFTs use several threads).",
        "",
        header.replace("| σ | q | T | δ ", ""),
        "|" + "---|" * (1 + len(columns)),
    ]
    for w in workloads:
        cells = [_cpu(results[w.key].get(a)) for a in columns]
        lines.append(f"| {w.label} | " + " | ".join(cells) + " |")

    lines += [
        "",
        "## Peak memory",
        "",
        "Peak resident memory of each cell's worker process (imports included), from `getrusage`.",
        "",
        header.replace("| σ | q | T | δ ", ""),
        "|" + "---|" * (1 + len(columns)),
    ]
    for w in workloads:
        cells = [_memory(results[w.key].get(a)) for a in columns]
        lines.append(f"| {w.label} | " + " | ".join(cells) + " |")

    lines += [
        "",
        "## Ratios",
        "",
        "- time ratio: gaussdp ε-only time / dp_accounting PLD default time (target ≤ 1), "
        "and in brackets the time for both bounds / PLD default time;",
        "- ε vs converged: gaussdp upper ε / PLD converged ε − 1 (target ≤ 1e-4 in absolute "
        "value, and gaussdp ≤ PLD default);",
        "- gap: gaussdp upper / lower − 1 (target ≤ 1e-3);",
        "- report ratio: gaussdp full μ-GDP report time / dp_accounting PLD default time "
        "(target ≤ 2);",
        "- for comparison: PLD default, PLD optimistic and PRV upper, each / PLD converged − 1.",
        "",
        "| workload | time ratio | ε vs converged | gap | report ratio | PLD default vs converged "
        "| PLD optimistic vs converged | PRV upper vs converged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for w in workloads:
        row = results[w.key]
        g_upper = _get(row.get("gaussdp"), "epsilon")
        g_lower = _get(row.get("gaussdp"), "lower")
        converged = _get(row.get("pld_converged"), "epsilon")
        default = _get(row.get("pld_default"), "epsilon")
        optimistic = _get(row.get("pld_optimistic"), "epsilon")
        prv_upper = _get(row.get("prv"), "epsilon")
        g_time = _get(row.get("gaussdp_upper"), "median_time", where="record")
        b_time = _get(row.get("gaussdp"), "median_time", where="record")
        d_time = _get(row.get("pld_default"), "median_time", where="record")
        r_time = _get(row.get("gaussdp_report"), "median_time", where="record")
        cells = [
            f"{_ratio(g_time, d_time, '.3g')} ({_ratio(b_time, d_time, '.3g')})",
            _ratio(g_upper, converged, ".2e", minus_one=True),
            _ratio(g_upper, g_lower, ".2e", minus_one=True),
            _ratio(r_time, d_time, ".3g"),
            _ratio(default, converged, ".2e", minus_one=True),
            _ratio(optimistic, converged, ".2e", minus_one=True),
            _ratio(prv_upper, converged, ".2e", minus_one=True),
        ]
        lines.append(f"| {w.label} | " + " | ".join(cells) + " |")

    notes = []
    spread = [
        abs(_get(results[w.key].get("pld_default"), "epsilon") / converged - 1)
        for w in workloads
        if (converged := _get(results[w.key].get("pld_converged"), "epsilon"))
        and _get(results[w.key].get("pld_default"), "epsilon") is not None
    ]
    if spread:
        notes.append(
            "- The converged PLD value is itself a pessimistic estimate, not the exact ε: it "
            f"differs from the default-interval value by at most {max(spread):.1e} (relative) on "
            "these workloads, in either direction, so it pins the true ε only to about that "
            "precision (from above)."
        )
    for w in workloads:
        for a in columns:
            record = results[w.key].get(a)
            if record is not None and "skipped" in record:
                notes.append(f"- {w.label}, {ACCOUNTANT_LABELS[a]}: {record['skipped']}.")
    if args.skip:
        notes.append(
            "- Not run in this invocation: "
            + ", ".join(ACCOUNTANT_LABELS[a] for a in args.skip)
            + " (`--skip`)."
        )
    if notes:
        lines += ["", "## Notes", "", *notes]

    lines += ["", "## Machine and versions", ""]
    lines += [f"- {key}: {value}" for key, value in _machine().items()]
    lines += [f"- {key}: {value}" for key, value in _versions().items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CIFAR-10 rows only")
    parser.add_argument(
        "--skip", action="append", default=[], choices=list(ACCOUNTANTS), help="leave out"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="Markdown file")
    parser.add_argument("--json", type=Path, default=None, help="also write raw results here")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per cell")
    parser.add_argument("--memory-gb", type=float, default=6.0, help="address-space limit")
    parser.add_argument("--slow-after", type=float, default=60.0, help="1 run if slower")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="rounds of the compared cells (PLD default and gaussdp's), interleaved; "
        "each cell's time is the median across rounds",
    )
    parser.add_argument(
        "--workload",
        action="append",
        default=[],
        choices=[w.key for w in WORKLOADS],
        help="run only this workload (repeatable; with --quick, CIFAR-10 ones only)",
    )
    parser.add_argument(
        "--render",
        type=Path,
        default=None,
        metavar="JSON",
        help="only rewrite the Markdown from a JSON file written by --json",
    )
    parser.add_argument(
        "--worker", nargs=2, metavar=("ACCOUNTANT", "WORKLOAD"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    args.argv = [a for a in argv if not a.startswith("--worker")]

    if args.worker:
        record = _worker(*args.worker, memory_gb=args.memory_gb, slow_after=args.slow_after)
        sys.stdout.write(json.dumps(record) + "\n")
        return 0

    if args.render:
        payload = json.loads(args.render.read_text(encoding="utf-8"))
        for key, value in payload["settings"].items():
            setattr(args, key, value)
        write_markdown(payload["results"], payload["accountants"], args, args.output)
        sys.stderr.write(f"wrote {args.output}\n")
        return 0

    accountants = [a for a in ACCOUNTANTS if a not in args.skip]
    if "gaussdp" in accountants:
        try:
            import gaussdp

            if not hasattr(gaussdp, "account"):
                raise ImportError("gaussdp.account does not exist yet")
        except ImportError as error:
            sys.stderr.write(
                f"gaussdp column unavailable ({error}); the other accountants still run. "
                "Use --skip gaussdp to silence this.\n"
            )
    workloads = [
        w
        for w in WORKLOADS
        if (not args.quick or w.group == "cifar") and (not args.workload or w.key in args.workload)
    ]
    results: dict[str, dict[str, dict]] = {}
    for workload in workloads:
        results[workload.key] = {}
        raw: dict[str, list[dict]] = {a: [] for a in accountants}
        for index, accountant in _schedule(accountants, args.rounds):
            if any("skipped" in r for r in raw[accountant]):
                continue  # failed once (memory, time-out): do not pay for it again
            label = ACCOUNTANT_LABELS[accountant]
            where = f"round {index + 1}/{args.rounds}" if accountant in ROUND_ACCOUNTANTS else ""
            sys.stderr.write(f"{workload.label:<18} {label:<44} {where:<11} ")
            sys.stderr.flush()
            record = _measure(accountant, workload, args)
            raw[accountant].append(record)
            results[workload.key][accountant] = _combine(raw[accountant])
            sys.stderr.write(
                (
                    f"skipped: {record['skipped']}"
                    if "skipped" in record
                    else f"{_value(accountant, record)}  [{_time(record)}, "
                    f"CPU {_cpu(record)}, {_memory(record)}]"
                )
                + "\n"
            )
            # keep partial results on disk
            write_markdown(results, accountants, args, args.output)
    if args.json:
        settings = ["argv", "skip", "timeout", "memory_gb", "slow_after", "rounds"]
        payload = {
            "settings": {key: getattr(args, key) for key in settings},
            "accountants": accountants,
            "workloads": [asdict(w) for w in workloads],
            "results": results,
            "machine": _machine(),
            "versions": _versions(),
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    sys.stderr.write(f"wrote {args.output}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
