"""gaussdp.audit against independent references: closed forms, mpmath, scipy.stats, simulation."""

from __future__ import annotations

import math
import re

import mpmath
import numpy as np
import pytest
from scipy import stats
from scipy.special import logit, ndtri

import gaussdp.audit
from gaussdp._validation import InvalidParameterError
from gaussdp.audit import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    from_counts,
    from_scores,
    one_run,
)
from gaussdp.audit import search as search_module
from gaussdp.audit.one_run import mu_lower_fdp, steinke_p_value


def _mp_cp_upper(k: int, n: int, level: float) -> float:
    """The p with P[Binomial(n, p) <= k] = level, by mpmath bisection (50 digits)."""
    mpmath.mp.dps = 50

    def cdf(p):
        return mpmath.fsum(mpmath.binomial(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))

    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    for _ in range(200):
        mid = (lo + hi) / 2
        if cdf(mid) > level:
            lo = mid
        else:
            hi = mid
    return float(hi)


# ---------------------------------------------------------------- Clopper–Pearson


@pytest.mark.parametrize("n", [1, 7, 1000, 10**6])
@pytest.mark.parametrize("level", [0.025, 1e-12])
def test_cp_upper_no_failures_closed_form(n, level):
    mpmath.mp.dps = 40
    expected = float(1 - mpmath.mpf(level) ** (mpmath.mpf(1) / n))
    assert clopper_pearson_upper(0, n, level) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("k", "n", "level"), [(3, 20, 0.025), (17, 40, 1e-9), (1, 300, 1e-6)])
def test_cp_upper_against_mpmath(k, n, level):
    assert clopper_pearson_upper(k, n, level) == pytest.approx(_mp_cp_upper(k, n, level), rel=1e-9)


def test_cp_against_scipy_beta_vectorised():
    k = np.array([0, 1, 5, 50, 99, 100])
    upper = clopper_pearson_upper(k, 100, 0.025)
    lower = clopper_pearson_lower(k, 100, 0.025)
    for ki, u, lo in zip(k, upper, lower, strict=True):
        ref_u = 1.0 if ki == 100 else stats.beta.ppf(0.975, ki + 1, 100 - ki)
        ref_l = 0.0 if ki == 0 else stats.beta.ppf(0.025, ki, 100 - ki + 1)
        assert u == pytest.approx(ref_u, rel=1e-10, abs=1e-15)
        assert lo == pytest.approx(ref_l, rel=1e-10, abs=1e-15)
    # symmetry: the lower bound on p is one minus the upper bound on 1 - p
    assert lower == pytest.approx(1.0 - clopper_pearson_upper(100 - k, 100, 0.025), abs=1e-14)


def test_cp_upper_defining_property():
    for k, n in [(4, 50), (123, 1000)]:
        u = clopper_pearson_upper(k, n, 0.01)
        assert stats.binom.cdf(k, n, u) == pytest.approx(0.01, rel=1e-8)


# ---------------------------------------------------------------- from_counts


@pytest.mark.parametrize("n", [10, 100, 5000])
def test_perfect_attack_closed_form(n):
    u = 1.0 - 0.025 ** (1.0 / n)  # CP bound with 0 errors at alpha/2
    result = from_counts(n, 0, 0, n, alpha=0.05, delta=0.0)
    assert result.points[0].fpr_upper == pytest.approx(u, rel=1e-12)
    assert result.epsilon_lower == pytest.approx(math.log((1.0 - u) / u), rel=1e-12)
    assert result.mu_lower == pytest.approx(-2.0 * float(ndtri(u)), rel=1e-12)


def test_counts_privacy_region_both_directions():
    # Few false negatives but many false positives: the bound comes from the swapped
    # inequality FNR + e^eps FPR >= 1 - delta.
    delta = 1e-3
    result = from_counts(100, 0, 60, 40, alpha=0.1, delta=delta)
    fpr_u = _mp_cp_upper(60, 100, 0.05)
    fnr_u = _mp_cp_upper(0, 100, 0.05)
    expected = max(
        math.log((1 - delta - fnr_u) / fpr_u), math.log((1 - delta - fpr_u) / fnr_u), 0.0
    )
    assert result.epsilon_lower == pytest.approx(expected, rel=1e-9)
    assert result.epsilon_lower > 0.0


