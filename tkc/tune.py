"""Autotuning: `tkc tune FILE -k KERNEL --size M=...` and `tkc.autotune(...)`.

The search space is the kernel's compile-time parameters and the plan decisions its annotations
pin. The caller names the values to try (`space={"BM": [64, 128], "@stages": [None, 8]}`,
`--space BM=64,128 --space @stages=plan,8`); otherwise every integer parameter that is a tiling
choice is tried at half, once and twice its declared default (powers of two of at least 16), a
wide default also trimmed to 5/8 and 3/4 of itself (TRIMMED_TILES: 256 -> 160, 192), and,
where the kernel pipelines its loads, the ring depth at the plan's choice (None, `plan`: at most 4
stages), at 6 and 8 stages (RINGS: small tiles want them, 64x128x64 GEMM tiles ran 0.55-0.71x
cuBLAS at 4 stages and 0.89-1.06x at 8 on the H200, large ones do not fit them) and at 2 and 3,
timed only where the shallower ring lets a second CTA share each SM (a memory-bound kernel trades
its ring depth for a CTA that loads while the other ends a sweep or stores), and,
where the plan runs a persistent grid that stream-K could split, `@stream_k` off and on
(STREAM_K). A
parameter is a tiling choice when changing it leaves the kernel's arguments as they are: `D` of
`gl<bf16>[N, D]` is part of the interface and is never tuned, nor are flags and floats. A
configuration's `@NAME` entries compile as `-D @NAME=VALUE` (the annotation pinned), None as no pin.

Every configuration is pruned before anything runs, and the reason is kept:
  - the compiler refuses it (the occupancy plan's shared-memory, register and wgmma-shape
    budgets, or any other diagnostic);
  - the sizes are not whole tiles where the kernel counts tiles rounding down (the ABI's
    divisibility, which a launch would refuse);
  - ptxas rejects it, or reports spills, a stack frame, or more registers than an SM holds.
Only what survives is launched: timed on the GPU as the benchmarks time (tkc.timing), the
median of replays of a CUDA graph of its launches. Without a GPU, tuning refuses before compiling
anything (`prune_only=True`, `--prune-only`, shows the pruning on any machine).

Results are cached on disk (tkc.cache's directory, `tune/`), keyed by the source, the kernel,
the shape bucket (per dim: the next power of two and the power of two dividing it, up to 256,
which decides whole tiles), the compiler fingerprint, and inside the entry by GPU name; a later
`autotune` with the same space returns the cached choice without timing, and
`tkc compile --tuned SIZES` compiles with it. TKC_PRINT_AUTOTUNING=1 prints each choice.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tkc import cache
from tkc.abi import DIM_LIMIT, KernelABI, evaluate
from tkc.diagnostics import TkError, did_you_mean
from tkc.dtypes import BY_NAME
from tkc.pipeline import StageUnavailable
from tkc.progress import ProgressLine

if TYPE_CHECKING:
    from tkc.api import CompiledKernel
    from tkc.dialects.tile import KernelOp

Value = int | bool | float
Config = dict[str, Value | None]
"""Parameters and `@` pins (None: the plan decides) of one configuration."""
Space = dict[str, list[Value | None]]

RUNS = 50
"""Timed batches per configuration (the benchmarks' GEMM uses 100; tuning ranks, it does not report)."""
MIN_TILE = 16
TRIMMED_TILES = ((5, 8), (3, 4))
"""Fractions of a tiling parameter's default also tried where they are whole multiples of
TRIMMED_STEP and at least TRIMMED_MIN. A wide tile leaves the last wave of a grid part-empty:
3072^3 at 128x256 is 288 tiles, 2.2 waves of the H200's 132 SMs, 0.76x cuBLAS; at 128x192, 384
tiles (2.9 waves) ran 1.00x, and 1024x5120x13824 at 128x160 (256 tiles) 0.95x against 0.64x."""
TRIMMED_STEP = 32
TRIMMED_MIN = 128
UNBOUNDED_SMS = 1 << 40
"""`num_sms` at which a grid's extents count its tiles (work_tiles)."""
RINGS: list[Value | None] = [None, 2, 3, 6, 8]
"""The default space's ring depths (`@stages`): the plan's own; shallower rings, which `prune`
keeps only where they add a CTA per SM; and deeper rings than the plan builds."""
STREAM_K: list[Value | None] = [None, 1]
"""The default space's `@stream_k` for a persistent grid it could split: whole tiles per CTA (the
plan's), then stream-K. Tile widths alone leave a last wave part-empty where M is small and K
long; on the H200, 2048x11008x4096 ran 0.95x cuBLAS at its best tiles and 1.01x split."""


@dataclass
class Trial:
    """One configuration: why it was pruned (None: it ran), or its time."""

    config: Config
    reason: str | None = None
    ms: float | None = None
    registers: int | None = None
    smem_bytes: int | None = None
    tiles: int | None = None
    """The grid's work tiles at the sizes (None: a stream-K kernel, which splits K over every SM):
    against the SMs, what the last wave leaves empty."""


@dataclass
class TuneResult:
    kernel: str
    sizes: dict[str, int]
    space: Space
    gpu: str | None
    trials: list[Trial] = field(default_factory=list)
    from_cache: bool = False

    @property
    def best(self) -> Trial | None:
        timed = [t for t in self.trials if t.ms is not None]
        return min(timed, key=lambda t: t.ms or 0.0) if timed else None

    def over_defaults(self, declared: Mapping[str, Value | None]) -> float | None:
        """How many times faster the best trial ran than the one at the `declared` parameters
        with no pins (None where that one was not tried or not timed)."""
        best = self.best
        default = next((t for t in self.trials
                        if all(value == (None if name.startswith("@") else declared.get(name))
                               for name, value in t.config.items())), None)
        if best is None or best.ms is None or default is None or default.ms is None:
            return None
        return default.ms / best.ms

    def table(self) -> str:
        """What was tried: one row per configuration, fastest first, pruned ones with their reason."""
        names = list(self.space)
        best = self.best
        order = sorted(self.trials, key=lambda t: (t.ms is None, t.ms or 0.0))
        header = [*names, "tiles", "regs", "smem KiB", "time ms", "result"]
        rows = [header]
        for trial in order:
            if trial.reason is not None:
                result = f"pruned: {trial.reason}"
            elif trial.ms is None:
                result = "feasible (not timed)"
            else:
                result = "best" if trial is best else f"{trial.ms / best.ms:.2f}x best" if best and best.ms else ""
            rows.append([
                *("plan" if trial.config[n] is None else str(trial.config[n]) for n in names),
                "-" if trial.tiles is None else str(trial.tiles),
                "-" if trial.registers is None else str(trial.registers),
                "-" if trial.smem_bytes is None else f"{trial.smem_bytes / 1024:.0f}",
                "-" if trial.ms is None else f"{trial.ms:.4f}",
                result,
            ])
        widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
        return "\n".join(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1] for row in rows
        ) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "sizes": self.sizes, "space": self.space, "gpu": self.gpu,
                "trials": [asdict(t) for t in self.trials]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TuneResult:
        return cls(data["kernel"], dict(data["sizes"]), dict(data["space"]), data["gpu"],
                   [Trial(**t) for t in data["trials"]], from_cache=True)


