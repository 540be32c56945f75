"""Differential fuzzing on the GPU: programs that compile are run on the GPU and in the
interpreter, and their outputs compared. The compile-only campaign (run_campaign.py) finds
internal errors and bad diagnostics; this finds what matters more, a kernel that runs and
computes the wrong thing without an error.

    python tests/fuzz/gpu_diff.py --generated 2000 --mutated 2000 --seed 1 --jobs 14 \\
        --deadline 480 --out DIR          # on a machine with a GPU
    python tests/fuzz/gpu_diff.py --show mutated:1:17        # one case: its program, sizes, outcome
    python tests/fuzz/gpu_diff.py --replay DIR/summary.json ... # its failing cases first, then the rest
    python tests/fuzz/gpu_diff.py --pin @schedule_wgmma=1 ...     # every case with an opt-in pinned

Cases are run_campaign.py's (`KIND:SEED:INDEX`, the same programs); each runs at sizes of two
tiles per dimension minus a ragged amount (partial last tiles; whole tiles where the runtime
refuses a partial one), on seeded inputs, with outputs poisoned (NaN) as `tkc run` does. An
outcome is one of

- ``match``: every output agrees with the interpreter (relative error below 1e-2 over the
  elements both sides computed finitely, and the same NaN/inf pattern);
- ``trap``: the kernel stopped at a run-time check (a tile load wholly past the end, a scalar
  load outside its tensor) and the interpreter refuses the same program and sizes;
- ``mismatch``, ``fault`` (the launch failed where the interpreter runs the program, or with an
  illegal or misaligned address), ``hang`` (the kernel gave no answer in `--case-limit`
  seconds), ``unrefused`` (the runtime launched sizes the interpreter refuses for a rounded-down
  count of tiles), ``internal`` (an exception that is not a diagnostic): failures;
- ``skip``: the compiler, the interpreter or the runtime refused the program or its sizes with a
  diagnostic, the arguments were too large, or the interpreter took longer than the limit.

Each worker is a process of its own (a fault poisons its CUDA context, a hang blocks it): the
driver restarts it after the case that killed it. DIR receives `summary.json`: counts, and every
failing case with its program and sizes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import Case  # noqa: E402

TOLERANCE = 1e-2
MAX_ELEMENTS = 1 << 22
"""Arguments larger than this (in elements, all together) are skipped: the interpreter is numpy."""
RAGGED_CUTS = (1, 3, 16, 31, 47)
"""Amounts taken off a dimension of two tiles so its last tile is partial."""


def walkthrough_sources() -> list[tuple[str, str]]:
    """(name, text) of the walk-through kernels (tests/gpu/walkthrough), shipped cases here only: two of
    them computed wrong results on the GPU that the examples and GPU test kernels did not show (an
    unsigned f32(index), register-tile B halves at a ragged length). The CPU campaign keeps its seeds."""
    root = Path(__file__).resolve().parents[1] / "gpu" / "walkthrough"
    return [(p.relative_to(root.parents[2]).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.tk"))]


def build_case(spec: str) -> Case:
    """The case `KIND:SEED:INDEX`: run_campaign.py's generated and mutated cases, and `shipped`
    ones: a kernel of an example or a GPU test kernel as it is (run at random sizes)."""
    from run_campaign import build_case as campaign_case
    from tk_mutator import kernel_names, seed_sources

    kind, seed, index = spec.split(":")
    if kind != "shipped":
        return campaign_case(int(seed), kind, int(index))
    rng = random.Random(spec)
    name, text = rng.choice(seed_sources() + walkthrough_sources())
    return Case(text, rng.choice(kernel_names(text)), origin=f"{spec} ({name})")


def compare(got, ref) -> str | None:
    """Why `got` (GPU) is not `ref` (interpreter), or None."""
    import numpy as np

    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    finite_got, finite_ref = np.isfinite(got), np.isfinite(ref)
    lost = finite_ref & ~finite_got
    if lost.any():
        where = tuple(int(i[0]) for i in np.nonzero(lost))
        return f"{int(lost.sum())} of {ref.size} elements NaN/inf on the GPU, finite in the interpreter (first at {where})"
    gained = ~finite_ref & finite_got
    if gained.any():
        return f"{int(gained.sum())} elements finite on the GPU, NaN/inf in the interpreter"
    both_inf = np.isinf(got) & np.isinf(ref)
    if (np.sign(got[both_inf]) != np.sign(ref[both_inf])).any():
        return "infinities of the opposite sign"
    diff = np.where(finite_ref, got - ref, 0.0)
    scale = np.linalg.norm(np.where(finite_ref, ref, 0.0))
    error = np.linalg.norm(diff) / scale if scale > 0 else np.abs(diff).max(initial=0.0)
    if error > TOLERANCE:
        worst = tuple(int(i) for i in np.unravel_index(np.argmax(np.abs(diff)), diff.shape))
        return f"relative error {error:.3g} (worst element {worst}: GPU {got[worst]:.6g}, interpreter {ref[worst]:.6g})"
    return None


def argument_elements(kernel, params: dict) -> int:
    """Elements of all the kernel's arguments at these sizes (the interpreter allocates them)."""
    from tkc.runner import shape_of

    return sum(math.prod(shape_of(a.type, params, n)) for n, a in zip(kernel.arg_names, kernel.body.block.args, strict=True))