def test_counts_mu_is_stable_in_the_tails():
    # 10^7 trials with no errors: rates near 4e-7; Phi^-1 must come from the tail function.
    result = from_counts(10**7, 0, 0, 10**7, alpha=0.05)
    u = -math.expm1(math.log(0.025) / 10**7)
    mpmath.mp.dps = 40
    expected = float(-2 * mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(u) - 1))
    assert result.mu_lower == pytest.approx(expected, rel=1e-10)


def test_model_based_epsilon_is_labelled():
    result = from_counts(90, 10, 10, 90, delta=1e-5)
    assert result.epsilon_from_mu_lower > 0
    assert "model-based" in result.to_dict()["epsilon_from_mu_lower_kind"]
    assert "model-based" in str(result)


@pytest.mark.parametrize(
    ("args", "kwargs", "needle"),
    [
        ((-1, 0, 0, 1), {}, "tp must be an integer >= 0"),
        ((1, 0, 0, 1.5), {}, "tn must be an integer"),
        ((0, 0, 1, 1), {}, "members"),
        ((1, 1, 0, 0), {}, "non-members"),
        ((1, 1, 1, 1), {"alpha": 0.0}, "alpha must be in (0, 1)"),
        ((1, 1, 1, 1), {"alpha": 1.0}, "alpha must be in (0, 1)"),
        ((1, 1, 1, 1), {"delta": 1.0}, "delta must be in [0, 1)"),
        ((1, 1, 1, 1), {"delta": -0.1}, "delta must be in [0, 1)"),
        ((1, 1, 1, 1), {"against": "nonsense"}, "against must be a mechanism"),
    ],
)
def test_counts_bad_input_one_line(args, kwargs, needle):
    with pytest.raises(InvalidParameterError) as info:
        from_counts(*args, **kwargs)
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- from_scores


def _brute_force(members, non_members, level, delta):
    """Every distinct threshold, counts by comparison, exact CP: the best ε and μ."""
    thresholds = np.concatenate([np.unique(np.concatenate([members, non_members])), [np.inf]])
    tp = (members[None, :] >= thresholds[:, None]).sum(axis=1)
    fp = (non_members[None, :] >= thresholds[:, None]).sum(axis=1)
    fnr = np.array([_cp(members.size - t, members.size, level) for t in tp])
    fpr = np.array([_cp(f, non_members.size, level) for f in fp])
    eps = gaussdp.audit.epsilon_lower(fpr, fnr, delta)
    mu = gaussdp.audit.mu_lower(fpr, fnr)
    return float(np.max(eps)), float(np.max(mu))


def _cp(k, n, level):
    return 1.0 if k == n else float(stats.beta.ppf(1 - level, k + 1, n - k))


def _naive_front(members, non_members):
    """The Pareto front by definition: every distinct member score and +inf, by comparison."""
    candidates = np.append(np.unique(members), np.inf)
    fp = (non_members[None, :] >= candidates[:, None]).sum(axis=1)
    fn = (members[None, :] < candidates[:, None]).sum(axis=1)
    keep = np.ones(candidates.size, dtype=bool)
    keep[1:] = fp[1:] != fp[:-1]  # of equal fp, the lowest threshold (fewest fn)
    return candidates[keep], fp[keep], fn[keep]


@pytest.mark.parametrize("seed", range(4))
def test_pareto_front_by_merge_is_the_front_by_definition(seed):
    rng = np.random.default_rng(seed)
    members = np.round(rng.normal(0.5, 1.0, 200), 1)  # many ties, across the two arrays
    non_members = np.round(rng.normal(0.0, 1.0, 150), 1)
    members[:3] = [np.inf, -np.inf, -0.0]
    non_members[:3] = [np.inf, 0.0, -np.inf]
    found = search_module.front(members, non_members)
    for got, expected in zip(found, _naive_front(members, non_members), strict=True):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("exact_limit", [10**9, 8])
