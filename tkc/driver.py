"""The compilation driver: load a `.tk` or `.mlir` file, run the pass pipeline, emit a stage.

`PIPELINE` is the fixed order of passes. `compile_module` runs the part of it that lies between
the stage its input is in and the stage to emit, through an xDSL `PassPipeline` whose callback
verifies the IR after every pass
(a pass that leaves invalid IR is a compiler bug, reported with the pass's name) and feeds an
`Observer`, which is how the IR dumps and `ir_after_each_pass` (the interpreter's --bisect)
see the module between passes.

Passes and backends are imported lazily; a part the requested output needs and this build or
machine lacks (a pass of the pipeline whose module is missing, `tkc run`/`tkc report`, the CUDA
tools behind cubin/sass) raises `StageUnavailable`, which the CLI reports in one line (exit 2):
a pipeline that silently left out a pass would compile something else than it says.

Resuming from a dump. Every dump parses back, so `tkc compile DUMP` continues where the dump
was taken and gives the PTX (and ABI) of the uninterrupted compile. `input_stage` reads the
input's stage from the IR itself, never from a file name or a dump header:
  - a `ptx.module` is PTX: every pass is behind it and only the backend remains, unless it
    still holds structured control flow (`STRUCTURED_PTX_OPS`): then ptx-flatten-control-flow;
  - an `sm90.kernel` is sm90 IR: convert-tile-to-sm90 is behind it. sm90-build-rings,
    sm90-schedule-wgmma and sm90-verify-barriers run again: the first has nothing left to do
    once the ring ops are expanded, the second finds each issue and wait where it left them, the
    third only checks and leaves no trace, so whether they ran need not be told;
  - a `tile.kernel` is tile IR, and each tile pass that ran left its marks on it (decisions,
    offsets, fences: `TILE_PASS_MARKS`): the input resumes after the last pass whose marks it
    has. A pass leaves its marks whenever it changes anything, so a later pass without marks
    either did not run or had nothing to do, and running it is right either way. Tile IR
    without marks (the frontend's output, or after canonicalize or cse, which leave none)
    starts from canonicalize: run again on their own output, the two give back the same IR.
Resuming rather than re-running the tile passes is what makes the result the same as the
uninterrupted compile by construction: the passes that run see exactly the IR they would have
seen, with no need for every pass to be idempotent. It also keeps the decisions in the dump,
including ones a user edited, which a re-run would recompute. `--emit` of a stage before the
input's is a user error.
Dumps print each op's `.tk` location, so a resumed compile's diagnostics point at the source.
"""

from __future__ import annotations

import importlib
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import IO, Any

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import BlockArgument, Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from tkc import cache, collector
from tkc.diagnostics import TkError, decode_utf8, did_you_mean
from tkc.passes import ALL_PASSES, is_available
from tkc.pipeline import (
    CHECK_ONLY_PASSES,
    EMITS,
    PIPELINE,
    PTX_PASSES,
    SM90_PASSES,
    STAGE_ENDS,
    TILE_PASSES,
    StageUnavailable,
)


_LAST_PASS = {"tile": TILE_PASSES[-1], "sm90": SM90_PASSES[-1]}

STAGES = ("tile", "sm90", "ptx")
"""The dialect levels IR is in, in pipeline order (the first three of EMITS)."""

_STAGE_OF_TOP_OP = {"tile.kernel": "tile", "sm90.kernel": "sm90", "ptx.module": "ptx"}
KERNEL_OPS = ("tile.kernel", "sm90.kernel", "ptx.entry")
"""The op that holds a kernel (its sym_name the kernel's name) at each stage."""
_PASSES_BEHIND = {"sm90": PIPELINE.index("convert-tile-to-sm90") + 1, "ptx": len(PIPELINE)}
"""How many passes of PIPELINE lie behind sm90 and flat PTX input (tile input: see TILE_PASS_MARKS)."""
STRUCTURED_PTX_OPS = frozenset({"ptx.if", "ptx.for", "ptx.loop"})
"""The ops ptx-flatten-control-flow replaces: PTX input holding one is still ahead of it."""