def bigger_sizes(kernel) -> dict[str, int]:
    """Six tiles of each symbolic dim: room for coordinates beyond the grid's."""
    from tkc.runner import default_sizes

    return default_sizes(kernel, tiles=6)


def size_candidates(kernel, rng: random.Random) -> list[dict[str, int]]:
    """Ragged sizes of two or three tiles per symbolic dimension, then as many whole tiles, then one."""
    from tkc.runner import default_sizes

    whole = default_sizes(kernel, tiles=rng.choice((2, 2, 3)))
    ragged = {d: max(1, n - rng.choice(RAGGED_CUTS)) if n > 2 else n for d, n in whole.items()}
    return [ragged, whole, default_sizes(kernel, tiles=1)]


TRAP_ERRORS = ("CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION")
"""How a launch that ran `trap` fails (tkc's run-time checks: a load wholly past the end, a scalar
load outside its tensor)."""
WHOLLY_PAST_END = "lies wholly past its end"
"""The interpreter's refusal of a tile coordinate past the end: programs index tiles by `i + 1`
or `2 * k` over a grid of the same dims, so a case retries once at more tiles per dim."""
NOT_A_MULTIPLE = re.compile(r"(\w+) = (\d+) \(from .*?\) is not a multiple of (\d+)")
"""The refusal of a dimension a kernel counts whole tiles of, by the runtime or the interpreter."""


