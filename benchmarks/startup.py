"""Start-up cost of gaussdp: ``import gaussdp`` and the CLI's whole process (run by hand).

Two comparisons, each command in a fresh process, the commands interleaved
(A B C D E, E D C B A, ...) so that a change in the machine's load falls on
all of them alike, medians over ``--rounds`` rounds after one untimed warm-up:

1. ``python -c "import gaussdp"`` against ``python -c "import numpy,
   scipy.special"`` (the numerical stack ``import gaussdp`` needs: scipy.fft,
   used by the composition's lengths until 2026-11-30, was in it); target
   ratio ≤ 1.3;
2. the whole process ``gaussdp dpsgd --noise-multiplier 9.4
   --sampling-probability 0.32768 --steps 2000 --delta 1e-5`` against a
   ``python -c`` one-liner computing the same ε with dp_accounting's PLD
   accountant at its defaults; target ratio ≤ 0.6.

``python -c pass`` is timed too (the interpreter's own start-up). Each process
is timed in wall time (``time.perf_counter`` around it) and, where ``os.wait4``
exists, in CPU time (user + sys of the child) with its peak resident memory.
Finally ``python -X importtime -c "import gaussdp"`` lists the slowest modules
that ``import gaussdp`` loads beyond numpy and scipy.special.

The gaussdp timed is whatever ``import gaussdp`` finds (set ``PYTHONPATH`` to
time a source tree); the CLI is this interpreter's ``gaussdp`` console script
(next to ``sys.executable``, not a shim on ``PATH``), or ``python -m
gaussdp.cli`` if there is none. Results go to ``docs/benchmarks-startup.md``
(rewritten each run)::

    python benchmarks/startup.py                # 11 rounds (~1 min)
    python benchmarks/startup.py --quick        # 3 rounds
    python benchmarks/startup.py --rounds 21 --output /tmp/startup.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_accountants import _machine, _versions, child_environment

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "docs" / "benchmarks-startup.md"

STACK = "import numpy, scipy.special"
# the CIFAR-10 workload of De et al. (2022): σ = 9.4, q = 0.32768, T = 2000, δ = 1e-5
DP_ACCOUNTING = (
    "import dp_accounting as d; from dp_accounting.pld import PLDAccountant; "
    "a = PLDAccountant(); "
    "a.compose(d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.32768, d.GaussianDpEvent(9.4)), "
    "2000)); print(a.get_epsilon(1e-5))"
)
CLI_ARGUMENTS = "dpsgd --noise-multiplier 9.4 --sampling-probability 0.32768 --steps 2000 "
CLI_ARGUMENTS = (CLI_ARGUMENTS + "--delta 1e-5").split()
# (numerator, denominator, target)
COMPARISONS = [("import_gaussdp", "import_stack", 1.3), ("cli", "dp_accounting", 0.6)]


def _cli() -> list[str]:
    """This interpreter's gaussdp console script, or ``python -m gaussdp.cli``."""
    for name in ("gaussdp", "gaussdp.exe"):
        script = Path(sys.executable).parent / name
        if script.is_file():
            return [str(script)]
    return [sys.executable, "-m", "gaussdp.cli"]


def commands() -> dict[str, list[str]]:
    python = sys.executable
    return {
        "python": [python, "-c", "pass"],
        "import_stack": [python, "-c", STACK],
        "import_gaussdp": [python, "-c", "import gaussdp"],
        "dp_accounting": [python, "-c", DP_ACCOUNTING],
        "cli": [*_cli(), *CLI_ARGUMENTS],
    }


LABELS = {
    "python": "`python -c pass` (interpreter start-up)",
    "import_stack": f'`python -c "{STACK}"`',
    "import_gaussdp": '`python -c "import gaussdp"`',
    "dp_accounting": "`python -c` one-liner: dp_accounting PLDAccountant() ε",
    "cli": "`gaussdp " + " ".join(CLI_ARGUMENTS) + "`",
}


def _environment() -> dict[str, str]:
    """The commands' environment: warnings off, and bytecode cached (the warm-up run
    writes gaussdp's cache as an installation would have it; ``child_environment``)."""
    return child_environment(PYTHONWARNINGS="ignore")


