"""δ(ε) and ε(δ) of a discrete privacy loss distribution: the hockey-stick divergence.

For a discrete pair with atoms of likelihood ratio e^{λ_i}, P-masses P_i and
Q-masses Q_i, plus P-mass P(+∞) at infinite loss,

    δ(ε) = Σ_i (P_i − e^ε Q_i)_+ + P(+∞) = S_P(ε) − e^ε S_Q(ε) + P(+∞),

with S_P(ε), S_Q(ε) the P- and Q-mass of atoms with λ_i > ε (the lecture,
file 003, hockey-stick divergence; Gopi et al. 2021, eq. 2). Suffix sums are
accumulated from the largest loss down, so tails keep their relative
accuracy; between consecutive λ's, δ is linear in e^ε, so ε(δ) is solved in
closed form on the right piece.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from gaussdp._numerics import LOG_ROUNDING, UNIT_ROUNDOFF, monotone_root, suffix_sums
from gaussdp.pld.grid import GridPLD

__all__ = ["Lattice", "Profile", "certify_tail_sums", "from_zero", "profile_of"]

# Relative margin by which an ε read off a discrete distribution is moved
# towards the safe side, covering the rounding of the closed-form solve.
_ROUNDING = 1e-12


class Lattice:
    """The losses (first + step·j)·h, j = 0 … size − 1, of a grid profile, as numbers only.

    A grid distribution's atoms sit at consecutive multiples of its spacing, so
    its profile needs no array of them (millions of atoms on long runs).
    Indexing (an int, a slice, an index array) gives exactly the entries the
    array ``(first + step·np.arange(size)) * h`` would, a slice another
    lattice; ``np.searchsorted`` finds positions arithmetically (ascending
    lattices, via the method numpy calls), ``np.asarray`` forms the array.
    """

    __slots__ = ("first", "size", "spacing", "step")

    def __init__(self, first: int, spacing: float, size: int, step: int = 1):
        self.first, self.spacing, self.size, self.step = (
            int(first),
            float(spacing),
            int(size),
            int(step),
        )

    @property
    def shape(self) -> tuple[int]:
        return (self.size,)

    ndim = 1
    dtype = np.dtype(float)

    def __len__(self) -> int:
        return self.size

    def _values(self, positions: np.ndarray) -> np.ndarray:
        return (self.first + self.step * positions) * self.spacing

    def value(self, index: int) -> float:
        """The loss at ``index`` ≥ 0, as a Python float (equal to the array's entry).

        (first + step·j)·h with the integer exact in a double, rounded once:
        the same product numpy forms, without its scalar machinery.
        """
        return float(self.first + self.step * index) * self.spacing

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(self.size)
            count = len(range(start, stop, step))
            return Lattice(self.first + self.step * start, self.spacing, count, self.step * step)
        if isinstance(key, (int, np.integer)):
            index = int(key) + (self.size if key < 0 else 0)
            if not 0 <= index < self.size:
                raise IndexError(f"index {key} out of range for {self.size} losses")
            return np.float64(self._values(np.int64(index)))
        positions = np.asarray(key)
        if positions.dtype == bool:
            positions = np.flatnonzero(positions)
        positions = np.where(positions < 0, positions + self.size, positions)
        if positions.size and (positions.min() < 0 or positions.max() >= self.size):
            raise IndexError(f"index out of range for {self.size} losses")
        return self._values(positions.astype(np.int64))

    def __array__(self, dtype=None, copy=None):
        values = self._values(np.arange(self.size, dtype=np.int64))
        return values if dtype is None else values.astype(dtype)

    def searchsorted(self, values, side: str = "left", sorter=None):
        """Positions at which ``values`` would be inserted (ascending lattices only)."""
        if self.step <= 0 and self.size > 1:
            raise ValueError("searchsorted needs an ascending lattice")
        if sorter is not None:
            raise ValueError("a lattice is sorted: searchsorted takes no sorter")
        x = np.asarray(values, dtype=float)
        with np.errstate(invalid="ignore", over="ignore"):
            guess = np.floor(x / self.spacing) - self.first
        guess = np.nan_to_num(np.clip(guess, -1, self.size), nan=self.size).astype(np.int64)
        # The lattice's values are increasing in j (a rounded product of increasing
        # integers), so two steps each way correct the guess to the exact count.
        for _ in range(2):
            inside = np.clip(guess, 0, self.size - 1)
            at = self._values(inside)
            above = (at > x) if side == "right" else (at >= x)
            guess = np.where((guess >= 0) & (guess < self.size) & above, guess - 1, guess)
        count = guess + 1  # entries at or below (right) or below (left) x, so far
        for _ in range(3):
            nxt = np.clip(count, 0, self.size - 1)
            at = self._values(nxt)
            below = (at <= x) if side == "right" else (at < x)
            count = np.where((count < self.size) & below, count + 1, count)
        count = np.clip(count, 0, self.size)
        return count if count.ndim else int(count)


@dataclass(frozen=True, eq=False)
class Profile:
    """The privacy profile of one discrete distribution, ready for queries.

    ``shift`` is added to every δ (+slack for an upper bound, −slack for a
    lower one); ``safe_side`` is +1 for an upper bound (ε rounded up) and −1
    for a lower bound.
    """

    losses: np.ndarray | Lattice  # λ_i, increasing (a Lattice for grid distributions)
    tail_p: np.ndarray  # S_P at index j: Σ_{i ≥ j} P_i, with a trailing 0
    log_tail_q: np.ndarray  # log S_Q likewise (−inf past the end)
    infinity_mass: float
    shift: float
    safe_side: int
    shift_below: float = 0.0  # added to δ(ε) for ε < cut_loss only
    cut_loss: float = -math.inf
    shift_at_cut: float = 0.0  # added as shift_at_cut·e^{−decay·(ε − cut_loss)} for ε ≥ cut
    decay: float = 0.0  # per nat

    def delta(self, epsilon: np.ndarray) -> np.ndarray:
        """δ(ε) for an array of ε (real, any sign)."""
        epsilon = np.asarray(epsilon, dtype=float)
        j = np.searchsorted(self.losses, epsilon, side="right")
        sp = self.tail_p[j]
        log_tail_q = self.log_tail_q[j]
        with np.errstate(over="ignore", invalid="ignore"):
            # No Q-mass beyond ε contributes 0, also at ε = +∞ (where ∞ − ∞ is NaN).
            second = np.where(log_tail_q == -np.inf, 0.0, np.exp(epsilon + log_tail_q))
        value = np.maximum(sp - second, 0.0) + self.infinity_mass + self.allowance(epsilon)
        return np.clip(value, 0.0, 1.0)

    def allowance(self, epsilon):
        """The certified allowance added to δ(ε) (position-dependent when tilted).

        Non-increasing in ε: ``shift + shift_below`` below ``cut_loss``, then
        ``shift + shift_at_cut·e^{−decay·(ε − cut_loss)}``.
        """
        if self.shift_below == 0.0 and self.shift_at_cut == 0.0:
            # the shape of ``epsilon``, as below: tilted and plain profiles are compared
            return self.shift if np.ndim(epsilon) == 0 else np.full(np.shape(epsilon), self.shift)
        with np.errstate(over="ignore", invalid="ignore"):
            decaying = self.shift_at_cut * np.exp(
                -self.decay * np.maximum(epsilon - self.cut_loss, 0.0)
            )
        decaying = np.where(np.isnan(decaying), self.shift_at_cut, decaying)  # decay 0, ε = ∞
        return self.shift + np.where(epsilon < self.cut_loss, self.shift_below, decaying)

    def epsilon(self, delta: float) -> float:
        """The smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (∞ if none)."""
        if self.shift_below == 0.0 and self.shift_at_cut == 0.0:
            return self._solve(delta - self.shift)
        # Below the cut the allowance is the constant shift + shift_below.
        below = self._solve(delta - self.shift - self.shift_below)
        if below < max(self.cut_loss, 0.0):
            return below
        # Above it the allowance decays: start where ignoring it would stop, step up.
        low = max(self._solve(delta - self.shift), self.cut_loss, 0.0)
        if math.isinf(low):
            return math.inf

        def excess(epsilon: float) -> float:
            return self._scalar_delta(epsilon) - delta

        if excess(low) <= 0.0:
            return low + self.safe_side * _ROUNDING * max(abs(low), 1e-3) if low > 0.0 else low
        step = 1.0 / max(self.decay, 1e-12)
        high = low + step
        for _ in range(200):
            if excess(high) <= 0.0:
                break
            low, high, step = high, high + 2.0 * step, 2.0 * step
        else:  # pragma: no cover - the allowance vanishes long before this
            return math.inf
        root = monotone_root(excess, low, high, side="high", rtol=1e-13)
        # The scalar δ may differ from the vectorised one in its last bits: a margin as _solve's.
        return root + self.safe_side * _ROUNDING * max(abs(root), 1e-3)

    def _atoms_at_or_below(self, epsilon: float) -> int:
        """``np.searchsorted(self.losses, epsilon, side="right")`` for one finite ε."""
        losses = self.losses
        if not isinstance(losses, Lattice) or losses.step != 1:
            return int(np.searchsorted(losses, epsilon, side="right"))
        size, first, spacing = losses.size, losses.first, losses.spacing
        count = min(max(math.floor(epsilon / spacing) - first + 1, 0), size)
        # The lattice's values are (first + j)·h rounded: step to the exact count.
        while count > 0 and (first + count - 1) * spacing > epsilon:
            count -= 1
        while count < size and (first + count) * spacing <= epsilon:
            count += 1
        return count

    def _scalar_delta(self, epsilon: float) -> float:
        """:meth:`delta` at one finite ε, in scalar arithmetic (for root finding)."""
        j = self._atoms_at_or_below(epsilon)
        log_tail_q = float(self.log_tail_q[j])
        second = 0.0
        if log_tail_q != -math.inf:
            exponent = epsilon + log_tail_q
            second = math.exp(exponent) if exponent < 709.0 else math.inf
        value = max(float(self.tail_p[j]) - second, 0.0) + self.infinity_mass
        value += float(self.allowance(epsilon))
        return min(max(value, 0.0), 1.0)

    def _at_atom(self, j: int) -> float:
        """δ at atom λ_j, counting the atoms above it: S_P(j+1) − e^{λ_j} S_Q(j+1), ≥ 0.

        In scalar arithmetic (the binary search of :meth:`_first_at_or_below`
        calls it log₂ n times per query).
        """
        losses = self.losses
        loss = losses.value(j) if isinstance(losses, Lattice) else float(losses[j])
        exponent = loss + float(self.log_tail_q[j + 1])
        second = math.exp(exponent) if exponent < 709.0 else math.inf
        return max(float(self.tail_p[j + 1]) - second, 0.0)

    def _first_at_or_below(self, target: float) -> int:
        """The first atom j with δ(λ_j) ≤ ``target`` (δ at the atoms is non-increasing).

        A binary search evaluating δ at log₂ n atoms, step for step the one
        ``np.searchsorted(-δ_at_atoms, -target)`` makes, without forming δ at
        every atom.
        """
        low, high = 0, self.losses.size
        while low < high:
            middle = (low + high) // 2
            if -self._at_atom(middle) < -target:
                low = middle + 1
            else:
                high = middle
        return low

    def _solve(self, delta: float) -> float:
        """The smallest ε ≥ 0 with S_P(ε) − e^ε S_Q(ε) + P(+∞) ≤ ``delta``."""
        target = delta - self.infinity_mass
        if target <= 0:
            return math.inf
        # δ at the atoms is non-increasing; find the first atom where δ ≤ target.
        j = self._first_at_or_below(target)
        if j >= self.losses.size:  # only possible with no atoms
            return 0.0
        sp, log_sq = float(self.tail_p[j]), float(self.log_tail_q[j])
        if sp <= target or math.isinf(log_sq):
            value = float(self.losses[j - 1]) if j > 0 else -math.inf
        else:
            value = math.log(sp - target) - log_sq
            high = float(self.losses[j])
            low = float(self.losses[j - 1]) if j > 0 else -math.inf
            value = min(max(value, low), high)
        value = max(value, 0.0)
        return value + self.safe_side * _ROUNDING * max(abs(value), 1e-3) if value > 0 else value


# The Q-masses are summed in chunks of at most this span of losses, as P_i·e^{l_top − l_i} ≤ e^700.
_SCALED_SPAN = 700.0
_SMALLEST_NORMAL = float(np.finfo(float).tiny)


def _log_grid_tail_q(p: np.ndarray, losses: np.ndarray, spacing: float) -> tuple[np.ndarray, float]:
    """log Σ_{i ≥ j} P_i e^{−l_i} on a uniform grid, and a bound on its relative error.

    The atoms are taken in chunks whose losses span at most 700 nats, from
    the top (a grid within 700 nats is one chunk). Within a chunk ending at
    atom b − 1 the terms are scaled by e^{l_{b−1}} (P_i·e^{(b−1−i)h} ≤ e^700:
    no overflow, and the top atoms, which decide the smallest false-positive
    rates, are exact) and summed by :func:`gaussdp._numerics.suffix_sums`
    (relative error γ); the exponent (at most u·span), the exponential and
    the product add (span + 4)·u. The chunk's sums join the tail above it in
    log space, log T_j = log(S_j + T_b·e^{l_{b−1}}) − l_{b−1} (or, where T_b·e^{l_{b−1}}
    is below e^{−700}, logaddexp(log S_j − l_{b−1}, log T_b)).

    The rest, as absolute errors in log T (an absolute error a is a relative
    error e^a − 1 in T): each chunk's log and shift, :data:`LOG_ROUNDING` for
    |log T| ≤ 745 and u more per nat of L, the largest |loss|, since
    |log T| ≤ L + 745. A join inherits the error of the tail above (the sum of
    two positive terms, or logaddexp, 1-Lipschitz in the max norm of its
    arguments) and adds its own rounding, at most (L + 755)·u (on the chunk's
    scale: the exponent's, at most 700u, the exponential's and the sum's),
    then the chunk's log and shift. Over C chunks:
    γ + (span + 4)·u + C·(LOG_ROUNDING + L·u) + (C − 1)(L + 755)·u.

    A scaled term below the smallest normal double (a mass of 1e-320, say) is
    left out: its product would be rounded to an absolute, not a relative,
    2⁻¹⁰⁷⁵. The sums are then only *at most* (1 + bound) times the true ones,
    one-sided: what the pessimistic profile, the only caller, needs (smaller
    Q-tails mean larger δ(ε) and lower trade-off curves).
    """
    n = p.size
    u = UNIT_ROUNDOFF
    if n == 0:
        return np.array([-np.inf]), 0.0
    largest_loss = max(abs(float(losses[0])), abs(float(losses[-1])))
    per_chunk = min(n, int(_SCALED_SPAN / spacing) + 1)  # (per_chunk − 1)·h ≤ 700
    log_tail = np.empty(n + 1)
    log_tail[n] = -np.inf
    factors = np.exp((per_chunk - 1 - np.arange(per_chunk)) * spacing)
    sum_error, chunks, stop = 0.0, 0, n
    while stop > 0:
        begin = max(stop - per_chunk, 0)
        size = stop - begin
        scaled = p[begin:stop] * factors[per_chunk - size :]
        scaled[scaled < _SMALLEST_NORMAL] = 0.0  # a subnormal product is rounded too coarsely
        sums, error = suffix_sums(scaled)
        sum_error = max(sum_error, error)
        sums = sums[:size]
        top = float(losses[stop - 1])
        # The tail above, on this chunk's scale: T_b·e^{l_{b−1}} ≤ e^{−h}·Σ P ≤ 1.
        above = float(log_tail[stop]) + top
        if above > -_SCALED_SPAN:  # added on the chunk's scale (no underflow)
            sums += math.exp(above)
        with np.errstate(divide="ignore"):
            chunk_log = np.log(sums) - top
        if above <= -_SCALED_SPAN and chunks > 0:  # joined in log space
            np.logaddexp(chunk_log, log_tail[stop], out=chunk_log)
        log_tail[begin:stop] = chunk_log
        chunks, stop = chunks + 1, begin
    span = (per_chunk - 1) * spacing
    log_error = chunks * (LOG_ROUNDING + largest_loss * u)
    log_error += (span + 4.0 + (chunks - 1) * (largest_loss + 755.0)) * u
    return log_tail, (sum_error + log_error) * (1.0 + 1e-6)


def certify_tail_sums(
    tail_p: np.ndarray,
    error_p: float,
    log_tail_q: np.ndarray,
    error_q: float,
    safe_side: int,
    in_place: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Move computed tail sums to the side their bound needs (``in_place``: in their arrays).

    If every computed S_P and S_Q is within a relative ``error_p`` and
    ``error_q`` of the exact sums, then S_P·(1 + γ_P) ≥ S_P and
    S_Q·(1 − γ_Q) ≤ S_Q, so δ = S_P − e^ε S_Q read off the moved sums
    is an upper bound (``safe_side`` = +1); the opposite moves give a lower
    bound (−1). Two more units of roundoff cover the moves themselves.
    """
    grow_p = safe_side * (error_p + 2.0 * UNIT_ROUNDOFF)
    grow_q = -safe_side * (error_q + 2.0 * UNIT_ROUNDOFF)
    if in_place:
        tail_p *= 1.0 + grow_p
        log_tail_q += math.log1p(grow_q)
        return tail_p, log_tail_q
    with np.errstate(divide="ignore"):
        return tail_p * (1.0 + grow_p), log_tail_q + math.log1p(grow_q)


def from_zero(pld: GridPLD) -> GridPLD:
    """The atoms at losses ≥ −h (h the spacing): all that δ(ε) and ε(δ) read for ε ≥ 0.

    δ(ε) = Σ_{λ_i > ε} (P_i − e^ε Q_i) + P(+∞) + slack involves only atoms
    above ε. Pessimistic: an atom's loss is its grid label, and the atoms
    below −h are folded into the first one kept (moved up, so δ can only
    grow, and the total mass stays). Optimistic: a merged atom's true loss
    is log(P_i/Q_i), which after T compositions can lie up to T·h/2 from its
    label (binning a spike narrower than h shifts every label the same way:
    on σ = 0.5, q = 1e-6, T = 10⁶ at h = 1e-6 by −0.065 nats), so the atoms
    dropped are those whose *true* loss is below −h (a lower bound only loses
    what no δ(ε ≥ 0) reads). Skipping them makes a profile cheaper by their
    share (about 40% on CIFAR-10 and ImageNet runs); the trade-off curve,
    which needs every atom, is read from the whole distribution.

    Examples
    --------
    >>> from gaussdp.pld import GaussianLoss, discretise, profile_of
    >>> pld = discretise(GaussianLoss(1.0), 1e-3, "pessimistic", 1e-30)
    >>> cut = from_zero(pld)
    >>> cut.p_masses.size < pld.p_masses.size, cut.offset
    (True, -1)
    >>> whole, part = profile_of(pld).epsilon(1e-5), profile_of(cut).epsilon(1e-5)
    >>> bool(abs(part / whole - 1) < 1e-12)  # the same atoms above 0; rounding bounds differ
    True
    """
    if not pld.is_pessimistic:
        return _true_losses_from_zero(pld)
    first = max(-1 - pld.offset, 0)
    if first == 0:
        return pld
    first = min(first, pld.p_masses.size - 1)
    kept = pld.p_masses[first:].copy()
    kept[0] += float(pld.p_masses[:first].sum())
    return replace(pld, offset=pld.offset + first, p_masses=kept)


def _true_losses_from_zero(pld: GridPLD) -> GridPLD:
    """An optimistic distribution without the atoms whose true loss log(P/Q) is below −h.

    Their masses are set to 0 (:func:`profile_of` skips such atoms), and the
    leading ones cut off. Atoms Q cannot produce (R = 0: infinite loss) stay.
    """
    p, tilted = pld.p_masses, pld.tilted_q_masses
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # log(P/Q) = log P − log R + l, with R = Q·e^l; below −h ⟺ P < R·e^{−h − l}
        # (e^{−h − l} = ∞ at l below −709: such atoms are below −h)
        below = p < tilted * np.exp(-pld.spacing - pld.losses)
    kept = np.flatnonzero(~below & (p > 0))
    if kept.size == 0 or not np.any(below):
        return pld
    first = int(kept[0])
    p = np.where(below, 0.0, p)[first:]
    tilted = np.where(below, 0.0, tilted)[first:]
    return replace(pld, offset=pld.offset + first, p_masses=p, tilted_q_masses=tilted)


#: An optimistic atom counts when its masses exceed this many times the rounding noise.
_NOISE_FACTOR = 4.0


def profile_of(pld: GridPLD) -> Profile:
    """The privacy profile of a grid distribution, as the bound its kind certifies."""
    p = pld.p_masses
    if pld.is_pessimistic:
        positive = p > 0
        if positive.any():  # the first and last positive masses
            first, last = int(np.argmax(positive)), p.size - int(np.argmax(positive[::-1]))
        else:
            first, last = 0, 0
        p = p[first:last]
        losses = Lattice(pld.offset + first, pld.spacing, p.size)
        tail_p, error_p = suffix_sums(p)
        log_tail_q, error_q = _log_grid_tail_q(p, losses, pld.spacing)
        tail_p, log_tail_q = certify_tail_sums(
            tail_p, error_p, log_tail_q, error_q, safe_side=1, in_place=True
        )
        if pld.cut_index is None:
            return Profile(losses, tail_p, log_tail_q, pld.infinity_mass, pld.slack, 1)
        return Profile(
            losses,
            tail_p,
            log_tail_q,
            pld.infinity_mass,
            pld.slack,
            1,
            pld.slack_below,
            pld.cut_index * pld.spacing,
            pld.slack_at_cut,
            pld.decay / pld.spacing,
        )
    # Atoms whose masses are not clearly above the rounding noise are left out (a lower
    # bound may leave out any atoms): their true loss log(P/Q) is unknown, and the noise
    # clipped at 0 only adds (on σ = 0.5, q = 1e-6, T = 10⁶ the P row summed to
    # 1 + 8e-10, and δ(ε) at 1e-9 read a lower bound above the truth).
    keep = (p > _NOISE_FACTOR * pld.noise_p) & (pld.tilted_q_masses > _NOISE_FACTOR * pld.noise_q)
    keep &= p > 0
    p = p[keep]
    tilted = pld.tilted_q_masses[keep]
    grid = (pld.offset + np.flatnonzero(keep)) * pld.spacing  # pld.losses[keep]
    # An atom with P-mass but no computed Q-mass is left out, not counted at infinite
    # loss: after an FFT its Q-mass may be rounding noise clipped to 0 while the true
    # one is not (a lower bound may leave out any atoms; counting the P-mass of such
    # atoms of a 10⁶-step composition as P(+∞) put the lower bound at δ = 1e-9 above
    # the truth). The mechanism's own infinite loss is pld.infinity_mass.
    impossible = tilted <= 0
    infinity = pld.infinity_mass
    if impossible.any():
        p, tilted, grid = p[~impossible], tilted[~impossible], grid[~impossible]
    # The true likelihood ratio of each merged atom, log(P/Q) = log P − log R + l.
    losses = np.log(p) - np.log(tilted) + grid
    if np.any(losses[1:] < losses[:-1]):  # (a stable sort leaves sorted losses in place)
        order = np.argsort(losses, kind="stable")
        losses, p, tilted, grid = losses[order], p[order], tilted[order], grid[order]
    tail_p, error_p = suffix_sums(p)
    underflow = 0.0
    if grid.size == 0 or float(np.max(np.abs(grid))) <= _PLAIN_Q_LOSSES:
        q = tilted * np.exp(-grid)
        tail_q, error_q = suffix_sums(q)
        with np.errstate(divide="ignore"):
            log_tail_q = np.log(tail_q)
        # Q_k = R_k·e^{−l_k} adds a few roundings (and a relative u·|l_k| from the
        # exponent, ≤ LOG_ROUNDING), the log of the sums LOG_ROUNDING.
        error_q += 2.0 * LOG_ROUNDING
    else:  # e^{−l} would underflow (or overflow): Q's sums are scaled piece by piece
        log_tail_q, error_q, underflow = _log_tail_q_by_loss(tilted, grid, losses)
    tail_p, log_tail_q = certify_tail_sums(
        tail_p, error_p, log_tail_q, error_q, safe_side=-1, in_place=True
    )
    return Profile(
        losses,
        tail_p,
        log_tail_q,
        infinity,
        -(pld.slack + pld.slack_below + pld.slack_at_cut + underflow),
        -1,
    )


#: Losses up to this size (in absolute value) have their Q-masses R·e^{−l} computed as
#: they are (e^{±300} is far from under- and overflow); beyond, scaled by pieces of this
#: many nats of the true losses (:func:`_log_tail_q_by_loss`).
_PLAIN_Q_LOSSES = 300.0


def _log_tail_q_by_loss(
    tilted: np.ndarray, grid: np.ndarray, losses: np.ndarray
) -> tuple[np.ndarray, float, float]:
    """log Σ_{i ≥ j} Q_i (with a trailing −∞), its relative error bound, and an underflow bound.

    For atoms sorted by true loss L_i = log(P_i/Q_i), with Q_i = R_i·e^{−l_i}
    (``tilted`` R, grid labels l). Computed as R_i·e^{−l_i} these underflow
    once l passes ~745 nats (ε of thousands: 497,252 Laplace(b ≈ 10) steps),
    which lost S_Q and put the lower bound on δ(ε) above the truth. Here the
    atoms are cut into pieces of :data:`_PLAIN_Q_LOSSES` nats of true loss;
    within a piece starting at L_c the terms Q_i·e^{L_c} = P_i·e^{−(L_i − L_c)}
    ≤ P_i are computed as exp(log R_i + (L_c − l_i)) and summed
    (:func:`gaussdp._numerics.suffix_sums`), and the pieces are joined by
    log-sum-exp from the top.

    Relative error: the sums' γ; each term's exponent, rounded within
    u·(|log R| + |L_c − l| + 3); for each log, its value's own rounding
    u·(|value| + 4), once per piece joined, and LOG_ROUNDING. A term below
    the smallest double is lost: at most 2^−1074 of scaled mass each, so on
    δ(ε) = S_P − e^ε S_Q (ε below the first loss read, within a piece of it)
    at most n·2^−1074·e^{piece}, returned to be taken off the lower bound.
    """
    u = UNIT_ROUNDOFF
    n = losses.size
    log_tilted = np.log(tilted)
    piece = np.floor((losses - losses[0]) / _PLAIN_Q_LOSSES)
    starts = np.concatenate(([0], np.flatnonzero(np.diff(piece)) + 1))
    ends = np.concatenate((starts[1:], [n]))
    log_tail_q = np.empty(n + 1)
    log_tail_q[n] = -np.inf
    after = -np.inf  # log of the Q-mass of the pieces above
    exponent_error = 0.0
    sum_error = 0.0
    for start, end in zip(starts[::-1].tolist(), ends[::-1].tolist(), strict=True):
        reference = float(losses[start])
        shift = reference - grid[start:end]
        terms = np.exp(log_tilted[start:end] + shift)
        exponent_error = max(
            exponent_error,
            float(np.max(np.abs(log_tilted[start:end]) + np.abs(shift))),
        )
        sums, error = suffix_sums(terms)
        sum_error = max(sum_error, error)
        with np.errstate(divide="ignore"):
            local = np.log(sums[:-1]) - reference
        log_tail_q[start:end] = np.logaddexp(local, after)
        after = float(log_tail_q[start])
    finite = log_tail_q[np.isfinite(log_tail_q)]
    largest = float(np.max(np.abs(finite))) if finite.size else 0.0
    pieces = starts.size
    error = (
        sum_error + (exponent_error + 3.0) * u + pieces * (largest + 8.0) * u + LOG_ROUNDING
    ) * (1.0 + 1e-6)
    underflow = n * math.ldexp(1.0, -1074) * math.exp(_PLAIN_Q_LOSSES)
    return log_tail_q, error, underflow
