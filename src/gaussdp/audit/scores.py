"""Attack scores -> thresholds -> certified lower bounds, with the threshold choice corrected.

An attack scores every example; "member" is guessed when the score is at least
a threshold t. Choosing t after looking at the scores and reporting the best
bound is *not* a valid confidence statement (the uncorrected maximum that
several tools report). Three valid choices:

``"bonferroni"`` (default)
    Every threshold is tried; each error-rate bound is taken at
    ``α / (2 m)`` with ``m = n_members + n_non_members + 1``, the number of
    thresholds there can be (every score, and "guess nobody"). The false-positive
    count at any threshold is the rank of an order statistic of the non-member
    scores, so the union bound over the ``n_non_members + 1 <= m`` possible
    counts (and likewise over the members' counts) makes all bounds hold
    together with probability at least ``1 − α``, however the thresholds were
    found (the DKW-style argument of Jagielski et al. 2020, Bonferroni form).
``"split"``
    The scores are split at random (seeded) into halves; the ε-best and μ-best
    thresholds of the first half (Bonferroni there) are bounded on the second
    half, each error-rate bound at α/4 (α/2 if the two coincide).
a float
    One fixed threshold chosen before seeing the scores: α/2 per bound.

All thresholds at once (:mod:`gaussdp.audit.search`): the Pareto front of the
counts from one stable merge of the two sorted score arrays (only thresholds on
it can give the best bound), then the Clopper–Pearson bounds tabulated exactly
on a grid of counts bracket every threshold's objective; the :data:`~gaussdp.audit.search.RANKED`
thresholds of best estimated objective get exact bounds and the best of those is
reported — valid whatever the ranking, since all bounds hold together.
``used["search_gap"]`` certifies how much an exhaustive search could still add.
10⁶ + 10⁶ scores take about 0.1 s (``benchmarks/audit.py``).
"""

from __future__ import annotations

import csv
import os
import warnings
from pathlib import Path

import numpy as np

from gaussdp._validation import InvalidParameterError
from gaussdp.audit import bounds
from gaussdp.audit._checks import check_alpha, check_count, check_delta, model_epsilon
from gaussdp.audit.compare import CountsEvidence, check_against
from gaussdp.audit.counts import point
from gaussdp.audit.report import attach_report
from gaussdp.audit.result import AuditResult
from gaussdp.audit.search import best, front

__all__ = ["from_scores", "load_scores"]

THRESHOLD_CHOICES = ("bonferroni", "split")


