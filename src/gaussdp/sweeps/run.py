"""Running a sweep: tasks, the pure function that computes them, and where it runs.

A *task* is a list of grid points with their pipelines: either points that
differ only in their number of steps (accounted together, see
:mod:`gaussdp.sweeps.steps`) or a batch of other points (each accounted by
:func:`gaussdp.account`). :func:`run_task` is a pure function of the task —
it returns the output values of every point — so the same tasks run in this
process, in local worker processes (``concurrent.futures``), or on a Dask
cluster, with identical numbers. An error while accounting one point is
recorded in that point's ``error`` column; the sweep goes on.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError
from gaussdp.accountant import Accounting, account
from gaussdp.sweeps._parent import end_with_parent
from gaussdp.sweeps._progress import SweepProgress
from gaussdp.sweeps._threads import limit_threads, single_threaded
from gaussdp.sweeps.grid import Outputs, SweepGrid, read_grid
from gaussdp.sweeps.output import ResultsFile, StreamWriter, format_for
from gaussdp.sweeps.steps import account_steps, group_by_steps, step_key

__all__ = ["SweepError", "Task", "run_task", "sweep"]


class SweepError(RuntimeError):
    """The sweep stopped before every point was done (a worker died, a cluster failed).

    The rows finished before it are in the output file; running the same
    sweep again resumes.
    """


@dataclass(frozen=True)
class Task:
    """Grid points computed together; ``along_steps`` when they differ only in T."""

    points: tuple[tuple[int, m.Pipeline], ...]
    outputs: Outputs
    along_steps: bool = False


# --------------------------------------------------------------------------- one task


def _error_text(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return " ".join(text.split())  # one line


def _values(accounting: Accounting, outputs: Outputs) -> list[dict[str, Any]]:
    """The output columns of one point: one dict per δ, then per ε."""
    extra: dict[str, Any] = {}
    if outputs.report:
        report = accounting.gdp()
        extra = {
            "mu": float(report.mu),
            "regret": float(report.regret),
            "delta_tail": float(report.delta_tail),
            "tier": int(report.tier),
        }
    rows = []
    for delta in outputs.deltas:
        lower, upper = accounting.epsilon_bounds(delta, warn=False)  # the rows show the gap
        row = {"delta": delta, "epsilon_lower": float(lower), "epsilon_upper": float(upper)}
        if outputs.epsilons:
            row.update(epsilon=None, delta_lower=None, delta_upper=None)
        rows.append({**row, **extra, "error": None})
    for epsilon in outputs.epsilons:
        lower, upper = accounting.delta_bounds(epsilon)
        row = {"epsilon": epsilon, "delta_lower": float(lower), "delta_upper": float(upper)}
        if outputs.deltas:
            row = {"delta": None, "epsilon_lower": None, "epsilon_upper": None, **row}
        rows.append({**row, **extra, "error": None})
    return rows


def _failed(error: BaseException, outputs: Outputs) -> list[dict[str, Any]]:
    """The rows of a point whose accounting raised: no numbers, the error named."""
    blank = dict.fromkeys(outputs.columns())
    rows = [{**blank, "delta": delta} for delta in outputs.deltas]
    rows += [{**blank, "epsilon": epsilon} for epsilon in outputs.epsilons]
    for row in rows:
        row["error"] = _error_text(error)
    return rows


def _evaluate(accounting: Callable[[], Accounting], outputs: Outputs) -> list[dict[str, Any]]:
    try:
        return _values(accounting(), outputs)
    except Exception as error:  # recorded in the row; the sweep goes on
        return _failed(error, outputs)


def iter_task(task: Task) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """``(point, rows)`` for every point of the task, as each is finished."""
    outputs = task.outputs
    finished: set[int] = set()
    # Reports read the curve's far tail, which the report composes exponentially tilted
    # (account() then gdp()); only ε and δ bounds are read from reused transforms.
    if task.along_steps and not outputs.report:
        by_steps: dict[int, list[tuple[int, m.Pipeline]]] = {}
        leaf = relation = None
        for point, pipeline in task.points:
            (leaf, relation), steps = step_key(pipeline)
            by_steps.setdefault(steps, []).append((point, pipeline))
        described = {steps: members[0][1].mechanism for steps, members in by_steps.items()}
        results = account_steps(leaf, relation, described, outputs.accuracy, bounds_only=True)
        while True:
            # Only the shared computation is guarded (not the yield, where the consumer's
            # own errors arrive): if it fails, the points left are accounted one by one.
            try:
                steps, result = next(results)
            except Exception:  # StopIteration (done) or a failure
                break
            for point, _ in by_steps[steps]:
                yield point, _evaluate(lambda result=result: result, outputs)
                finished.add(point)
    for point, pipeline in task.points:
        if point not in finished:
            yield (
                point,
                _evaluate(
                    lambda pipeline=pipeline: account(pipeline, accuracy=outputs.accuracy), outputs
                ),
            )


def run_task(task: Task) -> list[tuple[int, list[dict[str, Any]]]]:
    """Compute a task on one thread (FFTs and BLAS): ``[(point, rows), ...]`` (a pure function)."""
    with single_threaded():
        return list(iter_task(task))


def _initialise_worker(main: int, forked_by_main: bool) -> None:
    """Local worker processes: one thread each; Ctrl-C is handled by the parent only.

    A worker ends with the sweep's main process ``main``, however that ends
    (``kill -9`` included): see :mod:`gaussdp.sweeps._parent`.
    """
    end_with_parent(main, forked_by_main)
    limit_threads()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# --------------------------------------------------------------------------- planning


def _cost(task_points) -> float:
    """A rough cost of accounting points: grows with their numbers of compositions."""
    total = 0.0
    for _, pipeline in task_points:
        found = step_key(pipeline)
        total += math.sqrt(found[1] if found else 1.0) + 10.0
    return total


def plan_tasks(
    grid: SweepGrid, points: list[int], workers: int, along_steps: bool = True
) -> list[Task]:
    """Tasks for the given points, largest first.

    Points differing only in T form one task (split into ``workers``
    interleaved parts when there are fewer groups than twice the workers, so
    that every worker has a share); the other points are batched.
    """
    # Groups are formed over the whole grid, so that a point is accounted the same way
    # (along steps or not) whichever points are left to do.
    wanted = set(points)
    pipelines = [(point, grid.pipeline(point)) for point in range(grid.size)]
    if along_steps:
        groups, rest = group_by_steps(pipelines, grid.outputs.accuracy)
    else:
        groups, rest = [], pipelines
    groups = [[item for item in members if item[0] in wanted] for members in groups]
    groups = [members for members in groups if members]
    rest = [item for item in rest if item[0] in wanted]
    tasks: list[tuple[float, Task]] = []
    parts = workers if workers > 1 and len(groups) < 2 * workers else 1
    for members in groups:
        members.sort(key=lambda item: step_key(item[1])[1])
        count = min(parts, len(members))
        for index in range(count):
            share = tuple(members[index::count])
            # A share of one point is still accounted along steps: a point's numbers
            # do not depend on how the grid was split into tasks.
            tasks.append((_cost(share), Task(share, grid.outputs, along_steps=True)))
    rest.sort()
    batch = max(1, min(32, len(rest) // (8 * workers))) if rest else 1
    for start in range(0, len(rest), batch):
        share = tuple(rest[start : start + batch])
        tasks.append((_cost(share), Task(share, grid.outputs)))
    tasks.sort(key=lambda item: -item[0])
    return [task for _, task in tasks]


# --------------------------------------------------------------------------- executors


def _default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def _run_here(tasks: list[Task], on_point) -> None:
    with single_threaded():
        for task in tasks:
            for point, rows in iter_task(task):
                on_point(point, rows)


def _run_processes(tasks: list[Task], workers: int, on_point) -> None:
    context = multiprocessing.get_context()
    executor = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_initialise_worker,
        initargs=(os.getpid(), context.get_start_method() != "forkserver"),
    )
    interrupted = True
    try:
        pending = {executor.submit(run_task, task) for task in tasks}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                try:
                    results = future.result()
                except BrokenProcessPool:
                    raise SweepError(
                        "a worker process died (killed, or out of memory); the points "
                        "finished so far are saved — run the same sweep again to resume"
                    ) from None
                for point, rows in results:
                    on_point(point, rows)
        interrupted = False
    finally:
        if interrupted:  # Ctrl-C or a dead worker: stop the others now
            processes = getattr(executor, "_processes", None) or {}
            for process in list(processes.values()):
                with contextlib.suppress(Exception):
                    process.terminate()
        # Waited for even when interrupted: with its processes terminated the executor's
        # manager thread ends at once, and one still ending at interpreter exit races
        # CPython's own atexit hook (3.11: "OSError: Bad file descriptor" on stderr
        # after the one line a Ctrl-C should print).
        executor.shutdown(wait=True, cancel_futures=True)


def _dask():
    try:
        from dask import distributed
    except ImportError:
        raise InvalidParameterError(
            "scheduler needs dask.distributed (pip install 'gaussdp[dask]')"
        ) from None
    return distributed


@contextlib.contextmanager
def _dask_client(scheduler: Any):
    """A client of the cluster: ``scheduler`` itself if it is one, else connected (and closed)."""
    distributed = _dask()
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    try:
        client = distributed.Client(scheduler, timeout="20s")
    except (OSError, ValueError) as error:
        raise SweepError(
            f"cannot connect to the Dask scheduler at {scheduler!r}: {error}"
        ) from None
    try:
        yield client
    finally:
        client.close()


def _dask_workers(client) -> int:
    try:
        return max(1, len(client.scheduler_info()["workers"]))
    except Exception:  # an unusual client: plan for one worker
        return 1


def _run_dask(tasks: list[Task], client, on_point) -> None:
    distributed = _dask()
    futures = client.map(run_task, tasks, pure=False)
    try:
        for future in distributed.as_completed(futures):
            try:
                results = future.result()
            except Exception as error:
                raise SweepError(
                    f"the Dask cluster failed a task ({_error_text(error)}); the points "
                    "finished so far are saved — run the same sweep again to resume"
                ) from None
            for point, rows in results:
                on_point(point, rows)
    finally:
        client.cancel([future for future in futures if not future.done()])


# --------------------------------------------------------------------------- the API


def sweep(
    grid,
    *,
    output: str | os.PathLike[str] | None = None,
    format: str | None = None,
    restart: bool = False,
    workers: int | None = None,
    scheduler: Any = None,
    progress: bool = False,
    maximum_points: int | None = None,
    along_steps: bool = True,
    return_rows: bool = True,
) -> list[dict[str, Any]] | None:
    """Account every point of a grid of pipelines; save the rows as they finish; resume.

    Parameters
    ----------
    grid : str, path or dict
        A sweep file (``docs/sweeps.md``): its path, its TOML text, or the
        parsed document. Every point is validated before anything is computed.
    output : str or path, optional
        Write the rows to this file as points finish, and resume from it: points
        already there (for the same grid) are not computed again.
    format : {"csv", "json", "parquet"}, optional
        The output's format (default: from its suffix, else csv). json is JSON
        Lines; parquet (pyarrow) is written when the last point is done.
    restart : bool
        Discard earlier results in ``output`` instead of resuming.
    workers : int, optional
        Local worker processes, each on one core (single-threaded FFTs);
        default: the number of cores. ``1`` computes in this process.
    scheduler : str or dask.distributed.Client, optional
        Run the points on this Dask cluster instead (an address for
        ``dask.distributed.Client``, or a client); the numbers are identical.
    progress : bool
        Show a progress bar on stderr (when it is a terminal).
    maximum_points : int, optional
        Refuse larger grids (default one million; 0 for no limit).
    return_rows : bool
        False: return None and keep no rows in memory (with ``output``, for
        very large grids; the command line does this).
    along_steps : bool
        Account points that differ only in their number of steps together,
        from one transform (default). The numbers equal single
        :func:`gaussdp.account` calls on the grid spacing it chooses.

    Returns
    -------
    list of dict
        One dict per grid point and δ (then ε), sorted by point: ``point``,
        the swept parameters (named as in the file; prefixed by their place,
        e.g. ``mechanism[1].sigma``, only where two share a name), ``delta``,
        ``epsilon_lower``, ``epsilon_upper`` (and/or ``epsilon``,
        ``delta_lower``, ``delta_upper``), ``mu``, ``regret``, ``delta_tail``,
        ``tier`` when the grid asks for the report, and ``error`` (None, or the
        error that accounting this point raised). Missing values are None.
        ``pandas.DataFrame(rows)`` makes a table of them.

    Raises
    ------
    InvalidParameterError
        For an invalid grid (naming the parameter and the value), format or
        option, results of another grid in ``output``, or ``output`` being
        written by another sweep that is still running (its process named).
    SweepError
        When a worker process dies or the cluster fails; the finished rows
        are saved and running again resumes.

    Examples
    --------
    >>> from gaussdp import sweep
    >>> rows = sweep('''
    ... [sweep]
    ... deltas = [1e-5]
    ... [[mechanism]]
    ... type = "dpsgd"
    ... noise_multiplier = [8.0, 9.4]
    ... sampling_probability = 0.32768
    ... steps = [1000, 2000]
    ... ''', workers=1)
    >>> [(r["noise_multiplier"], r["steps"], round(r["epsilon_upper"], 3)) for r in rows]
    [(8.0, 1000, 5.972), (8.0, 2000, 9.037), (9.4, 1000, 4.934), (9.4, 2000, 7.424)]
    """
    sweep_grid = read_grid(grid, maximum_points=maximum_points)
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise InvalidParameterError(f"workers must be an integer >= 1, got {workers!r}")
        if scheduler is not None:
            raise InvalidParameterError("give workers or scheduler, not both")
    chosen_format = format_for(output, format)
    if output is None:
        writer = None
        done: dict[int, list[dict]] = {}
    else:
        try:
            writer = ResultsFile(output, chosen_format, sweep_grid, restart)
        except InvalidParameterError:
            raise
        except OSError as error:
            reason = error.strerror or str(error)
            raise OSError(error.errno, f"cannot write the results to {output}: {reason}") from None
        done = dict(writer.done)
    if not return_rows:
        done = dict.fromkeys(done, ())
    result = _execute(
        sweep_grid, writer, done, workers, scheduler, progress, along_steps, return_rows
    )
    return result if return_rows else None


def _execute(sweep_grid, writer, done, workers, scheduler, progress, along_steps, keep_rows=True):
    todo = [point for point in range(sweep_grid.size) if point not in done]
    count = _default_workers() if workers is None else workers
    complete = False
    bar = SweepProgress(sweep_grid.size, len(done), enabled=progress)

    def on_point(point: int, values: list[dict]) -> None:
        parameters = sweep_grid.parameters(point)
        rows = [{"point": point, **parameters, **row} for row in values]
        if writer is not None:
            writer.write(rows)
        done[point] = rows if keep_rows else ()
        bar.advance()

    try:
        if todo and scheduler is not None:
            with _dask_client(scheduler) as client:
                tasks = plan_tasks(sweep_grid, todo, _dask_workers(client), along_steps)
                _run_dask(tasks, client, on_point)
        elif todo:
            tasks = plan_tasks(sweep_grid, todo, count, along_steps)
            if count == 1 or len(tasks) == 1:
                _run_here(tasks, on_point)
            else:
                _run_processes(tasks, min(count, len(tasks)), on_point)
        complete = True
    finally:
        bar.close()
        if writer is not None:
            writer.close(complete)
    return [row for point in sorted(done) for row in done[point]]


def write_stream(grid, stream=None, *, output_format: str = "csv", **options) -> None:
    """Run a sweep and write its rows to a stream (stdout) as they finish; no resuming."""
    sweep_grid = read_grid(grid, maximum_points=options.pop("maximum_points", None))
    writer = StreamWriter(stream or sys.stdout, output_format, sweep_grid.columns)
    workers = options.get("workers")
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise InvalidParameterError(f"workers must be an integer >= 1, got {workers!r}")
    _execute(
        sweep_grid,
        writer,
        {},
        workers,
        options.get("scheduler"),
        options.get("progress", False),
        options.get("along_steps", True),
        keep_rows=False,
    )
