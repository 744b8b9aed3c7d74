"""Balls-in-bins benchmark: gaussdp against pld-accounting (issue 20, item 1).

Run by hand (not by pytest)::

    python benchmarks/allocation.py                 # all points, 3 rounds
    python benchmarks/allocation.py --rounds 5 --only main
    python benchmarks/allocation.py --render benchmarks/allocation.json   # the table only

For each point (σ, t steps per epoch, E epochs, δ) it runs, each in a fresh
child process, in ``--rounds`` rounds interleaved A B, B A, A B, …:

- ``gaussdp``: ``gaussdp.account(Repeated(RandomAllocation(Gaussian(σ), t), E))
  .epsilon_bounds(δ)`` (both certified bounds, default accuracy);
- ``pld_accounting``: ``PLD_accounting.gaussian_allocation_epsilon_range(delta=δ,
  sigma=σ, num_steps=t, num_epochs=E)`` (its upper and lower bound, default
  settings).

Inside the child the imports come first and are timed apart; the call is timed
with ``time.perf_counter``. Times are medians over the rounds; the ratio is
gaussdp's median over pld-accounting's. The goals of the main point (σ = 1,
t = 100, E = 10, δ = 1e-5): ratio ≤ 0.5, gaussdp's relative gap
(upper − lower)/upper ≤ 1e-3, gaussdp's upper ≤ pld-accounting's upper, and
the two intervals overlap.

Writes ``benchmarks/allocation.json`` and ``benchmarks/allocation.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (key, σ, t, epochs, δ); "main" carries the goals.
POINTS = [
    ("main", 1.0, 100, 10, 1e-5),
    ("sigma_0.8", 0.8, 100, 10, 1e-5),
    ("sigma_0.6", 0.6, 100, 10, 1e-5),
    ("sigma_0.5", 0.5, 100, 10, 1e-5),
    ("sigma_2", 2.0, 100, 10, 1e-5),
    ("steps_10", 1.0, 10, 10, 1e-5),
    ("steps_1000", 1.0, 1000, 10, 1e-5),
    # small δ: the laws' tails (pld-accounting takes 80-90 s each and raises at 1e-15)
    ("delta_1e-13", 1.0, 100, 10, 1e-13),
    ("delta_1e-14", 1.0, 100, 10, 1e-14),
]

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
which, sigma, delta = sys.argv[1], float(sys.argv[2]), float(sys.argv[5])
steps, epochs = int(sys.argv[3]), int(sys.argv[4])
start = time.perf_counter()
if which == "gaussdp":
    import gaussdp
    from gaussdp import Gaussian, Repeated, account
    from gaussdp.mechanisms import RandomAllocation
    imported = time.perf_counter()
    mechanism = Repeated(RandomAllocation(Gaussian(sigma), steps), epochs)
    lower, upper = account(mechanism).epsilon_bounds(delta)
    source = gaussdp.__file__
else:
    from PLD_accounting import gaussian_allocation_epsilon_range
    imported = time.perf_counter()
    upper, lower = gaussian_allocation_epsilon_range(
        delta=delta, sigma=sigma, num_steps=steps, num_epochs=epochs
    )
    source = "PLD_accounting"
done = time.perf_counter()
print(json.dumps({"lower": float(lower), "upper": float(upper), "seconds": done - imported,
                  "import_seconds": imported - start, "source": source}))
"""


def _run(which: str, point: tuple, timeout: float) -> dict:
    _, sigma, steps, epochs, delta = point
    command = [sys.executable, "-c", CHILD, which, str(sigma), str(steps), str(epochs), str(delta)]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=os.environ.copy()
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_seconds"] = time.perf_counter() - started
    return result


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=HERE,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def measure(points: list, rounds: int, timeout: float) -> dict:
    results = {}
    for point in points:
        key = point[0]
        runs: dict[str, list] = {"gaussdp": [], "pld_accounting": []}
        for round_index in range(rounds):
            order = ["gaussdp", "pld_accounting"]
            if round_index % 2:
                order.reverse()
            for which in order:
                outcome = _run(which, point, timeout)
                runs[which].append(outcome)
                print(key, round_index, which, outcome, flush=True)
        results[key] = {"point": list(point[1:]), "runs": runs}
    return results


