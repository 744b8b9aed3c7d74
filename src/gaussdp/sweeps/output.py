"""Writing sweep results as they finish, and resuming from what is already written.

Formats
-------
``csv``
    A header line, then one line per row; every grid point's rows are written
    with one ``write`` and flushed as soon as the point is finished.
``json``
    JSON Lines: one JSON object per row and line, written and flushed the
    same way (infinite values as the string ``"inf"``).
``parquet``
    Through pyarrow (``pip install 'gaussdp[parquet]'``). Parquet cannot be
    appended to, so rows go to ``RESULTS.parquet.partial.jsonl`` (JSON Lines)
    as they finish, and the Parquet file is written (to a temporary file,
    then renamed) when the last point is done; the partial file is then
    removed.

Resuming
--------
Next to the results, ``RESULTS.sweep.json`` (the results' name plus
``.sweep.json``) records the grid's fingerprint (a SHA-256 of the
canonicalised pipeline, lists and outputs; the ``name`` does not count), its
number of points and the columns. Running the same sweep again with the same
output reads the rows already there and computes only the missing points. A
trailing partial line (a write cut short) is truncated, and so are the rows
of a point whose rows are not all there; a point's rows are always written
together, so this drops at most the point being written. A record with
another fingerprint (the grid file changed), or results without a record,
are refused unless the caller restarts (``--restart``), which removes them.
Rows whose ``error`` is set count as done; delete them (or restart) to
compute them again.

One sweep writes a file at a time: the file is locked (:mod:`gaussdp.sweeps._lock`)
before it is read, truncated or removed, and the lock ends with the sweep's main
process, however that ends.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
from collections.abc import Iterable
from typing import Any

from gaussdp._validation import InvalidParameterError
from gaussdp.sweeps._lock import ResultsLock
from gaussdp.sweeps.grid import SweepGrid

__all__ = ["FORMATS", "ResultsFile", "StreamWriter", "format_for"]

FORMATS = ("csv", "json", "parquet")
_SUFFIXES = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_RECORD_VERSION = 1


class ResultsMismatchError(InvalidParameterError):
    """The output file holds results that are not this grid's (or not a sweep's)."""


def format_for(path: str | os.PathLike[str] | None, output_format: str | None) -> str:
    """The output format: ``output_format`` if given, else from the file's suffix, else csv.

    Examples
    --------
    >>> format_for("results.parquet", None), format_for("results.txt", None)
    ('parquet', 'csv')
    """
    if output_format is not None:
        chosen = str(output_format).lower()
        if chosen not in FORMATS:
            raise InvalidParameterError(
                f"format must be one of {', '.join(FORMATS)}, got {output_format!r}"
            )
        return chosen
    if path is None:
        return "csv"
    return _SUFFIXES.get(os.path.splitext(os.fspath(path))[1].lower(), "csv")


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise InvalidParameterError(
            "format 'parquet' needs pyarrow (pip install 'gaussdp[parquet]')"
        ) from None
    return pyarrow


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def csv_lines(rows: Iterable[dict], columns: list[str]) -> str:
    """CSV text of rows (one line each, ``\\n`` line ends)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        writer.writerow([_csv_text(row.get(column)) for column in columns])
    return buffer.getvalue()


def json_lines(rows: Iterable[dict], columns: list[str]) -> str:
    """JSON Lines text of rows, keys in column order."""
    return "".join(
        json.dumps({c: _json_value(row.get(c)) for c in columns}, allow_nan=False) + "\n"
        for row in rows
    )


def _typed(raw: dict[str, Any], grid: SweepGrid) -> dict[str, Any]:
    """A row read back from a file, with the types :func:`gaussdp.sweep` returns."""
    point = int(raw["point"])
    row: dict[str, Any] = {"point": point, **grid.parameters(point)}
    for column in grid.outputs.columns():
        value = raw.get(column)
        if value in ("", None):
            row[column] = None
        elif column == "error":
            row[column] = str(value)
        elif column == "tier":
            row[column] = int(value)
        else:
            row[column] = float(value)
    return row


