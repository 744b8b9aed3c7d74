"""Audit speed (run by hand): 10⁶ + 10⁶ scores, and the one-run f-DP test of a DP-SGD curve.

1. ``gaussdp.audit.from_scores`` on 10⁶ member and 10⁶ non-member scores, every
   threshold with a Bonferroni correction (Clopper–Pearson on both error rates, the
   ε and μ lower bounds and the certified points), against jax_privacy's
   ``CanaryScoreAuditor(...).epsilon_clopper_pearson`` (Bonferroni) on the same
   scores when jax_privacy is installed. Goal: ≤ 0.5× jax_privacy's time, < 2 s.
2. ``gaussdp.audit.one_run`` with ``curve=`` the accountant's curve of a 2,000-step
   DP-SGD run (σ = 1, q = 0.01): the MMC test and its p-value, accounting included
   and excluded. Goal: < 5 s.

Timings are the median of ``--repeat`` runs (``time.perf_counter``), in one process.

    python benchmarks/audit.py [--repeat 3] [--size 1000000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import gaussdp
from gaussdp import audit


def _median_time(function, repeat: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=1_000_000)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    members = rng.normal(1.0, 1.0, options.size)
    non_members = rng.normal(0.0, 1.0, options.size)

    seconds, result = _median_time(
        lambda: audit.from_scores(members, non_members, delta=1e-5), options.repeat
    )
    print(
        f"gaussdp from_scores, {options.size} + {options.size} scores, Bonferroni: {seconds:.3f} s "
        f"(epsilon >= {result.epsilon_lower:.4f}, mu >= {result.mu_lower:.4f})"
    )
    try:
        from jax_privacy import auditing
    except ImportError:
        print("jax_privacy not installed: no comparison")
    else:

        def peer():
            auditor = auditing.CanaryScoreAuditor(members, non_members)
            return auditor.epsilon_clopper_pearson(0.05, 1e-5, one_sided=False)

        peer_seconds, peer_epsilon = _median_time(peer, options.repeat)
        print(
            f"jax_privacy epsilon_clopper_pearson (Bonferroni over its Pareto thresholds): "
            f"{peer_seconds:.3f} s (epsilon >= {peer_epsilon:.4f}); "
            f"ratio gaussdp / jax_privacy = {seconds / peer_seconds:.2f}"
        )

    run = gaussdp.DPSGD(noise_multiplier=1.0, sampling_probability=0.01, steps=2000)
    start = time.perf_counter()
    curve = gaussdp.account(run).tradeoff()
    accounting_seconds = time.perf_counter() - start
    seconds, tested = _median_time(
        lambda: audit.one_run(1000, 200, 180, delta=1e-5, curve=curve), options.repeat
    )
    print(
        f"one-run f-DP audit of the 2,000-step DP-SGD curve: {seconds:.3f} s "
        f"(+ {accounting_seconds:.3f} s accounting); rejected: {tested.used['curve_rejected']}, "
        f"p = {tested.used['curve_p_value']:.3g}"
    )


if __name__ == "__main__":
    main()
