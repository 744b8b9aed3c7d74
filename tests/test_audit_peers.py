"""gaussdp.audit against jax_privacy's auditing module on the same inputs (a test extra).

jax_privacy (Google DeepMind) implements the Clopper–Pearson ε bound, Steinke, Nasr &
Jagielski's one-run bound and Mahloujifar, Melis & Chaudhuri's f-DP one-run analysis
(with Gaussian curves, reported as the ε of the rejected Gaussian). Its code is
independent of ours; on the same counts the numbers must agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from gaussdp import gdp
from gaussdp.audit import from_scores
from gaussdp.audit.one_run import epsilon_lower_steinke, mu_lower_fdp

auditing = pytest.importorskip("jax_privacy.auditing")

THRESHOLD = 1.0
ALPHA, DELTA = 0.05, 1e-5


@pytest.fixture(scope="module")
def scores():
    rng = np.random.default_rng(21)
    return rng.normal(1.0, 1.0, 2000), rng.normal(0.0, 1.0, 2000)


@pytest.fixture(scope="module")
def auditor(scores):
    return auditing.CanaryScoreAuditor(*scores)


def test_clopper_pearson_at_a_fixed_threshold(scores, auditor):
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


def test_steinke_one_run(scores, auditor):
    m, r, v = _guesses(scores)
    theirs = auditor.epsilon_one_run(ALPHA, DELTA, threshold_strategy=auditing.Explicit(THRESHOLD))
    assert epsilon_lower_steinke(m, r, v, ALPHA, DELTA) == pytest.approx(theirs, abs=2e-6)


def test_mahloujifar_one_run_gaussian(scores, auditor):
    m, r, v = _guesses(scores)
    theirs = auditor.epsilon_one_run_fdp(
        ALPHA, DELTA, threshold_strategy=auditing.Explicit(THRESHOLD)
    )
    # jax_privacy reports the ε at δ of the largest rejected G_μ: our μ bound, converted
    ours = gdp.epsilon(mu_lower_fdp(m, r, v, ALPHA), DELTA)
    assert ours == pytest.approx(theirs, rel=1e-4)
