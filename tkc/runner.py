"""`tkc run`: run a kernel on seeded random inputs, on the GPU or in the reference interpreter.

    tkc run FILE -k KERNEL --size M=256,N=256,K=128 [-D NAME=VALUE ...] [--seed S]
            [--interpret] [--check] [--bisect]

Every argument the kernel only reads gets standard-normal values (rounded to its dtype);
every argument it stores to is poisoned with NaN first, so an element the kernel forgets to
write shows up. Each output is printed with its shape and checksums.

`--check` compares against `reference(inputs, params) -> {name: array}` from `X_ref.py` beside
`X.tk`, with the relative error ‖out − ref‖ / ‖ref‖ that bf16 inputs allow, and no element off by
more than a tenth of the reference's largest magnitude (so a few wrong rows cannot hide in the
norm of a large output). Where `X_ref.py` also
defines `inputs(params, rng) -> {name: array}` (params: the compile-time parameters, the
sizes and `params["kernel"]`, the kernel's name, as `reference` gets them), the arrays it returns replace the random ones, on the GPU and in the interpreter alike:
i32 tables (offsets, indices), which are otherwise zeros, inputs of a particular range, or the
contents a partly written output keeps (in place of its NaN poison).
`--bisect` interprets the IR before and after each tile-level pass on the same inputs and names
the first pass whose outputs move: a miscompile pinned to one pass.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
import traceback
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, cast

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp
from xdsl.passes import ModulePass

from tkc.diagnostics import TkError, did_you_mean
from tkc.pipeline import StageUnavailable
from tkc.dialects import tile
from tkc.interpreter import find_kernel, interpret, round_to, shape_of, stored_arguments

CHECK_TOLERANCE = 1e-2
"""Relative error allowed against the reference: what bf16 inputs and bf16 outputs allow."""

ELEMENT_TOLERANCE = 1e-1
"""The largest error any one element may have, as a share of the reference's largest magnitude:
the norm-wise error alone lets a few wrong rows of a large output pass, while no rounding of
bf16 (2^-8) or fp8 e4m3 (2^-4) moves an element by a tenth of the largest."""

BISECT_TOLERANCE = 1e-3
"""Relative change a tile-level pass may cause. The same interpreter runs both sides, so a
correct pass changes nothing beyond f32 reassociation, which bf16 roundings can amplify a little;
a miscompile moves the outputs by far more."""

Arrays = dict[str, np.ndarray]


def _assignments(value: Mapping[str, int] | Sequence[str] | str | None) -> dict[str, int]:
    """-D / --size values as the CLI parses them (a dict) or as raw "NAME=VALUE" items; flags
    stay bools (the frontend tells a flag parameter from an integer one)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    result: dict[str, int] = {}
    for item in value.split(",") if isinstance(value, str) else value:
        name, sep, number = item.strip().partition("=")
        if not sep:
            raise TkError(f"expected NAME=VALUE, got {item!r}")
        if number.strip().lower() in ("true", "false"):
            result[name.strip()] = number.strip().lower() == "true"
            continue
        try:
            result[name.strip()] = int(number, 0)
        except ValueError:
            raise TkError(f"the value of {name} must be an integer, got {number!r}") from None
    return result


def kernel_params(kernel: tile.KernelOp) -> dict[str, int | float]:
    """The compile-time parameters with their final values: integers, floats, bools for flags."""
    params: dict[str, int | float] = {}
    for name, attr in kernel.params.data.items():
        if isinstance(attr, IntegerAttr):
            flag = isinstance(attr.type, IntegerType) and attr.type.width.data == 1
            params[name] = attr.value.data != 0 if flag else attr.value.data
        elif isinstance(attr, FloatAttr):
            params[name] = attr.value.data
    return params


def write_only(kernel: tile.KernelOp) -> set[str]:
    """Arguments the kernel stores to and never reads (loads, or adds to with store_add): the
    ones to poison."""
    read = tile.read_tensors(kernel)
    stored = set(stored_arguments(kernel))
    args = zip(kernel.arg_names, kernel.body.block.args, strict=True)
    return {name for name, arg in args if name in stored and arg not in read}


MAX_RUN_ELEMENTS = 1 << 32
"""The most elements of arguments `tkc run` allocates (16 GiB of f32 host arrays)."""


