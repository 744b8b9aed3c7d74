"""gaussdp.matrix and MatrixMechanism against independent references.

References: closed forms (identity, prefix sums, the tree's column norm), brute force over
every participation pattern for small n (signs included for strategies with negative Gram
entries), mpmath for the square-root coefficients, jax_privacy's sensitivity functions,
and dp_accounting's Rényi-DP accounting of the tree aggregation event.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

import gaussdp
from gaussdp import calibrate
from gaussdp import matrix as mx
from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms import MatrixMechanism, Neighbouring, Pipeline, dumps, loads

# --------------------------------------------------------------------------- references


def _min_sep_patterns(n, separation, participations):
    for size in range(1, participations + 1):
        for steps in itertools.combinations(range(n), size):
            if all(b - a >= separation for a, b in itertools.pairwise(steps)):
                yield steps


def _fixed_epoch_patterns(n, epochs):
    length = n // epochs
    for start in range(length):
        yield tuple(range(start, n, length))


def brute_force(matrix, patterns, signs=False):
    """max over patterns (and, with signs, over ±1 on each step) of ‖C u‖: a true lower bound
    on the sensitivity always, and the sensitivity itself when CᵀC ≥ 0."""
    gram = matrix.T @ matrix
    best = 0.0
    for steps in patterns:
        sub = gram[np.ix_(steps, steps)]
        if signs:
            for choice in itertools.product((-1.0, 1.0), repeat=len(steps)):
                vector = np.array(choice)
                best = max(best, float(vector @ sub @ vector))
        else:
            best = max(best, float(sub.sum()))
    return math.sqrt(best)


def _random_strategy(kind, n, rng):
    if kind == "non-negative dense":
        return mx.dense(np.tril(rng.random((n, n))))
    if kind == "mixed dense":
        return mx.dense(np.tril(rng.normal(size=(n, n))))
    if kind == "non-increasing toeplitz":
        return mx.toeplitz(np.sort(rng.random(n))[::-1], n)
    if kind == "increasing toeplitz":
        return mx.toeplitz(np.sort(rng.random(n)), n)
    if kind == "mixed toeplitz":
        return mx.toeplitz(rng.normal(size=n), n)
    if kind == "mixed banded":
        return mx.banded(np.tril(rng.normal(size=(n, n))), int(rng.integers(1, n + 1)))
    if kind == "tree":
        return mx.tree(n)
    raise AssertionError(kind)


KINDS = [
    "non-negative dense",
    "mixed dense",
    "non-increasing toeplitz",
    "increasing toeplitz",
    "mixed toeplitz",
    "mixed banded",
    "tree",
]


# --------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 100, 1023, 1024, 1025, 2000])
def test_tree_column_norm_is_root_ceil_log2(n):
    strategy = mx.tree(n)
    result = mx.sensitivity(strategy, mx.SingleParticipation())
    assert result.exact
    assert result.value == pytest.approx(math.sqrt(math.ceil(math.log2(n + 1))), rel=1e-15)


@pytest.mark.parametrize("n", [1, 5, 8, 13, 64])
def test_tree_matrix_is_the_dyadic_intervals(n):
    matrix = mx.tree(n).matrix()
    # each row is an interval [a 2^l, (a + 1) 2^l) complete within n, every one of them once
    expected = {
        (start, start + 2**level)
        for level in range(n.bit_length())
        for start in range(0, n - 2**level + 1, 2**level)
    }
    rows = set()
    for row in matrix:
        ones = np.flatnonzero(row)
        assert np.all(row[ones] == 1) and np.all(np.diff(ones) == 1)
        rows.add((int(ones[0]), int(ones[-1]) + 1))
    assert rows == expected and len(matrix) == len(expected)
    np.testing.assert_array_equal(mx.tree(n).gram(), matrix.T @ matrix)
    np.testing.assert_allclose(mx.tree(n).column_norms(), np.linalg.norm(matrix, axis=0))


@pytest.mark.parametrize(
    ("n", "separation", "participations"), [(10, 1, 3), (100, 10, 4), (100, 7, 40), (5, 9, 3)]
)
def test_identity_under_min_separation_is_root_k(n, separation, participations):
    k = min(participations, -(-n // separation))
    result = mx.sensitivity(mx.identity(n), mx.MinSeparation(separation, participations))
    assert result.exact and result.value == pytest.approx(math.sqrt(k), rel=1e-15)


@pytest.mark.parametrize("epochs", [1, 2, 5, 10])
def test_identity_under_fixed_epochs_is_root_k(epochs):
    result = mx.sensitivity(mx.identity(10), mx.FixedEpochs(epochs))
    assert result.exact and result.value == pytest.approx(math.sqrt(epochs), rel=1e-15)


@pytest.mark.parametrize("n", [1, 4, 100, 10_000])
def test_prefix_sum_single_participation_is_root_n(n):
    result = mx.sensitivity(mx.prefix_sum(n), mx.SingleParticipation())
    # rounded up by at most (n + 5)u: never below the closed form
    assert result.exact and math.sqrt(n) <= result.value <= math.sqrt(n) * (1 + 3e-12)


@pytest.mark.parametrize(("n", "separation", "k"), [(9, 3, 3), (100, 10, 4), (1000, 64, 16)])
def test_prefix_sum_under_min_separation_closed_form(n, separation, k):
    # participations at 0, b, ..., (k-1)b: row r of C u counts those ≤ r
    expected = sum(min(r // separation + 1, k) ** 2 for r in range(n))
    result = mx.sensitivity(mx.prefix_sum(n), mx.MinSeparation(separation, k))
    assert result.exact and expected <= result.value**2 <= expected * (1 + 1e-12)


def test_square_root_coefficients_match_mpmath_and_square_to_prefix_sums():
    coefficients = mx.square_root_toeplitz_coefficients(5000)
    mpmath.mp.dps = 30
    for k in (0, 1, 2, 10, 100, 1000, 4999):
        exact = mpmath.binomial(2 * k, k) / mpmath.mpf(4) ** k
        assert coefficients[k] == pytest.approx(float(exact), rel=1e-12)
    c = mx.square_root_toeplitz(64).matrix()
    np.testing.assert_allclose(c @ c, mx.prefix_sum(64).matrix(), rtol=1e-13, atol=1e-13)
    assert mx.square_root_toeplitz(64, bands=5).coefficients.size == 5


# --------------------------------------------------------------------------- brute force


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(6))
def test_min_separation_against_every_pattern(kind, seed):
    rng = np.random.default_rng(1000 * seed + KINDS.index(kind))
    n = int(rng.integers(2, 11))
    separation = int(rng.integers(1, n + 1))
    participations = int(rng.integers(2, 5))
    strategy = _random_strategy(kind, n, rng)
    result = mx.sensitivity(strategy, mx.MinSeparation(separation, participations))
    patterns = list(_min_sep_patterns(n, separation, participations))
    matrix = strategy.matrix()
    truth_lower = brute_force(matrix, patterns, signs=True)
    assert result.value >= truth_lower * (1 - 1e-12)
    assert result.lower <= result.value
    assert result.lower <= truth_lower * (1 + 1e-12)  # a real pair of runs reaches it
    if result.exact:
        assert result.value == pytest.approx(truth_lower, rel=1e-12)
    if strategy.is_nonnegative():
        assert result.exact, result.method
        assert result.value == pytest.approx(brute_force(matrix, patterns), rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_fixed_epochs_against_every_pattern(kind, seed):
    rng = np.random.default_rng(77 + 1000 * seed + KINDS.index(kind))
    epochs = int(rng.integers(2, 4))
    n = epochs * int(rng.integers(1, 4))
    strategy = _random_strategy(kind, n, rng)
    result = mx.sensitivity(strategy, mx.FixedEpochs(epochs))
    patterns = list(_fixed_epoch_patterns(n, epochs))
    truth_lower = brute_force(strategy.matrix(), patterns, signs=True)
    assert result.value >= truth_lower * (1 - 1e-12)
    if result.exact:
        assert result.value == pytest.approx(truth_lower, rel=1e-12)
    if strategy.is_nonnegative():
        assert result.exact


@pytest.mark.parametrize("n", [12, 14])
def test_non_increasing_toeplitz_theorem_against_every_pattern(n):
    # the O(n) route (Kalinin and Lampert 2024, Theorem 2) on the square-root strategy
    strategy = mx.square_root_toeplitz(n)
    for separation, k in [(1, 3), (2, 4), (3, 3), (5, 2)]:
        result = mx.sensitivity(strategy, mx.MinSeparation(separation, k))
        assert "2405.13763" in result.method
        patterns = _min_sep_patterns(n, separation, k)
        assert result.value == pytest.approx(brute_force(strategy.matrix(), patterns), rel=1e-12)


def _frustrated_strategy():
    """C lower-triangular with CᵀC = G, G_ii = 1, G_ij = −0.4: no signs make all cross terms
    positive, and unit vectors at 120° reach Δ² = 3 + 0.8·1.5 = 4.2 < Σ|G| = 5.4."""
    gram = np.full((3, 3), -0.4) + 1.4 * np.eye(3)
    reverse = np.eye(3)[::-1]
    lower = np.linalg.cholesky(reverse @ gram @ reverse)
    matrix = reverse @ lower.T @ reverse
    np.testing.assert_allclose(matrix.T @ matrix, gram, atol=1e-14)
    return mx.dense(np.tril(matrix))


def test_negative_gram_where_the_bound_is_not_tight_is_labelled_an_upper_bound():
    strategy = _frustrated_strategy()
    result = mx.sensitivity(strategy, mx.MinSeparation(1, 3))
    assert not result.exact
    assert "upper bound" in result.method
    # the true sensitivity: vectors d_t at 120° reach 4.2, and Σ G_st <d_s,d_t> ≤ 4.2 for unit d
    assert result.value**2 == pytest.approx(5.4, rel=1e-12)
    assert result.value > math.sqrt(4.2)
    angles = np.array([0.0, 2 * np.pi / 3, 4 * np.pi / 3])
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    witness = np.linalg.norm(strategy.matrix() @ vectors)
    assert witness == pytest.approx(math.sqrt(4.2), rel=1e-12)
    run = MatrixMechanism(strategy, 2.0, mx.MinSeparation(1, 3))
    assert "upper bound" in run.describe()


def test_banded_mixed_signs_exact_under_separation_at_least_bands():
    rng = np.random.default_rng(5)
    strategy = mx.banded(np.tril(rng.normal(size=(40, 40))), 4)
    result = mx.sensitivity(strategy, mx.MinSeparation(4, 6))
    assert result.exact
    squares = np.linalg.norm(strategy.matrix(), axis=0) ** 2
    # no two participations interact: at most the 6 largest squared column norms, at least
    # the evenly spaced pattern's
    assert result.value**2 <= np.sort(squares)[-6:].sum() * (1 + 1e-12)
    assert result.value**2 >= squares[np.arange(6) * 4].sum() * (1 - 1e-12)
    small = mx.banded(np.tril(rng.normal(size=(11, 11))), 3)
    result = mx.sensitivity(small, mx.MinSeparation(3, 3))
    patterns = _min_sep_patterns(11, 3, 3)
    assert result.exact
    assert result.value == pytest.approx(
        brute_force(small.matrix(), patterns, signs=True), rel=1e-12
    )


def test_large_dense_upper_bound_is_between_a_pattern_and_jax_style_bound():
    rng = np.random.default_rng(11)
    strategy = mx.dense(np.tril(rng.random((300, 300))))
    result = mx.sensitivity(strategy, mx.MinSeparation(30, 5))
    gram = strategy.gram()
    steps = np.arange(5) * 30
    assert result.value >= math.sqrt(gram[np.ix_(steps, steps)].sum())
    assert result.lower <= result.value


# --------------------------------------------------------------------------- jax_privacy


@pytest.fixture(scope="module")
def jax_privacy_sensitivity():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    sensitivity = pytest.importorskip("jax_privacy.matrix_factorization.sensitivity")
    toeplitz = pytest.importorskip("jax_privacy.matrix_factorization.toeplitz")
    # jax_privacy runs these op by op: compiling each small operation for its shapes is
    # most of the cost, and XLA's optimizations (a quarter of it) change no value here
    previous = jax.config.read("jax_disable_most_optimizations")
    jax.config.update("jax_disable_most_optimizations", True)
    yield sensitivity, toeplitz
    jax.config.update("jax_disable_most_optimizations", previous)


def test_against_jax_privacy_dense(jax_privacy_sensitivity):
    # One test over the seeds (not one per seed): jax compiles each of its functions once
    # per shape and static argument, and that compilation is most of this test's cost.
    js, _ = jax_privacy_sensitivity
    matrices = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        matrices += [np.tril(rng.random((40, 40))), np.tril(rng.normal(size=(40, 40)))]
    for matrix in matrices:
        strategy = mx.dense(matrix)
        single = mx.sensitivity(strategy, mx.SingleParticipation())
        assert single.value == pytest.approx(
            float(js.single_participation_sensitivity(matrix)), rel=1e-12
        )
        for separation, k in [(12, 4), (15, 3), (1, 2)]:
            ours = mx.sensitivity(strategy, mx.MinSeparation(separation, k))
            theirs = float(js.get_min_sep_sensitivity_upper_bound(matrix, separation, k))
            assert ours.value <= theirs * (1 + 1e-12)  # at least as tight
        ours = mx.sensitivity(strategy, mx.FixedEpochs(4))
        theirs = float(js.fixed_epoch_sensitivity(matrix, 4))
        assert ours.value <= theirs * (1 + 1e-12)
        if strategy.is_nonnegative():
            assert ours.value == pytest.approx(theirs, rel=1e-12)


def test_against_jax_privacy_toeplitz_and_banded(jax_privacy_sensitivity):
    js, jt = jax_privacy_sensitivity
    for n, separation, k in [(1000, 10, 7), (10_000, 100, 50), (257, 16, 20)]:
        coefficients = mx.square_root_toeplitz_coefficients(n)
        ours = mx.sensitivity(mx.square_root_toeplitz(n), mx.MinSeparation(separation, k))
        theirs = float(jt.minsep_sensitivity_squared(coefficients, separation, k, n=n))
        assert ours.exact and ours.value**2 == pytest.approx(theirs, rel=1e-11)
    rng = np.random.default_rng(3)
    matrix = np.tril(rng.normal(size=(80, 80)))
    strategy = mx.banded(matrix, 5)
    ours = mx.sensitivity(strategy, mx.MinSeparation(5, 9))
    theirs = float(js.get_sensitivity_banded(strategy.matrix(), 5, 9))
    assert ours.exact and ours.value == pytest.approx(theirs, rel=1e-12)


def test_tree_is_at_most_jax_privacy_upper_bound(jax_privacy_sensitivity):
    js, _ = jax_privacy_sensitivity
    strategy = mx.tree(256)
    for separation, k in [(16, 4), (64, 4), (3, 10)]:
        ours = mx.sensitivity(strategy, mx.MinSeparation(separation, k))
        theirs = float(js.get_min_sep_sensitivity_upper_bound(strategy.matrix(), separation, k))
        assert ours.value <= theirs * (1 + 1e-12)
        assert ours.lower <= ours.value


# --------------------------------------------------------------------------- the mechanism


def test_mechanism_is_the_gaussian_closed_form():
    run = MatrixMechanism(mx.tree(1023), 2.0, mx.SingleParticipation())
    accounting = gaussdp.account(run)
    assert accounting.method.startswith("closed form")
    assert accounting.mu == pytest.approx(math.sqrt(10) / 2.0, rel=1e-14)
    report = accounting.gdp()
    assert report.mu == pytest.approx(math.sqrt(10) / 2.0, rel=1e-12)
    assert report.delta_tail == 0.0
    assert accounting.epsilon(1e-5) == pytest.approx(
        float(gaussdp.account(gaussdp.Gaussian(2.0 / math.sqrt(10))).epsilon(1e-5)), rel=1e-12
    )
    replace = gaussdp.account(run, neighbouring=Neighbouring.REPLACE)
    assert replace.mu == pytest.approx(2 * math.sqrt(10) / 2.0, rel=1e-14)


def test_composed_with_other_mechanisms():
    run = MatrixMechanism(mx.identity(100), 5.0, mx.MinSeparation(10, 4))
    accounting = gaussdp.account(gaussdp.Composition([run, gaussdp.Gaussian(5.0)]))
    assert accounting.mu == pytest.approx(math.sqrt(5) / 5.0, rel=1e-14)


def test_rdp_view_and_group():
    run = MatrixMechanism(mx.prefix_sum(16), 4.0, mx.SingleParticipation())
    orders = np.array([2.0, 8.0])
    np.testing.assert_allclose(gaussdp.rdp.renyi_epsilons(run, orders), orders * 16 / (2 * 16.0))
    group = gaussdp.account(gaussdp.Group(run, 3))
    assert group.mu == pytest.approx(3 * 4.0 / 4.0, rel=1e-14)


def test_below_dp_accounting_tree_aggregation_rdp():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    for sigma, steps in [(1.0, 1000), (4.0, 5000), (10.0, 100)]:
        event = dp_accounting.SingleEpochTreeAggregationDpEvent(sigma, steps)
        accountant = rdp.RdpAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL
        )
        accountant.compose(event)
        theirs = accountant.get_epsilon(1e-5)
        run = MatrixMechanism(mx.tree(steps), sigma, mx.SingleParticipation())
        ours = float(gaussdp.account(run).epsilon(1e-5))
        assert run.mu == pytest.approx(math.sqrt(math.ceil(math.log2(steps + 1))) / sigma)
        assert ours < theirs


def test_calibration_of_the_noise_multiplier():
    strategy, participation = mx.square_root_toeplitz(500), mx.MinSeparation(50, 10)
    delta = mx.sensitivity(strategy, participation).value
    result = calibrate.matrix_noise_multiplier(
        calibrate.Mu(0.5), strategy=strategy, participation=participation
    )
    assert result.value == pytest.approx(delta / 0.5, rel=1e-6)
    assert delta / result.value <= 0.5
    result = calibrate.matrix_noise_multiplier(
        (3.0, 1e-5), strategy=strategy, participation=participation
    )
    mu = gaussdp.gdp.mu(3.0, 1e-5)
    assert result.value == pytest.approx(delta / mu, rel=1e-5)
    assert (
        float(gaussdp.account(MatrixMechanism(strategy, result.value, participation)).epsilon(1e-5))
        <= 3.0
    )
    tpr = calibrate.matrix_noise_multiplier(
        calibrate.TPRAtFPR(0.2, 0.01), strategy=strategy, participation=participation
    )
    # TPR at FPR of μ-GDP: 1 − β = Φ(Φ⁻¹(α) + μ)
    from scipy.stats import norm

    mu_tpr = norm.ppf(0.2) - norm.ppf(0.01)
    assert tpr.value == pytest.approx(delta / mu_tpr, rel=1e-5)


def test_pipeline_round_trip_and_toml():
    for run in [
        # (a tree of 32 steps: a mechanism's sensitivity, made on construction, is found
        # over every participation pattern, 1,478 here and 144,670 for 64 steps)
        MatrixMechanism(mx.tree(32), 2.0, mx.MinSeparation(8, 4)),
        MatrixMechanism(mx.square_root_toeplitz(32, bands=4), 1.5, mx.FixedEpochs(4)),
        MatrixMechanism(mx.toeplitz([1.0, -0.5], 6), 1.0, mx.SingleParticipation()),
        MatrixMechanism(mx.dense([[1.0, 0.0], [0.5, 2.0]]), 1.0, mx.SingleParticipation()),
        MatrixMechanism(mx.banded([1.0, 0.5, 0.25], 2, n=10), 1.0, mx.MinSeparation(2, 3)),
    ]:
        assert loads(dumps(Pipeline(run))).mechanism == run
        assert hash(loads(dumps(run)).mechanism) == hash(run)
    text = """