def _read_lines(
    data: bytes, path: str, kind: str, grid: SweepGrid
) -> tuple[dict[int, list[dict]], int]:
    """Complete points in the content of a CSV or JSON Lines file, and the byte length to keep."""
    columns = grid.columns
    position = 0
    lines: list[tuple[int, bytes]] = []  # (start offset, line without its newline)
    while position < len(data):
        end = data.find(b"\n", position)
        if end < 0:
            break  # a partial last line: dropped
        lines.append((position, data[position:end]))
        position = end + 1
    keep = position
    if kind == "csv":
        if not lines:
            return {}, 0
        header = next(csv.reader([lines[0][1].decode("utf-8")]))
        if header != columns:
            raise ResultsMismatchError(
                f"{path}: its columns ({', '.join(header)}) are not this grid's "
                f"({', '.join(columns)}); use --restart to overwrite it, or another --output"
            )
        lines = lines[1:]
    expected = grid.outputs.rows_per_point
    parsed: list[tuple[int, int, dict]] = []
    for offset, line in lines:
        try:
            text = line.decode("utf-8")
            if kind == "csv":
                raw = dict(zip(columns, next(csv.reader([text])), strict=True))
            else:
                raw = json.loads(text)
            row = _typed(raw, grid)
        except (ValueError, KeyError, TypeError, StopIteration):
            raise ResultsMismatchError(
                f"{path}: cannot read the line at byte {offset} as this grid's results; "
                "use --restart to overwrite it, or another --output"
            ) from None
        if not 0 <= row["point"] < grid.size:
            raise ResultsMismatchError(
                f"{path}: point {row['point']} is not in this grid of {grid.size} points; "
                "use --restart to overwrite it, or another --output"
            )
        parsed.append((offset, row["point"], row))
    counts: dict[int, int] = {}
    for _, point, _ in parsed:
        counts[point] = counts.get(point, 0) + 1
    done: dict[int, list[dict]] = {}
    for offset, point, row in parsed:
        if counts[point] < expected:  # a point cut short: drop it and what follows
            keep = offset
            break
        done.setdefault(point, []).append(row)
    return {p: rows[:expected] for p, rows in done.items()}, keep


class StreamWriter:
    """Rows to an open text stream (stdout), CSV or JSON Lines; no resuming."""

    def __init__(self, stream, output_format: str, columns: list[str]) -> None:
        if output_format == "parquet":
            raise InvalidParameterError("format 'parquet' needs an output file (--output)")
        self.stream = stream
        self.format = output_format
        self.columns = columns
        self.done: dict[int, list[dict]] = {}
        if output_format == "csv":
            stream.write(csv_lines([dict(zip(columns, columns, strict=True))], columns))
            stream.flush()

    def write(self, rows: list[dict]) -> None:
        lines = csv_lines if self.format == "csv" else json_lines
        self.stream.write(lines(rows, self.columns))
        self.stream.flush()

    def close(self, complete: bool) -> None:
        self.stream.flush()


