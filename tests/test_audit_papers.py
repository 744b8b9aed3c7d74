"""gaussdp.audit against the worked values printed in the one-run auditing papers (issue 21).

Source: Mahloujifar, Melis & Chaudhuri, "Auditing f-Differential Privacy in One Run"
(ICML 2025, PMLR 267; arXiv 2410.22235), read in full: Section 4.2 and its Table 1
(empirical ε at δ = 1e-5 of a Gaussian mechanism of noise σ, sensitivity 1, i.e.
μ = 1/σ, from the idealized membership-inference game of Algorithm 4, App. D, with
Steinke, Nasr & Jagielski's analysis and with the paper's own), and App. B ("Varying
δ and confidence levels": m = 10^5 canaries, 1,500 guesses, 1,429 of them right for
σ = 1.0, "suggested by the idealized setting").

Steinke, Nasr & Jagielski (NeurIPS 2023, arXiv 2305.08846) could not be read beyond
its first page here (only its Appendix D code is quoted in public repositories, and
that is what ``steinke_p_value`` already follows), so its own figures are not checked;
its bound enters through the "Steinke et al." column of Table 1 above.

The idealized game (App. D, Algorithm 4, k = 2): canary i is in (s_i = +1) or out
(s_i = -1) with probability 1/2, the auditor sees s_i + N(0, (2σ)²) and guesses "in"
on the top guesses/2 scores; the paper averages 100 simulations of
ceil(guesses · accuracy among those). Here the accuracy is its expectation in closed
form (the quantile of the two-Gaussian mixture), rounded up as the paper does.
"""

from __future__ import annotations

import math

import pytest
from scipy import optimize, special

import gaussdp
from gaussdp import gdp
from gaussdp.audit import one_run
from gaussdp.audit.one_run import epsilon_lower_steinke, mu_lower_fdp

DELTA = 1e-5  # every number in Table 1 is ε at δ = 1e-5
ALPHA = 0.05  # the paper's τ = 0.05 (95 % confidence), also Steinke et al.'s default

# Table 1 of Mahloujifar, Melis & Chaudhuri (2025): rows σ = 0.5, 1, 2, 4 with
# 10^5, 10^5, 10^5, 10^6 canaries; columns "Theoretical", "Steinke et al.", "Ours".
TABLE_1 = {
    # sigma: (canaries, theoretical, steinke, ours)
    0.5: (10**5, 9.99, 4.99, 8.16),
    1.0: (10**5, 4.37, 2.61, 3.61),
    2.0: (10**5, 1.99, 1.33, 1.59),
    4.0: (10**6, 0.92, 0.61, 0.82),
}

# The number of guesses behind each Table 1 entry is not printed ("optimized to achieve
# the best ε at δ = 1e-5"). These are where gaussdp's bounds peak on a fine geometric
# sweep (30 points over two decades, done once); the tests take the best of a ±40 %
# neighbourhood of those.
STEINKE_BEST_GUESSES = {0.5: 8494, 1.0: 1318, 2.0: 756, 4.0: 17432}
FDP_BEST_GUESSES = {0.5: 2458, 1.0: 678, 2.0: 756, 4.0: 2212}
NEIGHBOURHOOD = (0.6, 0.8, 1.0, 1.2, 1.4)


