"""Fuzz the accountant: random mechanism trees, random queries, invariants that must hold.

Not a benchmark and not part of the test suite: a tool for contributors, run by hand
(``python benchmarks/fuzz_accountant.py --seconds 600 --seed 1``). It draws mechanism
trees (leaves of every kind; repetitions, compositions, subsampling, groups, parallel
parts, samplers, banded matrix mechanisms), accounts them, asks a few random queries
and checks what every accounting promises:

- ``epsilon_bounds`` at δ from 1e-20 to 1e-3: 0 ≤ lower ≤ upper, also the lower
  profiles' own value; the public lower bound is ``min(lower, upper)``, and bounds that
  cross beyond their rounding margins warn, which is made an error here;
- ``delta_bounds``: 0 ≤ lower ≤ upper ≤ 1;
- ``tradeoff()``: finite β in [0, 1], and the pessimistic curve never above the
  optimistic one;
- ``gdp()``: a report that renders.

A clear ``InvalidParameterError`` or ``MemoryError`` is a refusal, not a failure. Each
case runs under a time limit (a timeout is printed, not counted) and the whole process
under an address-space limit. At stop 31 it found nine defects in ~6,000 cases (see
CHANGELOG); every one became a test.
"""

from __future__ import annotations

import argparse
import random
import signal
import time
import traceback
import warnings

import numpy as np


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="how long to draw cases")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--case-seconds", type=int, default=60, help="time limit per case")
    parser.add_argument("--memory-gb", type=float, default=5.0, help="address-space limit")
    return parser


class _Draw:
    """Random mechanism trees (depth ≤ 2) from one seeded generator."""

    def __init__(self, gaussdp, seed: int):
        self.g, self.rng = gaussdp, random.Random(seed)

    def gaussian(self):
        return self.g.Gaussian(self.rng.uniform(0.4, 8.0))

    def leaf(self):
        g, rng = self.g, self.rng
        kind = rng.choice(["gaussian", "laplace", "pure", "rr", "zcdp", "approx", "gdp", "rdp"])
        if kind == "gaussian":
            return self.gaussian()
        if kind in ("laplace", "pure", "rr", "approx"):
            return self.basic(kind)
        if kind == "zcdp":
            return g.ZCDP(rng.uniform(0.001, 0.5))
        if kind == "gdp":
            return g.GDP(rng.uniform(0.01, 3.0))
        orders = sorted(rng.sample([1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0], 3))
        return g.RenyiDP(tuple(orders), tuple(rng.uniform(0.01, 1.0) * a for a in orders))

    def basic(self, kind=None):
        """A basic mechanism other than the Gaussian (what a random allocation may run)."""
        g, rng = self.g, self.rng
        kind = kind or rng.choice(["laplace", "pure", "rr", "approx"])
        if kind == "laplace":
            return g.Laplace(rng.uniform(0.5, 10.0))
        if kind == "pure":
            return g.PureDP(rng.uniform(0.01, 2.0))
        if kind == "rr":
            return g.RandomizedResponse(rng.uniform(0.01, 2.0))
        return g.ApproxDP(rng.uniform(0.01, 1.5), 10.0 ** rng.uniform(-12.0, -6.0))

    def mechanism(self, depth: int = 0):
        g, rng = self.g, self.rng
        kinds = ["leaf", "repeated", "poisson", "composition", "without", "allocation"]
        kinds += ["truncated", "mixture", "group", "parallel", "shuffled", "band"]
        kind = rng.choice(kinds if depth < 2 else ["leaf"])
        if kind == "leaf":
            return self.leaf()
        if kind == "repeated":
            return g.Repeated(self.mechanism(depth + 1), rng.randint(1, 300))
        if kind == "poisson":
            inner = rng.choice([self.gaussian(), g.Laplace(rng.uniform(0.5, 5.0)), self.leaf()])
            return g.PoissonSubsampled(inner, 10.0 ** rng.uniform(-3.0, -0.1))
        if kind == "without":
            size = rng.randint(10, 10_000)
            inner = rng.choice([self.gaussian(), self.leaf()])
            return g.SubsampledWithoutReplacement(inner, rng.randint(1, size), size)
        if kind == "composition":
            return g.Composition([self.mechanism(depth + 1) for _ in range(rng.randint(2, 3))])
        if kind == "allocation":
            steps = rng.randint(2, 100)
            inner = rng.choice([self.gaussian(), self.gaussian(), self.basic()])
            allocation = g.RandomAllocation(inner, steps, rng.choice([1, 1, 2]))
            return g.Repeated(allocation, rng.randint(1, 4))
        if kind == "truncated":
            size, q = rng.randint(100, 20_000), 10.0 ** rng.uniform(-2.5, -0.5)
            batch = min(max(1, int(size * q * rng.uniform(0.8, 2.0))), size)
            truncated = g.TruncatedPoisson(self.gaussian(), q, batch, size)
            return g.Repeated(truncated, rng.randint(1, 200))
        if kind == "mixture":
            p = rng.uniform(0.001, 0.5)
            return g.GaussianMixture(rng.uniform(0.5, 5.0), (0.0, 1.0), (1.0 - p, p))
        if kind == "group":
            return g.Group(self.mechanism(depth + 1), rng.randint(1, 4))
        if kind == "parallel":
            return g.Parallel(tuple(self.mechanism(depth + 1) for _ in range(2)))
        if kind == "shuffled":
            return g.Repeated(g.Shuffled(self.gaussian(), rng.randint(2, 50)), rng.randint(1, 3))
        return g.AmplifiedBandMF(
            rng.uniform(0.5, 5.0), rng.randint(4, 64), rng.randint(1, 4), rng.uniform(0.01, 0.25)
        )


