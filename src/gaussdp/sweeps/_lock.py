"""One sweep writes a results file at a time; a sweep that is gone never blocks the next.

The lock is taken on the results file itself (the file rows are appended to), through
one open file descriptor that the sweep reads, truncates and appends through, by two
kernel locks, both released by the kernel when the process ends, however it ends:

* a POSIX record lock (``fcntl(F_SETLK)``, Python's ``fcntl.lockf``) is the
  authority. It belongs to the process that took it — worker processes forked later do
  not inherit it — so it never outlives the sweep's main process. A second sweep that
  finds it taken is refused with the process id of the live sweep (read from
  ``/proc/locks`` on Linux).
* ``fcntl.flock`` on the open file, which earlier versions took alone. It refuses a
  second sweep in the same process too, and a sweep of an earlier version. Forked
  workers share it; if it is still held while the POSIX lock is free, the sweep that
  took it has ended and processes it left behind hold it (earlier versions' workers
  outlived a main process killed with ``kill -9``): unless ``/proc/locks`` names a
  process that is still running, the new sweep takes over and says so
  (:class:`StaleLockWarning`).

A POSIX record lock is released when its process closes *any* descriptor of the file;
so while a sweep runs, this process opens the file through this descriptor only, and a
second sweep of the same file in this process is refused before it opens the file.
Without :mod:`fcntl` (not POSIX) the file is opened without a lock.
"""

from __future__ import annotations

import contextlib
import errno
import os
import warnings

from gaussdp._validation import InvalidParameterError
from gaussdp.sweeps._parent import process_alive

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["ResultsLock", "StaleLockWarning"]

_TAKEN = {errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK}  # what a lock held elsewhere raises
_HELD: set[tuple[int, int]] = set()  # (device, inode) of the files locked by this process


class StaleLockWarning(RuntimeWarning):
    """The results file was locked by a sweep that is no longer running; the new one takes over."""


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


def lock_holders(descriptor: int) -> dict[str, int]:
    """The process ids holding locks on an open file, by kind (``POSIX``, ``FLOCK``).

    Read from ``/proc/locks`` (Linux; elsewhere, or when unreadable: ``{}``). For
    ``flock`` the id is that of the process that took the lock, which may have ended.
    """
    status = os.fstat(descriptor)
    wanted = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    holders: dict[str, int] = {}
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            for line in locks:
                fields = line.split()
                # "1: FLOCK  ADVISORY  WRITE 8238 fe:00:2147744 0 EOF"; waiters have "->"
                if len(fields) < 6 or fields[1] == "->" or fields[5] != wanted:
                    continue
                with contextlib.suppress(ValueError):
                    holders.setdefault(fields[1], int(fields[4]))
    except OSError:
        return {}
    return holders


def _busy(path: str, pid: int | None) -> InvalidParameterError:
    if pid == os.getpid():
        who = " in this process"
    elif pid is not None and pid > 0:
        who = f" (process {pid})"
    else:
        who = ""
    return InvalidParameterError(
        f"{path} is being written by another sweep{who}; wait for it to finish"
    )


class ResultsLock:
    """An open descriptor of a results file, locked for this sweep (see the module's notes).

    Parameters
    ----------
    path : str
        The file (created if missing), opened for reading and appending.

    Raises
    ------
    InvalidParameterError
        When a live sweep writes the file (its process id named where it can be read).
    OSError
        When the file cannot be opened.

    Attributes
    ----------
    descriptor : int
        The open file descriptor; closed by :meth:`release`.
    created : bool
        Whether the file did not exist before.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        with contextlib.suppress(OSError):
            if _identity(os.stat(path)) in _HELD:
                raise _busy(path, os.getpid())
        self.created = not os.path.exists(path)
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0)
        self.descriptor: int | None = os.open(path, flags, 0o666)
        self._identity = _identity(os.fstat(self.descriptor))
        try:
            self._acquire()
        except BaseException:
            os.close(self.descriptor)
            self.descriptor = None
            raise
        _HELD.add(self._identity)

    def _acquire(self) -> None:
        if fcntl is None:  # pragma: no cover - not on POSIX
            return
        try:
            fcntl.lockf(self.descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in _TAKEN:  # no such locks on this file system: go on
                return
            raise _busy(self.path, lock_holders(self.descriptor).get("POSIX")) from None
        try:
            fcntl.flock(self.descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in _TAKEN:
                return
            taker = lock_holders(self.descriptor).get("FLOCK")
            if taker is not None and taker > 0 and process_alive(taker):
                raise _busy(self.path, taker) from None  # a live sweep of an earlier version
            ended = f" (process {taker})" if taker is not None and taker > 0 else ""
            warnings.warn(
                f"{self.path} was locked by a sweep that is no longer running{ended} and is "
                "still held by processes it left behind; taking over",
                StaleLockWarning,
                stacklevel=5,  # the caller of gaussdp.sweep
            )

    def release(self) -> None:
        """Unlock (for forked workers still winding down too) and close the descriptor."""
        if self.descriptor is None:
            return
        if fcntl is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self.descriptor, fcntl.LOCK_UN)
        _HELD.discard(self._identity)
        os.close(self.descriptor)  # releases the POSIX record lock
        self.descriptor = None

    def read(self) -> bytes:
        """The file's whole content, read through the locked descriptor."""
        os.lseek(self.descriptor, 0, os.SEEK_SET)  # appends go to the end whatever the offset
        chunks = []
        while chunk := os.read(self.descriptor, 1 << 24):
            chunks.append(chunk)
        return b"".join(chunks)

    def replace_content(self, data: bytes) -> None:
        """Truncate to ``data`` (appended through the descriptor: the lock stays)."""
        os.ftruncate(self.descriptor, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(self.descriptor, view) :]

    def truncate(self, length: int) -> None:
        os.ftruncate(self.descriptor, length)
