"""Sensitivity of matrix mechanisms: gaussdp against jax_privacy on the same input (issue 22).

Two goals: a Toeplitz strategy (square-root, n = 10,000) under min-separation in under 1 s and
no slower than jax_privacy's ``toeplitz.minsep_sensitivity_squared``; a dense n = 2,000
strategy under min-separation no slower than jax_privacy's general upper bound
``get_min_sep_sensitivity_upper_bound`` and at least as tight. Times are process CPU seconds
of the second call (the first compiles jax's functions), so the ratio holds on a shared machine.

    python benchmarks/matrix_sensitivity.py
"""

from __future__ import annotations

import time

import numpy as np


def _cpu(function, repeat: int = 2):
    result = None
    for _ in range(repeat):
        start = time.process_time()
        result = function()
        elapsed = time.process_time() - start
    return result, elapsed


def main() -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    from jax_privacy.matrix_factorization import sensitivity as js
    from jax_privacy.matrix_factorization import toeplitz as jt

    from gaussdp import matrix

    n, separation, k = 10_000, 100, 50
    coefficients = matrix.square_root_toeplitz_coefficients(n)
    ours, ours_time = _cpu(
        lambda: matrix.sensitivity(
            matrix.square_root_toeplitz(n), matrix.MinSeparation(separation, k)
        )
    )
    theirs, theirs_time = _cpu(
        lambda: float(jt.minsep_sensitivity_squared(coefficients, separation, k, n=n)) ** 0.5
    )
    print(
        f"Toeplitz n={n}, b={separation}, k={k}: gaussdp {ours.value:.10g} (exact={ours.exact}) "
        f"in {ours_time:.4f} s CPU; jax_privacy {theirs:.10g} in {theirs_time:.4f} s CPU"
    )

    n, separation, k = 2000, 100, 8
    strategy = np.tril(np.random.default_rng(0).random((n, n)))
    ours, ours_time = _cpu(
        lambda: matrix.sensitivity(matrix.dense(strategy), matrix.MinSeparation(separation, k))
    )
    theirs, theirs_time = _cpu(
        lambda: float(js.get_min_sep_sensitivity_upper_bound(strategy, separation, k))
    )
    print(
        f"dense n={n}, b={separation}, k={k}: gaussdp {ours.value:.10g} (exact={ours.exact}, "
        f"lower {ours.lower:.10g}) in {ours_time:.3f} s CPU; jax_privacy upper bound "
        f"{theirs:.10g} in {theirs_time:.3f} s CPU"
    )


if __name__ == "__main__":
    main()
