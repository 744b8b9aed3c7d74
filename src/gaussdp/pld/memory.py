"""Freed memory reused by the next FFT instead of faulted in anew (glibc's malloc only).

Every row of a composition allocates arrays as long as its FFT: the zero-padded
input, the transform, the inverse, and pocketfft's own scratch, a few MiB each on
runs of the size of ImageNet's (2.5·10⁵ points). glibc's malloc serves such
requests from the top of its heap, and hands that top back to the system as soon
as more than its trim threshold lies free there (its default adjustment raises
the threshold to twice the largest block it has unmapped, 8 MiB after blocks of
4 MiB); the next row's arrays are then fresh pages, which the kernel faults in
and zeroes one at a time. Measured on the 2-core virtual machines the
benchmarks run on: about 1.3 µs a page, 20,000 pages for one μ-GDP report of
the ImageNet run, and a third of the time of each FFT of 2.5·10⁵ points (a
transform and its inverse: 11.5 ms with the pages faulted in, 7.6 ms without).

:func:`reuse_freed_memory` sets glibc's mmap threshold to 32 MiB and its trim
threshold to 64 MiB (``mallopt``), once per process, the first time the engine
composes a long row: the state glibc's own adjustment reaches by itself after
it has unmapped a block of 32 MiB, as the rows of a long run are, and the
largest threshold that adjustment ever sets. Blocks up to 32 MiB then come from
the heap, and up to 64 MiB of freed heap is kept for the next ones. The peak
memory (what is live at once) does not change; a process may hold up to 64 MiB
more of freed memory between computations. Like any ``mallopt`` call, it stops
glibc's own adjustment of these two thresholds for the rest of the process.

Nothing is done where the C library is not glibc, or where the environment
tunes glibc's malloc itself (any ``MALLOC_*`` variable, or a ``glibc.malloc``
tunable in ``GLIBC_TUNABLES``): those settings are the user's (to keep glibc's
defaults, set e.g. ``MALLOC_TRIM_THRESHOLD_=131072``).
"""

from __future__ import annotations

import ctypes
import os
import threading

__all__ = ["MMAP_THRESHOLD", "REUSE_FROM_POINTS", "TRIM_THRESHOLD", "reuse_freed_memory"]

#: Blocks up to this size come from the heap (glibc's largest dynamic threshold).
MMAP_THRESHOLD = 32 * 1024 * 1024
#: Freed heap kept at its top, for the next blocks (twice the mmap threshold, as glibc's).
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD
#: Rows of this many points or more make the setting (shorter ones fault in little).
REUSE_FROM_POINTS = 1 << 15

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

_lock = threading.Lock()
_outcome: bool | None = None  # None: not tried yet


def _glibc_mallopt():
    """glibc's ``mallopt``, or None (another C library, or a malloc the environment tunes)."""
    if any(name.startswith("MALLOC_") for name in os.environ):
        return None
    if "glibc.malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc only)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt


def reuse_freed_memory() -> bool:
    """Let glibc keep freed blocks for reuse (see the module's text); once per process.

    Returns whether the thresholds are set: False where the C library is not
    glibc or the environment tunes its malloc (then nothing is done, ever).
    """
    global _outcome
    if _outcome is None:
        with _lock:
            if _outcome is None:
                mallopt = _glibc_mallopt()
                _outcome = mallopt is not None and bool(
                    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                    & mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
                )
    return _outcome
