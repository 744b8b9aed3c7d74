"""Speed-up of ``gaussdp.sweep`` with 2 local worker processes over 1, on a DP-SGD grid.

The grid of the issue: 48 DP-SGD runs, σ ∈ {0.7, 1.0, 1.3, 1.6}, q ∈ {0.004, 0.01, 0.02},
steps ∈ {3000, 5000, 7000, 10000}, ε at δ = 1e-5 with both bounds. Each timing runs in a
fresh process (imports excluded), 1 and 2 workers interleaved, several rounds; medians.
The machine's load average and the CPU time used (this process and its workers) are
printed: the 2 cores may be shared with other work, which the speed-up then reflects. Run by hand::

    PYTHONPATH=src python benchmarks/sweep_workers.py --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

GRID = {
    "sweep": {"deltas": [1e-5]},
    "mechanism": [
        {
            "type": "dpsgd",
            "noise_multiplier": [0.7, 1.0, 1.3, 1.6],
            "sampling_probability": [0.004, 0.01, 0.02],
            "steps": [3000, 5000, 7000, 10000],
        }
    ],
}

_CHILD = r"""
import json, resource, sys, time
import gaussdp

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

grid = json.loads(sys.argv[1])
workers = int(sys.argv[2])
start, start_cpu = time.perf_counter(), cpu()
rows = gaussdp.sweep(grid, workers=workers)
elapsed, used = time.perf_counter() - start, cpu() - start_cpu
assert len(rows) == 48 and all(row["error"] is None for row in rows)
checksum = sum(row["epsilon_upper"] + row["epsilon_lower"] for row in rows)
print(json.dumps({"seconds": elapsed, "cpu": used, "checksum": checksum}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    times: dict[int, list[float]] = {1: [], 2: []}
    checksums = set()
    for round_number in range(args.rounds):
        for workers in (1, 2):
            output = subprocess.run(
                [sys.executable, "-c", _CHILD, json.dumps(GRID), str(workers)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            result = json.loads(output)
            times[workers].append(result["seconds"])
            checksums.add(result["checksum"])
            load = os.getloadavg()[0]
            print(
                f"round {round_number + 1}: {workers} worker(s) {result['seconds']:.2f} s, "
                f"{result['cpu']:.2f} CPU s (load average {load:.2f})",
                flush=True,
            )
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"median 1 worker {one:.2f} s, 2 workers {two:.2f} s: speed-up {one / two:.2f}x")
    print(f"identical numbers across runs: {len(checksums) == 1}")


if __name__ == "__main__":
    main()
