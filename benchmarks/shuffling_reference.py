"""Recompute the numbers of Chua et al.'s shuffling code that tests/test_shuffling.py holds.

Their code is the ``random-allocation`` package (``ShuffleAccountant`` in
``random_allocation.external_sources.Monte_Carlo_external``). It is not a test extra of
gaussdp because it pins numpy < 2.2; install it in a separate environment
(``pip install random-allocation pandas``) and run::

    python benchmarks/shuffling_reference.py

The printed values go into ``CHUA_EPSILONS`` and ``CHUA_CUBE_DELTAS``.
"""

from __future__ import annotations

import numpy as np


def main() -> None:
    from random_allocation.external_sources import Monte_Carlo_external as monte_carlo

    shuffle = monte_carlo.ShuffleAccountant()
    print("CHUA_EPSILONS = {")
    for sigma, steps, epochs in [(1.0, 100, 1), (2.0, 10, 1), (1.0, 10, 3)]:
        value = shuffle.get_epsilons(sigma, (1e-5,), steps, epochs)[0]
        print(f"    ({sigma}, {steps}, {epochs}): {float(value)!r},")
    print("}")
    cube = shuffle.get_deltas_single_epoch(1.0, (1.0, 2.0, 4.0), 100, verbose=False)
    print(f"CHUA_CUBE_DELTAS = {[float(x) for x in np.asarray(cube)]!r}")


if __name__ == "__main__":
    main()
