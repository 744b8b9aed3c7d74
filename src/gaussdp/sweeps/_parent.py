"""Worker processes end with the sweep that started them.

A sweep's local workers (``concurrent.futures`` processes) must not outlive its
main process: killed with ``kill -9`` or by the out-of-memory killer, the main
process runs no clean-up, and workers left behind would compute for nobody (and,
forked while the results file was open, keep its lock). Two mechanisms, the first
where it exists:

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the worker the
  moment its parent ends (``man 2 prctl``);
* everywhere, a daemon thread in the worker checks twice a second that its parent
  is still the process it started under and that the sweep's main process still
  exists, and ends the worker otherwise (a parent that dies is replaced by
  ``init`` or a subreaper: ``os.getppid()`` changes).

A parent that died before the worker set these up is caught by the same checks,
run once at start.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["end_with_parent", "process_alive"]

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_INTERVAL = 0.5  # seconds between the fallback's checks


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists (and is not a zombie, where that can be read)."""
    if os.name == "nt":  # os.kill(pid, 0) would send CTRL_C_EVENT there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    with contextlib.suppress(OSError, IndexError):
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            # the state follows the command name, which is in parentheses
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    return True


def _death_signal() -> None:
    """Linux: have the kernel send SIGKILL to this process when its parent ends."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):  # no libc with prctl: the fallback still runs
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def _orphaned(parent: int, main: int) -> bool:
    return os.getppid() != parent or not process_alive(main)


def _watch(parent: int, main: int) -> None:
    while True:
        time.sleep(_INTERVAL)
        if _orphaned(parent, main):
            os._exit(1)


def end_with_parent(main: int, forked_by_main: bool) -> None:
    """Make this worker process end when the sweep's main process ``main`` ends.

    Parameters
    ----------
    main : int
        The process id of the sweep's main process.
    forked_by_main : bool
        Whether ``main`` started this worker itself (the ``fork`` and ``spawn``
        start methods) rather than through a ``forkserver``; then a parent other
        than ``main`` means that ``main`` has already ended.
    """
    parent = os.getppid()
    _death_signal()
    if (forked_by_main and parent != main) or _orphaned(parent, main):
        os._exit(1)  # the sweep ended before this worker started
    threading.Thread(target=_watch, args=(parent, main), name="gaussdp-parent", daemon=True).start()
