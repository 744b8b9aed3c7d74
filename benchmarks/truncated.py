"""Truncated Poisson benchmark: gaussdp's two bounds against dp_accounting's ε (issue 20).

Run by hand (not by pytest)::

    python benchmarks/truncated.py                    # 3 rounds, B = 1000 1050 1100 1200 1500
    python benchmarks/truncated.py --rounds 5 --batches 1000,1100
    python benchmarks/truncated.py --fine             # also dp_accounting at interval 1e-5
    python benchmarks/truncated.py --render benchmarks/truncated.json   # the table only

The run: N = 100,000 records, q = 0.01, σ = 1, 1000 steps, δ = 1e-5, a batch
larger than B cut to B. For each B, each cell in a fresh child process, in
``--rounds`` rounds interleaved A B A B (C with ``--fine``):

- ``gaussdp``: ``account(Repeated(TruncatedPoisson(Gaussian(1), q, B, N), T))
  .epsilon_bounds(δ)``: both certified bounds, default settings;
- ``gaussdp_1e-6``: the same with ``accuracy=1e-6`` (where almost no batch is
  cut, both tools give plain Poisson's ε, on dp_accounting's grid at gaussdp's default
  accuracy, and ten digits at this one);
- ``dp_accounting``: ``PLDAccountant()`` (its default interval 1e-4) composing
  ``SelfComposedDpEvent(TruncatedSubsampledGaussianDpEvent(N, q, B, 1), T)``,
  then ``get_epsilon(δ)``: its single pessimistic ε;
- ``dp_accounting_fine`` (``--fine``): the same at interval 1e-5.

Inside the child the imports come first (timed separately), then the work is
timed once (``time.perf_counter``). The ratio is median(gaussdp) /
median(dp_accounting) of the work times; whole-process times are recorded too.
Once per B (not timed): the probability that a batch holding a given record
is cut, ``TruncatedPoisson.truncation_probability`` = P(Binomial(N − 1, q) ≥ B),
and gaussdp's bounds for plain Poisson sampling (``.untruncated``) for comparison.

Writes ``benchmarks/truncated.json`` and ``benchmarks/truncated.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
N, Q, SIGMA, STEPS, DELTA = 100_000, 0.01, 1.0, 1000, 1e-5

GAUSSDP = """
import json, time
t0 = time.perf_counter()
from gaussdp import Gaussian, Repeated, TruncatedPoisson, account
t1 = time.perf_counter()
lower, upper = account(
    Repeated(TruncatedPoisson(Gaussian({sigma}), {q}, {b}, {n}), {steps}){accuracy}
).epsilon_bounds({delta})
t2 = time.perf_counter()
print(json.dumps({{"imports": t1 - t0, "work": t2 - t1, "lower": lower, "upper": upper}}))
"""

DP_ACCOUNTING = """
import json, time
t0 = time.perf_counter()
import dp_accounting
from dp_accounting import pld
t1 = time.perf_counter()
accountant = pld.PLDAccountant({kwargs})
accountant.compose(dp_accounting.SelfComposedDpEvent(
    dp_accounting.TruncatedSubsampledGaussianDpEvent({n}, {q}, {b}, {sigma}), {steps}))
epsilon = accountant.get_epsilon({delta})
t2 = time.perf_counter()
print(json.dumps({{"imports": t1 - t0, "work": t2 - t1, "epsilon": epsilon}}))
"""

REFERENCE = """
import json
from gaussdp import Gaussian, Repeated, TruncatedPoisson, account
sampler = TruncatedPoisson(Gaussian({sigma}), {q}, {b}, {n})
lower, upper = account(Repeated(sampler.untruncated, {steps})).epsilon_bounds({delta})
print(json.dumps({{"truncation_probability": sampler.truncation_probability,
                   "poisson_lower": lower, "poisson_upper": upper}}))