def test_bonferroni_matches_brute_force(monkeypatch, exact_limit):
    # 8: the ranked path (tabulated bounds rank the thresholds, the best 16 get exact ones)
    monkeypatch.setattr(search_module, "EXACT_LIMIT", exact_limit)
    monkeypatch.setattr(search_module, "RANKED", 16 if exact_limit == 8 else 1024)
    rng = np.random.default_rng(3)
    members = np.round(rng.normal(1.0, 1.0, 300), 2)  # ties on purpose
    non_members = np.round(rng.normal(0.0, 1.0, 250), 2)
    result = from_scores(members, non_members, alpha=0.05, delta=1e-3)
    level = 0.05 / (2 * (300 + 250 + 1))
    eps, mu = _brute_force(members, non_members, level, 1e-3)
    assert result.epsilon_lower == pytest.approx(eps, rel=1e-7)
    assert result.mu_lower == pytest.approx(mu, rel=1e-7)
    assert result.used["thresholds_tried"] == 551
    gap = result.used["search_gap"]
    assert 0.0 <= gap["mu"] and 0.0 <= gap["epsilon"]


def test_ranked_search_is_near_exhaustive_with_a_certified_gap(monkeypatch):
    """Many scores (the ranked path): the result is valid and within its gap of the max."""
    rng = np.random.default_rng(31)
    members = rng.normal(1.0, 1.0, 6000)
    non_members = rng.normal(0.0, 1.0, 6000)
    # the ~2,400 Pareto thresholds go through the segmented search, 32 get exact bounds
    monkeypatch.setattr(search_module, "EXACT_LIMIT", 256)
    monkeypatch.setattr(search_module, "RANKED", 32)
    ranked = from_scores(members, non_members, delta=1e-5)
    assert ranked.used["pareto_thresholds"] > 256
    monkeypatch.setattr(search_module, "EXACT_LIMIT", 10**9)  # every threshold exactly
    exhaustive = from_scores(members, non_members, delta=1e-5)
    for name in ("epsilon", "mu"):
        found = getattr(ranked, f"{name}_lower")
        best = getattr(exhaustive, f"{name}_lower")
        assert found <= best * (1 + 1e-12)
        assert found >= best - ranked.used["search_gap"][name] - 1e-12
        assert found == pytest.approx(best, rel=1e-6)


def test_fixed_threshold_is_from_counts():
    rng = np.random.default_rng(4)
    members, non_members = rng.normal(1, 1, 500), rng.normal(0, 1, 400)
    result = from_scores(members, non_members, thresholds=0.8, delta=1e-4)
    tp = int((members >= 0.8).sum())
    fp = int((non_members >= 0.8).sum())
    reference = from_counts(tp, 500 - tp, fp, 400 - fp, delta=1e-4)
    assert result.epsilon_lower == reference.epsilon_lower
    assert result.mu_lower == reference.mu_lower


def test_split_is_seeded_and_bounds_on_the_other_half():
    rng = np.random.default_rng(5)
    members, non_members = rng.normal(1, 1, 2000), rng.normal(0, 1, 2000)
    a = from_scores(members, non_members, thresholds="split", seed=1)
    b = from_scores(members, non_members, thresholds="split", seed=1)
    c = from_scores(members, non_members, thresholds="split", seed=2)
    assert a.mu_lower == b.mu_lower and a.epsilon_lower == b.epsilon_lower
    assert a.mu_lower != c.mu_lower
    assert a.used["bounded_on"] == {"members": 1000, "non_members": 1000}
    assert all(p.true_positives + p.false_negatives == 1000 for p in a.points)
    assert 0.0 < a.mu_lower < 1.0


def test_scores_from_files(tmp_path):
    rng = np.random.default_rng(6)
    members, non_members = rng.normal(1, 1, 300), rng.normal(0, 1, 300)
    np.save(tmp_path / "m.npy", members)
    (tmp_path / "n.csv").write_text(
        "id,score\n" + "".join(f"{i},{float(x)!r}\n" for i, x in enumerate(non_members))
    )
    (tmp_path / "m.csv").write_text(
        "id,score\n" + "".join(f"{i},{float(x)!r}\n" for i, x in enumerate(members))
    )
    direct = from_scores(members, non_members)
    from_files = from_scores(tmp_path / "m.csv", tmp_path / "n.csv", column="score")
    assert from_files.mu_lower == direct.mu_lower
    mixed = from_scores(tmp_path / "m.npy", non_members)
    assert mixed.mu_lower == direct.mu_lower
    with pytest.raises(InvalidParameterError, match="has no column 'logit'"):
        from_scores(tmp_path / "m.csv", non_members, column="logit")
    with pytest.raises(InvalidParameterError, match="name one"):
        from_scores(tmp_path / "m.csv", non_members)