def summarise(results: dict) -> dict:
    summary = {}
    for key, entry in results.items():
        row = {"point": entry["point"]}
        for which, runs in entry["runs"].items():
            good = [run for run in runs if "error" not in run]
            if not good:
                row[which] = {"error": runs[0].get("error", "no run")}
                continue
            row[which] = {
                "lower": good[-1]["lower"],
                "upper": good[-1]["upper"],
                "median_seconds": statistics.median(run["seconds"] for run in good),
                "median_import_seconds": statistics.median(run["import_seconds"] for run in good),
                "rounds": len(good),
            }
        ours, theirs = row.get("gaussdp", {}), row.get("pld_accounting", {})
        if "upper" in ours and "upper" in theirs:
            row["ratio"] = ours["median_seconds"] / theirs["median_seconds"]
            row["gap"] = (ours["upper"] - ours["lower"]) / ours["upper"]
            row["their_gap"] = (theirs["upper"] - theirs["lower"]) / theirs["upper"]
            row["upper_at_most_theirs"] = ours["upper"] <= theirs["upper"]
            row["overlap"] = ours["lower"] <= theirs["upper"] and theirs["lower"] <= ours["upper"]
        summary[key] = row
    return summary


def render(document: dict) -> str:
    lines = [
        "# Balls-in-bins: gaussdp against pld-accounting",
        "",
        f"Generated by `benchmarks/allocation.py` (gaussdp commit {document['commit']}, "
        f"{document['rounds']} rounds, fresh processes, interleaved; times are medians of the "
        "call, imports excluded; ratio = gaussdp / pld-accounting).",
        "",
        "| σ | t | epochs | δ | gaussdp ε (lower, upper) | rel. gap | pld-accounting ε "
        "(lower, upper) | rel. gap | gaussdp s | pld-accounting s | ratio | upper ≤ theirs "
        "| overlap |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in document["summary"].values():
        sigma, steps, epochs, delta = row["point"]
        ours, theirs = row.get("gaussdp", {}), row.get("pld_accounting", {})
        if "upper" not in ours or "upper" not in theirs:
            lines.append(
                f"| {sigma:g} | {steps} | {epochs} | {delta:g} | "
                f"{ours.get('error', '')} | | {theirs.get('error', '')} | | | | | | |"
            )
            continue
        lines.append(
            f"| {sigma:g} | {steps} | {epochs} | {delta:g} | "
            f"({ours['lower']:.6f}, {ours['upper']:.6f}) | {row['gap']:.1e} | "
            f"({theirs['lower']:.6f}, {theirs['upper']:.6f}) | {row['their_gap']:.1e} | "
            f"{ours['median_seconds']:.2f} | {theirs['median_seconds']:.2f} | "
            f"{row['ratio']:.2f} | {'yes' if row['upper_at_most_theirs'] else 'NO'} | "
            f"{'yes' if row['overlap'] else 'NO'} |"
        )
    main = document["summary"].get("main")
    if main and "ratio" in main:
        goals = [
            ("time ratio ≤ 0.5", main["ratio"] <= 0.5, f"{main['ratio']:.2f}"),
            ("relative gap ≤ 1e-3", main["gap"] <= 1e-3, f"{main['gap']:.1e}"),
            ("upper ≤ pld-accounting's upper", main["upper_at_most_theirs"], ""),
            ("intervals overlap", main["overlap"], ""),
        ]
        lines += ["", "Goals (σ = 1, t = 100, 10 epochs, δ = 1e-5):", ""]
        for name, met, value in goals:
            lines.append(f"- {name}: {'met' if met else 'MISSED'} {value}".rstrip())
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", action="append", help="point keys (repeatable)")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--render", help="rewrite the Markdown from this JSON only")
    arguments = parser.parse_args()
    json_path, markdown_path = HERE / "allocation.json", HERE / "allocation.md"
    if arguments.render:
        document = json.loads(Path(arguments.render).read_text(encoding="utf-8"))
    else:
        points = [p for p in POINTS if not arguments.only or p[0] in arguments.only]
        results = measure(points, arguments.rounds, arguments.timeout)
        document = {
            "commit": _commit(),
            "rounds": arguments.rounds,
            "results": results,
            "summary": summarise(results),
        }
        json_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    markdown_path.write_text(render(document), encoding="utf-8")
    print(render(document))


if __name__ == "__main__":
    main()