def default_sizes(kernel: tile.KernelOp, tiles: int = 2) -> dict[str, int]:
    """A size for every symbolic dim: `tiles` tiles of the lcm of the extents that tile it
    (`tiles` for dims no tile spans, such as batch and heads), so no grid axis is trivial."""
    extents: dict[str, int] = {}
    for arg in kernel.body.block.args:
        assert isinstance(arg.type, tile.GlobalType)
        extents |= {dim: 1 for dim in arg.type.get_dims() if isinstance(dim, str)}
    for op in kernel.walk():
        if isinstance(op, tile.LoadOp | tile.StoreOp):
            tile_type = op.result.type if isinstance(op, tile.LoadOp) else op.value.type
            assert isinstance(tile_type, tile.ShapedTileType) and isinstance(op.tensor.type, tile.GlobalType)
            dims = op.tensor.type.get_dims()
            for dim, extent in zip(dims[len(dims) - len(tile_type.get_shape()) :], tile_type.get_shape()):
                if isinstance(dim, str):
                    extents[dim] = math.lcm(extents[dim], extent)
    return {dim: tiles * extent for dim, extent in extents.items()}


def meet_requirements(kernel: tile.KernelOp, sizes: dict[str, int], given: Collection[str]) -> dict[str, int]:
    """`sizes`, with the dims the user did not give moved where the kernel's `require`s reject
    them (`H == HKV * G` at G = 2 with both at 2): the nearest sizes, in tile extents (1 to 8 of
    them, at most 4 dims varied), that meet every requirement; unchanged where none do, so that
    the refusal says why."""
    from tkc.abi import evaluate, names_in
    from tkc.passes.tile_to_sm90.launch_abi import condition_expr

    conditions = [condition_expr(op.condition, kernel) for op in kernel.body.block.ops if isinstance(op, tile.RequireOp)]

    def holds(dims: dict[str, int]) -> bool:
        try:
            return all(evaluate(condition, dims) for condition in conditions)
        except ZeroDivisionError:
            return False

    free = sorted({name for c in conditions for name in names_in(c)} - set(given))
    if holds(sizes) or not free or len(free) > 4:
        return sizes
    extents = default_sizes(kernel, tiles=1)
    choices = [[extents[name] * k for k in range(1, 9)] for name in free]
    fitting = [dict(zip(free, combo)) for combo in itertools.product(*choices) if holds(sizes | dict(zip(free, combo)))]
    if not fitting:
        return sizes
    nearest = min(fitting, key=lambda moved: sum(abs(moved[n] - sizes[n]) / extents[n] for n in free))
    return sizes | nearest


def make_inputs(kernel: tile.KernelOp, dims: Mapping[str, int], seed: int) -> Arrays:
    """Seeded standard-normal inputs rounded to their dtypes (as f32), NaN for write-only outputs;
    i32 tensors, which a kernel reads as indices, are zeros (an index every tensor has)."""
    rng = np.random.default_rng(seed)
    poisoned = write_only(kernel)
    arrays: Arrays = {}
    for name, arg in zip(kernel.arg_names, kernel.body.block.args, strict=True):
        assert isinstance(arg.type, tile.GlobalType)
        shape = shape_of(arg.type, dims, name)
        if isinstance(arg.type.element_type, IntegerType):
            arrays[name] = np.zeros(shape, np.int32)
        elif name in poisoned:
            arrays[name] = np.full(shape, np.nan, np.float32)
        else:
            arrays[name] = round_to(rng.standard_normal(shape, np.float32), arg.type.element_type)
    return arrays


def checksum_line(name: str, array: np.ndarray) -> str:
    values = np.asarray(array, np.float64)
    nans = int(np.isnan(values).sum())
    finite = np.where(np.isnan(values), 0, values)
    return (
        f"{name}: {array.dtype} {list(array.shape)}  sum {finite.sum():.6e}  abs-sum {np.abs(finite).sum():.6e}"
        + (f"  NaN {nans}" if nans else "")
    )


