"""gaussdp.audit against the peers' auditing code on the same inputs (test extras).

jax_privacy (Google DeepMind) implements the Clopper–Pearson ε bound, Steinke, Nasr &
Jagielski's one-run bound and Mahloujifar, Melis & Chaudhuri's f-DP one-run analysis
(with Gaussian curves, reported as the ε of the rejected Gaussian). Microsoft's
privacy-estimates (Zanella-Béguelin et al. 2023, "Bayesian estimation of differential
privacy", arXiv 2206.05199) computes ε intervals from a confusion matrix: its
``method="beta"`` is the Clopper–Pearson region (statsmodels' equal-tailed interval,
so the one-sided ``compute_eps_lo`` at α bounds each rate at α/2, like ours). Both
codes are independent of ours; where the methods coincide the numbers must agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from gaussdp import gdp
from gaussdp.audit import from_counts, from_scores
from gaussdp.audit.one_run import epsilon_lower_steinke, mu_lower_fdp

THRESHOLD = 1.0
ALPHA, DELTA = 0.05, 1e-5


@pytest.fixture(scope="module")
def scores():
    rng = np.random.default_rng(21)
    return rng.normal(1.0, 1.0, 2000), rng.normal(0.0, 1.0, 2000)


@pytest.fixture(scope="module")
def auditing():
    return pytest.importorskip("jax_privacy.auditing")


@pytest.fixture(scope="module")
def auditor(auditing, scores):
    return auditing.CanaryScoreAuditor(*scores)


def test_clopper_pearson_at_a_fixed_threshold(scores, auditor, auditing):
    ours = from_scores(*scores, alpha=ALPHA, delta=DELTA, thresholds=THRESHOLD).epsilon_lower
    theirs = auditor.epsilon_clopper_pearson(
        ALPHA, DELTA, one_sided=False, threshold_strategy=auditing.Explicit(THRESHOLD)
    )
    assert ours == pytest.approx(theirs, rel=1e-9)


def _guesses(scores):
    members, non_members = scores
    tp = int((members >= THRESHOLD).sum())
    fp = int((non_members >= THRESHOLD).sum())
    return members.size + non_members.size, tp + fp, tp


def test_steinke_one_run(scores, auditor, auditing):
    m, r, v = _guesses(scores)
    theirs = auditor.epsilon_one_run(ALPHA, DELTA, threshold_strategy=auditing.Explicit(THRESHOLD))
    assert epsilon_lower_steinke(m, r, v, ALPHA, DELTA) == pytest.approx(theirs, abs=2e-6)


def test_mahloujifar_one_run_gaussian(scores, auditor, auditing):
    m, r, v = _guesses(scores)
    theirs = auditor.epsilon_one_run_fdp(
        ALPHA, DELTA, threshold_strategy=auditing.Explicit(THRESHOLD)
    )
    # jax_privacy reports the ε at δ of the largest rejected G_μ: our μ bound, converted
    ours = gdp.epsilon(mu_lower_fdp(m, r, v, ALPHA), DELTA)
    assert ours == pytest.approx(theirs, rel=1e-4)


# ---------------------------------------------------------------- privacy-estimates


@pytest.fixture(scope="module")
def privacy_estimates():
    return pytest.importorskip("privacy_estimates")


# (tp, fn, fp, tn): a strong attack, a perfect one (closed-form CP), a weak one, one
# with more errors than successes in one direction (the other privacy-region side),
# a useless one (ε_lo = 0) and the package's README example (487, 0, 512, 1)
COUNTS = [
    (900, 100, 50, 950),
    (100, 0, 0, 100),
    (60, 40, 30, 70),
    (30, 970, 1, 999),
    (5, 995, 1, 999),
    (487, 0, 512, 1),
]


@pytest.mark.parametrize(("tp", "fn", "fp", "tn"), COUNTS)
@pytest.mark.parametrize(("alpha", "delta"), [(0.05, 0.0), (0.05, 1e-5), (0.01, 1e-3)])
def test_clopper_pearson_epsilon_as_privacy_estimates(
    privacy_estimates, tp, fn, fp, tn, alpha, delta
):
    """The same counts: our ε lower bound is their ``compute_eps_lo(method="beta")``."""
    counts = privacy_estimates.AttackResults(FN=fn, FP=fp, TN=tn, TP=tp)
    theirs = privacy_estimates.compute_eps_lo(counts, delta, alpha, "beta")
    ours = from_counts(tp, fn, fp, tn, alpha=alpha, delta=delta).epsilon_lower
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)


def test_readme_worked_value_of_privacy_estimates():
    """The package's published example (α = 0.1, δ = 1e-5, TP 487, TN 1, FP 512, FN 0):
    "Clopper Pearson, one-sided, significance 0.050: eps_lo 0.000". Ours at α = 0.05 too."""
    assert from_counts(487, 0, 512, 1, alpha=0.05, delta=1e-5).epsilon_lower == 0.0


def test_scores_at_a_fixed_threshold_as_privacy_estimates(privacy_estimates, scores):
    """Scores, one threshold fixed in advance: the counts' bound, as privacy-estimates has it."""
    members, non_members = scores
    tp = int((members >= THRESHOLD).sum())
    fp = int((non_members >= THRESHOLD).sum())
    counts = privacy_estimates.AttackResults(
        FN=members.size - tp, FP=fp, TN=non_members.size - fp, TP=tp
    )
    theirs = privacy_estimates.compute_eps_lo(counts, DELTA, ALPHA, "beta")
    ours = from_scores(members, non_members, alpha=ALPHA, delta=DELTA, thresholds=THRESHOLD)
    assert ours.epsilon_lower == pytest.approx(theirs, rel=1e-9)