@pytest.mark.parametrize(
    ("members", "kwargs", "needle"),
    [
        ([], {}, "members must not be empty"),
        ([0.1, float("nan")], {}, "must not contain NaN"),
        ([0.1, 0.2], {"thresholds": "best"}, "thresholds must be"),
        ([0.1, 0.2], {"alpha": 2.0}, "alpha must be in (0, 1)"),
        ("missing.npy", {}, "does not exist"),
    ],
)
def test_scores_bad_input(members, kwargs, needle):
    with pytest.raises(InvalidParameterError) as info:
        from_scores(members, [0.0, 1.0], **kwargs)
    assert needle in str(info.value)


# ---------------------------------------------------------------- validity by simulation


def test_mu_lower_is_valid_on_shifted_gaussians():
    """Scores N(mu, 1) vs N(0, 1) are exactly mu-GDP: mu_lower > mu at most ~alpha of the time."""
    rng = np.random.default_rng(7)
    mu, reps, n = 1.0, 300, 150
    above = sum(
        from_scores(rng.normal(mu, 1, n), rng.normal(0, 1, n), thresholds=mu / 2).mu_lower > mu
        for _ in range(reps)
    )
    assert above <= reps * 0.05 + 3 * math.sqrt(reps * 0.05 * 0.95)
    # ...and the attack is not powerless (the check above could fail)
    assert (
        np.mean(
            [
                from_scores(rng.normal(mu, 1, n), rng.normal(0, 1, n), thresholds=mu / 2).mu_lower
                for _ in range(20)
            ]
        )
        > 0.25 * mu
    )


@pytest.mark.parametrize("thresholds", ["bonferroni", "split", 0.0])
def test_null_attack_rarely_claims_leakage(thresholds):
    rng = np.random.default_rng(8)
    reps = 200
    positive = sum(
        from_scores(rng.normal(0, 1, 100), rng.normal(0, 1, 100), thresholds=thresholds).mu_lower
        > 0
        for _ in range(reps)
    )
    assert positive <= reps * 0.05 + 3 * math.sqrt(reps * 0.05 * 0.95)


# ---------------------------------------------------------------- one run


@pytest.mark.parametrize(("r", "alpha"), [(100, 0.05), (37, 0.01)])
def test_steinke_pure_dp_all_correct_closed_form(r, alpha):
    # delta = 0 and v = r: P[Bin(r, q) >= r] = q^r <= alpha  <=>  eps <= logit(alpha^(1/r))
    result = one_run(1000, r, r, alpha=alpha)
    assert result.epsilon_lower == pytest.approx(float(logit(alpha ** (1 / r))), abs=1e-7)


def test_steinke_p_value_against_mpmath():
    m, r, v, eps, delta = 1000, 100, 80, 1.0, 1e-4
    mpmath.mp.dps = 40
    q = mpmath.e**eps / (1 + mpmath.e**eps)

    def pmf(i):
        return mpmath.binomial(r, i) * q**i * (1 - q) ** (r - i)

    beta = mpmath.fsum(pmf(i) for i in range(v, r + 1))
    spread = max(mpmath.fsum(pmf(j) for j in range(v - i, v)) / i for i in range(1, v + 1))
    expected = float(min(beta + spread * delta * 2 * m, 1))
    assert steinke_p_value(m, r, v, eps, delta) == pytest.approx(expected, rel=1e-9)


def _one_run_simulation(rng, mu, m, k):
    """m canaries N(mu * included, 1); guess 'in' for the top k, 'out' for the bottom k."""
    included = rng.random(m) < 0.5
    scores = rng.normal(mu * included, 1.0)
    order = np.argsort(scores)
    correct = int(included[order[-k:]].sum() + (~included[order[:k]]).sum())
    return correct