def run_one(spec: str, progress: Callable[[str], None] = lambda stage: None) -> dict:
    """Compile, launch and interpret one case; the outcome as a JSON-able record. `progress`
    hears which variant is about to be launched (a hang names it) and when the kernel has run
    ("ran"), so that a case that takes too long after that is the interpreter's slowness."""
    import numpy as np

    from tkc.api import CompiledKernel
    from tkc.diagnostics import TkError
    from tkc.driver import load_module
    from tkc.interpreter import find_kernel, interpret
    from tkc.runner import kernel_params, make_inputs
    from tkc.runtime.device import DeviceError
    from tkc.runtime.run import launch_arrays, written

    case = build_case(spec)
    failing = {"source": case.source, "kernel": case.kernel, "defines": list(case.defines)}
    record: dict = {"case": spec}
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / f"case{case.suffix}")
        Path(path).write_text(case.source, encoding="utf-8")
        try:
            params = case_params(list(case.defines))
            module = load_module(path, case.kernel, params)
            kernel = find_kernel(module, case.kernel)
            name = kernel.sym_name.data
            compiled = CompiledKernel(path, name, params)
            compiled.ptx  # noqa: B018 (lowers it: a refusal is a compile error, not a launch's)
        except TkError as error:
            return record | {"outcome": "skip", "why": "compile: " + str(error).splitlines()[0][:160]}
        candidates = size_candidates(kernel, random.Random(spec))
        whole: dict[str, int] = {}  # dims the runtime wants in whole tiles, and a size that is
        refusals: list[str] = []
        attempt, grown = 0, False
        while candidates and attempt < 8:
            attempt += 1
            dims = candidates[0] | whole
            record["sizes"] = dims
            all_params = kernel_params(kernel) | dims
            try:
                elements = argument_elements(kernel, all_params)
            except TkError as error:
                return record | {"outcome": "skip", "why": "sizes: " + str(error).splitlines()[0][:160]}
            if elements > MAX_ELEMENTS:
                candidates.pop(0)
                refusals.append(f"{elements} elements")
                continue
            inputs = make_inputs(kernel, all_params, seed=1)
            try:
                arrays = launch_arrays(compiled.abi, inputs)
                progress(f"launching {variant_name(compiled, arrays)} at {dims}")
                compiled(*arrays)
            except TkError as error:  # the runtime refused these sizes before launching
                message = str(error).splitlines()[0]
                refusals.append(message[:160])
                if match := NOT_A_MULTIPLE.search(message):
                    dim, size, multiple = match[1], int(match[2]), int(match[3])
                    whole[dim] = max(multiple, size // multiple * multiple)
                else:
                    candidates.pop(0)
                continue
            except DeviceError as error:
                fault = str(error).splitlines()[0]
                try:  # a trap is right where the interpreter refuses the access too
                    interpret(module, name, inputs, dims)
                except TkError as refusal:
                    if any(code in fault for code in TRAP_ERRORS):
                        return record | {"outcome": "trap", "why": str(refusal).splitlines()[0][:160]}
                return record | {"outcome": "fault", "why": fault[:400]} | failing
            progress("ran")
            try:
                expected = interpret(module, name, inputs, dims)
            except TkError as error:
                message = str(error).splitlines()[0]
                if NOT_A_MULTIPLE.search(message):  # the runtime should have refused it
                    return record | {"outcome": "unrefused", "why": message[:300]} | failing
                if WHOLLY_PAST_END in message and not grown:  # `load A[i + 1, 0]`: more tiles
                    grown = True
                    candidates.insert(0, bigger_sizes(kernel))
                    continue
                return record | {"outcome": "skip", "why": "interpreter: " + message[:160]}
            # an argument the ABI does not list as written comes back as it went in: the
            # interpreter must leave it so too (a store it never reaches)
            got = {name: inputs[name] for name in expected} | written(compiled.abi, arrays)
            problems = {arg: why for arg, want in expected.items()
                        if (why := compare(np.asarray(got[arg], np.float32), np.asarray(want, np.float32)))}
            if problems:
                return record | {"outcome": "mismatch", "why": problems} | failing
            return record | {"outcome": "match"}
        return record | {"outcome": "skip", "why": "runtime: " + " / ".join(refusals[-2:])}


def tile_passes_one(spec: str) -> dict:
    """The CPU half of the comparison: the interpreter on the frontend's IR and after each tile
    pass (tkc run --bisect), at the sizes `run_one` would try first. A pass that moves an output
    is a `mismatch`; programs the compiler or the interpreter refuses are skips."""
    import io

    from tkc.diagnostics import TkError
    from tkc.driver import load_module
    from tkc.interpreter import find_kernel, interpret
    from tkc.runner import bisect, kernel_params, make_inputs, snapshots

    case = build_case(spec)
    record: dict = {"case": spec}
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / f"case{case.suffix}")
        Path(path).write_text(case.source, encoding="utf-8")
        try:
            module = load_module(path, case.kernel, case_params(list(case.defines)))
            kernel = find_kernel(module, case.kernel)
        except TkError as error:
            return record | {"outcome": "skip", "why": "compile: " + str(error).splitlines()[0][:160]}
        try:
            stages, crashed = snapshots(module)
        except TkError as error:
            return record | {"outcome": "skip", "why": "compile: " + str(error).splitlines()[0][:160]}
        if crashed is not None:
            return record | {"outcome": "skip", "why": f"compile: {crashed[0]}: {crashed[1].splitlines()[0][:160]}"}
        dims = size_candidates(kernel, random.Random(spec))[0]
        grown = False
        # sizes the input and the last tile pass's IR both take: a pass may require whole tiles
        # the input does not (tile-mask-tails: a store_add whose padding would land inside its
        # destination)
        lowered = stages[-1][1]
        for _ in range(5):
            all_params = kernel_params(kernel) | dims
            elements = argument_elements(kernel, all_params)
            if elements > MAX_ELEMENTS:
                return record | {"outcome": "skip", "why": f"{elements} elements"}
            inputs = make_inputs(kernel, all_params, seed=1)
            try:
                if not interpret(module, kernel.sym_name.data, inputs, dims):
                    return record | {"outcome": "skip", "why": "interpreter: no outputs"}
                interpret(lowered, kernel.sym_name.data, inputs, dims)
                break
            except TkError as error:
                match = NOT_A_MULTIPLE.search(str(error))
                if match is None and WHOLLY_PAST_END in str(error) and not grown:
                    grown, dims = True, bigger_sizes(kernel)
                    continue
                if match is None:
                    return record | {"outcome": "skip", "why": "interpreter: " + str(error).splitlines()[0][:160]}
                dims = dims | {match[1]: max(int(match[3]), int(match[2]) // int(match[3]) * int(match[3]))}
        else:
            return record | {"outcome": "skip", "why": "sizes"}
        out = io.StringIO()
        culprit = bisect(stages, kernel.sym_name.data, inputs, dims, out).culprit
        if culprit is not None:
            return record | {"outcome": "mismatch", "sizes": dims, "why": out.getvalue()[-600:], "source": case.source,
                             "kernel": case.kernel, "defines": list(case.defines)}
        return record | {"outcome": "match", "sizes": dims}


def variant_name(compiled, arrays) -> str:
    """Which of a CompiledKernel's variants a launch on `arrays` takes."""
    from tkc.interpreter import find_kernel

    chosen = compiled._variant_for(tuple(arrays))
    if chosen is compiled:
        return "the kernel"
    pins = find_kernel(chosen._input, None).annotations.data
    return "the variant " + " ".join(f"@{pin}" for pin in ("whole_tiles", "cluster") if pin in pins)


def case_params(defines: list[str]) -> dict:
    """A case's -D assignments over --pin's (TKC_GPU_DIFF_PINS, `@NAME=VALUE,...`, which the
    workers inherit; a case that sets a pin itself keeps its own)."""
    from tkc.runner import _assignments

    return _assignments(os.environ.get("TKC_GPU_DIFF_PINS") or None) | _assignments(defines)


TILE_PASSES_ONLY = os.environ.get("TKC_GPU_DIFF_TILE_PASSES") == "1"
"""Set by --tile-passes for the workers: compare the interpreter before and after the tile
passes instead of launching (no GPU needed)."""


def worker(specs: list[str], results: Path, deadline: float) -> None:
    """Run `specs` in order, appending a `begin` line before and the outcome after each."""
    with results.open("a", encoding="utf-8") as out:
        for spec in specs:
            if time.time() > deadline:
                return
            out.write(json.dumps({"begin": spec}) + "\n")
            out.flush()
            def progress(stage: str) -> None:
                out.write(json.dumps({"stage": stage}) + "\n")
                out.flush()

            try:
                record = tile_passes_one(spec) if TILE_PASSES_ONLY else run_one(spec, progress)
            except Exception as error:  # noqa: BLE001 (any escape is the compiler's or runtime's bug)
                record = {"case": spec, "outcome": "internal", "why": f"{type(error).__name__}: {error}"[:600]}
            out.write(json.dumps(record) + "\n")
            out.flush()
            if record["outcome"] in ("fault", "trap"):
                return  # the CUDA context is poisoned: the driver starts a fresh process


def read_results(path: Path) -> tuple[list[dict], str | None, str]:
    """The finished records of a worker's file, the case it began and did not finish, and the
    last stage that case reported ("ran" once its kernel has run)."""
    done: list[dict] = []
    pending, stage = None, ""
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if "begin" in entry:
                pending, stage = entry["begin"], ""
            elif "stage" in entry:
                stage = entry["stage"]
            else:
                done.append(entry)
                pending = None
    return done, pending, stage


def drive(specs: list[str], jobs: int, out_dir: Path, deadline_s: float, case_limit_s: float) -> dict:
    """Run every spec over `jobs` worker processes, restarting one after a fault or a hang."""
    out_dir.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + deadline_s
    shards = [specs[i::jobs] for i in range(jobs)]
    lost: list[dict] = []

    def start(shard: list[str], path: Path) -> subprocess.Popen:
        args = [sys.executable, __file__, "--worker", str(path), "--deadline-at", str(deadline), *shard]
        return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    running: dict[int, tuple[subprocess.Popen, list[str], Path, float]] = {}
    for index, shard in enumerate(shards):
        if shard:
            path = out_dir / f"worker-{index}.jsonl"
            path.unlink(missing_ok=True)
            running[index] = (start(shard, path), shard, path, time.time())
    while running:
        time.sleep(1.0)
        for index, (process, shard, path, since) in list(running.items()):
            done, pending, stage = read_results(path)
            finished = {r["case"] for r in done}
            stamp = path.stat().st_mtime if path.exists() else since
            if process.poll() is None and not (pending and time.time() - stamp > case_limit_s):
                continue
            if process.poll() is None:
                process.kill()
                process.wait()
                lost.append({"case": pending, "outcome": "skip", "why": f"interpreter: slower than {case_limit_s:.0f} s"}
                            if stage == "ran" else
                            {"case": pending, "outcome": "hang", "why": f"no answer in {case_limit_s:.0f} s after {stage}"})
            elif pending and pending not in finished:
                lost.append({"case": pending, "outcome": "fault", "why": f"the worker died (exit {process.returncode})"})
            left = [s for s in shard if s not in finished and s != pending and
                    s not in {r["case"] for r in lost}]
            if left and time.time() < deadline:
                running[index] = (start(left, path), left, path, time.time())
            else:
                del running[index]
    records = [r for i in range(jobs) for r in read_results(out_dir / f"worker-{i}.jsonl")[0]] + lost
    counts = Counter(r["outcome"] for r in records)
    skips = Counter(r["why"].split(":")[0] for r in records if r["outcome"] == "skip")
    failures = [r for r in records if r["outcome"] not in ("match", "skip", "trap")]
    for failure in failures:
        if "source" not in failure:
            case = build_case(failure["case"])
            failure.update(source=case.source, kernel=case.kernel, defines=list(case.defines))
    summary = {"cases": len(records), "counts": dict(counts), "skips": dict(skips), "failures": failures}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generated", type=int, default=200)
    parser.add_argument("--mutated", type=int, default=200)
    parser.add_argument("--shipped", type=int, default=200, help="examples and GPU test kernels at random sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    parser.add_argument("--deadline", type=float, default=480.0, help="seconds after which no case starts")
    parser.add_argument("--case-limit", type=float, default=90.0, help="seconds one case may take")
    parser.add_argument("--out", type=Path, default=Path("gpu-diff"))
    parser.add_argument("--show", metavar="KIND:SEED:INDEX")
    parser.add_argument("--tile-passes", action="store_true",
                        help="no GPU: the interpreter before and after each tile pass (tkc run --bisect)")
    parser.add_argument("--replay", type=Path, metavar="SUMMARY", help="run a summary.json's failing cases first")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--deadline-at", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--pin", action="append", default=[], metavar="@NAME=VALUE",
                        help="compile every case with this annotation pinned too (@schedule_wgmma=1)")
    parser.add_argument("specs", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.specs, args.worker, args.deadline_at)
        return 0
    if args.tile_passes:
        os.environ["TKC_GPU_DIFF_TILE_PASSES"] = "1"  # the workers inherit it
    if args.pin:
        os.environ["TKC_GPU_DIFF_PINS"] = ",".join(args.pin)
    if args.show:
        case = build_case(args.show)
        print(case.source)
        print(f"// -k {case.kernel} -D {' '.join(case.defines)}")
        print(json.dumps(tile_passes_one(args.show) if args.tile_passes else run_one(args.show), indent=1))
        return 0
    specs = [f"generated:{args.seed}:{i}" for i in range(args.generated)]
    specs += [f"mutated:{args.seed}:{i}" for i in range(args.mutated)]
    specs += [f"shipped:{args.seed}:{i}" for i in range(args.shipped)]
    random.Random(args.seed).shuffle(specs)
    if args.replay:
        failed = [f["case"] for f in json.loads(args.replay.read_text(encoding="utf-8"))["failures"]]
        specs = failed + [s for s in specs if s not in set(failed)]
    summary = drive(specs, args.jobs, args.out, args.deadline, args.case_limit)
    print(json.dumps({k: summary[k] for k in ("cases", "counts", "skips")}, indent=1))
    for failure in summary["failures"]:
        print(f"{failure['outcome']:9} {failure['case']}: {str(failure['why'])[:300]}")
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