# --------------------------------------------------------------------------- the space


def _kernel_op(path: str, kernel: str | None, params: Mapping[str, Value | None]) -> KernelOp:
    from tkc.driver import input_stage, load_module, require_one_kernel
    from tkc.interpreter import find_kernel

    module = load_module(path, kernel, dict(params))  # type: ignore[arg-type]
    if (stage := input_stage(module)[0]) != "tile":
        raise TkError(f"tuning compiles configurations of a .tk source or tile IR; this is {stage} IR, lowered "
                      f"past the plan they pin", path)
    require_one_kernel(module, path, "-k NAME")
    return find_kernel(module, kernel)


def _interface(op: KernelOp) -> list[str]:
    return [str(arg.type) for arg in op.body.block.args]


def declared_params(op: KernelOp) -> Config:
    from tkc.runner import kernel_params

    return dict(kernel_params(op))


def declared_defaults(path: str, kernel: str | None, params: Mapping[str, Value | None]) -> Config:
    """The kernel's parameters as declared, with `params` (the fixed -D values) applied."""
    return declared_params(_kernel_op(path, kernel, params))


def search_space(
    path: str,
    kernel: str | None = None,
    given: Mapping[str, Sequence[Value | None]] | None = None,
    fixed: Mapping[str, Value] | None = None,
) -> Space:
    """The values to try of each parameter (see the module docstring), leaving out those `fixed`
    (-D); a name the kernel does not declare, or an empty list, is a user error."""
    from tkc.frontend.builder import COMMAND_LINE_PINS

    fixed = dict(fixed or {})
    op = _kernel_op(path, kernel, fixed)
    params = {name: value for name, value in declared_params(op).items() if name not in fixed}
    interface = _interface(op)
    if given:
        pins = [f"@{pin}" for pin in COMMAND_LINE_PINS]
        for name, values in given.items():
            if name.startswith("@") and name not in pins:
                raise TkError(f"the space names {name}, which is no annotation a configuration pins; those are "
                              f"{', '.join(pins)}{did_you_mean(name, pins)}")
            if name in fixed:
                raise TkError(f"the space names {name}, which -D {name}={fixed[name]} fixes: give it one way")
            if not name.startswith("@") and name not in params:
                raise TkError(f"the space names {name}, which {op.sym_name.data} has no parameter of; it has "
                              f"{', '.join(params) or 'none'}{did_you_mean(name, params)}")
            if isinstance(values, str | bytes) or not isinstance(values, Sequence):
                raise TkError(f"the space gives {name} {values!r}: a list of the values to try")
            if not values:
                raise TkError(f"the space gives {name} no values")
            for value in values:
                spelled = str(value).lower() if isinstance(value, bool) else repr(value)
                if (problem := _space_problem(name, value, params.get(name))) is not None:
                    raise TkError(f"the space gives {name} {spelled}: {problem}")
                if not name.startswith("@") and _interface(_kernel_op(path, kernel, {**fixed, name: value})) != interface:
                    raise TkError(f"the space gives {name} {spelled}, which changes the kernel's arguments: tuning "
                                  f"keeps them (give {name} with -D)")
        # each value once, in the order given
        return {name: list(dict.fromkeys(values)) for name, values in given.items()}
    space: Space = {}
    for name, default in params.items():
        if isinstance(default, bool) or not isinstance(default, int) or default < MIN_TILE or default & (default - 1):
            continue
        try:
            widened = _interface(_kernel_op(path, kernel, {**fixed, name: 2 * default}))
        except TkError:
            continue
        if widened == interface:
            space[name] = tile_values(default)
    pipelines, splits_k = _plan_choices(path, kernel, fixed)
    if pipelines:
        space["@stages"] = list(RINGS)
    if splits_k:
        space["@stream_k"] = list(STREAM_K)
    return space