def load_scores(source, *, name: str = "scores", column: str | None = None) -> np.ndarray:
    """Scores as a 1-D float array from an array, a ``.npy`` file or a ``.csv`` file.

    A CSV file is read with a header line when its first line is not a number;
    ``column`` names the column (required when there are several).

    Raises
    ------
    InvalidParameterError
        Empty, NaN or non-numeric scores, a missing file or column, another suffix.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise InvalidParameterError(f"{name} file {str(path)!r} does not exist")
        suffix = path.suffix.lower()
        if suffix == ".npy":
            try:
                array = np.load(path, allow_pickle=False)
            except ValueError as error:
                raise InvalidParameterError(f"{name} file {str(path)!r}: {error}") from None
        elif suffix == ".csv":
            array = _read_csv(path, name, column)
        else:
            raise InvalidParameterError(
                f"{name} file {str(path)!r} must end in .npy or .csv, got {suffix or 'no suffix'!r}"
            )
    else:
        array = source
    try:
        scores = np.asarray(array, dtype=float)
    except (TypeError, ValueError):
        kind = getattr(array, "dtype", None) or type(array).__name__
        raise InvalidParameterError(f"{name} must be numbers, got {kind}") from None
    if scores.ndim != 1:
        scores = scores.reshape(-1) if scores.ndim == 0 or 1 in scores.shape else scores
    if scores.ndim != 1:
        raise InvalidParameterError(f"{name} must be one-dimensional, got shape {scores.shape}")
    if scores.size == 0:
        raise InvalidParameterError(f"{name} must not be empty")
    nan = np.isnan(scores)
    if nan.any():
        raise InvalidParameterError(
            f"{name} must not contain NaN, got NaN at index {int(np.argmax(nan))}"
        )
    return scores


def _read_csv(path: Path, name: str, column: str | None) -> np.ndarray:
    with path.open(newline="") as handle:
        first = next(csv.reader(handle), None)
    if first is None:
        raise InvalidParameterError(f"{name} file {str(path)!r} is empty")
    header = [cell.strip() for cell in first]
    try:
        [float(cell) for cell in header]
        has_header = False
    except ValueError:
        has_header = True
    if has_header:
        if column is None:
            if len(header) != 1:
                raise InvalidParameterError(
                    f"{name} file {str(path)!r} has columns {', '.join(header)}; name one "
                    "(column=... / --column)"
                )
            index = 0
        elif column in header:
            index = header.index(column)
        else:
            raise InvalidParameterError(
                f"{name} file {str(path)!r} has no column {column!r} (columns: {', '.join(header)})"
            )
    else:
        if column is not None:
            raise InvalidParameterError(
                f"{name} file {str(path)!r} has no header line, so no column {column!r}"
            )
        if len(header) != 1:
            raise InvalidParameterError(
                f"{name} file {str(path)!r} has {len(header)} unnamed columns; give it a header"
            )
        index = 0
    try:
        with warnings.catch_warnings():
            # a header and no rows: "empty" is said below, once, not warned about here
            warnings.simplefilter("ignore", UserWarning)
            return np.loadtxt(
                path, delimiter=",", skiprows=1 if has_header else 0, usecols=index, ndmin=1
            )
    except ValueError as error:
        raise InvalidParameterError(f"{name} file {str(path)!r}: {error}") from None


def from_scores(
    members,
    non_members,
    *,
    alpha=0.05,
    delta=0.0,
    thresholds="bonferroni",
    seed: int = 0,
    column: str | None = None,
    against=None,
) -> AuditResult:
    """Lower bounds on ε (at δ) and μ from a membership attack's scores.

    Higher scores mean "member". For each threshold the Clopper–Pearson upper
    bounds ``FPR_ub``, ``FNR_ub`` give
    ``ε_lower = max(log((1−δ−FNR_ub)/FPR_ub), log((1−δ−FPR_ub)/FNR_ub), 0)`` and
    ``μ_lower = max(Φ⁻¹(1−FPR_ub) − Φ⁻¹(FNR_ub), 0)``; the reported bounds are the
    largest over the thresholds the choice allows, with its correction (see the
    module: Bonferroni over all thresholds by default, split, or a fixed
    threshold). Everything holds together with probability at least ``1 − alpha``.

    Parameters
    ----------
    members, non_members : array_like or path
        Scores of examples in and out of the training set: arrays, or ``.npy`` /
        ``.csv`` files (``column`` names the CSV column).
    alpha : float
        1 − confidence, in (0, 1); default 0.05.
    delta : float
        δ in [0, 1) for the ε lower bound; default 0.
    thresholds : "bonferroni", "split" or float
        How the threshold is chosen (default "bonferroni").
    seed : int
        The random split's seed (``thresholds="split"`` only).
    column : str, optional
        The column of CSV score files.
    against : Mechanism or Accounting, optional
        The run's description: adds an :class:`~gaussdp.audit.report.AuditReport`.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> result = from_scores(rng.normal(2.0, 1.0, 5000), rng.normal(0.0, 1.0, 5000))
    >>> 0.5 < result.mu_lower < 2.0
    True
    """
    # the cheap parameters first: nothing is read or allocated for a call that must fail
    alpha = check_alpha(alpha)
    delta = check_delta(delta)
    seed = check_count("seed", seed)
    check_against(against)
    if isinstance(thresholds, str):
        choice = thresholds.lower()
        if choice not in THRESHOLD_CHOICES:
            raise InvalidParameterError(
                f"thresholds must be 'bonferroni', 'split' or a number, got {thresholds!r}"
            )
    else:
        try:
            fixed = float(thresholds)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"thresholds must be 'bonferroni', 'split' or a number, got {thresholds!r}"
            ) from None
        if np.isnan(fixed):
            raise InvalidParameterError(
                "thresholds must be 'bonferroni', 'split' or a number, got nan"
            )
        choice = "fixed"
    members = load_scores(members, name="members", column=column)
    non_members = load_scores(non_members, name="non_members", column=column)
    if choice == "fixed":
        result = _fixed(members, non_members, fixed, alpha, delta)
    elif choice == "bonferroni":
        result = _bonferroni(members, non_members, alpha, delta)
    else:
        result = _split(members, non_members, alpha, delta, seed)
    return attach_report(result, against)


def _counts_at(members, non_members, threshold):
    tp = int(np.count_nonzero(members >= threshold))
    fp = int(np.count_nonzero(non_members >= threshold))
    return tp, members.size - tp, fp, non_members.size - fp


def _result(method, alpha, delta, chosen, level, used, evidence):
    """Assemble a result from the chosen (threshold, counts) pairs at ``level``."""
    points = tuple(point(*counts, level, threshold) for threshold, counts in chosen)
    epsilon = max(bounds.epsilon_lower(p.fpr_upper, p.fnr_upper, delta) for p in points)
    mu = max(bounds.mu_lower(p.fpr_upper, p.fnr_upper) for p in points)
    return AuditResult(
        method=method,
        alpha=alpha,
        delta=delta,
        epsilon_lower=float(epsilon),
        mu_lower=float(mu),
        epsilon_from_mu_lower=model_epsilon(float(mu), delta),
        points=points,
        used=used,
        _evidence=evidence,
    )


def _fixed(members, non_members, threshold, alpha, delta):
    counts = _counts_at(members, non_members, threshold)
    level = alpha / 2.0
    evidence = CountsEvidence(
        np.array([counts[2]]), non_members.size, np.array([counts[1]]), members.size, 2.0
    )
    return _result(
        "Clopper–Pearson at one fixed threshold, α/2 per error rate (union bound)",
        alpha,
        delta,
        [(threshold, counts)],
        level,
        {
            "members": members.size,
            "non_members": non_members.size,
            "thresholds": "fixed",
            "threshold": threshold,
            "level_per_bound": level,
        },
        evidence,
    )


def _bonferroni(members, non_members, alpha, delta):
    tried = members.size + non_members.size + 1
    divisor = 2.0 * tried
    level = alpha / divisor
    thresholds, fp, fn = front(members, non_members)
    (i_eps, _, eps_gap), (i_mu, _, mu_gap) = best(
        fp, non_members.size, fn, members.size, level, delta
    )
    chosen = []
    for i in dict.fromkeys((i_eps, i_mu)):
        tp_i = members.size - int(fn[i])
        chosen.append(
            (
                float(thresholds[i]),
                (tp_i, int(fn[i]), int(fp[i]), non_members.size - int(fp[i])),
            )
        )
    evidence = CountsEvidence(fp, non_members.size, fn, members.size, divisor)
    return _result(
        f"Clopper–Pearson at every threshold with a Bonferroni correction over {tried} "
        "thresholds and both error rates (α/(2m) per bound)",
        alpha,
        delta,
        chosen,
        level,
        {
            "members": members.size,
            "non_members": non_members.size,
            "thresholds": "bonferroni",
            "thresholds_tried": tried,
            "pareto_thresholds": int(fp.size),
            "level_per_bound": level,
            # how much an exhaustive search over the unexamined thresholds could add
            "search_gap": {"epsilon": eps_gap, "mu": mu_gap},
        },
        evidence,
    )


def _split(members, non_members, alpha, delta, seed):
    rng = np.random.default_rng(seed)
    if members.size < 2 or non_members.size < 2:
        raise InvalidParameterError("thresholds='split' needs at least 2 members and 2 non-members")
    members = rng.permutation(members)
    non_members = rng.permutation(non_members)
    half_m, half_n = members.size // 2, non_members.size // 2
    choose_m, bound_m = members[:half_m], members[half_m:]
    choose_n, bound_n = non_members[:half_n], non_members[half_n:]
    level_choose = alpha / (2.0 * (choose_m.size + choose_n.size + 1))
    thresholds, fp, fn = front(choose_m, choose_n)
    (i_eps, _, _), (i_mu, _, _) = best(fp, choose_n.size, fn, choose_m.size, level_choose, delta)
    picked = list(dict.fromkeys((float(thresholds[i_eps]), float(thresholds[i_mu]))))
    divisor = 2.0 * len(picked)
    level = alpha / divisor
    chosen = [(t, _counts_at(bound_m, bound_n, t)) for t in picked]
    evidence = CountsEvidence(
        np.array([c[2] for _, c in chosen]),
        bound_n.size,
        np.array([c[1] for _, c in chosen]),
        bound_m.size,
        divisor,
    )
    return _result(
        f"split (seed {seed}): thresholds chosen on one half, Clopper–Pearson on the other "
        f"half at {len(picked)} threshold(s), α/{divisor:g} per bound",
        alpha,
        delta,
        chosen,
        level,
        {
            "members": members.size,
            "non_members": non_members.size,
            "thresholds": "split",
            "seed": seed,
            "chosen_thresholds": picked,
            "bounded_on": {"members": bound_m.size, "non_members": bound_n.size},
            "level_per_bound": level,
        },
        evidence,
    )
