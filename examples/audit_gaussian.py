"""The audit beside the accountant, on simulated attack scores (docs/figures/audit_roc.png).

A Gaussian mechanism claimed with σ = 2 (0.5-GDP). Left: the code that ran is the one
described (scores of a 0.5-GDP attack). Right: it adds half the noise (a 1-GDP attack's
scores), which the audit flags as a violation.

    python examples/audit_gaussian.py [output.png]
"""

from __future__ import annotations

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import gaussdp
from gaussdp import audit


def main(output: str = "docs/figures/audit_roc.png") -> None:
    rng = np.random.default_rng(7)
    run = gaussdp.Gaussian(2.0)
    fine = audit.from_scores(
        rng.normal(0.5, 1.0, 50_000), rng.normal(0.0, 1.0, 50_000), delta=1e-5, against=run
    )
    buggy = audit.from_scores(
        rng.normal(1.0, 1.0, 50_000), rng.normal(0.0, 1.0, 50_000), delta=1e-5, against=run
    )
    figure, axes = plt.subplots(1, 2, figsize=(11, 5))
    fine.report.plot(ax=axes[0])
    buggy.report.plot(ax=axes[1])
    axes[0].set_title(f"as described — {axes[0].get_title()}", fontsize=9)
    axes[1].set_title(
        f"noise halved — {axes[1].get_title()}", fontsize=9, color=axes[1].title.get_color()
    )
    figure.tight_layout()
    figure.savefig(output, dpi=100)
    print(fine.report.to_text())
    print(buggy.report.to_text())


if __name__ == "__main__":
    main(*sys.argv[1:])
