"""The reporting paper's Figure 4, recomputed: DP-SGD on CIFAR-10 and the 2020 Census as μ-GDP.

Run from the repository root (writes docs/figures/report_examples.png):

    python examples/report_figures.py

For each mechanism: the accountant's certified (pessimistic) trade-off curve against G_μ
with the reported μ, and the difference f(α) − G_μ(α): never negative (μ is a valid
guarantee) and small (the regret bounds how far the curve lies above G_μ); Gomez,
Kaissis, Kulynych et al. 2025, Fig. 4 and Appendix D.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import gaussdp
from gaussdp import curves
from gaussdp.plot import plot_tradeoff

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"

RUNS = [
    ("DP-SGD, CIFAR-10 (σ = 9.4, q = 0.32768, T = 2000)", gaussdp.DPSGD(9.4, 0.32768, 2000)),
    ("Census TopDown 2022 (ρ = 3.65)", gaussdp.load(ROOT / "examples" / "census_topdown.toml")),
]


def main() -> None:
    fig, axes = plt.subplots(2, len(RUNS), figsize=(5.2 * len(RUNS), 9.0))
    for column, (title, mechanism) in enumerate(RUNS):
        accounting = gaussdp.account(mechanism)
        report = accounting.gdp()
        curve = accounting.tradeoff()
        guarantee = curves.gaussian(report.mu)
        top, bottom = axes[0, column], axes[1, column]
        plot_tradeoff(
            [curve, guarantee],
            ax=top,
            labels=["accountant (certified)", f"G_μ, μ = {report.mu:.4f}"],
        )
        top.set_title(title, fontsize=10)
        alphas = np.linspace(0.0, 1.0, 2001)
        gap = np.asarray(curve.beta(alphas)) - np.asarray(guarantee.beta(alphas))
        bottom.plot(alphas, gap)
        bottom.axhline(0.0, color="grey", linewidth=0.5)
        bottom.set_xlabel("α (FPR)")
        bottom.set_ylabel("f(α) − G_μ(α)")
        bottom.set_title(
            f"difference; regret ≤ {report.regret:.2g}, Tier {report.tier}", fontsize=10
        )
        print(f"{title}: mu = {report.mu:.4f}, regret = {report.regret:.3g}, tier {report.tier}")
    fig.tight_layout()
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIGURES / "report_examples.png", dpi=110)
    plt.close(fig)
    print(f"wrote {FIGURES / 'report_examples.png'}")


if __name__ == "__main__":
    main()