TILE_PASS_MARKS: dict[str, frozenset[str]] = {
    "tile-sweep-order": frozenset({"sweep"}),
    "tile-rematerialize": frozenset({"rematerialized"}),
    "tile-mask-tails": frozenset({"tail_masks", "whole_tiles"}),
    "tile-vector-layout": frozenset({"column_vectors"}),
    "tile-memory-order": frozenset({"tile.fence", "memory_order"}),
    "tile-swizzle-select": frozenset({"smem_align"}),
    "tile-bank-conflicts": frozenset({"bank_conflicts"}),
    "tile-occupancy-plan": frozenset({"plan"}),
    "tile-retain-sweep": frozenset({"tile.retain", "retain"}),
    "tile-pipeline": frozenset({"stage_offset", "smem_offset", "col_scratch_offset"}),
    "tile-warp-specialize": frozenset({"role"}),
}
"""The ops each tile pass inserts and the attributes it writes whenever it changes the IR (its
module docstring lists them); no other pass or frontend makes them, so an op that is, or
carries, one of them shows that the pass ran. (tile-pipeline writes a `plan` only where none
ran; if that is all it wrote, it runs again on resuming and only checks the smem_bytes.)"""


class PassVerifyError(Exception):
    """A pass left IR that does not verify: a bug in that pass, not in the user's program."""


def load_stage(module: str, attribute: str, what: str) -> Any:
    """`module.attribute`, imported now; StageUnavailable if the module does not exist."""
    try:
        return getattr(importlib.import_module(module), attribute)
    except ModuleNotFoundError as e:
        if e.name is None or not module.startswith(e.name):
            raise  # the stage exists but one of its own imports is missing: a real bug
        raise StageUnavailable(f"{what} ({module}) is not available in this build of tkc") from None


def pipeline_for(emit: str) -> list[str]:
    """The passes that produce `emit`; StageUnavailable if the module of one of them is missing."""
    if emit not in EMITS:
        raise TkError(f"unknown --emit stage {emit!r}; choose one of {', '.join(EMITS)}")
    last = _LAST_PASS.get(emit, PIPELINE[-1])
    names = list(PIPELINE[: PIPELINE.index(last) + 1])
    for name in names:
        if not is_available(name):
            raise StageUnavailable(f"--emit={emit} needs the pass {name}, which is not available in this build of tkc")
    return names


def marked_tile_passes(kernel: Operation) -> set[str]:
    """The tile passes whose marks (TILE_PASS_MARKS) a tile.kernel carries: they ran on it."""
    return {
        name
        for op in kernel.walk()
        for name, marks in TILE_PASS_MARKS.items()
        if op.name in marks or not marks.isdisjoint(op.attributes)
    }


def _tile_passes_done(kernel: Operation) -> int:
    """How many passes of PIPELINE ran on a tile.kernel: up to the last one whose marks it carries."""
    return max((PIPELINE.index(name) + 1 for name in marked_tile_passes(kernel)), default=0)


def input_stage(module: ModuleOp) -> tuple[str, int]:
    """The stage `module` is in and how many passes of PIPELINE are already behind it."""
    stages = {_STAGE_OF_TOP_OP[op.name] for op in module.body.block.ops if op.name in _STAGE_OF_TOP_OP}
    if len(stages) > 1:
        mixed = " and ".join(s for s in STAGES if s in stages)
        raise TkError(f"the input mixes {mixed} IR; compile one stage at a time")
    stage = stages.pop() if stages else "tile"
    if stage == "ptx" and any(op.name in STRUCTURED_PTX_OPS for op in module.walk()):
        return stage, PIPELINE.index("ptx-flatten-control-flow")
    if stage != "tile":
        return stage, _PASSES_BEHIND[stage]
    kernels = [op for op in module.body.block.ops if op.name == "tile.kernel"]
    done = {_tile_passes_done(kernel) for kernel in kernels}
    if len(done) > 1:
        raise TkError("the input's tile kernels went through different passes; compile them one at a time")
    return stage, next(iter(done), 0)


def make_context() -> Context:
    """A context with every xDSL dialect and every tkc dialect registered (loaded on first use)."""
    from xdsl.dialects import get_all_dialects

    from tkc.universe import available_dialects

    ctx = Context()
    for name, factory in (get_all_dialects() | available_dialects()).items():
        ctx.register_dialect(name, factory)
    return ctx


def read_text(path: str | Path) -> str:
    """The UTF-8 text of an input file (lines as in the file: no newline translation); a file
    that cannot be read is a user error, invalid UTF-8 one at the byte."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise TkError(f"cannot read the file: {e.strerror or e}", str(path)) from None
    return decode_utf8(data, str(path))


def parse_mlir(text: str, filename: str, ctx: Context | None = None) -> ModuleOp:
    """Parse and verify MLIR text (tkc.ir_input); mistakes in it are the user's (TkError)."""
    from tkc.ir_input import parse_mlir as parse_and_verify

    return parse_and_verify(text, filename, ctx or make_context())


