"""Sweeps: grids of runs and privacy over training, saved as they finish, resumable.

* :mod:`gaussdp.sweeps.grid` — sweep files (a pipeline file whose numbers may be
  lists) and their Cartesian product, validated before any work;
* :mod:`gaussdp.sweeps.steps` — points that differ only in their number of steps,
  accounted from one transform;
* :mod:`gaussdp.sweeps.run` — tasks, and running them here, in local processes
  or on a Dask cluster: :func:`sweep`;
* :mod:`gaussdp.sweeps.output` — CSV, JSON Lines and Parquet output, and resuming;
* :mod:`gaussdp.sweeps.plot` — ε (or μ) against steps, one line per σ.

The guide is ``docs/sweeps.md``.
"""

from gaussdp.sweeps.grid import SweepGrid, read_grid
from gaussdp.sweeps.plot import plot_steps, steps_curves
from gaussdp.sweeps.run import SweepError, sweep

__all__ = ["SweepError", "SweepGrid", "plot_steps", "read_grid", "steps_curves", "sweep"]