def relative_error(out: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """(max abs error, ‖out − ref‖ / ‖ref‖); a NaN in one but not the other makes both infinite."""
    out = np.asarray(out, np.float64)
    try:
        ref = np.asarray(ref, np.float64)
    except (TypeError, ValueError) as e:
        raise TkError(f"the reference's array is no array of numbers: {e}") from None
    if out.shape != ref.shape:
        raise TkError(f"the reference has shape {list(ref.shape)}, the output {list(out.shape)}")
    nan_out, nan_ref = np.isnan(out), np.isnan(ref)
    if (nan_out != nan_ref).any():
        return float("inf"), float("inf")
    # NaN where the reference has NaN, and equal infinities, are no error
    with np.errstate(invalid="ignore"):  # inf - inf, which the where discards
        diff = np.where((out == ref) | nan_out, 0, out - ref)
    norm = float(np.linalg.norm(np.where(np.isfinite(ref), ref, 0)))
    max_abs = float(np.abs(diff).max(initial=0))
    error = float(np.linalg.norm(diff))
    return max_abs, error / norm if norm else error


def _reference_path(tk_file: str) -> Path:
    return Path(tk_file).with_name(Path(tk_file).stem + "_ref.py")


def _in_user_code(path: Path, what: str, error: Exception) -> TkError:
    """An exception that the user's `X_ref.py` (or a module beside it) raised, as their mistake
    rather than the compiler's: what raised it, and the innermost line of theirs it came from."""
    here = path.parent.resolve()
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename).resolve().parent == here]
    if isinstance(error, SyntaxError) and error.filename:
        where = f"{error.filename}:{error.lineno}"
    else:
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else str(path)
    return TkError(f"{what} raised {type(error).__name__}: {error}\n  at {where}")