def kernels_of(module: ModuleOp) -> list[Operation]:
    return [op for op in module.walk() if op.name in KERNEL_OPS]


def kernel_name(kernel: Operation) -> str:
    """The name of an op of KERNEL_OPS: its `sym_name` property."""
    name = kernel.properties["sym_name"]
    assert isinstance(name, StringAttr)
    return name.data


def select_kernel(module: ModuleOp, kernel: str | None, path: str) -> None:
    """Keep only the kernel named `kernel` (all when None); a name the module lacks is a user error."""
    if kernel is None:
        return
    kernels = kernels_of(module)
    names = [kernel_name(op) for op in kernels]
    if kernel not in names:
        have = f"the file defines {', '.join(names)}" if names else "the file defines none"
        raise TkError(f"no kernel named '{kernel}' ({have}){did_you_mean(kernel, names)}", path)
    for op in kernels:
        if kernel_name(op) != kernel:
            op.detach()
            op.erase()


def require_one_kernel(module: ModuleOp, path: str, choose: str = "-k NAME") -> None:
    """A user error unless `module` holds exactly one kernel (PTX, a run and a report are of
    one): it names the kernels and how to pick one (`choose`)."""
    names = [kernel_name(op) for op in kernels_of(module)]
    if not names:
        raise TkError(f"the file defines no kernel (no {', '.join(KERNEL_OPS[:-1])} or {KERNEL_OPS[-1]})", path)
    if len(names) > 1:
        raise TkError(f"the file defines {len(names)} kernels ({', '.join(names)}); choose one with {choose}", path)


def load_module(
    path: str | Path, kernel: str | None = None, params: dict[str, int] | None = None, ctx: Context | None = None
) -> ModuleOp:
    """The tile IR of a `.tk` file (through the frontend) or of an `.mlir` file, verified; only
    `kernel` when one is named."""
    path = str(path)
    if path.endswith(".mlir"):
        values = [name for name in params or {} if not name.startswith("@")]
        if values:
            raise TkError(f"-D {values[0]}: parameters apply to .tk sources only, not to {path} (IR holds their "
                          f"values); -D @ANNOTATION=VALUE pins a tile kernel's plan")
        module = parse_mlir(read_text(path), path, ctx)
        select_kernel(module, kernel, path)
        _pin_annotations(module, params or {}, path)
        return module
    from tkc.frontend import parse_tk, read_source

    try:
        source = read_source(path)
    except OSError as e:
        raise TkError(f"cannot read the file: {e.strerror or e}", str(path)) from None
    module = parse_tk(source, path, params or {}, kernel)
    module.verify()  # a frontend that builds invalid IR is a compiler bug, not a user error
    return module


def _pin_annotations(module: ModuleOp, params: Mapping[str, Any], path: str) -> None:
    """`-D @NAME=VALUE` on tile IR: each tile kernel's annotation, as the frontend sets it on a
    `.tk` source. IR the plan was decided for (a dump from tile-occupancy-plan on, which the
    pipeline resumes after that pass) has no plan left to pin."""
    from tkc.dialects.tile import KernelOp
    from tkc.frontend.builder import command_line_pins

    pins = command_line_pins(params, path)
    if not pins:
        return
    kernels = [op for op in kernels_of(module) if isinstance(op, KernelOp)]
    if not kernels:
        raise TkError(f"-D @{next(iter(pins))}: annotations pin a tile kernel's plan, and {path} holds no tile.kernel "
                      f"(its plan was decided in the passes that lowered it)")
    for op in kernels:
        if "plan" in op.attributes:
            raise TkError(f"-D @{next(iter(pins))}: {path} holds {kernel_name(op)}'s plan, decided by "
                          f"tile-occupancy-plan: pin its input (a dump before that pass, or the .tk source)")
        op.annotations = DictionaryAttr({**op.annotations.data, **pins})