def run_once(command: list[str]) -> dict:
    """Run ``command`` in a fresh process: wall time, CPU time, peak memory, output."""
    env = _environment()
    if not hasattr(os, "wait4"):  # not POSIX: wall time only
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        wall = time.perf_counter() - start
        output = done.stdout + done.stderr
        return {
            "wall": wall,
            "cpu": None,
            "rss_mb": None,
            "code": done.returncode,
            "output": output,
        }
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    output = process.stdout.read()  # until the child closes it (the outputs are short)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.stdout.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,  # KiB on Linux
        "code": process.returncode,
        "output": output,
    }


def measure(rounds: int) -> tuple[dict[str, list[dict]], dict[str, str]]:
    """Warm up every command once, then ``rounds`` interleaved rounds of all of them."""
    todo = commands()
    outputs = {}
    for key, command in todo.items():
        warm = run_once(command)
        if warm["code"] != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{warm['output']}")
        outputs[key] = warm["output"].strip()
    runs: dict[str, list[dict]] = {key: [] for key in todo}
    keys = list(todo)
    for index in range(rounds):
        for key in keys if index % 2 == 0 else keys[::-1]:
            runs[key].append(run_once(todo[key]))
        sys.stderr.write(f"round {index + 1}/{rounds} done\n")
    return runs, outputs


def _median(runs: list[dict], field: str) -> float | None:
    values = [r[field] for r in runs if r[field] is not None]
    return statistics.median(values) if values else None


