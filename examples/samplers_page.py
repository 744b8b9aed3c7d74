"""One DP-SGD run under every sampler: writes docs/samplers.md and its figure.

The run: σ = 1, 100 steps per epoch, 10 epochs (1000 steps), δ = 1e-5, data set
size N = 10,000 (expected batch 100). Samplers: Poisson (q = 1/100),
balls-in-bins, truncated Poisson at a few largest batch sizes B, and shuffling.
For each: the certified lower and upper bounds on ε(δ), the report's μ (an upper
bound: μ-GDP except with probability δ_tail = 1e-10) and the μ that the lower
bound alone forces (μ_GDP(ε_lower, δ), a lower bound on any μ the run can
claim); the figure draws the trade-off curves (upper bounds on privacy: the
pessimistic curves; for shuffling also the curve of Chua et al.'s lower bound).

Samplers that this installation cannot account yet are listed as "to be
generated" (the script catches the accountant's one-line refusal), so the page
is regenerated, unchanged, once they can:

    python examples/samplers_page.py > docs/samplers.md
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

import gaussdp
from gaussdp import DPSGD, gdp

SIGMA = 1.0
STEPS_PER_EPOCH = 100
EPOCHS = 10
STEPS = STEPS_PER_EPOCH * EPOCHS
DELTA = 1e-5
DATASET_SIZE = 10_000
Q = 1 / STEPS_PER_EPOCH
TRUNCATIONS = (100, 120, 150)
FIGURE = Path(__file__).resolve().parent.parent / "docs" / "figures" / "samplers_tradeoff.png"

RUNS = [
    ("Poisson (q = 1/100)", DPSGD(SIGMA, Q, STEPS)),
    (
        "balls-in-bins",
        DPSGD(SIGMA, steps=STEPS, sampler="balls-in-bins", steps_per_epoch=STEPS_PER_EPOCH),
    ),
    *[
        (
            f"truncated Poisson, B = {b}",
            DPSGD(
                SIGMA,
                Q,
                STEPS,
                sampler="truncated-poisson",
                max_batch_size=b,
                dataset_size=DATASET_SIZE,
            ),
        )
        for b in TRUNCATIONS
    ],
    ("shuffling", DPSGD(SIGMA, steps=STEPS, sampler="shuffling", steps_per_epoch=STEPS_PER_EPOCH)),
]


def _up(value: float, digits: int = 4) -> str:
    """Rounded up (an upper bound stays one)."""
    scale = 10.0 ** (digits - 1 - int(np.floor(np.log10(abs(value))))) if value else 1.0
    return f"{np.ceil(value * scale) / scale:.{digits}g}"


def _down(value: float, digits: int = 4) -> str:
    scale = 10.0 ** (digits - 1 - int(np.floor(np.log10(abs(value))))) if value else 1.0
    return f"{np.floor(value * scale) / scale:.{digits}g}"


def account_all():
    """(name, run, accounting or None, report or None, seconds) for every sampler."""
    rows = []
    for name, run in RUNS:
        start = time.perf_counter()
        try:
            accounting = gaussdp.account(run)
            accounting.epsilon_bounds(DELTA, warn=False)
            report = accounting.gdp(deltas=[DELTA])
        except gaussdp.InvalidParameterError as error:
            print(f"{name}: not accounted here ({error})", file=sys.stderr)
            accounting = report = None
        rows.append((name, run, accounting, report, time.perf_counter() - start))
    return rows


def table(rows) -> list[str]:
    lines = [
        "| sampler | description | ε lower | ε upper | μ (upper) | μ forced by the lower bound |",
        "|---|---|---|---|---|---|",
    ]
    for name, run, accounting, report, _ in rows:
        if accounting is None:
            lines.append(f"| {name} | {run.describe()} | to be generated | | | |")
            continue
        lower, upper = accounting.epsilon_bounds(DELTA, warn=False)
        forced = gdp.mu(float(lower), DELTA)
        lines.append(
            f"| {name} | {run.describe()} | {_down(float(lower))} | {_up(float(upper))} | "
            f"{_up(report.mu)} | ≥ {_down(float(forced))} |"
        )
    return lines


def figure(rows) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    alphas = np.linspace(0.0, 1.0, 401)
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.plot(alphas, 1 - alphas, color="0.7", linewidth=0.8, label="perfect privacy")
    for name, _, accounting, _, _ in rows:
        if accounting is None:
            continue
        curve = accounting.tradeoff("pessimistic")
        ax.plot(alphas, curve.beta(alphas), label=f"{name} (upper bound on privacy loss)")
        lower, upper = accounting.epsilon_bounds(DELTA)
        if accounting.caveats and upper - lower > 0.01 * upper:  # a visible bracket
            optimistic = accounting.tradeoff("optimistic")
            source = "Chua et al.'s lower bound" if "shuffl" in name else "certified lower bound"
            ax.plot(alphas, optimistic.beta(alphas), linestyle="--", label=f"{name} ({source})")
    ax.set_xlabel("α (false-positive rate of a membership attack)")
    ax.set_ylabel("β (smallest false-negative rate)")
    ax.set_title(f"σ = {SIGMA:g}, {STEPS_PER_EPOCH} steps per epoch, {EPOCHS} epochs")
    ax.legend(fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    fig.tight_layout()
    fig.savefig(FIGURE, dpi=120)
    plt.close(fig)


HEADER = f"""# Which sampler should I use?

