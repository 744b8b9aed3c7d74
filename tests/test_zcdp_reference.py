"""ZCDP(rho) against an independent brute force over Bernoulli pairs.

The class's delta(eps) is sup over Bernoulli pairs (t, x) with both Renyi divergences
<= rho*alpha for all alpha > 1 of t - e^eps x (a test reduces any pair to one; every
Bernoulli pair meeting the constraints is in the class). A finite alpha grid only relaxes
the constraints, so the brute force is >= the exact class value, up to the x grid.
"""

import math

import numpy as np
import pytest

from gaussdp import ZCDP, account


def largest_t(rho, xs, alphas):
    """For each x, the largest t (to 1e-15) with both Renyi divergences of the pairs
    (t, x) and (x, t) at most rho*alpha on the alpha grid (bisection)."""
    lx, l1x = np.log(xs)[None, :], np.log1p(-xs)[None, :]
    low, high = xs.copy(), np.full_like(xs, 1 - 1e-15)
    bound = (alphas - 1) * rho * alphas
    for _ in range(50):  # the bracket is then below 1e-15: δ ≥ 1e-10 to 1e-5 relative
        t = (low + high) / 2
        lt, l1t = np.log(t)[None, :], np.log1p(-t)[None, :]
        g = np.logaddexp(alphas * lt + (1 - alphas) * lx, alphas * l1t + (1 - alphas) * l1x)
        s = np.logaddexp(alphas * lx + (1 - alphas) * lt, alphas * l1x + (1 - alphas) * l1t)
        ok = np.all((g <= bound) & (s <= bound), axis=0)
        low, high = np.where(ok, t, low), np.where(ok, high, t)
    return low


def brute_delta(rho, epsilons):
    """sup over x of t(x) - e^eps x: on a grid of x spanning (0, 1), then on a finer grid
    between the neighbours of each epsilon's best x (each grid point is a Bernoulli pair
    of the class, so refining can only raise the value towards the sup)."""
    alphas = (1 + np.geomspace(1e-4, 1e3, 600))[:, None]
    # The alpha grid sets the accuracy here (the x grids below, twice as dense, move the
    # result by < 2e-5 relative, far below the 3e-3 of the test).
    xs = np.unique(np.concatenate([np.geomspace(1e-14, 0.5, 150), np.linspace(1e-3, 0.999, 150)]))
    ts = largest_t(rho, xs, alphas)
    best = [int(np.argmax(ts - math.exp(e) * xs)) for e in epsilons]
    fine = np.concatenate(
        [np.geomspace(xs[max(i - 1, 0)], xs[min(i + 1, len(xs) - 1)], 50) for i in best]
    )
    xs, ts = np.concatenate([xs, fine]), np.concatenate([ts, largest_t(rho, fine, alphas)])
    return [max(0.0, float(np.max(ts - math.exp(e) * xs))) for e in epsilons]


@pytest.mark.parametrize("rho", [0.05, 0.5])
def test_zcdp_matches_bernoulli_brute_force(rho):
    epsilons = [0.0, 0.5, 1.0, 2.0]
    ours = account(ZCDP(rho)).delta(np.array(epsilons))
    for mine, brute in zip(ours, brute_delta(rho, epsilons), strict=True):
        assert mine == pytest.approx(brute, rel=3e-3)