def _importtime(code: str) -> dict[str, tuple[int, int, str]]:
    """``python -X importtime -c code``: module -> (self µs, cumulative µs, enclosing module)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=_environment(),
    )
    rows, pending = {}, {}  # pending: depth -> modules waiting for their importer
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative, label = line[len("import time:") :].split("|")
        name = label.strip()
        depth = (len(label) - len(label.lstrip()) - 1) // 2
        # importtime prints a module after everything it imported (one level deeper);
        # anything deeper still waiting has no line of its own above it: drop it
        for child in pending.pop(depth + 1, []):
            rows[child] = (*rows[child][:2], name)
        for level in [level for level in pending if level > depth]:
            del pending[level]
        pending.setdefault(depth, []).append(name)
        rows[name] = (int(self_us), int(cumulative), "")
    return rows


def import_offenders(count: int) -> dict[str, list[tuple[int, int, str, str]]]:
    """What ``import gaussdp`` loads beyond the numerical stack, worst first.

    "imported": packages outside gaussdp (``scipy.signal``, ...) whose modules
    load directly under a gaussdp module, by cumulative time summed over them;
    "self": single modules by their own time. Rows are (self µs, cumulative µs,
    module or package, enclosing module).
    """
    _importtime("import gaussdp")  # warm the file cache
    stack = _importtime(STACK)
    ours = _importtime("import gaussdp")
    extra = [(s, c, name, by) for name, (s, c, by) in ours.items() if name not in stack]
    # group the direct children by package (scipy.signal, scipy.optimize, ...): they are
    # siblings in the tree, so their cumulative times add up without double counting
    groups: dict[tuple[str, str], list[int]] = {}
    for self_us, cumulative, name, by in extra:
        if by.startswith("gaussdp") and not name.startswith("gaussdp"):
            total = groups.setdefault((".".join(name.split(".")[:2]), by), [0, 0])
            total[0] += self_us
            total[1] += cumulative
    imported = [(s, c, name, by) for (name, by), (s, c) in groups.items()]
    return {
        "imported": sorted(imported, key=lambda row: row[1], reverse=True)[:count],
        "self": sorted(extra, reverse=True)[:count],
    }


def _fmt(value: float | None, unit: str = "s", digits: str = ".3f") -> str:
    return "—" if value is None else f"{format(value, digits)} {unit}"


def write_markdown(runs, outputs, offenders, args, path: Path) -> list[str]:
    todo = commands()
    lines = [
        "# Benchmarks: start-up of gaussdp",
        "",
        f"Generated by `benchmarks/startup.py` on {datetime.date.today().isoformat()}: "
        "each command in a fresh process, the commands interleaved (A B C D E, E D C B A, ...)"
        f" over {args.rounds} rounds after one untimed warm-up; medians. Wall time is "
        "`time.perf_counter` around the process; CPU time (user + sys) and peak resident "
        "memory are the child's own, from `os.wait4`. The machine may be shared: wall time "
        "depends on its load, CPU time much less. Bytecode is cached (the warm-up writes "
        "it, PYTHONDONTWRITEBYTECODE unset), as pip's installation of a package has it.",
        "",
        "Command to reproduce:",
        "",
        "```sh",
        "python benchmarks/startup.py " + " ".join(args.argv),
        "```",
        "",
        "## Targets",
        "",
        "| comparison | wall ratio | CPU ratio | wall ratio net of `python -c pass` | target |",
        "|---|---|---|---|---|",
    ]
    base = _median(runs["python"], "wall")
    for numerator, denominator, target in COMPARISONS:
        wall = [_median(runs[k], "wall") for k in (numerator, denominator)]
        cpu = [_median(runs[k], "cpu") for k in (numerator, denominator)]
        cells = []
        for a, b in (wall, cpu, [w - base for w in wall]):
            if a is None or b is None or b <= 0:
                cells.append("—")
            else:
                cells.append(f"{a / b:.2f}")
        marks = [c if c == "—" else f"{c} {'✓' if float(c) <= target else '✗'}" for c in cells]
        lines.append(
            f"| {LABELS[numerator]} / {LABELS[denominator]} | {marks[0]} | {marks[1]} "
            f"| {cells[2]} | ≤ {target:g} |"
        )
    lines += [
        "",
        "The targets are on the plain ratios (wall, and CPU for a loaded machine); the net "
        "ratio subtracts the interpreter's own start-up from both sides.",
        "",
        "## Medians",
        "",
        "| command | wall | CPU | peak memory | runs |",
        "|---|---|---|---|---|",
    ]
    for key in todo:
        lines.append(
            f"| {LABELS[key]} | {_fmt(_median(runs[key], 'wall'))} "
            f"| {_fmt(_median(runs[key], 'cpu'))} "
            f"| {_fmt(_median(runs[key], 'rss_mb'), 'MB', '.0f')} | {len(runs[key])} |"
        )
    lines += [
        "",
        f"Commands as run (`python` is this interpreter, `{sys.executable}`):",
        "",
        "```sh",
        *(shlex.join(todo[key]) for key in todo),
        "```",
        "",
        "What the two ε commands printed (the same ε, up to their rounding):",
        "",
        "```text",
        f"$ gaussdp {' '.join(CLI_ARGUMENTS)}",
        outputs["cli"],
        "$ python -c '<dp_accounting one-liner>'",
        outputs["dp_accounting"],
        "```",
        "",
        "## Slowest imports",
        "",
        '`python -X importtime -c "import gaussdp"` against `python -X importtime -c '
        f'"{STACK}"`, one run each after a warm-up (microseconds, so noisy); only the modules '
        'the first loads and the second does not. "Loaded under" is the enclosing module in '
        "importtime's tree (the import that was running when this one started; scipy loads "
        "its submodules lazily, so this is the gaussdp module whose import set them off). The "
        "heaviest packages outside gaussdp whose modules load directly under a gaussdp module "
        "(cumulative: those modules and everything they pulled in that was not loaded yet, "
        "summed):",
        "",
        "| package | loaded under | cumulative | self |",
        "|---|---|---|---|",
        *(
            f"| `{name}` | `{by}` | {c / 1000:.1f} ms | {s / 1000:.1f} ms |"
            for s, c, name, by in offenders["imported"]
        ),
        "",
        "The slowest single modules (own time only):",
        "",
        "| module | loaded under | self | cumulative |",
        "|---|---|---|---|",
        *(
            f"| `{name}` | `{by}` | {s / 1000:.1f} ms | {c / 1000:.1f} ms |"
            for s, c, name, by in offenders["self"]
        ),
        "",
        "## Machine and versions",
        "",
        *(f"- {key}: {value}" for key, value in _machine().items()),
        *(f"- {key}: {value}" for key, value in _versions().items()),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    parser.add_argument("--top", type=int, default=15, help="slowest imports listed")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="Markdown file")
    args = parser.parse_args(argv)
    args.argv = argv
    if args.quick:
        args.rounds = min(args.rounds, 3)
    runs, outputs = measure(args.rounds)
    offenders = import_offenders(args.top)
    lines = write_markdown(runs, outputs, offenders, args, args.output)
    start, end = lines.index("## Targets"), lines.index("## Slowest imports")
    sys.stderr.write("\n".join(lines[start:end]) + f"\nwrote {args.output}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