DP-SGD's privacy depends on how its batches are drawn, not only on σ and the
number of steps. Here is one training run — σ = {SIGMA:g}, {STEPS_PER_EPOCH} steps per
epoch, {EPOCHS} epochs ({STEPS} steps), δ = {DELTA:g}, a data set of N = {DATASET_SIZE:,}
records (expected batch {DATASET_SIZE // STEPS_PER_EPOCH}) — under each sampler gaussdp
accounts. Generated by

    python examples/samplers_page.py > docs/samplers.md

which also draws `docs/figures/samplers_tradeoff.png`. Every ε is a certified
bound (lower bounds rounded down, upper bounds up); μ is the report's (μ-GDP
except with probability δ_tail = 1e-10, an upper bound); "μ forced by the lower
bound" is μ_GDP(ε_lower, δ): no μ below it can describe the run.

In one line each (`gaussdp.DPSGD`, or `gaussdp report dpsgd` with `--sampler`):

```python
>>> from gaussdp import DPSGD
>>> poisson = DPSGD(1.0, 0.01, 1000)
>>> balls_in_bins = DPSGD(1.0, steps=1000, sampler="balls-in-bins", steps_per_epoch=100)
>>> truncated = DPSGD(
...     1.0, 0.01, 1000, sampler="truncated-poisson", max_batch_size=120, dataset_size=10000
... )
>>> shuffled = DPSGD(1.0, steps=1000, sampler="shuffling", steps_per_epoch=100)
>>> print(shuffled.expand())
10 × Shuffled(t=100, Gaussian(σ=1))
>>> print(balls_in_bins.expand())
10 × RandomAllocation(t=100, k=1, Gaussian(σ=1))

```

A fixed batch size without a sampler named is refused, never taken as Poisson:

```python
>>> DPSGD(1.0, steps=1000, batch_size=100, dataset_size=10000)
Traceback (most recent call last):
...
gaussdp._validation.InvalidParameterError: a fixed batch size (...) needs a sampler: name one, ...

```

```console
$ gaussdp report dpsgd --noise-multiplier 1 --sampler shuffling --epochs 10 --steps-per-epoch 100
```

Why this spelling: one `DPSGD` with a `sampler` keeps the run one description
(the same report, sweeps, pipeline files and Opacus accountant), with `steps` the
total number of steps T for every sampler, so switching sampler changes one
argument; the epoch samplers take the epoch's length `steps_per_epoch` (or
`batch_size` with `dataset_size`), and T must be a whole number of epochs. The
sampler is an enum (`gaussdp.mechanisms.Sampler`) that also reads its name, as the
neighbouring relation does. `DPSGD(σ, q, T)` is Poisson, exactly as before.
"""

FOOTER = """
![Trade-off curves of the run under each sampler](figures/samplers_tradeoff.png)

## How to read it

- **Poisson** (every record independently with probability q at every step) is
  what the classic accountants assume, and is accounted tightly (the two bounds
  meet).
- **Balls-in-bins** (every epoch, each record goes to one step chosen uniformly;
  `RandomAllocation(Gaussian(σ), t)` per epoch) gives batches of nearly fixed
  size and, by the papers' analyses, privacy close to Poisson's (Chua et al.,
  arXiv 2412.16802; Feldman & Shenfeld, arXiv 2502.08202).
- **Truncated Poisson** (Poisson, then a batch larger than B cut to B) is Poisson
  with a bounded batch: the larger B, the closer to Poisson. Its exact pair is not
  known; gaussdp brackets it (the upper pair reveals whether the batch was cut, the
  lower pairs are attacks), so where batches are often cut the bounds are apart.
  Where cuts are rare its ε at δ = 1e-5 is Poisson's, but μ, read at
  δ_tail = 1e-10, can still be larger: a cut batch (B = 150: probability
  `TruncatedPoisson.truncation_probability` ≈ 1.6e-6 per step) is accounted with
  the larger shift of a replaced record, and the tail that μ describes feels it.