class Observer:
    """Sees the module around every pass of `compile_module`; override what you need."""

    def input(self, module: ModuleOp) -> None:
        """Called with the module as read, before anything runs on it (the dumps' 00-input)."""

    def will_run(self, pass_names: Sequence[str], what: str) -> None:
        """Called once before the first pass with the passes about to run, and what runs them
        (`this compile to ptx`), for messages."""

    def before(self, pass_name: str, module: ModuleOp) -> None:
        pass

    def after(self, pass_name: str, module: ModuleOp) -> None:
        pass

    def timed(self, pass_name: str, pass_seconds: float, verify_seconds: float) -> None:
        """How long the pass took, and the verification of the IR it left."""


class Observers(Observer):
    """Several observers, each told everything in turn (dumps and timing together)."""

    def __init__(self, *observers: Observer):
        self.observers = observers

    def input(self, module: ModuleOp) -> None:
        for observer in self.observers:
            observer.input(module)

    def will_run(self, pass_names: Sequence[str], what: str) -> None:
        for observer in self.observers:
            observer.will_run(pass_names, what)

    def before(self, pass_name: str, module: ModuleOp) -> None:
        for observer in self.observers:
            observer.before(pass_name, module)

    def after(self, pass_name: str, module: ModuleOp) -> None:
        for observer in self.observers:
            observer.after(pass_name, module)

    def timed(self, pass_name: str, pass_seconds: float, verify_seconds: float) -> None:
        for observer in self.observers:
            observer.timed(pass_name, pass_seconds, verify_seconds)


class LocatedPrinter(Printer):
    """Prints every op's and block argument's location, as `loc("file.tk":line:col)`, except
    unknown ones (xDSL's print_debuginfo writes `loc(unknown)` on each of them): the
    diagnostics of the passes that run on a dump point at the `.tk` source through them."""

    def print_op(self, op: Operation) -> None:
        outer = self.print_debuginfo
        self.print_debuginfo = not isinstance(op.location, UnknownLoc)
        try:
            super().print_op(op)
        finally:
            self.print_debuginfo = outer

    def print_block_argument(self, arg: BlockArgument, print_type: bool = True) -> None:
        outer = self.print_debuginfo
        self.print_debuginfo = not isinstance(arg.location, UnknownLoc)
        try:
            super().print_block_argument(arg, print_type)
        finally:
            self.print_debuginfo = outer


def print_ir(module: ModuleOp, stream: IO[str]) -> None:
    LocatedPrinter(stream=stream).print_op(module)
    stream.write("\n")


def ir_text(module: ModuleOp) -> str:
    out = StringIO()
    print_ir(module, out)
    return out.getvalue()


DUMP_MANIFEST = ".tkc-dumps"
"""The file in a dump directory that lists the dumps tkc wrote there: the next run removes those
and only those (never a file of the user's)."""

_DUMP_FILE = re.compile(r"[0-9]{2,}-[\w.-]+\.mlir")


def dump_header(when: str, pass_name: str) -> str:
    """The line before each IR dump, in mlir-opt's style; an MLIR comment that begins with
    `// -----`, so a dump parses back and `--split-input-file` takes a stream of them apart."""
    return f"// -----// IR Dump {when} {pass_name} //----- //\n"


