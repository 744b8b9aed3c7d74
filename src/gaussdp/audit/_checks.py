"""Guard clauses shared by the audit's entry points (one line naming the problem)."""

from __future__ import annotations

import math
import numbers

from gaussdp import gdp
from gaussdp._validation import InvalidParameterError

__all__ = ["check_alpha", "check_count", "check_delta", "model_epsilon"]


def check_alpha(alpha) -> float:
    """α must be a real number in (0, 1)."""
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"alpha must be in (0, 1), got {alpha!r}") from None
    if not 0.0 < value < 1.0:
        raise InvalidParameterError(f"alpha must be in (0, 1), got {alpha!r}")
    return value


def check_delta(delta) -> float:
    """δ must be a real number in [0, 1)."""
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"delta must be in [0, 1), got {delta!r}") from None
    if not 0.0 <= value < 1.0:
        raise InvalidParameterError(f"delta must be in [0, 1), got {delta!r}")
    return value


def check_count(name: str, value, *, low: int = 0) -> int:
    """A count: an integer (or integral float) at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float)):
        raise InvalidParameterError(f"{name} must be an integer >= {low}, got {value!r}")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise InvalidParameterError(f"{name} must be an integer >= {low}, got {value!r}")
    count = int(value)
    if count < low:
        raise InvalidParameterError(f"{name} must be an integer >= {low}, got {count}")
    return count


def model_epsilon(mu: float, delta: float) -> float:
    """The ε at δ of μ-GDP (model-based when μ is an audit's lower bound)."""
    if mu <= 0.0:
        return 0.0
    return float(gdp.epsilon(mu, delta))
