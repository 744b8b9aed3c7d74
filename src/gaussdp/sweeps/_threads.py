"""One core per worker: single-threaded BLAS, where it can be set (FFTs are numpy's: one thread).

numpy and scipy bundle OpenBLAS, which runs some vector operations (``np.dot`` of
long vectors) on every core: a sweep "on one worker" then uses them all and is slower
for it (measured: 9.8 s on 2 cores against 6.3 s on one for the 48-point grid of
``benchmarks/sweep_workers.py``). Its thread count is fixed when the library loads
(``OPENBLAS_NUM_THREADS``), so it is set here through OpenBLAS's own
``openblas_set_num_threads`` (the way threadpoolctl does it, without depending on it)
for every OpenBLAS loaded in the process, found in ``/proc/self/maps``; elsewhere
(no such file, another BLAS) nothing is changed.
"""

from __future__ import annotations

import contextlib
import ctypes

__all__ = ["single_threaded"]

_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


def _openblas_controls() -> list[tuple]:
    """(get, set) thread-count functions of every OpenBLAS loaded in this process."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {
                line.split()[-1]
                for line in maps
                if "openblas" in line.lower() and line.split()[-1].startswith("/")
            }
    except OSError:
        return []
    controls = []
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _SYMBOLS:
            try:
                getter, setter = getattr(library, get_name), getattr(library, set_name)
            except AttributeError:
                continue
            getter.restype = ctypes.c_int
            setter.argtypes = [ctypes.c_int]
            controls.append((getter, setter))
            break
    return controls


def limit_threads() -> list[tuple]:
    """Set BLAS to one thread (for good: worker processes); return what to restore."""
    saved: list[tuple] = []
    for getter, setter in _openblas_controls():
        with contextlib.suppress(Exception):
            saved.append((setter, int(getter())))
            setter(1)
    return saved


def restore_threads(saved: list[tuple]) -> None:
    for target, value in saved:
        with contextlib.suppress(Exception):
            target(value)


@contextlib.contextmanager
def single_threaded():
    """BLAS on one thread inside the block; the previous settings afterwards."""
    saved = limit_threads()
    try:
        yield
    finally:
        restore_threads(saved)