def _space_problem(name: str, value: object, default: Value | None) -> str | None:
    """What is wrong with `value` as a tuning choice of `name` (a parameter declared as `default`,
    or an @annotation), or None: a pin takes an integer its annotation accepts (or None, the
    plan's choice); a parameter, an integer where it is declared as one. Flags and floats select
    what the kernel computes, which tuning keeps."""
    from tkc.frontend.builder import annotation_problem

    if name.startswith("@"):
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{name} takes an integer (or plan: the plan's own choice)"
        return annotation_problem(name[1:], value)
    if isinstance(default, bool) or not isinstance(default, int):
        return (f"{name} is a {'flag' if isinstance(default, bool) else 'number'}: it selects what the kernel "
                f"computes, which tuning keeps (give it with -D)")
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{name} is an integer parameter"
    return None


def tile_values(default: int) -> list[Value | None]:
    """The default space's values of a tiling parameter declared as `default` (a power of two)."""
    trimmed = [default * num // den for num, den in TRIMMED_TILES
               if (default * num) % (den * TRIMMED_STEP) == 0 and default * num // den >= TRIMMED_MIN]
    values: list[Value | None] = [v for v in sorted({default // 2, *trimmed, default, 2 * default}) if v >= MIN_TILE]
    return values


def _plan_choices(path: str, kernel: str | None, params: Mapping[str, Value | None]) -> tuple[bool, bool]:
    """Whether the plan gives the kernel (at `params`) a ring of stages, whose depth is then
    tuned, and whether it is a persistent grid that stream-K could split (STREAM_K)."""
    from tkc.api import CompiledKernel
    from tkc.dialects.tile import PlanAttr
    from tkc.interpreter import find_kernel
    from tkc.passes.occupancy import stream_k_obstacle
    from tkc.passes.plan import KernelPlan

    try:
        op = find_kernel(CompiledKernel(path, kernel, dict(params)).module, kernel)  # type: ignore[arg-type]
    except TkError:
        return False, False  # the defaults do not compile: the parameters' values decide what is tried
    plan = op.attributes.get("plan")
    if not isinstance(plan, PlanAttr):
        return False, False
    splits_k = KernelPlan.of(op).persistent and "stream_k" in plan.decisions.data and stream_k_obstacle(op) is None
    return "stages" in plan.decisions.data, splits_k


def spell(config: Config) -> str:
    """A configuration as -D options would give it: `BM=64 BN=128 @stages=8` (a None pin left out)."""
    return " ".join(f"{name}={value}" for name, value in config.items() if value is not None)


def candidates(space: Space) -> list[Config]:
    names = list(space)
    return [dict(zip(names, values)) for values in itertools.product(*(space[n] for n in names))]


# --------------------------------------------------------------------------- pruning


def prune(path: str, kernel: str | None, config: Config, sizes: Mapping[str, int],
          plan_ring_tried: bool = True) -> tuple[Trial, CompiledKernel | None]:
    """Compile `config` and check it against `sizes` and ptxas: the trial (pruned with a reason,
    or feasible) and the compiled kernel when feasible. `plan_ring_tried`: the space also holds
    each configuration with @stages unpinned, so a pin of the plan's own depth repeats one. Runs
    nothing on a GPU."""
    from tkc.api import CompiledKernel
    from tkc.backends.ptxas import PtxasError, ToolNotFound

    trial = Trial(dict(config))
    try:
        compiled = CompiledKernel(path, kernel, dict(config))  # type: ignore[arg-type]
        trial.reason = _no_ctas_gained(path, kernel, config, compiled, plan_ring_tried)
        if trial.reason is not None:
            return trial, None
        abi = compiled.abi
    except TkError as e:
        trial.reason = e.message.split("\n")[0]
        return trial, None
    trial.smem_bytes = abi.smem_bytes
    trial.tiles = work_tiles(abi, sizes)
    for dim, divisor, why in abi.whole_tiles:
        if dim in sizes and sizes[dim] % divisor:
            trial.reason = f"{dim}={sizes[dim]} is not a multiple of {divisor} ({why})"
            return trial, None
    for dim, divisor in abi.divisibility:
        if dim in sizes and sizes[dim] % divisor:
            trial.reason = f"{dim}={sizes[dim]} is not a multiple of {divisor} (the kernel counts tiles with {dim} / {divisor})"
            return trial, None
    try:
        report = compiled.assemble().report
    except ToolNotFound:
        return trial, compiled  # unchecked by ptxas; the driver's JIT would still refuse at load
    except PtxasError as e:
        trial.reason = "ptxas rejects it: " + e.log.strip().split("\n")[0]
        return trial, None
    from tkc.dialects.tile import SM_REGISTERS

    trial.registers = report.registers
    if report.spill_stores or report.spill_loads:
        trial.reason = f"ptxas: spills {report.spill_stores} B / reloads {report.spill_loads} B of registers"
    elif report.stack_frame:
        trial.reason = f"ptxas: {report.stack_frame} B stack frame"
    elif report.registers * abi.block > SM_REGISTERS:
        trial.reason = f"ptxas: {report.registers} registers x {abi.block} threads exceed the SM's {SM_REGISTERS}"
    return trial, (None if trial.reason else compiled)


def _no_ctas_gained(path: str, kernel: str | None, config: Config, compiled: CompiledKernel,
                    plan_ring_tried: bool) -> str | None:
    """Why a ring pinned no deeper than the plan's own is not worth timing (None where it is, or
    no such ring is pinned): as deep, it is the unpinned configuration (where the space holds
    that: `plan_ring_tried`); shallower with no more CTAs per SM than the plan's ring, it only has
    fewer loads in flight."""
    from tkc.api import CompiledKernel
    from tkc.interpreter import find_kernel
    from tkc.passes.plan import KernelPlan

    depth = config.get("@stages")
    if not isinstance(depth, int):
        return None
    unpinned = {**config, "@stages": None}
    try:
        own = KernelPlan.of(find_kernel(CompiledKernel(path, kernel, unpinned).module, kernel))  # type: ignore[arg-type]
    except TkError:
        return None  # without the pinned ring the rest of the configuration does not compile: the pin is what fits it
    pinned = KernelPlan.of(find_kernel(compiled.module, kernel))
    if depth > own.stages or pinned.ctas_per_sm > own.ctas_per_sm:
        return None
    if depth == own.stages:
        return f"@stages({depth}) is the plan's own ring: the configuration without the pin" if plan_ring_tried else None
    ctas = "one CTA" if pinned.ctas_per_sm == 1 else f"{pinned.ctas_per_sm} CTAs"
    return (f"@stages({depth}) keeps {ctas} per SM, as the plan's {own.stages}-stage ring does: fewer loads in "
            f"flight for no CTA more")


def work_tiles(abi: KernelABI, sizes: Mapping[str, int]) -> int | None:
    """The tiles the kernel's grid walks at `sizes`: its grid with SMs unbounded (a persistent
    grid is min(tiles, CTAs the SMs hold)); None for a stream-K grid (every SM, however few the
    tiles) or sizes the grid needs more of."""
    try:
        extents = [evaluate(e, {**sizes, "num_sms": UNBOUNDED_SMS, "max_clusters": UNBOUNDED_SMS}) for e in abi.grid]
    except KeyError:
        return None
    tiles = math.prod(extents)
    return None if tiles >= UNBOUNDED_SMS else tiles


# --------------------------------------------------------------------------- the GPU


def gpu_name() -> str:
    """The GPU's name (torch); StageUnavailable where there is none: tuning times on the GPU."""
    try:
        import torch
    except ImportError:
        raise StageUnavailable("tuning times each configuration on the GPU and needs torch with CUDA "
                               "(pip install 'tkc[torch]'); --prune-only (prune_only=True) shows the pruning without it") from None
    if not torch.cuda.is_available():
        raise StageUnavailable("tuning times each configuration on the GPU, and this machine has no CUDA GPU "
                               "(torch.cuda.is_available() is False); --prune-only (prune_only=True) shows the pruning without one")
    return str(torch.cuda.get_device_name())


def measure(compiled: CompiledKernel, sizes: Mapping[str, int]) -> float:
    """Milliseconds per launch on random inputs of `sizes`, from CUDA-graph replays
    (tkc.timing.graph_ms): the GPU's time, which ranks configurations of one kernel where batches
    of back-to-back launches would time the host's launch path (small shapes)."""
    import numpy as np
    import torch

    from tkc.interpreter import find_kernel
    from tkc.runner import make_inputs
    from tkc.timing import graph_ms

    op = find_kernel(compiled.module, compiled.kernel)
    arrays = make_inputs(op, {**declared_params(op), **sizes}, seed=0)  # type: ignore[dict-item]
    tensors = [
        torch.from_numpy(np.nan_to_num(np.asarray(arrays[a.name], np.float32))).to(
            "cuda", getattr(torch, BY_NAME[a.dtype].torch)
        )
        for a in compiled.abi.args
    ]
    return graph_ms({"kernel": lambda i: compiled(*tensors)}, RUNS)["kernel"]


# --------------------------------------------------------------------------- cache and driver


def shape_bucket(sizes: Mapping[str, int]) -> dict[str, list[int]]:
    """Per dim: the next power of two, and the power of two dividing it (up to 256)."""
    return {d: [1 << max(0, n - 1).bit_length(), min(256, n & -n)] for d, n in sorted(sizes.items())}


def _tune_file(path: str, kernel: str, sizes: Mapping[str, int]) -> str:
    source = cache.source_bytes(path) or b""
    blob = json.dumps({"source": hashlib.sha256(source).hexdigest(), "kernel": kernel, "bucket": shape_bucket(sizes),
                       "tkc": cache.compiler_fingerprint()}, sort_keys=True)
    return f"tune/{hashlib.sha256(blob.encode()).hexdigest()}.json"


def cached_results(path: str, kernel: str, sizes: Mapping[str, int]) -> dict[str, TuneResult]:
    """The cached tuning results for this source, kernel and shape bucket, by GPU name."""
    text = cache.read_text(_tune_file(path, kernel, sizes))
    try:
        return {gpu: TuneResult.from_json(data) for gpu, data in json.loads(text or "{}").items()}
    except (ValueError, KeyError, TypeError):
        return {}  # an unreadable entry is a miss


def _check_sizes(op: KernelOp, sizes: Mapping[str, int], flag: str = "--size") -> None:
    """Every symbolic dim of the kernel sized, by a positive integer; `flag` names where they came from."""
    from tkc.dialects.tile import GlobalType

    dims: list[str] = []
    for arg in op.body.block.args:
        assert isinstance(arg.type, GlobalType)
        dims += [d for d in arg.type.get_dims() if isinstance(d, str) and d not in dims]
    unknown = sorted(set(sizes) - set(dims))
    if unknown:
        raise TkError(f"{flag} names {', '.join(unknown)}, which {op.sym_name.data} has no symbolic dim of; "
                      f"its dims are {', '.join(dims) or 'none'}{did_you_mean(unknown[0], dims)}")
    missing = [d for d in dims if d not in sizes]
    if missing:
        raise TkError(f"tuning needs the size of every dim: give {', '.join(missing)} with {flag} (sizes= in the API)")
    for dim, size in sizes.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise TkError(f"the size of {dim} must be a positive integer, got {size!r}")
        if size >= DIM_LIMIT:
            raise TkError(f"the size of {dim}, {size}, does not fit in 31 bits (a kernel's index arithmetic is "
                          f"32-bit signed)")


Progress = Callable[[int, int, Trial], None]
PARALLEL_FROM = 8
"""Configurations from which pruning runs in worker processes (fewer: in this one)."""


def _prune_trial(job: tuple[str, str | None, Config, dict[str, int], bool]) -> Trial:
    """prune() in a worker process: the trial alone (a compiled kernel does not cross processes)."""
    return prune(*job)[0]


def _pruned(path: str, kernel: str | None, configs: list[Config], sizes: dict[str, int],
            jobs: int | None) -> Iterator[tuple[Trial, CompiledKernel | None]]:
    """Each configuration's trial, in order, with its compiled kernel where this process compiled it.
    Workers are spawned, not forked: the tuner's process holds a CUDA context."""
    plan_ring_tried = any(config.get("@stages") is None for config in configs)
    workers = min(jobs or os.cpu_count() or 1, len(configs))
    if workers < 2 or len(configs) < PARALLEL_FROM:
        for config in configs:
            yield prune(path, kernel, config, sizes, plan_ring_tried)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for trial in pool.imap(_prune_trial, [(path, kernel, config, sizes, plan_ring_tried) for config in configs]):
            yield trial, None


def autotune(
    path: str | Path,
    kernel: str | None = None,
    sizes: Mapping[str, int] | None = None,
    space: Mapping[str, Sequence[Value | None]] | None = None,
    params: Mapping[str, Value] | None = None,
    *,
    prune_only: bool = False,
    force: bool = False,
    progress: Progress | None = None,
    jobs: int | None = None,
) -> TuneResult:
    """Tune `kernel` of `path` for `sizes` over `space` (see the module docstring). The result's
    `best.config` holds the parameters to compile with (`params`, fixed, included); `table()`
    shows every trial. `jobs` processes (default: one per CPU) compile and prune the
    configurations side by side where there are PARALLEL_FROM of them or more; the timing is
    one at a time, in this process. A user error is reported under the kernel's file name."""
    try:
        return _autotune(str(path), kernel, sizes, space, params, prune_only, force, progress, jobs)
    except TkError as e:
        if e.filename is None:
            e.filename = str(path)
        raise


def _autotune(path: str, kernel: str | None, sizes: Mapping[str, int] | None,
              space: Mapping[str, Sequence[Value | None]] | None, params: Mapping[str, Value] | None,
              prune_only: bool, force: bool, progress: Progress | None, jobs: int | None) -> TuneResult:
    sizes = dict(sizes or {})
    fixed = dict(params or {})
    op = _kernel_op(path, kernel, fixed)
    name = op.sym_name.data
    _check_sizes(op, sizes)
    chosen = search_space(path, kernel, space, fixed)
    if fixed:
        chosen = {**chosen, **{k: [v] for k, v in fixed.items()}}
    gpu = None if prune_only else gpu_name()  # refuse before compiling anything
    if gpu is not None and not force:
        previous = cached_results(path, name, sizes).get(gpu)
        if previous is not None and previous.space == chosen and previous.sizes == sizes:
            _announce(previous)
            return previous
    result = TuneResult(name, sizes, chosen, gpu)
    configs = candidates(chosen)
    for index, (trial, compiled) in enumerate(_pruned(path, kernel, configs, sizes, jobs)):
        if trial.reason is None and gpu is not None:
            if compiled is None:  # pruned in a worker, which left its PTX and cubin in the disk cache
                from tkc.api import CompiledKernel

                compiled = CompiledKernel(path, kernel, dict(trial.config))  # type: ignore[arg-type]
            trial.ms = measure(compiled, sizes)
        result.trials.append(trial)
        if progress is not None:
            progress(index + 1, len(configs), trial)
    if gpu is not None:
        entries = {g: r.to_json() for g, r in cached_results(path, name, sizes).items()}
        cache.write(_tune_file(path, name, sizes), json.dumps({**entries, gpu: result.to_json()}, indent=1))
        _announce(result)
    return result


class TunedKernel:
    """A kernel that launches, at every shape bucket it is called with, the configuration the
    autotuner chose there (`tkc.autotuned`, as Triton's `@autotune(key=...)`): the first call in
    a bucket tunes it (or reads the cached result) and compiles the choice; later calls with the
    same torch tensors go straight to that kernel's launch. Sizes come from the arguments' shapes
    by the kernel's dims (a dim tiles change is never among them: the space keeps the interface)."""

    def __init__(self, path: str | Path, kernel: str | None = None,
                 space: Mapping[str, Sequence[Value | None]] | None = None, params: Mapping[str, Value] | None = None):
        from tkc.api import CompiledKernel

        self.path, self.kernel = str(path), kernel
        self.space = dict(space) if space is not None else None
        self.params = dict(params or {})
        self._interface = CompiledKernel(self.path, kernel, dict(self.params)).abi.args  # type: ignore[arg-type]
        self._by_bucket: dict[str, CompiledKernel] = {}
        self._by_signature: dict[tuple[Any, ...], CompiledKernel] = {}
        self.choices: dict[str, Config] = {}
        """The configuration chosen in each shape bucket called so far (by its JSON)."""

    def sizes(self, *arrays: Any) -> dict[str, int]:
        """The size of every dim, from the arguments' shapes (a TkError where they disagree)."""
        from tkc.runtime.arrays import adapt

        if len(arrays) != len(self._interface):
            raise TkError(f"expected {len(self._interface)} arguments ({', '.join(a.name for a in self._interface)}), "
                          f"got {len(arrays)}")
        sizes: dict[str, int] = {}
        for spec, array in zip(self._interface, arrays):
            info = adapt(array)
            if info is None or len(info.shape) != len(spec.dims):
                raise TkError(f"argument {spec.name}: expected an array of {len(spec.dims)} dims {list(spec.dims)}")
            for dim, n in zip(spec.dims, info.shape):
                if isinstance(dim, str) and sizes.setdefault(dim, n) != n:
                    raise TkError(f"argument {spec.name}: {dim} = {n}, but an earlier argument has {dim} = {sizes[dim]}")
        return sizes

    def compiled_for(self, *arrays: Any) -> CompiledKernel:
        """The kernel a call with these arguments launches (tuning its shape bucket if need be)."""
        from tkc.api import CompiledKernel

        sizes = self.sizes(*arrays)
        bucket = json.dumps(shape_bucket(sizes), sort_keys=True)
        compiled = self._by_bucket.get(bucket)
        if compiled is None:
            best = autotune(self.path, self.kernel, sizes, self.space, self.params).best
            if best is None:
                raise TkError(f"every configuration of {self.path} was pruned at "
                              f"{', '.join(f'{d}={n}' for d, n in sizes.items())}: autotune(...).table() says why")
            compiled = self._by_bucket[bucket] = CompiledKernel(self.path, self.kernel, dict(best.config))  # type: ignore[arg-type]
            self.choices[bucket] = dict(best.config)
        return compiled

    def __call__(self, *arrays: Any, stream: Any = None) -> Any:
        from tkc.runtime.launch import READY_CACHE_SIZE, torch_signature

        key = torch_signature(arrays)
        compiled = self._by_signature.get(key) if key is not None else None
        if compiled is None:
            compiled = self.compiled_for(*arrays)
            if key is not None:
                if len(self._by_signature) >= READY_CACHE_SIZE:
                    self._by_signature.pop(next(iter(self._by_signature)))
                self._by_signature[key] = compiled
        return compiled(*arrays, stream=stream)


def tuned_config(path: str, kernel: str | None, sizes: Mapping[str, int]) -> Config:
    """The best configuration cached for these sizes (for `tkc compile --tuned`); a user error
    when there is none. With results for several GPUs, the one of this machine's GPU."""
    op = _kernel_op(path, kernel, {})
    _check_sizes(op, sizes, "--tuned")
    results = cached_results(path, op.sym_name.data, sizes)
    if len(results) > 1:
        results = {g: r for g, r in results.items() if g == gpu_name()}
    best = next(iter(results.values())).best if results else None
    if best is None:
        spelt = ",".join(f"{d}={n}" for d, n in sizes.items())
        raise TkError(f"no tuning result for {op.sym_name.data} at {spelt}: run tkc tune {path} --size {spelt} first")
    return best.config


def _announce(result: TuneResult) -> None:
    """TKC_PRINT_AUTOTUNING=1: one line per choice on stderr, as Triton's TRITON_PRINT_AUTOTUNING."""
    if not cache.env_flag("TKC_PRINT_AUTOTUNING"):
        return
    best = result.best
    choice = spell(best.config) if best else "none (every configuration pruned)"
    timing = f" {best.ms:.4f} ms" if best and best.ms is not None else ""
    where = "cached" if result.from_cache else f"{len(result.trials)} tried"
    sizes = ",".join(f"{d}={n}" for d, n in result.sizes.items())
    print(f"tkc autotune: {result.kernel} at {sizes} on {result.gpu}: {choice}{timing} ({where})", file=sys.stderr)


def progress_line(stream: Any = None, force: bool = False, quiet: bool = False) -> Progress:
    """`[done/total] config: status` after each trial on `stream` (stderr; tkc.progress): rewritten
    in place on a terminal; elsewhere one line per trial, when `force`d."""
    line = ProgressLine(stream, force=force, quiet=quiet)

    def show(done: int, total: int, trial: Trial) -> None:
        config = spell(trial.config)
        status = "pruned" if trial.reason else f"{trial.ms:.4f} ms" if trial.ms is not None else "feasible"
        line.show(done, total, f"{config}: {status}")

    return show