def _reference_module(path: Path) -> Any:
    """`X_ref.py`, loaded with its directory importable, so references beside one another can
    share code (`from bias_ref import reference`)."""
    spec = importlib.util.spec_from_file_location(f"tkc_ref_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise _in_user_code(path, f"loading {path.name}", e) from None
    finally:
        sys.path.remove(str(path.parent))
    return module


def call_user_code(path: Path, what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) from the user's `X_ref.py`, its exceptions theirs (`_in_user_code`)."""
    try:
        return fn(*args)
    except Exception as e:
        raise _in_user_code(path, what, e) from None


def load_reference(tk_file: str) -> Callable[[Arrays, dict[str, int | float]], Arrays]:
    """`reference` from `X_ref.py` beside `X.tk`."""
    path = _reference_path(tk_file)
    if not path.is_file():
        raise TkError(f"--check needs a reference: {path} does not exist (it defines reference(inputs, params))")
    reference = getattr(_reference_module(path), "reference", None)
    if not callable(reference):
        raise TkError(f"{path} defines no function reference(inputs, params)")
    return reference


def load_input_maker(tk_file: str) -> Callable[[dict[str, int | float], np.random.Generator], Arrays] | None:
    """`inputs(params, rng)` from `X_ref.py` beside `X.tk` where it defines one: the inputs it
    returns replace the random ones (a table of offsets, indices a kernel gathers by)."""
    path = _reference_path(tk_file)
    if not path.is_file():
        return None
    maker = getattr(_reference_module(path), "inputs", None)
    return maker if callable(maker) else None


def argument_names(tk_file: str) -> set[str]:
    """The argument names of every kernel of a `.tk` file (from its parse tree: the other kernels
    are not built); none for an IR file."""
    from tkc.frontend import read_source
    from tkc.frontend.parser import parse_tree

    if not tk_file.endswith(".tk"):
        return set()
    return {str(arg.children[0]) for arg in parse_tree(read_source(tk_file), tk_file).find_data("arg")}


def replace_inputs(kernel: tile.KernelOp, arrays: Arrays, given: Arrays, source: str,
                   siblings: frozenset[str] = frozenset()) -> Arrays:
    """`arrays` with the arguments in `given` replaced: each a kernel argument of the shape the
    sizes give it, i32 ones integral, the others rounded to their dtype. An output the kernel
    only writes takes the given contents in place of its NaN poison (a kernel that writes part of
    it, such as a cache it appends to, leaves them, and the reference gets them). A name in
    `siblings`, an argument of another kernel of the file, is left out (one inputs() serves them
    all)."""
    types = dict(zip(kernel.arg_names, kernel.body.block.args, strict=True))
    replaced = dict(arrays)
    for name, value in given.items():
        if name not in types and name in siblings:
            continue
        if name not in types:
            raise TkError(f"{source} returns {name!r}, which is no argument of {kernel.sym_name.data} "
                          f"(its arguments: {', '.join(kernel.arg_names)}){did_you_mean(name, kernel.arg_names)}")
        array = np.asarray(value)
        if array.shape != arrays[name].shape:
            raise TkError(f"{source} returns {name} of shape {list(array.shape)}; the sizes give it "
                          f"{list(arrays[name].shape)}")
        arg_type = cast(tile.GlobalType, types[name].type)
        if isinstance(arg_type.element_type, IntegerType):
            if not np.array_equal(array, np.round(array)):
                raise TkError(f"{source} returns {name} with values that are not integers; it is an i32 tensor")
            replaced[name] = array.astype(np.int32)
        else:
            replaced[name] = round_to(array.astype(np.float32), arg_type.element_type)
    return replaced


def check(outputs: Arrays, expected: Arrays, out: TextIO, tolerance: float = CHECK_TOLERANCE) -> bool:
    """Print each output's error against the reference and PASS/FAIL; True when all pass."""
    if not isinstance(expected, Mapping):
        raise TkError(f"the reference returns a {type(expected).__name__}; it returns a dict of the outputs' "
                      f"arrays by tensor name ({', '.join(outputs)})")
    missing = set(outputs) - set(expected)
    if missing:
        raise TkError(f"the reference returns no {', '.join(sorted(missing))}")
    passed = True
    for name, value in outputs.items():
        max_abs, rel = relative_error(value, expected[name])
        reference = np.asarray(expected[name], np.float64)  # an array of numbers: relative_error checked
        scale = float(np.abs(reference[np.isfinite(reference)]).max(initial=0))
        element = max_abs / scale if scale else max_abs
        ok = rel <= tolerance and element <= ELEMENT_TOLERANCE
        passed &= ok
        print(f"{name}: max abs error {max_abs:.3e} ({element:.3e} of the largest |ref|)  rel error {rel:.3e}  "
              f"{'PASS' if ok else 'FAIL'}", file=out)
    print("PASS" if passed else f"FAIL (tolerance rel {tolerance:g}, any element {ELEMENT_TOLERANCE:g} of the largest |ref|)",
          file=out)
    return passed


# --------------------------------------------------------------------------- bisect


Stage = tuple[str, ModuleOp]


def snapshots(
    module: ModuleOp, passes: Sequence[ModulePass] | None = None
) -> tuple[list[Stage], tuple[str, str] | None]:
    """("input", IR) then (pass, IR after it) for each tile-level pass, and the pass that
    crashed or left invalid IR with the error (None if all ran); `module` is untouched.

    By default the driver's tile pipeline; `passes` runs an explicit list instead (tests inject
    a deliberately broken pass this way).
    """
    from tkc.driver import instantiate, make_context, pipeline_for

    ctx, current = make_context(), module.clone()
    stages = [("input", module.clone())]
    for each in instantiate(pipeline_for("tile")) if passes is None else passes:
        try:
            each.apply(ctx, current)
            current.verify()
        except TkError:
            raise  # the user's program broke a pass's contract (an infeasible annotation, ...)
        except Exception as e:  # a crashing pass is what bisect is looking for, too
            frame = traceback.extract_tb(e.__traceback__)[-1]
            return stages, (each.name, f"{type(e).__name__}: {e} (at {frame.filename}:{frame.lineno})")
        stages.append((each.name, current.clone()))
    return stages, None


@dataclass
class BisectResult:
    culprit: str | None
    """The first pass whose outputs differ from the input IR's, or None."""
    errors: list[tuple[str, float]]
    """(pass, largest relative change of any output) for each pass interpreted."""


def largest_difference(name: str, before: np.ndarray, after: np.ndarray) -> str:
    """Where an output moved most, for the pass --bisect names (NaN where there was a number
    counts as the largest move)."""
    before, after = np.asarray(before, np.float64), np.asarray(after, np.float64)
    moved = np.where(np.isnan(before) & np.isnan(after), 0, np.abs(after - before))
    moved = np.where(np.isnan(moved), np.inf, moved)
    if not moved.any():
        return f"{name}: unchanged"
    at = np.unravel_index(int(np.argmax(moved)), moved.shape)
    index = ", ".join(str(int(i)) for i in at)
    return f"{name}: rel change {relative_error(after, before)[1]:.3e}, largest at [{index}]: {before[at]:.6g} -> {after[at]:.6g}"


def bisect(
    stages: Sequence[tuple[str, ModuleOp]],
    kernel: str | None,
    inputs: Arrays,
    params: Mapping[str, int],
    out: TextIO,
    crashed: tuple[str, str] | None = None,
    tolerance: float = BISECT_TOLERANCE,
) -> BisectResult:
    """Interpret every stage on the same inputs; the first whose outputs move names the pass
    (or else `crashed`, the pass that failed after the last stage, with its error)."""
    (_, first), rest = stages[0], stages[1:]
    baseline = interpret(first, kernel, inputs, params)
    print(f"{'input':<24} reference", file=out)
    errors: list[tuple[str, float]] = []
    for name, module in rest:
        try:
            result = interpret(module, kernel, inputs, params)
        except TkError as e:
            print(f"{name:<24} cannot be interpreted: {e.message}", file=out)
            print(f"first pass whose IR the interpreter cannot run: {name}", file=out)
            return BisectResult(name, errors)
        worst = max(relative_error(result[k], baseline[k])[1] for k in baseline)
        errors.append((name, worst))
        if worst > tolerance:
            print(f"{name:<24} rel change {worst:.3e}  DIFFERS", file=out)
            for output, before in baseline.items():
                print("  " + largest_difference(output, before, result[output]), file=out)
            print(f"first pass whose outputs differ: {name}", file=out)
            return BisectResult(name, errors)
        print(f"{name:<24} rel change {worst:.3e}  same", file=out)
    if crashed is not None:
        print(f"{crashed[0]:<24} failed: {crashed[1]}", file=out)
        print(f"first pass that fails: {crashed[0]}", file=out)
        return BisectResult(crashed[0], errors)
    print("no pass changes the outputs", file=out)
    return BisectResult(None, errors)


# --------------------------------------------------------------------------- the command


def run_on_gpu(
    path: str, kernel: str | None, inputs: Mapping[str, np.ndarray], params: Mapping[str, int], out: TextIO | None = None
) -> Arrays:
    """Compile `kernel`, launch it once on `inputs` (synchronous) and return the arguments it
    writes; then print the median time of 20 launches and their TFLOP/s (where torch is there to
    keep copies on the device) to `out` (sys.stdout as it is at the call). tkc.runtime.DeviceError
    where no usable GPU is."""
    out = out or sys.stdout
    from tkc.api import CompiledKernel
    from tkc.flops import count_flops
    from tkc.runtime.run import launch_arrays, median_milliseconds, written

    compiled = CompiledKernel(path, kernel, dict(params))
    abi = compiled.abi
    arrays = launch_arrays(abi, inputs)
    compiled(*arrays)
    outputs = written(abi, arrays)
    milliseconds = median_milliseconds(abi, compiled, arrays)
    if milliseconds is not None:
        dims = {d: int(n) for spec, a in zip(abi.args, arrays, strict=True) for d, n in zip(spec.dims, a.shape)
                if isinstance(d, str)}
        flops = count_flops(find_kernel(compiled.module, kernel), dims)
        rate = f"  {flops / milliseconds / 1e9:.1f} TFLOP/s" if flops else ""
        print(f"time {milliseconds * 1e3:.1f} us (median of 20 launches){rate}", file=out, flush=True)
    return outputs


def gpu_refusal(path: str, kernel: str, inputs: Mapping[str, np.ndarray], params: Mapping[str, int]) -> str | None:
    """Why a GPU launch of `kernel` on `inputs` would be refused before it ran (the runtime's
    argument checks: TMA's 16-byte rows, dims a variant needs whole, 31-bit sizes), or why the GPU
    backend does not compile the kernel; None where it would launch. No GPU is needed."""
    from tkc.api import CompiledKernel

    return CompiledKernel(path, kernel, dict(params)).launch_refusal(inputs, converted=True)


def run_command(args: Any, out: TextIO | None = None) -> int:
    """`tkc run`, printing to `out` (sys.stdout as it is at the call, not at import); returns the
    exit status (1: --check failed or bisect found a pass)."""
    out = out or sys.stdout
    from tkc.driver import load_module, require_one_kernel

    params = _assignments(getattr(args, "params", None) or getattr(args, "define", None))
    sizes = _assignments(args.size)
    module = load_module(args.file, args.kernel, params)
    require_one_kernel(module, args.file)
    kernel_op = find_kernel(module, args.kernel)
    kernel = kernel_op.sym_name.data
    final_params = kernel_params(kernel_op)
    defaults = {dim: size for dim, size in default_sizes(kernel_op).items() if dim not in final_params}
    unknown = sorted(set(sizes) - set(defaults))
    if unknown:
        raise TkError(f"--size names {', '.join(unknown)}, which {kernel} has no symbolic dim of; "
                      f"its dims are {', '.join(defaults) or 'none'}{did_you_mean(unknown[0], defaults)}")
    given, sizes = dict(sizes), meet_requirements(kernel_op, defaults | sizes, sizes)
    dims = {name: value for name, value in final_params.items() if isinstance(value, int)} | sizes
    elements = sum(math.prod(shape_of(cast(tile.GlobalType, arg.type), dims, name))
                   for name, arg in zip(kernel_op.arg_names, kernel_op.body.block.args, strict=True))
    if elements > MAX_RUN_ELEMENTS:
        raise TkError(f"--size {' '.join(f'{d}={n}' for d, n in sizes.items())} makes {elements} elements of "
                      f"inputs and outputs; tkc run handles at most {MAX_RUN_ELEMENTS}")
    reference = load_reference(args.file) if args.check else None  # a missing one fails before the run
    print(f"{kernel}: {' '.join(f'{dim}={size}' for dim, size in sizes.items())}  seed {args.seed}", file=out, flush=True)
    if given and (defaulted := [dim for dim in sizes if dim not in given]):
        # the sizes of dims the user did not give relate to none of theirs beyond the requires
        moved = "; moved to meet the kernel's requires" if any(sizes[d] != defaults[d] for d in defaulted) else ""
        print(f"note: --size gave no {', '.join(defaulted)}; tkc run took "
              f"{', '.join(f'{dim}={sizes[dim]}' for dim in defaulted)} (two tiles, or 2{moved})", file=out, flush=True)
    inputs = make_inputs(kernel_op, dims, args.seed)
    poisoned = write_only(kernel_op)  # the outputs the reference does not get: NaN until written
    maker = load_input_maker(args.file)
    if maker is not None:
        source = f"inputs() of {_reference_path(args.file).name}"
        supplied = call_user_code(_reference_path(args.file), source, maker, final_params | sizes | {"kernel": kernel},
                                  np.random.default_rng(args.seed))
        inputs = replace_inputs(kernel_op, inputs, supplied, source, frozenset(argument_names(args.file)))
        poisoned -= set(supplied)
        if supplied:  # inputs() may give nothing for this kernel (one inputs() shared by several)
            print(f"inputs {', '.join(supplied)} from {source}", file=out, flush=True)

    if args.bisect:
        stages, crashed = snapshots(module)
        culprit = bisect(stages, kernel, inputs, sizes, out, crashed).culprit
        return 1 if culprit else 0

    if args.interpret:
        from tkc.progress import ProgressLine

        # A terminal sees progress once the run has taken a second; anything else only when asked.
        line = ProgressLine(delay=1.0, interval=0.1, log_interval=1.0, force=getattr(args, "progress", False),
                            quiet=getattr(args, "quiet", False))
        try:
            outputs = interpret(module, kernel, inputs, sizes, line.show)
        finally:
            line.close()
        # the interpreter takes any size; say where the GPU would not, so a pass here is one there
        if (refusal := gpu_refusal(args.file, kernel, inputs, params)) is not None:
            print(f"note: on the GPU this run would stop before launching: {refusal}", file=out, flush=True)
    else:
        from tkc.runtime import DeviceError

        try:
            outputs = run_on_gpu(path=args.file, kernel=kernel, inputs=inputs, params=params, out=out)
        except DeviceError as e:  # no usable GPU is the machine's gap, not a mistake in the input
            raise StageUnavailable(f"cannot run on the GPU: {e} (--interpret runs the reference interpreter)") from None
    for name, value in outputs.items():
        print(checksum_line(name, value), file=out)
    if reference is None:
        return 0
    expected = call_user_code(_reference_path(args.file), f"reference() of {_reference_path(args.file).name}",
                              reference, {name: a for name, a in inputs.items() if name not in poisoned},
                              final_params | sizes | {"kernel": kernel})
    return 0 if check(outputs, expected, out) else 1