class ResultsFile:
    """The results of one grid in a file: what is there already, and appending the rest.

    Parameters
    ----------
    path : str or path
        The results file.
    output_format : {"csv", "json", "parquet"}
    grid : SweepGrid
    restart : bool
        Remove earlier results (and their record) instead of resuming.

    Attributes
    ----------
    done : dict of int to list of dict
        The rows already present, by grid point.
    """

    def __init__(
        self, path: str | os.PathLike[str], output_format: str, grid: SweepGrid, restart: bool
    ) -> None:
        self.path = os.fspath(path)
        self.format = output_format
        self.grid = grid
        self.columns = grid.columns
        self.record_path = self.path + ".sweep.json"
        if output_format == "parquet":
            _pyarrow()
            self.lines_path = self.path + ".partial.jsonl"
        else:
            self.lines_path = self.path
        self.kind = "csv" if output_format == "csv" else "json"
        if os.path.isdir(self.path):
            raise InvalidParameterError(f"output {self.path} is a directory, not a file")
        # Locked before anything is read, truncated or removed: a live sweep's file is
        # left alone (see gaussdp.sweeps._lock).
        self._lock = ResultsLock(self.lines_path)
        try:
            if restart:
                self._lock.truncate(0)
                for name in {self.path, self.record_path} - {self.lines_path}:
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(name)
            self.done = self._existing()
            self._write_record()
            self._handle = open(
                self._lock.descriptor, "a", encoding="utf-8", newline="", closefd=False
            )
        except BaseException:
            created = self._lock.created
            self._lock.release()
            if created:  # leave no empty file behind a refused sweep
                with contextlib.suppress(OSError):
                    if os.path.getsize(self.lines_path) == 0:
                        os.remove(self.lines_path)
            raise
        if self._handle.tell() == 0 and self.kind == "csv":
            self._append(
                csv_lines([dict(zip(self.columns, self.columns, strict=True))], self.columns)
            )

    def _existing(self) -> dict[int, list[dict]]:
        data_exists = any(
            os.path.exists(name) and os.path.getsize(name) > 0
            for name in (self.path, self.lines_path)
        )
        if not os.path.exists(self.record_path):
            if data_exists:
                raise ResultsMismatchError(
                    f"{self.path} exists and has no sweep record ({self.record_path}), so it "
                    "cannot be resumed; use --restart to overwrite it, or another --output"
                )
            return {}
        try:
            with open(self.record_path, encoding="utf-8") as handle:
                record = json.load(handle)
            fingerprint = record["fingerprint"]
            recorded_format = record["format"]
        except (OSError, ValueError, KeyError, TypeError):
            raise ResultsMismatchError(
                f"{self.record_path} is not a readable sweep record; use --restart to "
                "overwrite the results, or another --output"
            ) from None
        if fingerprint != self.grid.fingerprint:
            raise ResultsMismatchError(
                f"{self.path} holds the results of a different grid (the grid or its "
                f"[sweep] outputs changed since: fingerprint {fingerprint[:12]} recorded, "
                f"{self.grid.fingerprint[:12]} now); use --restart to start over, or another "
                "--output"
            )
        if recorded_format != self.format:
            raise ResultsMismatchError(
                f"{self.path} was written as {recorded_format}, not {self.format}; use "
                "--restart to overwrite it, or another --output"
            )
        done: dict[int, list[dict]] = {}
        if self.format == "parquet" and os.path.exists(self.path):
            table = _pyarrow().parquet.read_table(self.path)
            for raw in table.to_pylist():
                row = _typed(raw, self.grid)
                done.setdefault(row["point"], []).append(row)
            # Seed the partial file with them: the final file is rewritten from it.
            self._lock.replace_content(json_lines(_in_order(done), self.columns).encode("utf-8"))
            return done
        data = self._lock.read()
        done, keep = _read_lines(data, self.lines_path, self.kind, self.grid)
        if keep < len(data):
            self._lock.truncate(keep)
        return done

    def _write_record(self) -> None:
        record = {
            "gaussdp_sweep": _RECORD_VERSION,
            "fingerprint": self.grid.fingerprint,
            "grid": self.grid.source,
            "name": self.grid.name,
            "points": self.grid.size,
            "format": self.format,
            "columns": self.columns,
        }
        temporary = self.record_path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=2)
            handle.write("\n")
        os.replace(temporary, self.record_path)

    def _append(self, text: str) -> None:
        self._handle.write(text)
        self._handle.flush()

    def write(self, rows: list[dict]) -> None:
        """Append one point's rows as whole lines, in one write, and flush."""
        lines = csv_lines if self.kind == "csv" else json_lines
        self._append(lines(rows, self.columns))

    def close(self, complete: bool) -> None:
        """Close the file; for Parquet, write the final file once every point is done."""
        try:
            self._handle.close()
            if self.format == "parquet" and complete:
                pyarrow = _pyarrow()
                done, _ = _read_lines(self._lock.read(), self.lines_path, "json", self.grid)
                table = pyarrow.Table.from_pylist(list(_in_order(done)))
                temporary = self.path + ".tmp"
                pyarrow.parquet.write_table(table, temporary)
                os.replace(temporary, self.path)
                os.remove(self.lines_path)
        finally:
            # Unlocked also for worker processes forked while the file was open (they
            # share its flock) and still winding down: the next run is not refused.
            self._lock.release()


def _in_order(done: dict[int, list[dict]]):
    for point in sorted(done):
        yield from done[point]
