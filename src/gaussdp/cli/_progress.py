"""A status line on stderr for computations that take more than about a second."""

from __future__ import annotations

import sys
import threading
import time

__all__ = ["Progress"]


class Progress:
    """Context manager: after ``delay`` seconds, show the current step and elapsed time.

    Use the instance as the ``progress`` callback of :func:`gaussdp.account`.
    Only drawn when stderr is a terminal, so logs and pipes stay clean; the
    line is erased when the computation ends.
    """

    def __init__(self, delay: float = 1.0, stream=None) -> None:
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        self.message = "accounting"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False
        self._start = 0.0

    def __call__(self, message: str) -> None:
        self.message = message

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        frames = "|/-\\"
        frame = 0
        while not self._stop.is_set():
            elapsed = time.monotonic() - self._start
            line = f"\r{frames[frame % 4]} {self.message[:90]} ({elapsed:.0f} s)"
            self.stream.write(line.ljust(104))
            self.stream.flush()
            self._drawn = True
            frame += 1
            self._stop.wait(0.2)

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        isatty = getattr(self.stream, "isatty", None)
        if isatty is not None and isatty():
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._drawn:
            self.stream.write("\r" + " " * 104 + "\r")
            self.stream.flush()