@dataclass
class DumpOptions(Observer):
    """The IR dump flags, the same in `tkc compile` and `tkc-opt`: headers plus MLIR to
    `stream`, and/or numbered files in `dump_dir` (`00-input.mlir`, `01-PASS.mlir`, ...).

    A dump directory is cleared of the previous run's dumps: those its manifest
    (`DUMP_MANIFEST`) lists, which this run rewrites. A file of the name of a dump that tkc did
    not write is the user's and is never overwritten.
    """

    stream: IO[str]
    after_all: bool = False
    before_all: bool = False
    after_passes: frozenset[str] = frozenset()
    before_passes: frozenset[str] = frozenset()
    dump_dir: Path | None = None
    _count: int = field(default=0, init=False)
    _written: list[str] = field(default_factory=list, init=False)

    def input(self, module: ModuleOp) -> None:
        """Start the dump directory afresh (the files of an earlier run would mix with these)
        with 00-input.mlir."""
        if self.dump_dir is not None:
            self._remove_old_dumps()
            self._write_file("00-input.mlir", module)

    def will_run(self, pass_names: Sequence[str], what: str) -> None:
        """A user error if a pass whose IR is asked for is not among those that will run
        (otherwise the dump would silently be missing)."""
        for when, wanted in (("before", self.before_passes), ("after", self.after_passes)):
            for name in sorted(set(wanted) - set(pass_names)):
                ran = ", ".join(pass_names) if pass_names else "none"
                raise TkError(f"--print-ir-{when}={name}: {name} does not run in {what} (the passes that "
                              f"run: {ran}){did_you_mean(name, pass_names)}")

    def restart(self) -> None:
        """Number the passes from 01 again (a compile that runs the pipeline from its input twice)."""
        self._count = 0

    def before(self, pass_name: str, module: ModuleOp) -> None:
        if self.before_all or pass_name in self.before_passes:
            self._print(dump_header("Before", pass_name), module)

    def after(self, pass_name: str, module: ModuleOp) -> None:
        self._count += 1
        if self.after_all or pass_name in self.after_passes:
            self._print(dump_header("After", pass_name), module)
        if self.dump_dir is not None:
            self._write_file(f"{self._count:02d}-{pass_name}.mlir", module)

    def _print(self, header: str, module: ModuleOp) -> None:
        self.stream.write(header)
        print_ir(module, self.stream)
        self.stream.flush()

    def _remove_old_dumps(self) -> None:
        assert self.dump_dir is not None
        manifest = self.dump_dir / DUMP_MANIFEST
        try:
            old = manifest.read_text(encoding="utf-8").split() if manifest.is_file() else []
            for name in old:
                if _DUMP_FILE.fullmatch(name):  # a manifest edited to name other files is ignored
                    (self.dump_dir / name).unlink(missing_ok=True)
            manifest.unlink(missing_ok=True)
        except (OSError, UnicodeDecodeError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else e
            raise TkError(f"cannot clear the IR dumps in {self.dump_dir}: {reason}") from None

    def _write_file(self, name: str, module: ModuleOp) -> None:
        assert self.dump_dir is not None
        path = self.dump_dir / name
        if name not in self._written and path.exists():
            raise TkError(f"--dump-dir: {path} exists and tkc did not write it (it is not in "
                          f"{self.dump_dir / DUMP_MANIFEST}); remove it or choose another directory")
        try:
            self.dump_dir.mkdir(parents=True, exist_ok=True)
            if name not in self._written:  # listed first: a dump cut short is still cleared next time
                self._written.append(name)
                (self.dump_dir / DUMP_MANIFEST).write_text("\n".join(self._written) + "\n", encoding="utf-8")
            path.write_text(ir_text(module), encoding="utf-8")
        except OSError as e:
            raise TkError(f"cannot write IR dump to {path}: {e.strerror or e}") from None


@dataclass
class PassTiming(Observer):
    """`--timing`: the wall time of each pass and of the verification (after each pass, or at
    the stages' ends: `unverified_passes`), reported in mlir-opt's style (`report()`), in
    the order the passes ran."""

    rows: list[tuple[str, float]] = field(default_factory=list)
    verify_seconds: float = 0.0

    def timed(self, pass_name: str, pass_seconds: float, verify_seconds: float) -> None:
        self.rows.append((pass_name, pass_seconds))
        self.verify_seconds += verify_seconds

    def report(self) -> str:
        rows = [*self.rows, ("(verification)", self.verify_seconds)]
        total = sum(seconds for _, seconds in rows)
        rule = "===" + "-" * 73 + "==="
        lines = [rule, "... Pass execution timing report ...".center(len(rule)).rstrip(), rule,
                 f"  Total Execution Time: {total:.4f} seconds", "", "  ----Wall Time----  ----Name----"]
        share = (lambda s: 100 * s / total) if total > 0 else (lambda s: 0.0)
        lines += [f"  {seconds:8.4f} ({share(seconds):5.1f}%)  {name}" for name, seconds in rows]
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"


class PassCallback:
    """The callback of every pass pipeline tkc runs (`compile_module`, `tkc-opt`): times each
    pass, verifies the IR after it (invalid IR is PassVerifyError naming the pass), and tells the
    observer; `running` is the pass under way, for the note on an exception escaping it.

    `unverified` names passes whose IR is not verified right after them (compile_module's
    choice, `unverified_passes`): the verifier after a later pass covers it, and its error names
    them too."""

    def __init__(self, observer: Observer, verify: bool = True, unverified: frozenset[str] = frozenset()):
        self.observer = observer
        self.verify = verify
        self.unverified = unverified
        self.running: str | None = None
        self._started = 0.0
        self._not_yet_verified: list[str] = []

    def __call__(self, prev: ModulePass | None, op: ModuleOp, next_pass: ModulePass | None) -> None:
        if prev is not None:
            ended = time.perf_counter()
            if self.verify and prev.name in self.unverified:
                self._not_yet_verified.append(prev.name)
            elif self.verify:
                try:
                    op.verify()
                    verify_dominance(op)
                except VerifyException as e:
                    passes = " or ".join([prev.name, *reversed(self._not_yet_verified)])
                    which = " (--verify-each or TKC_VERIFY_EACH=1 verifies after each)" if self._not_yet_verified else ""
                    raise PassVerifyError(f"the IR does not verify after pass {passes}{which}: {e}") from e
                self._not_yet_verified.clear()
            self.observer.timed(prev.name, ended - self._started, time.perf_counter() - ended)
            self.observer.after(prev.name, op)
        self.running = None
        if next_pass is not None:
            self.observer.before(next_pass.name, op)
            self.running = next_pass.name
            self._started = time.perf_counter()


def verify_dominance(root: Operation) -> None:
    """Every operand of `root` is defined where it is used (xDSL's verifier does not check this;
    a pass that reuses a value computed inside an `if` after it builds such IR, and nothing else
    would notice)."""
    from tkc.ir_input import undominated_uses

    for op, index, operand, problem in undominated_uses(root):
        where = f" (defined by {problem.where.name})" if problem.where is not None else ""
        raise VerifyException(f"operand {index} of {op.name} is used {problem.text}{where}")


def verify_each_pass() -> bool:
    """TKC_VERIFY_EACH=1: verify the IR after every pass `tkc compile` runs (the test suite sets it)."""
    return cache.env_flag("TKC_VERIFY_EACH")


def unverified_passes(names: Sequence[str], verify_each: bool = False) -> frozenset[str]:
    """The passes of `names` (a pipeline about to run on verified IR) whose output is not verified
    right after them: the check-only passes, and the PTX passes but the stage's last (the PTX
    module is some forty times the size of the tile IR: verifying it after each PTX pass took
    longer than the passes themselves); none with `verify_each`. Every tile and sm90 pass is
    verified after it runs, the IR the compile ends with always is, and so is the IR each stage
    hands to the next."""
    if verify_each or not names:
        return frozenset()
    return frozenset(n for n in names[:-1] if n in CHECK_ONLY_PASSES or (n in PTX_PASSES and n not in STAGE_ENDS))


def instantiate(names: Iterable[str]) -> tuple[ModulePass, ...]:
    return tuple(ALL_PASSES[name]()() for name in names)


def passes_to_run(module: ModuleOp, emit: str) -> list[str]:
    """The passes of PIPELINE that produce `emit` from `module`: those behind the input's stage
    are left out (`input_stage`); an `emit` stage before the input's is a TkError."""
    names = pipeline_for(emit)
    stage, done = input_stage(module)
    if EMITS.index(emit) < EMITS.index(stage):
        *others, last = EMITS[EMITS.index(stage) :]
        raise TkError(
            f"cannot emit {emit} IR: the input is already {stage} IR, a later stage; emit {', '.join(others)} or {last}"
        )
    behind = set(PIPELINE[:done])
    return [name for name in names if name not in behind]


def compile_module(
    module: ModuleOp,
    emit: str = "tile",
    observer: Observer | None = None,
    ctx: Context | None = None,
    verify_each: bool | None = None,
    verify: bool = True,
) -> ModuleOp:
    """Run the passes that produce `emit` on `module` in place and return it.

    Passes already behind the input's stage are skipped (`input_stage`); an `emit` stage before
    the input's is a TkError. The IR is verified after each tile and sm90 pass, at the end of the
    PTX stage and of the compile, or
    after every pass with `verify_each` (default: TKC_VERIFY_EACH), or not at all with
    `verify=False` (for IR a verified compile already produced); invalid IR raises
    PassVerifyError naming the passes since the last verification. Any other exception escaping
    a pass gets a note saying which pass was running.
    """
    names = passes_to_run(module, emit)
    observer = observer or Observer()
    observer.will_run(names, f"this compile to {emit}")
    if input_stage(module)[0] == "tile" and "tile-memory-order" not in names:
        from tkc.passes.tile_memory_order import check_memory_order

        for kernel in module.body.block.ops:  # resumed after the pass: its fences are checked
            check_memory_order(kernel)
    each = verify_each_pass() if verify_each is None else verify_each
    callback = PassCallback(observer, verify, unverified_passes(names, each))
    pipeline = PassPipeline(instantiate(names), callback)
    try:
        with collector.paused():
            pipeline.apply(ctx or make_context(), module)
    except (TkError, PassVerifyError, StageUnavailable):
        raise
    except Exception as e:
        if callback.running is not None:
            e.add_note(f"while running pass {callback.running}")
        raise
    return module


def ir_after_each_pass(module: ModuleOp, emit: str = "tile") -> list[tuple[str, ModuleOp]]:
    """("input", clone) followed by (pass name, clone of the IR after it) for each pass.

    `module` itself is left untouched. This is what `tkc run --bisect` compares stage by stage.
    """

    class Collect(Observer):
        def after(self, pass_name: str, op: ModuleOp) -> None:
            snapshots.append((pass_name, op.clone()))

    snapshots: list[tuple[str, ModuleOp]] = [("input", module.clone())]
    compile_module(module.clone(), emit, Collect())
    return snapshots


ABI_ATTRIBUTE = "tkc.abi"
"""The attribute of the PTX module that holds the kernel's ABI as JSON (see tkc/abi.py)."""


def find_abi(module: ModuleOp) -> str:
    """The ABI JSON a lowered module carries."""
    from xdsl.dialects.builtin import StringAttr

    for op in module.walk():
        value = op.attributes.get(ABI_ATTRIBUTE)
        if isinstance(value, StringAttr):
            return value.data
    raise RuntimeError(f"the lowered module carries no {ABI_ATTRIBUTE} attribute")


def backend_outputs(module: ModuleOp, emit: str) -> dict[str, str | bytes]:
    """Every artefact the backend makes on the way to `emit` (PTX; then the cubin; then SASS)."""
    from tkc.backends.ptx_printer import print_ptx

    outputs: dict[str, str | bytes] = {"ptx": print_ptx(module)}
    if emit == "ptx":
        return outputs
    from tkc.backends.ptxas import ToolNotFound, assemble, sass

    try:
        cubin = assemble(str(outputs["ptx"]))
        outputs["cubin"] = cubin.data
        if emit == "sass":
            outputs["sass"] = sass(cubin)
    except ToolNotFound as e:  # no CUDA wheels or toolkit: the environment's gap, not a bug
        raise StageUnavailable(str(e)) from None
    return outputs


def emit_output(module: ModuleOp, emit: str) -> str | bytes:
    """The final artefact of a compiled module: MLIR text, PTX text, cubin bytes or SASS text."""
    if emit in ("tile", "sm90"):
        return ir_text(module)
    return backend_outputs(module, emit)[emit]


def compile_file(
    path: str | Path,
    kernel: str | None = None,
    params: dict[str, int] | None = None,
    emit: str = "tile",
    observer: Observer | None = None,
    verify_each: bool | None = None,
) -> str | bytes:
    """Load, compile and emit in one call (what `tkc compile` does), through the cache
    (tkc.cache): an entry for the same input IR is served without running the passes unless
    an `observer` wants to see them or `verify_each` (compile_module's) asks for the verifier
    after each; a result compiled is stored, with this spelling of the call, so that
    `tkc.cache.lookup` finds it next time."""
    source = cache.source_bytes(str(path))
    ctx = make_context()
    module = load_module(path, kernel, params, ctx)
    if emit not in _LAST_PASS:  # PTX, cubin and SASS hold one kernel
        require_one_kernel(module, str(path))
    if observer is not None:
        observer.input(module)
    entry = cache.entry_key(ir_text(module))
    run_passes = observer is not None or verify_each or cache.always_compile()
    cached = None if run_passes else cache.read_bytes(entry + cache.ARTEFACTS[emit])
    result: str | bytes
    if cached is None:
        module = compile_module(module, emit, observer, ctx, verify_each)
        outputs: dict[str, str | bytes] = (
            {emit: ir_text(module)} if emit in _LAST_PASS else {**backend_outputs(module, emit), "abi": find_abi(module)}
        )
        for name, data in outputs.items():
            cache.write(entry + (cache.ABI_SUFFIX if name == "abi" else cache.ARTEFACTS[name]), data)
        result = outputs[emit]
    else:
        result = cached if emit == "cubin" else cached.decode("utf-8")
    if source is not None:
        cache.remember(str(path), source, kernel, params or {}, entry)
    return result