- **Shuffling** (every epoch a random permutation cut into fixed batches: what
  PyTorch's and JAX's data loaders do, and Opacus with `poisson_sampling=False`)
  has **no known tight upper bound**. gaussdp gives what is certain: the upper
  bound assumes no amplification at all (each record is in one batch per epoch,
  so one epoch is dominated by one Gaussian mechanism), and the lower bound is
  Chua et al.'s (ICML 2024, arXiv 2403.17673): the truth lies between. The lower
  bound alone is far above the Poisson figure, so **reporting a shuffled run's
  ε "as if Poisson" understates its privacy loss**; every report of a shuffled
  run says so in a caveat line.

**Where the balls-in-bins bounds stop being tight.** Both bounds come from the
law of a sum of t per-step coordinates Yᵢ = e^{ℓᵢ}, computed by FFT on a grid of at
most 2²³ points (`gaussdp.pld.allocation`). Small σ puts the coordinates' far tail,
e^{μ²/2 + 10μ} with μ = Δ/σ, ten thousand times above the bulk of the sum; the
accountant therefore takes apart the outcomes in which one coordinate is above a
split B (each on its own grid, relative to its size) from those in which none is
(one fine grid up to B); the rare outcomes with two above B (at most 1e-14) are
left out of the lower pair and spread, in the upper pair, over the losses their
sums may have. With that, at δ = 1e-5 and t = 100, 10 epochs, σ = 0.5 gives
[12.04912, 12.04945] (pld-accounting: [12.0085, 12.1025]) and σ = 0.6
[6.830718, 6.830738].

Small δ reads the far tails of the sum, where an FFT's rounding (about 1e-16 of the
largest mass, bounded generously by 1e-13) would swamp the true masses. So the laws
are computed under a ladder of exponential tilts (`gaussdp.pld.allocation_tilt`), each
cell taken from the tilt under which its error bound is least, relative to the tail it
lies in; the upper pairs put those errors just above the largest loss each cell can
change, not at infinite loss. On σ = 1, t = 100, 10 epochs the bounds are within the
default accuracy from δ = 1e-5 down to 1e-16:

| δ | gaussdp (lower, upper) | pld-accounting (lower, upper) |
|---|---|---|
| 1e-5 | (1.701498, 1.701517) | (1.6644, 1.7398) |
| 1e-11 | (3.401772, 3.401789) | (3.3636, 3.4421) |
| 1e-13 | (4.028581, 4.028599) | (3.9904, 4.0776) |
| 1e-14 | (4.336182, 4.336201) | (4.2919, 4.6457) |
| 1e-16 | (4.93618, 4.93623) | raises an error |

Before the tilts the upper bound was infinite below δ ≈ 8e-13. What limits the
bounds now is the grid of the sum itself (its cells are about h wide, and h follows
`accuracy`), and, for σ ≲ 0.6, the cap on its points; the bounds stay certified, and
an `AccuracyWarning` says when they are further apart than asked. For such a run the
certified lower bound is what can be said about it (not Poisson's figure: that is
another algorithm).

**The neighbouring relation.** Fixed batch sizes leave no room to add or remove
a record, so for shuffling add/remove is read as *zero-out* (one record replaced
by a null record contributing 0; Kairouz et al. 2021, Chua et al. 2024). Data set
and batch sizes stay fixed, the Poisson accounting of the same run is unchanged
under it (so the rows compare), and it is the relation of Chua et al.'s lower
bound.

**So:** if you can, sample Poisson or balls-in-bins and report its (tight) ε.
If you shuffle, report the shuffling bounds, not the Poisson figure. Opacus users:
`GaussDPAccountant` reads `poisson_sampling=False` from `make_private` and
accounts shuffling (see [Interop](interop.md)).
"""


def main() -> None:
    rows = account_all()
    figure(rows)
    lines = [HEADER, *table(rows)]
    missing = [name for name, _, accounting, _, _ in rows if accounting is None]
    if missing:
        lines += [
            "",
            f"Rows marked *to be generated* ({'; '.join(missing)}): this installation of "
            "gaussdp does not account that sampler yet; run the script again once it does.",
        ]
    shuffled = next((r for r in rows if r[0] == "shuffling" and r[3] is not None), None)
    if shuffled is not None:
        lines += ["", "The shuffled run's report says:", ""]
        lines += [f"> caveat: {caveat}" for caveat in shuffled[3].caveats]
    lines.append(FOOTER)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
