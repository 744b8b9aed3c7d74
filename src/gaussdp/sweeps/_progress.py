"""A one-line progress bar on stderr: points done, rate, time left (silent off a terminal)."""

from __future__ import annotations

import sys
import time

__all__ = ["SweepProgress"]

_WIDTH = 24


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f} min"


class SweepProgress:
    """Draw ``[#####.....] 12/48 points  3.2 points/s  11 s left`` with carriage returns.

    Only when ``enabled`` and the stream is a terminal; the line is ended when
    the sweep ends. ``already`` points (resumed) count as done but not in the rate.
    """

    def __init__(self, total: int, already: int = 0, enabled: bool = True, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(enabled and isatty is not None and isatty())
        self.total = total
        self.already = already
        self.done = 0
        self._start = time.monotonic()
        self._drawn_at = 0.0
        if self.enabled:
            self._draw()

    def line(self) -> str:
        """The current text of the bar."""
        finished = self.already + self.done
        fraction = finished / self.total if self.total else 1.0
        filled = round(fraction * _WIDTH)
        elapsed = time.monotonic() - self._start
        text = f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {finished}/{self.total} points"
        if self.done and elapsed > 0:
            rate = self.done / elapsed
            left = (self.total - finished) / rate
            text += f"  {rate:.3g} points/s  {_duration(left)} left"
        return text

    def _draw(self) -> None:
        self.stream.write("\r" + self.line().ljust(79))
        self.stream.flush()
        self._drawn_at = time.monotonic()

    def advance(self, points: int = 1) -> None:
        self.done += points
        if self.enabled and (
            time.monotonic() - self._drawn_at > 0.1 or self.already + self.done == self.total
        ):
            self._draw()

    def close(self) -> None:
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