"""


def _child(code: str, timeout: float) -> dict:
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"failed": f"timed out after {timeout:g} s"}
    whole = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"failed": f"exit {done.returncode}: {last}"}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process"] = whole
    return result


def _code(cell: str, b: int) -> str:
    values = {"n": N, "q": Q, "b": b, "sigma": SIGMA, "steps": STEPS, "delta": DELTA}
    if cell.startswith("gaussdp"):
        accuracy = ", accuracy=1e-6" if cell == "gaussdp_1e-6" else ""
        return GAUSSDP.format(accuracy=accuracy, **values)
    kwargs = "value_discretization_interval=1e-5" if cell == "dp_accounting_fine" else ""
    return DP_ACCOUNTING.format(kwargs=kwargs, **values)


def measure(batches, rounds, fine, timeout) -> dict:
    cells = ["gaussdp", "dp_accounting", "gaussdp_1e-6"]
    cells += ["dp_accounting_fine"] if fine else []
    runs = []
    for b in batches:
        reference = _child(
            REFERENCE.format(n=N, q=Q, b=b, sigma=SIGMA, steps=STEPS, delta=DELTA), timeout
        )
        samples = {cell: [] for cell in cells}
        failed = {}
        for round_index in range(rounds):
            order = cells if round_index % 2 == 0 else cells[::-1]
            for cell in order:
                if cell in failed:
                    continue
                result = _child(_code(cell, b), timeout)
                if "failed" in result:
                    failed[cell] = result["failed"]
                else:
                    samples[cell].append(result)
                print(f"B={b} round {round_index + 1} {cell}: {result}", file=sys.stderr)
        runs.append(
            {"max_batch_size": b, "reference": reference, "samples": samples, "failed": failed}
        )
    return {
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "run": {"N": N, "q": Q, "sigma": SIGMA, "steps": STEPS, "delta": DELTA},
        "rounds": rounds,
        "runs": runs,
    }


def _median(samples, key):
    values = [s[key] for s in samples]
    return statistics.median(values) if values else float("nan")


def render(results: dict) -> str:
    run = results["run"]
    lines = [
        "# Truncated Poisson: gaussdp against dp_accounting",
        "",
        f"Run: N = {run['N']:,}, q = {run['q']}, σ = {run['sigma']}, {run['steps']} steps, "
        f"δ = {run['delta']:g}; a Poisson batch larger than B is cut to a uniformly random "
        "subset of B. Generated by `python benchmarks/truncated.py` "
        f"({results['when']}, {results['machine']}, {results['rounds']} rounds, fresh "
        "processes, interleaved A B C, C B A, ...; times are medians of the work, imports "
        "excluded; ratio = gaussdp's median / dp_accounting's).",
        "",
        "gaussdp: both certified bounds, `account(Repeated(TruncatedPoisson(Gaussian(1), q, B, "
        "N), T)).epsilon_bounds(δ)`. dp_accounting: `PLDAccountant()` (default interval "
        "1e-4) on `TruncatedSubsampledGaussianDpEvent`, its single pessimistic ε. "
        "P(cut) = `truncation_probability` = P(Binomial(N − 1, q) ≥ B); Poisson ε: gaussdp's "
        "upper bound for plain Poisson sampling at the same q (`.untruncated`).",
        "",
        "| B | P(cut) | gaussdp lower | gaussdp upper | dp_accounting ε | Poisson ε | "
        "gaussdp s | dp_accounting s | ratio | upper ≤ dp_accounting |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    fine_rows, tight_rows = [], []
    for entry in results["runs"]:
        samples = entry["samples"]
        reference = entry["reference"]
        ours, theirs = samples.get("gaussdp", []), samples.get("dp_accounting", [])
        if not ours or not theirs:
            lines.append(f"| {entry['max_batch_size']} | failed: {entry['failed']} |")
            continue
        lower, upper = ours[0]["lower"], ours[0]["upper"]
        epsilon = theirs[0]["epsilon"]
        t_ours, t_theirs = _median(ours, "work"), _median(theirs, "work")
        cut = reference.get("truncation_probability", float("nan"))
        upper_text, epsilon_text = _apart(upper, epsilon)
        lines.append(
            f"| {entry['max_batch_size']} | {cut:.3g} "
            f"| {lower:.6g} | {upper_text} | {epsilon_text} | "
            f"{reference.get('poisson_upper', float('nan')):.6g} | {t_ours:.2f} | {t_theirs:.2f} "
            f"| {t_ours / t_theirs:.2f} | {'yes' if upper <= epsilon else 'NO'} |"
        )
        tight = samples.get("gaussdp_1e-6")
        if tight:
            tight_upper, tight_epsilon = _apart(tight[0]["upper"], epsilon)
            tight_rows.append(
                f"| {entry['max_batch_size']} | {tight[0]['lower']:.10g} | "
                f"{tight_upper} | {tight_epsilon} | {_median(tight, 'work'):.2f} | "
                f"{_median(tight, 'work') / t_theirs:.2f} | "
                f"{'yes' if tight[0]['upper'] <= epsilon else 'NO'} |"
            )
        fine = samples.get("dp_accounting_fine")
        if fine or "dp_accounting_fine" in entry["failed"]:
            if not fine:
                failure = entry["failed"]["dp_accounting_fine"]
                fine_rows.append(f"| {entry['max_batch_size']} | failed: {failure} | | | | |")
                continue
            theirs_fine, t_fine = fine[0]["epsilon"], _median(fine, "work")
            tight_upper = tight[0]["upper"] if tight else float("nan")
            fine_rows.append(
                f"| {entry['max_batch_size']} | {theirs_fine:.10g} | {t_fine:.2f} | "
                f"{t_ours / t_fine:.2f} | {'yes' if upper <= theirs_fine else 'NO'} | "
                f"{'yes' if tight_upper <= theirs_fine else 'NO'} |"
            )
    if tight_rows:
        lines += [
            "",
            "gaussdp with `accuracy=1e-6` (ten digits):",
            "",
            "| B | gaussdp lower | gaussdp upper | dp_accounting ε | gaussdp s | ratio | "
            "upper ≤ dp_accounting |",
            "|---|---|---|---|---|---|---|",
            *tight_rows,
        ]
    if fine_rows:
        fine_rows.append("")
        fine_rows.append(
            "Where a row says NO, no batch is cut in effect (the run is plain Poisson "
            "sampling): dp_accounting's figure at interval 1e-5 lies between gaussdp's two "
            "certified bounds and below its upper bound, in 20–50× gaussdp's time."
        )
        lines += [
            "",
            "dp_accounting at interval 1e-5:",
            "",
            "| B | dp_accounting ε | dp_accounting s | ratio (default) | default upper ≤ it | "
            "`accuracy=1e-6` upper ≤ it |",
            "|---|---|---|---|---|---|",
            *fine_rows,
        ]
    lines += [
        "",
        "Where batches are cut (B ≤ 1100 here) the gap between gaussdp's bounds is not "
        "numerical: the exact pair of truncated Poisson sampling is not known. The upper "
        "bound reveals whether the batch was cut "
        "(dp_accounting's construction, with the tight pair in the cut branch instead of its "
        "replace-one pair); the lower bound is an actual pair of data sets "
        "(see `gaussdp.pld.truncated`). Where almost no batch is cut (B ≥ 1200) both tools "
        "give plain Poisson's ε; at its default accuracy gaussdp's certified upper bound is "
        "then on dp_accounting's own grid (1e-4) and below its pessimistic figure (on that "
        "grid gaussdp's rounding allowance is made relative: "
        "`gaussdp.accountant.grids.capped_upper_allowance`), and by 6e-6 at "
        "`accuracy=1e-6`, still in a fraction of the time. Upper bounds and dp_accounting's "
        "ε are shown to the digits that tell them apart.",
        "",
    ]
    return "\n".join(lines)


def _apart(mine: float, theirs: float) -> tuple[str, str]:
    """Both numbers to 10 significant digits, or as many (up to 15) as tell them apart."""
    for digits in range(10, 16):
        a, b = f"{mine:.{digits}g}", f"{theirs:.{digits}g}"
        if a != b or mine == theirs:
            return a, b
    return a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", default="1000,1050,1100,1200,1500")
    parser.add_argument("--fine", action="store_true")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--render", type=Path)
    parser.add_argument("--json", type=Path, default=HERE / "truncated.json")
    parser.add_argument("--output", type=Path, default=HERE / "truncated.md")
    args = parser.parse_args()
    if args.render:
        results = json.loads(args.render.read_text())
    else:
        batches = [int(b) for b in args.batches.split(",")]
        results = measure(batches, args.rounds, args.fine, args.timeout)
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    args.output.write_text(render(results))
    print(args.output.read_text())


if __name__ == "__main__":
    main()
