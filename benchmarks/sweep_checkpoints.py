"""ε after every epoch: gaussdp's reuse along steps against dp_accounting one value at a time.

The CIFAR-10 run of Abadi et al. / Gomez et al. (σ = 9.4, q = 0.32768), ε at δ = 1e-5
after steps = 20, 40, …, 2000 (100 checkpoints):

* ``dp_accounting``: ``dp_accounting.pld.PLDAccountant()`` (its defaults: value
  discretisation interval 1e-4, pessimistic estimate), one accountant per checkpoint,
  ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))`` composed T times, ``get_epsilon(1e-5)``
  — the upper bound only;
* ``gaussdp``: :func:`gaussdp.sweep` on the same checkpoints (one step's distribution
  discretised once, its transform reused), certified lower *and* upper bounds;
* ``gaussdp-single``: :func:`gaussdp.account` per checkpoint, both bounds (for reference).

Each measurement runs in a fresh process (imports excluded from the timing), the tools
interleaved, several rounds; the median is reported. Run by hand::

    PYTHONPATH=src python benchmarks/sweep_checkpoints.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

SIGMA, Q, DELTA = 9.4, 0.32768, 1e-5
STEPS = list(range(20, 2001, 20))

_CHILD = r"""
import json, sys, time
tool = sys.argv[1]
sigma, q, delta = {sigma!r}, {q!r}, {delta!r}
steps = {steps!r}
if tool == "dp_accounting":
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    start = time.perf_counter()
    values = []
    for t in steps:
        accountant = pld_privacy_accountant.PLDAccountant()
        event = dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma))
        accountant.compose(event, t)
        values.append(accountant.get_epsilon(delta))
    elapsed = time.perf_counter() - start
elif tool == "gaussdp":
    import gaussdp
    grid = {{
        "sweep": {{"deltas": [delta]}},
        "mechanism": [{{"type": "dpsgd", "noise_multiplier": sigma,
                        "sampling_probability": q, "steps": steps}}],
    }}
    start = time.perf_counter()
    rows = gaussdp.sweep(grid, workers=1)
    elapsed = time.perf_counter() - start
    values = [row["epsilon_upper"] for row in rows]
else:
    from gaussdp import DPSGD, account
    start = time.perf_counter()
    values = [account(DPSGD(sigma, q, t)).epsilon_bounds(delta)[1] for t in steps]
    elapsed = time.perf_counter() - start
print(json.dumps({{"tool": tool, "seconds": elapsed, "last": values[-1]}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--single", action="store_true", help="also time gaussdp.account per T")
    args = parser.parse_args()
    code = _CHILD.format(sigma=SIGMA, q=Q, delta=DELTA, steps=STEPS)
    tools = ["dp_accounting", "gaussdp"] + (["gaussdp-single"] if args.single else [])
    times: dict[str, list[float]] = {tool: [] for tool in tools}
    for round_number in range(args.rounds):
        for tool in tools:
            output = subprocess.run(
                [sys.executable, "-c", code, tool], capture_output=True, text=True, check=True
            ).stdout
            result = json.loads(output)
            times[tool].append(result["seconds"])
            print(
                f"round {round_number + 1}: {tool:15s} {result['seconds']:.2f} s  "
                f"(ε at T=2000: {result['last']:.6f})",
                flush=True,
            )
    medians = {tool: statistics.median(values) for tool, values in times.items()}
    for tool in tools:
        print(f"median {tool:15s} {medians[tool]:.2f} s")
    for tool in tools[1:]:
        print(f"ratio {tool} / dp_accounting: {medians[tool] / medians['dp_accounting']:.2f}")


if __name__ == "__main__":
    main()
