"""A Rényi-DP accountant, for comparison only.

Many papers still report privacy through Rényi differential privacy (the
"moments accountant": Abadi et al. 2016; Mironov 2017): the Rényi
divergences ε(α) = D_α(P ‖ Q) of the mechanism's pairs add up under
composition, and are converted to (ε, δ) at the end. The conversion is lossy
(the lecture, file 003, §"RDP accountant"; Figure 1 there), so the ε it gives
is a valid upper bound but a **looser** one than gaussdp's default
accountant (:func:`gaussdp.account`), sometimes by a lot. This module exists
so users can reproduce and compare RDP numbers; every result says so in its
:attr:`RDPAccounting.method`, and nothing in gaussdp uses it by default.

Rényi divergences (add/remove; under REPLACE the additive-noise shifts
double, as elsewhere in gaussdp), with r the shift over the noise scale:

* Gaussian: ε(α) = α r²/2; μ-GDP the same with r = μ; ρ-zCDP: ρα; the
  discrete Gaussian is bounded by the Gaussian's (Canonne, Kamath & Steinke
  2020, Proposition 8);
* Laplace: ε(α) = log[(α/(2α−1)) e^{(α−1)r} + ((α−1)/(2α−1)) e^{−αr}]/(α−1)
  (Mironov 2017, Table II);
* randomized response and ε-DP (their tight pair): with p = e^ε/(1+e^ε),
  ε(α) = log[p^α(1−p)^{1−α} + (1−p)^α p^{1−α}]/(α−1);
* Poisson-subsampled Gaussian: the maximum over the two directions of
  log E_Q[(dP/dQ)^α]/(α−1), for integer α by the binomial expansion
  (Mironov, Talwar & Zhang 2019, §3.3), otherwise by quadrature in log space;
* compositions add; a parallel composition takes the maximum; a group of a
  Gaussian or Laplace mechanism scales the sensitivity.

Conversion to (ε, δ): Canonne, Kamath & Steinke (2020, Proposition 12),
ε = min_α ε(α) + log(1 − 1/α) − (log δ + log α)/(α − 1), with the KL shortcut
ε = 0 when δ ≥ √(1 − e^{−ε(α)}) — the conversion of dp_accounting's
``RdpAccountant``.

Examples
--------
>>> from gaussdp import DPSGD, account
>>> from gaussdp.rdp import account_rdp
>>> run = DPSGD(9.4, 0.32768, 2000)
>>> round(account_rdp(run).epsilon(1e-5), 2), round(account(run).epsilon(1e-5), 2)
(7.99, 7.42)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError, check_real, restore_shape
from gaussdp.pld.guarantees import expand_group

__all__ = ["DEFAULT_ORDERS", "RDPAccounting", "account_rdp", "renyi_epsilons"]

#: dp_accounting's default orders, so results are comparable with its RdpAccountant.
DEFAULT_ORDERS = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]
)
_QUADRATURE_POINTS = 40001

_METHOD = (
    "Renyi-DP accountant (comparison only): Renyi divergences added over the composition, "
    "converted to (epsilon, delta) by Canonne-Kamath-Steinke Prop. 12 - a valid but looser "
    "upper bound than gaussdp's default accountant"
)


def _gaussian(orders: np.ndarray, ratio: float) -> np.ndarray:
    return orders * ratio**2 / 2.0


def _laplace(orders: np.ndarray, ratio: float) -> np.ndarray:
    a = orders
    log_terms = np.logaddexp(
        np.log(a / (2 * a - 1)) + (a - 1) * ratio, np.log((a - 1) / (2 * a - 1)) - a * ratio
    )
    return log_terms / (a - 1)


def _randomized_response(orders: np.ndarray, epsilon: float) -> np.ndarray:
    a = orders
    log_p = -math.log1p(math.exp(-epsilon))  # log e^ε/(1+e^ε)
    log_q = -math.log1p(math.exp(epsilon))
    log_terms = np.logaddexp(a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p)
    return log_terms / (a - 1)


def _log_moment_integer(order: int, q: float, ratio: float) -> float:
    """log E_Q[(1 − q + q e^L)^α] for integer α, remove direction (binomial expansion)."""
    k = np.arange(order + 1)
    log_terms = (
        special.gammaln(order + 1)
        - special.gammaln(k + 1)
        - special.gammaln(order - k + 1)
        + (order - k) * math.log1p(-q)
        + k * math.log(q)
        + (k * k - k) * ratio**2 / 2.0
    )
    return float(special.logsumexp(log_terms))


def _log_moments_quadrature(order: float, q: float, ratio: float) -> tuple[float, float]:
    """log E[(dP/dQ)^α] of both directions by trapezoidal quadrature in log space.

    Noise N(0, 1), shift ``ratio``: remove is ((1 − q)N(0,1) + qN(r,1), N(0,1)), add the
    swap. The integrands are smooth and decay like Gaussians, so the trapezoid rule
    on a wide uniform grid is accurate to rounding.
    """
    r = ratio
    centre = order * r
    half_width = 40.0 + abs(centre)
    x = np.linspace(-half_width, half_width + r, _QUADRATURE_POINTS)
    step = x[1] - x[0]
    log_phi = -0.5 * x * x - 0.5 * math.log(2 * math.pi)
    # log of the mixture density ratio mix/Q = 1 − q + q e^{r x − r²/2}
    log_ratio = np.logaddexp(math.log1p(-q), math.log(q) + r * x - r * r / 2)
    remove = special.logsumexp(log_phi + order * log_ratio) + math.log(step)
    # add: E_mix[(Q/mix)^α] = E_Q[(mix/Q)^{1−α}]
    add = special.logsumexp(log_phi + (1 - order) * log_ratio) + math.log(step)
    return float(remove), float(add)


def _subsampled_gaussian(orders: np.ndarray, q: float, ratio: float) -> np.ndarray:
    if q >= 1.0:
        return _gaussian(orders, ratio)
    out = np.empty(orders.shape)
    for index, a in enumerate(orders):
        remove, add = _log_moments_quadrature(float(a), q, ratio)
        if float(a).is_integer():
            remove = _log_moment_integer(int(a), q, ratio)
        out[index] = max(remove, add) / (a - 1)
    return out


def _renyi_table(mechanism: m.RenyiDP, orders: np.ndarray) -> np.ndarray:
    table = dict(zip(mechanism.orders, mechanism.epsilons, strict=True))
    return np.array([table.get(float(a), math.inf) for a in orders])


def renyi_epsilons(mechanism, orders=DEFAULT_ORDERS, *, neighbouring=None) -> np.ndarray:
    """The Rényi-DP curve ε(α) of a mechanism at the given orders (an upper bound).

    Raises :class:`gaussdp.InvalidParameterError` for descriptions without a
    Rényi-DP bound here (approximate DP, sampling without replacement,
    subsampled non-Gaussian mechanisms, profiles).

    Examples
    --------
    >>> from gaussdp import Gaussian, Repeated
    >>> renyi_epsilons(Repeated(Gaussian(2.0), 4), [2.0, 4.0]).tolist()
    [1.0, 2.0]
    """
    if isinstance(mechanism, m.Pipeline):
        neighbouring = neighbouring or mechanism.neighbouring
        mechanism = mechanism.mechanism
    neighbouring = neighbouring or m.Neighbouring.ADD_REMOVE
    order_array = check_real("orders", orders, low=1.0, high=math.inf, low_open=True).ravel()
    factor = 2.0 if neighbouring is m.Neighbouring.REPLACE else 1.0
    return _renyi(mechanism, order_array, factor, neighbouring)


def _renyi(mechanism, orders: np.ndarray, factor: float, neighbouring) -> np.ndarray:
    if isinstance(mechanism, m.Mechanism) and mechanism.expand() is not None:
        return _renyi(mechanism.expand(), orders, factor, neighbouring)  # DP-SGD, matrix
    if isinstance(mechanism, m.Composition):
        return sum(_renyi(part, orders, factor, neighbouring) for part in mechanism.mechanisms)
    if isinstance(mechanism, m.Repeated):
        return mechanism.times * _renyi(mechanism.mechanism, orders, factor, neighbouring)
    if isinstance(mechanism, m.Parallel):
        return np.max([_renyi(p, orders, factor, neighbouring) for p in mechanism.mechanisms], 0)
    if isinstance(mechanism, m.Group):
        expanded = expand_group(mechanism)
        if not isinstance(expanded, m.Group):
            return _renyi(expanded, orders, factor, neighbouring)
    if isinstance(mechanism, (m.Gaussian, m.DiscreteGaussian)):
        ratio = factor * mechanism.sensitivity / mechanism.sigma
        return _gaussian(orders, ratio)
    if isinstance(mechanism, m.Laplace):
        return _laplace(orders, factor * mechanism.sensitivity / mechanism.scale)
    if isinstance(mechanism, (m.RandomizedResponse, m.PureDP)):
        return _randomized_response(orders, mechanism.epsilon)
    if isinstance(mechanism, m.GDP):
        return _gaussian(orders, mechanism.mu)
    if isinstance(mechanism, m.ZCDP):
        return mechanism.rho * orders
    if isinstance(mechanism, m.RenyiDP):
        return _renyi_table(mechanism, orders)
    if isinstance(mechanism, m.PoissonSubsampled):
        inner = mechanism.mechanism
        if isinstance(inner, (m.Gaussian, m.GDP)) and neighbouring is m.Neighbouring.ADD_REMOVE:
            ratio = inner.mu if isinstance(inner, m.GDP) else inner.sensitivity / inner.sigma
            if ratio == 0:
                return np.zeros(orders.shape)
            return _subsampled_gaussian(orders, mechanism.sampling_probability, ratio)
    raise InvalidParameterError(
        f"the RDP view has no Renyi-DP bound for {mechanism._short()} "
        f"under {neighbouring.value}; use gaussdp.account"
    )


def _epsilon_from_rdp(orders: np.ndarray, rdp: np.ndarray, delta: float) -> float:
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if np.any(np.isfinite(rdp) & (delta * delta + np.expm1(-rdp) > 0)):
            return 0.0
        values = rdp + np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1)
    values = np.where(orders > 1.01, values, math.inf)
    return float(max(np.nanmin(np.where(np.isnan(values), math.inf, values)), 0.0))


def _delta_from_rdp(orders: np.ndarray, rdp: np.ndarray, epsilon: float) -> float:
    with np.errstate(invalid="ignore", over="ignore"):
        log_delta = (orders - 1) * (rdp - epsilon + np.log1p(-1.0 / orders)) - np.log(orders)
    log_delta = np.where((orders > 1.01) & np.isfinite(rdp), log_delta, math.inf)
    return float(min(math.exp(min(float(np.min(log_delta)), 0.0)), 1.0))


@dataclass(frozen=True, eq=False)
class RDPAccounting:
    """The RDP view of a mechanism (comparison only): ε(α) and the converted (ε, δ).

    Attributes
    ----------
    mechanism : Mechanism
    orders : ndarray
    renyi_epsilons : ndarray
        ε(α) at each order (an upper bound; ∞ where none is known).
    method : str
        Says that this is the RDP accountant, for comparison only.
    """

    mechanism: m.Mechanism
    orders: np.ndarray
    renyi_epsilons: np.ndarray
    method: str = field(default=_METHOD)

    def epsilon(self, delta):
        """Upper bound on ε at δ via the RDP conversion (looser than :func:`gaussdp.account`)."""
        d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        values = [_epsilon_from_rdp(self.orders, self.renyi_epsilons, float(x)) for x in d.ravel()]
        return restore_shape(np.array(values).reshape(d.shape), delta)

    def delta(self, epsilon):
        """Upper bound on δ at ε via the RDP conversion."""
        e = check_real("epsilon", epsilon, low=0.0, high=math.inf)
        values = [_delta_from_rdp(self.orders, self.renyi_epsilons, float(x)) for x in e.ravel()]
        return restore_shape(np.array(values).reshape(e.shape), epsilon)

    def best_order(self, delta: float) -> float:
        """The order at which the conversion is tightest for ``delta``."""
        d = float(check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True))
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            values = (
                self.renyi_epsilons
                + np.log1p(-1.0 / self.orders)
                - (math.log(d) + np.log(self.orders)) / (self.orders - 1)
            )
        values = np.where((self.orders > 1.01) & np.isfinite(values), values, math.inf)
        return float(self.orders[int(np.argmin(values))])


def account_rdp(mechanism, *, orders=DEFAULT_ORDERS, neighbouring=None) -> RDPAccounting:
    """Account a mechanism with the Rényi-DP accountant (comparison only, labelled).

    Parameters
    ----------
    mechanism : Mechanism or Pipeline
    orders : sequence of float
        Rényi orders > 1 (default: dp_accounting's).
    neighbouring : Neighbouring, optional

    Returns
    -------
    RDPAccounting
    """
    order_array = check_real("orders", orders, low=1.0, high=math.inf, low_open=True).ravel()
    description = mechanism.mechanism if isinstance(mechanism, m.Pipeline) else mechanism
    rdp = renyi_epsilons(mechanism, order_array, neighbouring=neighbouring)
    return RDPAccounting(description, order_array, np.asarray(rdp, dtype=float))
