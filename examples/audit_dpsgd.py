"""A real audit, end to end: DP-SGD with Opacus on CPU, gradient canaries, a one-run audit.

A small network is trained with DP-SGD (Opacus: per-example clipping, Gaussian noise,
Poisson batches) on a synthetic classification data set that this script makes. Into
the same run go ``m`` gradient canaries (Nasr et al. 2023): each is a random direction of
parameter space with the clipping norm as its length, included in the training set with
probability ½ and then, like every example, in each Poisson batch with probability q;
its "clipped gradient" is added to the sum before the noise. The auditor sees the
initial and the final model. Its score for a canary is the final model's displacement
along the canary's direction (with plain SGD the per-step updates telescope); it guesses
"included" for the ``guesses // 2`` highest scores and "excluded" for as many of the
lowest, and the one-run audit (Steinke, Nasr & Jagielski 2023; the f-DP analysis of
Mahloujifar, Melis & Chaudhuri 2024) turns the count of right guesses into lower bounds
and tests the accountant's own curve for the run.

The same training with a deliberate bug — the noise divided by ``bug_factor`` while the
accountant is told the intended noise multiplier — must be flagged as a violation.

    python examples/audit_dpsgd.py                # honest and buggy runs, the reports
    python examples/audit_dpsgd.py --figure docs/figures/audit_dpsgd.png
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

import gaussdp
from gaussdp import audit


@dataclass(frozen=True)
class Setting:
    """One audited training run (the defaults take a few seconds on one CPU core)."""

    noise_multiplier: float = 2.0  # what the accountant is told
    sampling_probability: float = 0.1
    steps: int = 200
    examples: int = 1000
    features: int = 50
    hidden: int = 200
    canaries: int = 1000
    guesses: int = 200
    max_grad_norm: float = 1.0
    learning_rate: float = 0.5
    bug_factor: float = 1.0  # > 1: the code that runs divides the noise by this
    seed: int = 0


def _data(setting: Setting, generator: torch.Generator):
    x = torch.randn(setting.examples, setting.features, generator=generator)
    w = torch.randn(setting.features, generator=generator)
    y = (x @ w + 0.5 * torch.randn(setting.examples, generator=generator) > 0).long()
    return torch.utils.data.TensorDataset(x, y)


def train_and_score(setting: Setting):
    """Train once with the canaries; return (canary scores, which canaries were included)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small model: more threads only contend
    try:
        return _train_and_score(setting)
    finally:
        torch.set_num_threads(threads)


def _train_and_score(setting: Setting):
    from opacus import GradSampleModule
    from opacus.data_loader import DPDataLoader
    from opacus.optimizers import DPOptimizer

    torch.manual_seed(setting.seed)
    generator = torch.Generator().manual_seed(setting.seed)
    rng = np.random.default_rng(setting.seed)
    dataset = _data(setting, generator)
    model = nn.Sequential(
        nn.Linear(setting.features, setting.hidden), nn.ReLU(), nn.Linear(setting.hidden, 2)
    )
    parameters = [p for p in model.parameters() if p.requires_grad]
    dimension = sum(p.numel() for p in parameters)
    directions = torch.from_numpy(rng.standard_normal((setting.canaries, dimension))).float()
    directions *= setting.max_grad_norm / directions.norm(dim=1, keepdim=True)
    included = rng.random(setting.canaries) < 0.5

    batch = round(setting.sampling_probability * setting.examples)
    loader = DPDataLoader.from_data_loader(
        torch.utils.data.DataLoader(dataset, batch_size=batch), generator=generator
    )

    class CanaryOptimizer(DPOptimizer):
        """DP-SGD whose clipped-gradient sum also holds the sampled canaries' gradients."""

        def add_noise(self):
            sampled = included & (rng.random(setting.canaries) < setting.sampling_probability)
            total = torch.from_numpy(sampled.astype(np.float32)) @ directions
            offset = 0
            for p in self.params:
                size = p.numel()
                p.summed_grad += total[offset : offset + size].view_as(p.summed_grad)
                offset += size
            super().add_noise()

    module = GradSampleModule(model)
    optimizer = CanaryOptimizer(
        torch.optim.SGD(parameters, lr=setting.learning_rate),
        noise_multiplier=setting.noise_multiplier / setting.bug_factor,
        max_grad_norm=setting.max_grad_norm,
        expected_batch_size=batch,
    )
    start = torch.nn.utils.parameters_to_vector(parameters).detach().clone()
    loss_function = nn.CrossEntropyLoss()
    step = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus's notes on secure RNG and hooks
        while step < setting.steps:
            for x, y in loader:
                if step == setting.steps:
                    break
                optimizer.zero_grad()
                if len(x):
                    loss_function(module(x), y).backward()
                else:  # an empty Poisson batch: only canaries and noise this step
                    for p in parameters:
                        p.grad_sample = torch.zeros((0, *p.shape))
                optimizer.step()
                step += 1
    moved = torch.nn.utils.parameters_to_vector(parameters).detach() - start
    # plain SGD: the final displacement is -lr/batch times the sum of the noisy sums
    scores = -(directions @ moved).numpy()
    return scores, included


def audit_run(setting: Setting, *, alpha: float = 0.05, delta: float = 1e-5):
    """Train, attack and audit against the accountant's DPSGD description of the run."""
    scores, included = train_and_score(setting)
    canaries, guesses, correct = audit.guesses_from_scores(
        scores, included, guesses=setting.guesses
    )
    claimed = gaussdp.DPSGD(
        noise_multiplier=setting.noise_multiplier,
        sampling_probability=setting.sampling_probability,
        steps=setting.steps,
    )
    return audit.one_run(canaries, guesses, correct, alpha=alpha, delta=delta, against=claimed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=Setting.steps)
    parser.add_argument("--bug-factor", type=float, default=4.0)
    parser.add_argument("--figure", type=str, default=None)
    options = parser.parse_args()
    honest = audit_run(Setting(steps=options.steps))
    buggy = audit_run(Setting(steps=options.steps, bug_factor=options.bug_factor))
    print("As described (noise multiplier as accounted):")
    print(honest.report.to_text())
    print()
    print(f"With the bug (noise divided by {options.bug_factor:g}):")
    print(buggy.report.to_text())
    if options.figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(1, 2, figsize=(11, 5))
        honest.report.plot(ax=axes[0])
        buggy.report.plot(ax=axes[1])
        axes[0].set_title(f"DP-SGD as described — {axes[0].get_title()}", fontsize=9)
        axes[1].set_title(
            f"noise / {options.bug_factor:g} — {axes[1].get_title()}",
            fontsize=9,
            color=axes[1].title.get_color(),
        )
        figure.tight_layout()
        figure.savefig(options.figure, dpi=100)


if __name__ == "__main__":
    main()