[[mechanism]]
type = "matrix"
strategy = {name = "tree", n = 1024}
noise_multiplier = 2.0
participation = {min_separation = 64, max_participations = 4}
"""
    assert loads(text).mechanism == MatrixMechanism(mx.tree(1024), 2.0, mx.MinSeparation(64, 4))


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ('strategy = "tree"', r"mechanism\[0\]\.strategy must be a strategy or a table"),
        ("strategy = 3", r"mechanism\[0\]\.strategy must be a table, got int 3"),
        ('strategy = {name = "tre", n = 4}', r"strategy\.name must be one of"),
        ('strategy = {name = "tree"}', r"strategy\.n is missing"),
        ('strategy = {name = "tree", n = 0}', r"strategy\.n must be an integer >= 1, got 0"),
        ('strategy = {name = "tree", n = 4, bands = 2}', r"strategy\.bands: unknown key"),
    ],
)
def test_pipeline_errors_name_the_place(text, pattern):
    document = (
        f'[[mechanism]]\ntype = "matrix"\n{text}\nnoise_multiplier = 1.0\nparticipation = {{}}\n'
    )
    with pytest.raises(InvalidParameterError, match=pattern) as info:
        loads(document)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        (lambda: mx.MinSeparation(0, 3), r"^separation must be an integer >= 1, got 0$"),
        (lambda: mx.MinSeparation(2, 0), r"^max_participations must be an integer >= 1, got 0$"),
        (lambda: mx.FixedEpochs(0), r"^epochs must be an integer >= 1, got 0$"),
        (
            lambda: mx.sensitivity(mx.identity(10), mx.FixedEpochs(4)),
            r"^epochs must divide the number of steps n = 10, got 4$",
        ),
        (
            lambda: MatrixMechanism(mx.identity(10), 1.0, mx.FixedEpochs(3)),
            r"^epochs must divide the number of steps n = 10, got 3$",
        ),
        (
            lambda: mx.dense([[1.0, 2.0], [0.0, 1.0]]),
            r"^matrix must be lower-triangular .* got 2\.0 at row 0, column 1 above the diagonal$",
        ),
        (lambda: mx.dense([[1.0, 0.0], [math.nan, 1.0]]), r"^matrix must hold finite .*nan"),
        (lambda: mx.dense([[math.inf]]), r"^matrix must hold finite real numbers, got inf"),
        (lambda: mx.dense(np.ones((2, 3))), r"^matrix must be a non-empty square matrix"),
        (lambda: mx.toeplitz([1.0, math.inf], 4), r"^coefficients must hold finite"),
        (lambda: mx.toeplitz([], 4), r"^coefficients must be a non-empty"),
        (lambda: mx.tree(0), r"^n must be an integer >= 1, got 0$"),
        (lambda: mx.square_root_toeplitz(10, bands=0), r"^bands must be an integer >= 1, got 0$"),
        (lambda: mx.banded([1.0, 0.5], 0), r"^bands must be an integer >= 1, got 0$"),
        (lambda: mx.banded(np.eye(3), 2, n=4), r"^n must equal the matrix's size 3, got 4"),
        (
            lambda: MatrixMechanism(mx.tree(8), 0.0, mx.SingleParticipation()),
            r"^noise_multiplier must be",
        ),
        (
            lambda: MatrixMechanism(mx.tree(8), 1.0, "twice"),
            r"^participation must be a participation or a table",
        ),
        (
            lambda: mx.sensitivity(np.eye(3), mx.SingleParticipation()),
            r"^strategy must be a gaussdp.matrix strategy",
        ),
    ],
)
def test_bad_input_one_line(make, pattern):
    with pytest.raises(InvalidParameterError, match=pattern) as info:
        make()
    assert "\n" not in str(info.value)


def test_huge_dense_refused_up_front_with_its_size():
    class Huge:  # only its shape is read before the refusal
        shape = (10**6, 10**6)

        def __array__(self, *args, **kwargs):  # pragma: no cover - must never be called
            raise AssertionError("allocated before refusing")

    with pytest.raises(InvalidParameterError, match=r"8 TB") as info:
        mx.dense(Huge())
    assert "1000000 × 1000000" in str(info.value)
    # a named strategy whose sensitivity would need its dense Gram matrix
    with pytest.raises(InvalidParameterError, match=r"dense 1000000 × 1000000 array \(8 TB\)"):
        mx.sensitivity(mx.tree(10**6), mx.MinSeparation(1000, 4))
    # while the closed forms need nothing dense
    assert mx.sensitivity(mx.tree(10**6), mx.SingleParticipation()).value ** 2 == pytest.approx(20)
    assert mx.sensitivity(mx.square_root_toeplitz(10**6), mx.MinSeparation(1000, 50)).exact


def test_strategies_are_immutable_values():
    strategy = mx.toeplitz([1.0, 0.5], 4)
    with pytest.raises(ValueError):
        strategy.coefficients[0] = 2.0
    with pytest.raises(AttributeError):
        strategy.n = 5
    assert strategy == mx.toeplitz(np.array([1.0, 0.5]), 4)
    assert strategy != mx.toeplitz([1.0, 0.5], 5)
    assert {strategy: 1}[mx.toeplitz([1.0, 0.5], 4)] == 1


# --------------------------------------------------------------------------- command line


def test_cli_report_matrix_json():
    import json

    from click.testing import CliRunner

    from gaussdp.cli import cli

    argv = ["report", "matrix", "--strategy", "tree", "--steps", "1024"]
    argv += ["--noise-multiplier", "4", "--epochs", "4", "--format", "json"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    # 4 epochs of 256 steps: leaves 0, 256, 512, 768 share the two top levels of the tree
    assert payload["mu"] == pytest.approx(math.sqrt(60) / 4, rel=1e-12)
    assert payload["delta_tail"] == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--strategy", "tree", "--steps", "10", "--noise-multiplier", "1", "--epochs", "4"],
            "epochs must divide the number of steps n = 10, got 4",
        ),
        (["--strategy", "tree", "--steps", "10"], "report matrix needs --noise-multiplier"),
        (["--steps", "10", "--noise-multiplier", "1"], "report matrix needs --strategy"),
        (
            [
                "--strategy",
                "tree",
                "--steps",
                "10",
                "--noise-multiplier",
                "1",
                "--min-separation",
                "2",
            ],
            "--min-separation and --max-participations go together",
        ),
        (
            [
                "--strategy",
                "tree",
                "--steps",
                "10",
                "--noise-multiplier",
                "1",
                "--min-separation",
                "0",
                "--max-participations",
                "2",
            ],
            "separation must be an integer >= 1, got 0",
        ),
        (
            [
                "--strategy",
                "tree",
                "--steps",
                "1000000",
                "--noise-multiplier",
                "1",
                "--min-separation",
                "2",
                "--max-participations",
                "5",
            ],
            "(8 TB)",
        ),
        (
            ["--strategy", "tree", "--steps", "8", "--noise-multiplier", "1", "--bands", "2"],
            "--bands applies to --strategy square_root_toeplitz only",
        ),
    ],
)
def test_cli_bad_input_one_line_exit_2(argv, message, capsys):
    from gaussdp.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["report", "matrix", *argv])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gaussdp: error:")
    assert message in lines[0]


# --------------------------------------------------------------------------- error


def test_prefix_sum_error_closed_forms():
    np.testing.assert_allclose(mx.prefix_sum_error(mx.identity(50)).per_step ** 2, np.arange(1, 51))
    np.testing.assert_allclose(mx.prefix_sum_error(mx.prefix_sum(50)).per_step, np.ones(50))
    # C·C = A, so B = A C⁻¹ = C: s_t² = Σ_{k≤t} c_k²
    c = mx.square_root_toeplitz_coefficients(300)
    np.testing.assert_allclose(
        mx.prefix_sum_error(mx.square_root_toeplitz(300)).per_step ** 2, np.cumsum(c**2), rtol=1e-10
    )
    # the Toeplitz path and the dense path agree
    rng = np.random.default_rng(2)
    coefficients = np.concatenate([[1.0], rng.normal(size=39) * 0.3])
    strategy = mx.toeplitz(coefficients, 40)
    np.testing.assert_allclose(
        mx.prefix_sum_error(strategy).per_step,
        mx.prefix_sum_error(mx.dense(strategy.matrix())).per_step,
        rtol=1e-9,
    )


@pytest.mark.parametrize("n", [1, 6, 8, 13])
def test_tree_error_is_the_online_dyadic_decoder(n):
    matrix = mx.tree(n).matrix()
    intervals = [(int(np.flatnonzero(r)[0]), int(np.flatnonzero(r)[-1]) + 1) for r in matrix]
    decoder = np.zeros((n, len(intervals)))
    for t in range(n):
        start = 0
        for level in reversed(range((t + 1).bit_length())):  # binary expansion of t + 1
            if (t + 1) >> level & 1:
                row = intervals.index((start, start + 2**level))
                assert start + 2**level <= t + 1  # released by step t
                decoder[t, row] = 1.0
                start += 2**level
    np.testing.assert_array_equal(decoder @ matrix, mx.prefix_sum(n).matrix())
    np.testing.assert_allclose(
        mx.prefix_sum_error(mx.tree(n)).per_step, np.linalg.norm(decoder, axis=1)
    )


def test_prefix_sum_error_refuses_a_singular_strategy():
    with pytest.raises(InvalidParameterError, match="singular"):
        mx.prefix_sum_error(mx.dense([[1.0, 0.0], [1.0, 0.0]]))
    with pytest.raises(InvalidParameterError, match="singular"):
        mx.prefix_sum_error(mx.toeplitz([0.0, 1.0], 3))


# --------------------------------------------------------------------------- amplified BandMF


def test_amplified_bandmf_is_jax_privacys_event_and_below_rdp():
    pytest.importorskip("jax_privacy")
    from dp_accounting import rdp
    from jax_privacy.experimental.accounting import amplified_bandmf_event

    from gaussdp.interop import from_dp_event

    for sigma, steps, bands, q in [(1.0, 1000, 4, 0.05), (0.8, 2001, 16, 0.2)]:
        run = gaussdp.AmplifiedBandMF(sigma, steps, bands, q)
        event = amplified_bandmf_event(sigma, steps, num_bands=bands, sampling_prob=q)
        assert from_dp_event(event) == run.expand()
        accounting = gaussdp.account(run)
        lower, upper = accounting.epsilon_bounds(1e-6)
        accountant = rdp.RdpAccountant()
        accountant.compose(event)
        assert lower <= upper < accountant.get_epsilon(1e-6)
        assert gaussdp.account(run.expand()).epsilon(1e-6) == accounting.epsilon(1e-6)


def test_amplified_bandmf_preconditions_refused_in_one_line():
    c = mx.square_root_toeplitz_coefficients(8)
    unit = c / np.linalg.norm(c)
    gaussdp.AmplifiedBandMF(1.0, 100, 8, 0.1, strategy=mx.banded(unit, 8, n=100))  # accepted
    cases = [
        (mx.banded(unit, 8, n=100), 16, 99, r"^strategy must have n = steps = 99 columns, got n"),
        (mx.square_root_toeplitz(100), 8, 100, r"^strategy must be 8-banded .* with 100 bands$"),
        (mx.tree(100), 8, 100, r"^strategy must be 8-banded .* an unbounded number of bands$"),
        (mx.banded(c, 8, n=100), 8, 100, r"^strategy must have columns of norm at most 1"),
    ]
    for strategy, bands, steps, pattern in cases:
        with pytest.raises(InvalidParameterError, match=pattern) as info:
            gaussdp.AmplifiedBandMF(1.0, steps, bands, 0.1, strategy=strategy)
        assert "\n" not in str(info.value)
    with pytest.raises(InvalidParameterError, match=r"^bands must be an integer >= 1, got 0$"):
        gaussdp.AmplifiedBandMF(1.0, 100, 0, 0.1)
    run = gaussdp.AmplifiedBandMF(1.0, 100, 8, 0.1, strategy=mx.banded(unit, 8, n=100))
    assert loads(dumps(run)).mechanism == run
    assert loads(dumps(gaussdp.AmplifiedBandMF(1.0, 100, 8, 0.1))).mechanism.strategy is None


def test_tree_aggregation_event_read_from_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    from gaussdp.interop import from_dp_event

    event = dp_accounting.SingleEpochTreeAggregationDpEvent(3.0, [100, 1000, 7])
    mechanism = from_dp_event(event)
    assert mechanism == MatrixMechanism(mx.tree(1000), 3.0, mx.SingleParticipation())
    assert mechanism.mu == pytest.approx(math.sqrt(10) / 3.0)
    twice = from_dp_event(dp_accounting.SelfComposedDpEvent(event, 2))
    accountant = rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL
    )
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, 2))
    ours = gaussdp.account(twice)
    assert ours.mu == pytest.approx(math.sqrt(2) * math.sqrt(10) / 3.0, rel=1e-14)
    assert float(ours.epsilon(1e-6)) < accountant.get_epsilon(1e-6)


def test_sweep_over_the_noise_multiplier(tmp_path):
    from click.testing import CliRunner

    from gaussdp.cli import cli

    path = tmp_path / "sweep.toml"
    path.write_text(
        '[sweep]\ndeltas = [1e-5]\nreport = true\n[[mechanism]]\ntype = "matrix"\n'
        'strategy = { name = "tree", n = 1023 }\nnoise_multiplier = [2.0, 4.0]\n'
        "participation = {}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["sweep", str(path)])
    assert result.exit_code == 0, result.output
    rows = [line.split(",") for line in result.output.strip().splitlines()]
    header, body = rows[0], rows[1:]
    mus = {
        float(row[header.index("noise_multiplier")]): float(row[header.index("mu")]) for row in body
    }
    assert set(mus) == {2.0, 4.0}
    for sigma, mu in mus.items():  # rows in any order
        assert mu == pytest.approx(math.sqrt(10) / sigma, rel=1e-12)


def test_linear_max_against_every_pattern():
    from gaussdp.matrix.sensitivities import linear_max

    rng = np.random.default_rng(9)
    for _ in range(60):
        n = int(rng.integers(1, 10))
        separation, k = int(rng.integers(1, 4)), int(rng.integers(1, 5))
        weights = rng.normal(size=(3, n))
        result = linear_max(weights, separation, k)
        for row, value in zip(weights, result, strict=True):
            best = max([0.0] + [row[list(p)].sum() for p in _min_sep_patterns(n, separation, k)])
            assert value == pytest.approx(best, abs=1e-12)