def _query(accounting, rng: random.Random, asked: list) -> None:
    """One random query, and the invariants it must satisfy."""
    kind = rng.choice(["epsilon", "delta", "curves", "report"])
    asked.append(kind)
    if kind == "epsilon":
        delta = 10.0 ** rng.uniform(-20.0, -3.0)
        lower, upper = accounting.epsilon_bounds(delta)
        own = max(p.epsilon(delta) for p in accounting.profiles("lower"))
        assert 0.0 <= lower <= upper and own <= upper * (1 + 1e-9) + 1e-12, (delta, own, upper)
    elif kind == "delta":
        epsilons = np.sort(np.array([rng.uniform(0.0, 5.0) for _ in range(3)]))
        lower, upper = accounting.delta_bounds(epsilons)
        assert np.all(lower >= 0.0) and np.all(lower <= upper) and np.all(upper <= 1.0)
    elif kind == "curves":
        alphas = np.linspace(0.0, 1.0, 21)
        low, high = (
            accounting.tradeoff().beta(alphas),
            accounting.tradeoff("optimistic").beta(alphas),
        )
        assert np.all(np.isfinite(low)) and np.all((low >= -1e-12) & (low <= 1.0 + 1e-12))
        assert np.all(low <= high + 1e-9), ("curves cross", float(np.max(low - high)))
    else:
        str(accounting.gdp())


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        import resource

        limit = int(args.memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError):  # not POSIX: no limit
        pass
    warnings.simplefilter("ignore")
    warnings.filterwarnings("error", message="the certified bounds", category=RuntimeWarning)
    import gaussdp

    def timeout(*_):
        raise TimeoutError

    signal.signal(signal.SIGALRM, timeout)
    draw = _Draw(gaussdp, args.seed)
    start, cases, failures = time.time(), 0, 0
    while time.time() - start < args.seconds:
        try:
            mechanism = draw.mechanism()
        except gaussdp.InvalidParameterError:  # a tree the descriptions refuse
            continue
        cases += 1
        asked: list = []
        signal.alarm(args.case_seconds)
        try:
            accounting = gaussdp.account(mechanism)
            for _ in range(draw.rng.randint(1, 3)):
                _query(accounting, draw.rng, asked)
        except TimeoutError:
            print("TIMEOUT", mechanism, asked, flush=True)
        except (gaussdp.InvalidParameterError, MemoryError):
            pass  # a clear refusal
        except Exception as error:  # every other failure is reported
            failures += 1
            print("FAIL", mechanism, asked, repr(error)[:400], flush=True)
            traceback.print_exc(limit=4)
        finally:
            signal.alarm(0)
    print(f"{cases} cases, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
