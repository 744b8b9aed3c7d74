"""Reading a description: the leaves the accountant composes, with their counts.

A description (:mod:`gaussdp.mechanisms`) is a tree; what is composed is its
leaves. :func:`leaves` walks the tree — descriptions that are exactly another
one expanded (:meth:`Mechanism.expand`: DP-SGD, the matrix mechanism), compositions opened,
repetitions counted, groups pushed inwards (:func:`gaussdp.pld.guarantees.expand_group`)
— k-out-of-t allocation split into the parts that bound it
(:func:`gaussdp.pld.allocation_parts.allocation_parts`) — rewrites the leaves exactly
(:func:`gaussdp.pld.guarantees.simplify_leaves`:
GDP as a Gaussian, Rényi guarantees added) and drops those that reveal nothing
(:func:`gaussdp.pld.dominating_pairs.is_identity`). The accountant composes
what it returns, and the report reads the same leaves (a composition of pure-DP
pieces, one Laplace mechanism) to know the cases it reports exactly.
"""

from __future__ import annotations

from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError
from gaussdp.pld.allocation_parts import allocation_parts
from gaussdp.pld.dominating_pairs import is_identity
from gaussdp.pld.guarantees import expand_group, simplify_leaves

__all__ = ["leaves"]


def _walk(mechanism: m.Mechanism, times: int, out: dict[m.Mechanism, int]) -> None:
    expanded = mechanism.expand() if isinstance(mechanism, m.Mechanism) else None
    if expanded is not None:  # DP-SGD, a matrix mechanism: exactly another description
        _walk(expanded, times, out)
    elif isinstance(mechanism, m.Composition):
        for part in mechanism.mechanisms:
            _walk(part, times, out)
    elif isinstance(mechanism, m.Repeated):
        _walk(mechanism.mechanism, times * mechanism.times, out)
    elif isinstance(mechanism, m.Group) and not isinstance(expand_group(mechanism), m.Group):
        _walk(expand_group(mechanism), times, out)
    elif (
        isinstance(mechanism, m.RandomAllocation)
        and 1 < mechanism.selected < mechanism.steps
        and not is_identity(mechanism, m.Neighbouring.ADD_REMOVE)
    ):  # k out of t: bounded above and below by different parts (allocation_parts)
        for part, count in allocation_parts(mechanism):
            out[part] = out.get(part, 0) + times * count
    elif isinstance(mechanism, m.Mechanism):
        out[mechanism] = out.get(mechanism, 0) + times
    else:
        raise InvalidParameterError(
            f"mechanism must be a gaussdp mechanism description, got {type(mechanism).__name__}"
        )


def leaves(mechanism: m.Mechanism, neighbouring: m.Neighbouring) -> dict[m.Mechanism, int]:
    """The leaves of a description and how many times each is composed.

    Parameters
    ----------
    mechanism : Mechanism
    neighbouring : Neighbouring

    Returns
    -------
    dict
        Leaf description → count, in the order first met; leaves that reveal
        nothing are left out (an empty dict: perfect privacy).

    Raises
    ------
    InvalidParameterError
        If ``mechanism`` is not a mechanism description.

    Examples
    --------
    >>> from gaussdp.mechanisms import DPSGD, Composition, Neighbouring, PureDP, Repeated
    >>> leaves(Composition([Repeated(PureDP(0.5), 3), PureDP(0.0)]), Neighbouring.ADD_REMOVE)
    {PureDP(epsilon=0.5): 3}
    >>> for leaf, count in leaves(DPSGD(1.0, 0.01, 10), Neighbouring.ADD_REMOVE).items():
    ...     print(leaf, count)
    PoissonSubsampled(q=0.01, Gaussian(σ=1)) 10
    """
    counts: dict[m.Mechanism, int] = {}
    _walk(mechanism, 1, counts)
    counts = simplify_leaves(counts, neighbouring)
    return {leaf: n for leaf, n in counts.items() if not is_identity(leaf, neighbouring)}
