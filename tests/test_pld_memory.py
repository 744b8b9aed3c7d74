"""Freed memory reused by the engine's FFTs (gaussdp.pld.memory).

Each case runs in a fresh interpreter: the thresholds are set once per process,
and the test process has composed long rows already.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

_ROWS = textwrap.dedent(
    """
    import json, resource, sys
    import numpy as np
    from gaussdp.pld import composition, memory
    from gaussdp.pld.grid import GridPLD

    length = 1 << 18
    single = GridPLD(1e-4, 0, np.full(4000, 1 / 4000), None, 0.0, "pessimistic")
    rows = lambda: composition._compose_row([(single, 50)], lambda _, p: p.p_masses,
                                           length, 0, length)
    rows()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(8):
        rows()
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 8
    print(json.dumps({"set": memory.reuse_freed_memory(), "faults": faults}))
    """
)


def _run(extra_environment: dict[str, str]) -> dict:
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("MALLOC_") and name != "GLIBC_TUNABLES"
    }
    environment.update(extra_environment)
    done = subprocess.run(
        [sys.executable, "-c", _ROWS],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _glibc() -> bool:
    import ctypes

    try:
        ctypes.CDLL(None).gnu_get_libc_version  # noqa: B018
    except (OSError, AttributeError):
        return False
    return True


@pytest.mark.skipif(not _glibc(), reason="the thresholds are glibc's")
def test_long_rows_reuse_the_pages_the_rows_before_them_freed():
    # A row of 2^18 points allocates ~10 MiB (padded input, transform, inverse,
    # pocketfft's scratch). With glibc's adjusted thresholds (8 MiB of trim after 4 MiB
    # blocks) the heap's top was handed back after every row and faulted in again:
    # ~2,900 pages a row. Kept, the next row reuses them.
    reused = _run({})
    assert reused["set"] is True
    untouched = _run({"MALLOC_ARENA_MAX": "8"})  # the environment tunes malloc: left alone
    assert untouched["set"] is False
    assert reused["faults"] <= max(0.25 * untouched["faults"], 200)


def test_the_setting_is_made_once_and_reported_the_same_after():
    from gaussdp.pld import memory

    first = memory.reuse_freed_memory()
    assert memory.reuse_freed_memory() is first
    assert first is _glibc() or any(name.startswith("MALLOC_") for name in os.environ)
