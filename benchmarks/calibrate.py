"""Calibration speed: gaussdp against dp_accounting's calibrate_dp_mechanism (run by hand).

For each workload, the DP-SGD noise multiplier σ meeting (ε, δ) is computed by

* gaussdp: ``gaussdp.calibrate.noise_multiplier`` (pessimistic, re-checked);
* dp_accounting: ``calibrate_dp_mechanism`` with its PLD accountant (default
  settings) and with its RDP accountant,

all in one run, timed with ``time.perf_counter`` (median of ``--repeat``
runs). Each σ is then accounted by gaussdp's default accountant, so the
table shows what ε each answer really gives. One row per workload is
written to ``docs/benchmarks-calibration.md`` (or ``--output``), replacing
earlier results, with the machine and versions.

    python benchmarks/calibrate.py [--repeat 3] [--output docs/benchmarks-calibration.md]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import logging
import os
import platform
import statistics
import time
from pathlib import Path

WORKLOADS = [
    # name, sampling probability, steps, target epsilon, delta
    ("CIFAR-10 (De et al.)", 0.32768, 2000, 8.0, 1e-5),
    ("q=0.01, T=10000", 0.01, 10_000, 2.0, 1e-5),
]

HEADER = (
    "| date | workload | target | gaussdp σ | gaussdp s | dp_accounting PLD σ | PLD s "
    "| dp_accounting RDP σ | RDP s | PLD s / gaussdp s | ε of PLD σ (gaussdp) |\n"
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
)


def _median_time(function, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def run(repeat: int) -> list[str]:
    import dp_accounting
    from dp_accounting import pld, rdp

    from gaussdp import DPSGD, account, calibrate

    logging.getLogger("absl").setLevel(logging.ERROR)
    rows = []
    today = datetime.date.today().isoformat()
    for name, q, steps, epsilon, delta in WORKLOADS:

        def event(sigma, q=q, steps=steps):
            step = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
            return dp_accounting.SelfComposedDpEvent(step, steps)

        ours, ours_time = _median_time(
            lambda q=q, steps=steps, epsilon=epsilon, delta=delta: calibrate.noise_multiplier(
                (epsilon, delta), sampling_probability=q, steps=steps
            ),
            repeat,
        )
        pld_sigma, pld_time = _median_time(
            lambda event=event, epsilon=epsilon, delta=delta: dp_accounting.calibrate_dp_mechanism(
                pld.PLDAccountant, event, epsilon, delta
            ),
            repeat,
        )
        rdp_sigma, rdp_time = _median_time(
            lambda event=event, epsilon=epsilon, delta=delta: dp_accounting.calibrate_dp_mechanism(
                rdp.RdpAccountant, event, epsilon, delta
            ),
            repeat,
        )
        pld_epsilon = account(DPSGD(pld_sigma, q, steps)).epsilon(delta)
        rows.append(
            f"| {today} | {name} | ε={epsilon:g}, δ={delta:g} | {ours.value:.6f} | "
            f"{ours_time:.3f} | {pld_sigma:.6f} | {pld_time:.3f} | {rdp_sigma:.6f} | "
            f"{rdp_time:.3f} | {pld_time / ours_time:.1f} | {pld_epsilon:.8f} |"
        )
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "docs" / "benchmarks-calibration.md",
    )
    arguments = parser.parse_args()
    rows = run(arguments.repeat)
    versions = ", ".join(
        f"{package} {importlib.metadata.version(package)}"
        for package in ("gaussdp", "dp-accounting", "numpy", "scipy")
    )
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    note = f"\nRun on {machine}, Python {platform.python_version()}, {versions}.\n\n"
    # One table: each run replaces the previous results (their history is in git).
    arguments.output.write_text(
        "# Calibration benchmarks\n\n"
        "Written by `benchmarks/calibrate.py` (run by hand). Times are medians of "
        "`time.perf_counter` over repeated runs in one process; σ is the noise multiplier "
        "each tool returns for the target. The last column accounts dp_accounting's σ "
        "with gaussdp's default (pessimistic) accountant: gaussdp's tighter bounds let it "
        "return a smaller σ for the same certified target.\n\n"
        + HEADER
        + "\n".join(rows)
        + "\n"
        + note,
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