def idealized_correct(sigma: float, guesses: int, canaries: int) -> int:
    """Right guesses in the idealized game, in expectation, rounded up (App. D, Alg. 4)."""
    top = (guesses // 2) / canaries  # fraction of canaries guessed "in"
    spread = 2.0 * sigma

    def excess(threshold: float) -> float:
        inside = special.ndtr((1.0 - threshold) / spread)
        outside = special.ndtr((-1.0 - threshold) / spread)
        return 0.5 * (inside + outside) - top

    threshold = optimize.brentq(excess, -50.0, 50.0, xtol=1e-14)
    precision = 0.5 * special.ndtr((1.0 - threshold) / spread) / top
    return math.ceil(guesses * precision)


def _neighbourhood(best: int) -> list[int]:
    return sorted({2 * round(best * factor / 2) for factor in NEIGHBOURHOOD})


@pytest.mark.parametrize("sigma", sorted(TABLE_1))
def test_table_1_theoretical_epsilon(sigma):
    """Table 1, "Theoretical": ε(δ = 1e-5) of the Gaussian mechanism, printed truncated.

    The paper's four values are the exact ε cut (not rounded) to two decimals: 9.997,
    4.377, 1.993 and 0.926 print as 9.99, 4.37, 1.99 and 0.92. So the exact value lies
    in [printed, printed + 0.01); gaussdp's certified bounds are within 1e-9 of it.
    """
    printed = TABLE_1[sigma][1]
    lower, upper = gaussdp.account(gaussdp.Gaussian(sigma)).epsilon_bounds(DELTA)
    assert printed <= lower <= upper < printed + 0.01
    # the closed form of μ-GDP that the audit uses to turn μ_lower into ε
    assert printed <= gdp.epsilon(1.0 / sigma, DELTA) < printed + 0.01


def test_appendix_b_idealized_count():
    """App. B: m = 10^5, 1,500 guesses, σ = 1 -> 1,429 right guesses "suggested by the
    idealized setting". Checks the closed form of the game the next tests rely on."""
    assert idealized_correct(1.0, 1500, 10**5) == 1429


def test_appendix_b_point_orders_the_bounds():
    """At App. B's (m, r, v) = (10^5, 1500, 1429), σ = 1: the paper's claim, Section 4.1,
    that its f-DP analysis certifies more than Steinke et al.'s, and both stay below the
    theoretical ε = 4.37 (the audited mechanism is 1-GDP, so a larger bound would be a
    false violation)."""
    result = one_run(10**5, 1500, 1429, delta=DELTA)
    steinke = result.epsilon_lower
    fdp = result.epsilon_from_mu_lower
    assert 0.0 < steinke < fdp < TABLE_1[1.0][1]
    # the paper's own App. D code (Gaussian candidates σ = 1.00, 1.01, ...) first rejects
    # σ = 1.28 here; gaussdp's exact boundary must lie just below it
    assert 1.27 < 1.0 / result.mu_lower <= 1.28


@pytest.mark.parametrize("sigma", sorted(TABLE_1))
def test_table_1_steinke_column(sigma):
    """Table 1, "Steinke et al.": 4.99, 2.61, 1.33, 0.61 against gaussdp's Steinke bound.

    Tolerance 3 % relative: the paper prints two decimals, but its number of guesses is
    not stated and its right-guess count is a 100-run simulation; one right guess more
    or less moves this bound by up to 0.02, and another number of guesses near the
    optimum by several hundredths. gaussdp's best values are 4.90, 2.67, 1.30, 0.611.
    """
    canaries, _, printed, _ = TABLE_1[sigma]
    ours = max(
        epsilon_lower_steinke(
            canaries, guesses, idealized_correct(sigma, guesses, canaries), ALPHA, DELTA
        )
        for guesses in _neighbourhood(STEINKE_BEST_GUESSES[sigma])
    )
    assert ours == pytest.approx(printed, rel=0.03)


# Table 1's "Ours" column (8.16, 3.61, 1.59, 0.82) is 5-11 % above what the paper's own
# App. D code gives in the stated idealized setting at these inputs: 7.41, 3.36, 1.50,
# 0.73 (run once on these inputs, on its σ grid of step 0.01). gaussdp, without the grid,
# agrees with that code, not with the table (whose setup must differ in a way the text
# does not state); so the test holds gaussdp to the code's values.
PAPER_CODE_FDP = {0.5: 7.41, 1.0: 3.36, 2.0: 1.50, 4.0: 0.73}


@pytest.mark.parametrize("sigma", sorted(TABLE_1))
def test_table_1_fdp_column_as_the_papers_code_computes_it(sigma):
    """Table 1, "Ours": the f-DP analysis with Gaussian curves, best over the guesses."""
    canaries, _, _, _ = TABLE_1[sigma]
    mu = max(
        mu_lower_fdp(canaries, guesses, idealized_correct(sigma, guesses, canaries), ALPHA)
        for guesses in _neighbourhood(FDP_BEST_GUESSES[sigma])
    )
    # The code steps σ by 0.01 and keeps the last σ it rejects (so it is at most that
    # step below ours); its values are given here to two decimals (±0.005).
    code = PAPER_CODE_FDP[sigma]
    assert code - 0.005 <= gdp.epsilon(mu, DELTA) <= code * 1.03 + 0.005