def test_one_run_mu_lower_is_valid_by_simulation():
    rng = np.random.default_rng(9)
    mu, m, k, reps = 2.0, 400, 20, 150
    bounds = [mu_lower_fdp(m, 2 * k, _one_run_simulation(rng, mu, m, k), 0.05) for _ in range(reps)]
    above = sum(b > mu for b in bounds)
    assert above <= reps * 0.05 + 3 * math.sqrt(reps * 0.05 * 0.95)
    assert np.mean(bounds) > 0.2 * mu  # has power, so the check above can fail


def test_one_run_null_is_rarely_rejected():
    rng = np.random.default_rng(10)
    reps, m, r = 300, 500, 60
    hits = 0
    for _ in range(reps):
        v = int(rng.binomial(r, 0.5))  # coin-flip guesses: perfect privacy
        hits += one_run(m, r, v).epsilon_lower > 0
    assert hits <= reps * 0.05 + 3 * math.sqrt(reps * 0.05 * 0.95)


def test_one_run_with_any_curve():
    import gaussdp
    from gaussdp import curves

    run = gaussdp.Gaussian(2.0)  # mu = 0.5
    curve = gaussdp.account(run).tradeoff()
    weak = one_run(1000, 100, 55, curve=curve)
    strong = one_run(1000, 200, 200, curve=curve)
    assert weak.used["curve_rejected"] is False
    assert strong.used["curve_rejected"] is True
    assert strong.used["curve_p_value"] < 0.05 <= weak.used["curve_p_value"]
    # the Gaussian curve through the generic path gives the same answer as G_mu
    assert one_run(1000, 200, 150, curve=curves.gaussian(1.0)).used["curve_rejected"] == (
        mu_lower_fdp(1000, 200, 150, 0.05) > 1.0
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ((10, 11, 0), "guesses must be at most canaries"),
        ((10, 5, 6), "correct must be at most guesses"),
        ((0, 0, 0), "canaries must be an integer >= 1"),
    ],
)
def test_one_run_bad_input(args, needle):
    with pytest.raises(InvalidParameterError, match=needle):
        one_run(*args)


def test_parameters_are_checked_before_any_scores_are_read(tmp_path):
    """A call that must fail does so before reading (or allocating for) its scores."""
    missing = tmp_path / "never_read.npy"
    for kwargs, needle in [
        ({"alpha": 1.5}, "alpha must be in (0, 1)"),
        ({"delta": 1.0}, "delta must be in [0, 1)"),
        ({"thresholds": "best"}, "thresholds must be"),
        ({"seed": -1}, "seed must be an integer >= 0"),
        ({"against": "dpsgd"}, "against must be a mechanism or an Accounting"),
    ]:
        with pytest.raises(InvalidParameterError, match=re.escape(needle)):
            from_scores(missing, missing, **kwargs)
    with pytest.raises(InvalidParameterError, match="against must be"):
        from_counts(5, 5, 5, 5, against=3)
    with pytest.raises(InvalidParameterError, match="against must be"):
        one_run(10, 5, 3, against=3)


@pytest.mark.parametrize("shift", [0.2, 1.0, 3.0])
def test_pruned_ranking_is_the_ranking_of_every_estimate(shift):
    """The block-pruned top estimates are those an estimate of every threshold picks."""
    rng = np.random.default_rng(17)
    members, non_members = rng.normal(shift, 1, 20_000), rng.normal(0, 1, 20_000)
    _, fp, fn = search_module.front(members, non_members)
    level = 0.05 / (2 * 40_001)
    segments = search_module.Segments(fp, 20_000, fn, 20_000, level)
    for objective in (lambda x, y: gaussdp.audit.epsilon_lower(x, y, 1e-5), gaussdp.audit.mu_lower):
        chosen = search_module._top_estimates(objective, fp, fn, segments)
        every = objective(segments.fp_table.estimate(fp), segments.fn_table.estimate(fn))
        expected = np.argpartition(-every, search_module.RANKED - 1)[: search_module.RANKED]
        assert np.array_equal(np.sort(chosen), np.sort(expected))
