"""A results file is written by one sweep at a time, and a sweep that has ended blocks nothing.

The kill -9 of a whole sweep (main process and workers) is in test_sweep_cli.py; here the
lock itself, against other processes that hold it, and the workers' lifeline.
"""

import os
import signal
import subprocess
import sys

import pytest

from gaussdp import InvalidParameterError, sweep
from gaussdp.sweeps._lock import StaleLockWarning, lock_holders

fcntl = pytest.importorskip("fcntl")

GRID = """
[sweep]
deltas = [1e-5]
[[mechanism]]
type = "gaussian"
sigma = [1.0, 2.0, 4.0]
"""

# A live sweep in another process: holds the results file open (and locked) until its
# standard input is closed.
_LIVE_SWEEP = """
import sys
from gaussdp.sweeps.grid import read_grid
from gaussdp.sweeps.output import ResultsFile
results = ResultsFile(sys.argv[1], "csv", read_grid(sys.argv[2]), restart=False)
print("locked", flush=True)
sys.stdin.read()
results.close(complete=False)
"""

# An earlier version's sweep killed with kill -9: it took flock on the results file and
# forked a worker, which inherited the open file (and so the lock) and outlived it.
_LEFTOVER_WORKER = """
import fcntl, os, sys, time
descriptor = os.open(sys.argv[1], os.O_RDWR | os.O_APPEND)
fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
if os.fork() == 0:
    print(os.getpid(), flush=True)
    time.sleep(600)
os._exit(0)
"""


def test_a_live_sweep_is_named_and_its_file_left_untouched(tmp_path):
    output = tmp_path / "results.csv"
    sweep(GRID, output=output, workers=1)
    live = subprocess.Popen(
        [sys.executable, "-c", _LIVE_SWEEP, str(output), GRID],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert live.stdout.readline() == "locked\n"
        with output.open("a") as handle:  # the live sweep is writing a line: a run that
            handle.write("3,8.0,1e-05,0.1")  # resumed now would cut it as torn
        before = output.read_bytes(), (tmp_path / "results.csv.sweep.json").read_bytes()
        with pytest.raises(InvalidParameterError, match="being written by another sweep") as info:
            sweep(GRID, output=output, workers=1, restart=True)
        if os.path.exists("/proc/locks"):
            assert f"(process {live.pid}); wait for it to finish" in str(info.value)
        # Refused before reading: nothing truncated, removed or rewritten.
        assert (output.read_bytes(), (tmp_path / "results.csv.sweep.json").read_bytes()) == before
    finally:
        live.communicate(timeout=60)
    assert live.returncode == 0
    rows = sweep(GRID, output=output, workers=1)  # the live sweep ended: the file is free
    assert [row["point"] for row in rows] == [0, 1, 2]
    assert output.read_text().count("\n") == 4  # and the torn line is gone


def test_a_lock_left_by_a_dead_sweeps_processes_is_taken_over(tmp_path):
    output = tmp_path / "results.csv"
    first = sweep(GRID, output=output, workers=1)
    taker = subprocess.Popen(
        [sys.executable, "-c", _LEFTOVER_WORKER, str(output)], stdout=subprocess.PIPE, text=True
    )
    leftover = int(taker.stdout.readline())
    try:
        assert taker.wait(timeout=60) == 0
        if os.path.exists("/proc/locks"):
            descriptor = os.open(output, os.O_RDONLY)
            try:  # the flock is held, in the name of a process that has ended
                assert lock_holders(descriptor).get("FLOCK") == taker.pid
            finally:
                os.close(descriptor)
        with pytest.warns(StaleLockWarning, match="no longer running.*taking over"):
            assert sweep(GRID, output=output, workers=1) == first
    finally:
        os.kill(leftover, signal.SIGKILL)
        taker.stdout.close()


def test_two_sweeps_in_one_process_are_refused_without_unlocking_the_first(tmp_path):
    from gaussdp.sweeps.grid import read_grid
    from gaussdp.sweeps.output import ResultsFile

    output = tmp_path / "results.csv"
    first = ResultsFile(output, "csv", read_grid(GRID), restart=False)
    try:
        with pytest.raises(InvalidParameterError, match="another sweep in this process"):
            ResultsFile(output, "csv", read_grid(GRID), restart=False)
        # A POSIX lock is dropped when its process closes any descriptor of the file: the
        # refused attempt must not have opened one. Another process still finds it locked.
        probe = subprocess.run(
            [sys.executable, "-c", "import fcntl, os, sys\n"
             "d = os.open(sys.argv[1], os.O_RDWR)\n"
             "try:\n    fcntl.lockf(d, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
             "except OSError:\n    print('locked')", str(output)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert probe.stdout == "locked\n"
    finally:
        first.close(complete=False)


_ORPHAN = """
import os, sys, time
from gaussdp.sweeps import _parent
_parent._death_signal = lambda: None  # the portable fallback alone
main = os.getpid()
worker = os.fork()
if worker == 0:
    _parent.end_with_parent(main, forked_by_main=True)
    time.sleep(600)
    os._exit(0)
print(worker, flush=True)
os._exit(0)  # the main process ends without a word to its worker
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a worker")
def test_without_the_kernels_help_a_worker_still_ends_with_its_parent(tmp_path):
    import time

    main = subprocess.Popen([sys.executable, "-c", _ORPHAN], stdout=subprocess.PIPE, text=True)
    worker = int(main.stdout.readline())
    main.wait(timeout=60)
    from gaussdp.sweeps._parent import process_alive

    deadline = time.monotonic() + 60
    while process_alive(worker) and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert not process_alive(worker)
    finally:
        if process_alive(worker):
            os.kill(worker, signal.SIGKILL)
        main.stdout.close()
