"""`CompiledKernel`, what `tkc.compile(...)` returns.

Compiling runs the tile-level passes at once, so mistakes in the program surface at the call.
A kernel that masks tiles past the end of a tensor (tile-mask-tails) is also compiled for whole
tiles (`@whole_tiles`, `.whole_tiles`) on its first launch: a launch whose shapes are whole tiles
takes that variant, which does not pay for the masks. A kernel whose CTAs could share a tile by
TMA multicast but whose plan does not (`@cluster`) gets a `@cluster(2)` variant (`.clustered`),
which a launch takes where the rows of a tensor it would multicast are not whole 128-byte
lines: a GEMM's B at N = 8184 ran at 0.70-0.88x cuBLAS plain and 1.01x multicast on the H200,
an nn.Linear weight Bt at K = 8184 (shared by rows) 0.66-0.74x plain and 0.98-1.03x multicast,
while at aligned shapes multicast measured 0.95-1.0x the plain kernel. Stream-K (`@stream_k`)
walks no CTA pairs, so a stream-K kernel's `@cluster(2)` variant leaves it off: where B's rows
are not whole lines, the split ran at 0.64-0.74x cuBLAS and the multicast variant at 0.77-1.02x
(8191x8184x8184, 3000x5000x2000, 2048x3064x3072, 1024x3064x3072), except at 1024x5112x13824
(1.2 waves of tiles over a long K: split 0.78x, multicast 0.62x). A kernel the plan walks
persistent heavy-first (causal attention) gets a one-CTA-per-tile variant (`.one_cta_per_tile`),
which a launch takes where the grid holds `tkc.abi.ONE_CTA_FROM_TILES` tiles along the walked axis.
The lowering to PTX runs on first use of `.ptx`, `.abi` or a launch, and its result is cached
on disk (tkc.cache: keyed by the kernel's IR and the compiler's fingerprint, shared with
`tkc compile`). A launch loads the cubin, assembled once by ptxas and cached when ptxas is
installed, else the PTX through the driver's JIT.

Environment: `TKC_ALWAYS_COMPILE=1` lowers (and assembles) again instead of reading the cache;
`TKC_DUMP_DIR=DIR` writes the IR after every pass of every kernel compiled to
`DIR/KERNEL-KEY/NN-PASS.mlir` (KEY: the first 12 hex digits of the cache key).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Attribute

from tkc import cache
from tkc.abi import ONE_CTA_FROM_TILES, TensorMapParam
from tkc.diagnostics import TkError, did_you_mean
from tkc.dialects.tile import DecisionAttr, PlanAttr
from tkc.driver import (
    ABI_ATTRIBUTE,
    PIPELINE,
    DumpOptions,
    Observer,
    compile_module,
    emit_output,
    find_abi,
    ir_text,
    kernels_of,
    load_module,
    make_context,
    passes_to_run,
    require_one_kernel,
)
from tkc.dtypes import BY_NAME
from tkc.passes.occupancy import MIN_SETMAXNREG
from tkc.passes.plan import KernelPlan
from tkc.runtime.arrays import adapt
from tkc.runtime.launch import READY_CACHE_SIZE, device_strides, torch_signature

if TYPE_CHECKING:
    from tkc.abi import KernelABI
    from tkc.backends.ptxas import Cubin

__all__ = ["ABI_ATTRIBUTE", "CompiledKernel", "GpuLaunchWarning"]


class GpuLaunchWarning(UserWarning):
    """`interpret()` ran on arrays that a GPU launch of the same kernel would refuse (TMA's
    16-byte rows, 31-bit sizes), or on a kernel the GPU backend does not compile: a CPU test
    that passes there says nothing about the GPU."""


class _Snapshots(Observer):
    """Keeps the text of the IR after each pass, and shows each pass to `also` (the dumps)."""

    def __init__(self, into: dict[str, str], also: Observer | None = None):
        self.into = into
        self.also = also or Observer()

    def before(self, pass_name: str, module: ModuleOp) -> None:
        self.also.before(pass_name, module)

    def after(self, pass_name: str, module: ModuleOp) -> None:
        self.into[pass_name] = str(module)
        self.also.after(pass_name, module)


class CompiledKernel:
    """One kernel of a `.tk` (or tile-dialect `.mlir`) file, compiled for given parameters.

    `module` is the tile IR after the tile-level passes; `ir(pass_name)` the IR text after any
    pass of the pipeline; `ptx` and `abi` the lowered kernel and `cubin` its machine code
    (cached on disk); calling the object launches it through `tkc.runtime`, or launches its
    `whole_tiles` or `clustered` variant where the shapes call for one (module docstring).
    """

    def __init__(
        self,
        path: str | Path,
        kernel: str | None = None,
        params: dict[str, int] | None = None,
        *,
        _input: ModuleOp | None = None,
    ):
        self.path = str(path)
        self.kernel = kernel
        self.params = dict(params or {})
        self._input = load_module(self.path, kernel, self.params, make_context()) if _input is None else _input
        require_one_kernel(self._input, self.path, "kernel='NAME'")
        self._key = cache.entry_key(ir_text(self._input))
        self._dumps = self._dump_options()
        self._ir: dict[str, str] = {"input": str(self._input)}
        ahead = passes_to_run(self._input, "tile")  # the variants re-run passes the input has not had
        self.module = compile_module(self._input.clone(), "tile", self._observer())
        (compiled,) = kernels_of(self.module)
        self._has_tail_masks = "tile-mask-tails" in ahead and "tail_masks" in compiled.attributes
        self._whole_tiles: CompiledKernel | None = None
        plan = compiled.attributes.get("plan")
        self._may_cluster = (
            "tile-occupancy-plan" in ahead
            and "cluster" not in compiled.annotations.data  # type: ignore[attr-defined]
            and isinstance(plan, PlanAttr)
            and not isinstance(plan.decisions.data.get("cluster"), DecisionAttr)  # the plan pairs no CTAs
        )
        plan_of = KernelPlan.of(compiled)
        self._walk_axis = (plan_of.heavy_first if "tile-occupancy-plan" in ahead and plan_of.persistent
                           and plan_of.heavy_first >= 0 and "persistent" not in self._input_annotations() else -1)
        """The grid axis a persistent heavy-first walk takes slowest (causal attention's qi), or -1."""
        self._one_cta: CompiledKernel | None = None
        self._splits_k = plan_of.stream_k
        self._register_split = (plan_of.producer_registers, plan_of.consumer_registers, plan_of.ctas_per_sm)
        self._clustered: CompiledKernel | None = None
        self._launch_choice: dict[tuple[tuple[Any, ...], ...], CompiledKernel] = {}
        self._ptx: str | None = None
        self._abi: KernelABI | None = None
        self._cubin: bytes | None = None
        self._launcher: Any = None
        self._ready_launchers: dict[tuple[Any, ...], Any] = {}
        """The loaded kernel (of this kernel or a variant) each torch_signature launched with."""

    @property
    def cache_key(self) -> str:
        """The key of this kernel's entry in the disk cache (tkc.cache): its IR and the compiler."""
        return self._key

    def ir(self, pass_name: str) -> str:
        """The IR text after `pass_name` ("input" for the frontend's output)."""
        if pass_name not in self._ir and pass_name in PIPELINE:
            self._lower()
        if pass_name not in self._ir:
            names = ["input", *PIPELINE]
            raise KeyError(f"no IR after {pass_name!r}; the names are {', '.join(names)}{did_you_mean(pass_name, names)}")
        return self._ir[pass_name]

    @property
    def ptx(self) -> str:
        if self._ptx is None and not self._load_cached():
            self._lower()
        assert self._ptx is not None
        return self._ptx

    @property
    def abi(self) -> KernelABI:
        if self._abi is None and not self._load_cached():
            self._lower()
        assert self._abi is not None
        return self._abi

    @property
    def cubin(self) -> bytes | None:
        """The kernel assembled by ptxas for sm_90a (cached), or None where ptxas is not installed."""
        if self._cubin is None:
            self._cubin = None if self._recompiling() else cache.read_bytes(self._key + cache.ARTEFACTS["cubin"])
        if self._cubin is None:
            from tkc.backends.ptxas import ToolNotFound

            try:
                self.assemble()
            except ToolNotFound:
                return None
        return self._cubin

    def assemble(self) -> Cubin:
        """Run ptxas on the PTX (its `.report`: registers, spills) and cache the cubin for launches;
        raises ToolNotFound where ptxas is not installed."""
        from tkc.backends.ptxas import assemble

        cubin = assemble(self.ptx)
        self._cubin = cubin.data
        cache.write(self._key + cache.ARTEFACTS["cubin"], cubin.data)
        return cubin

    def report(self) -> str:
        from tkc.driver import load_stage

        return load_stage("tkc.report", "report", "tkc report")(self.module)

    def interpret(self, **inputs: Any) -> dict[str, Any]:
        """Run the compiled tile IR in the reference interpreter on numpy arrays. Where a GPU
        launch on the same arrays would be refused before it ran, the outputs come with a
        GpuLaunchWarning saying why."""
        from tkc.interpreter import interpret

        try:
            outputs = interpret(self.module, self.kernel, inputs)
        except TkError as e:
            raise self._located(e) from None
        if (refusal := self.launch_refusal({**outputs, **inputs}, converted=True)) is not None:
            warnings.warn(GpuLaunchWarning(f"{self.path}: on the GPU this launch would stop before running: {refusal}"),
                          stacklevel=2)
        return outputs

    def launch_refusal(self, inputs: Mapping[str, Any], converted: bool = False) -> str | None:
        """Why a GPU launch on exactly these arrays (by argument name: their dtypes, strides,
        writability and overlaps as given) would be refused before it ran (the runtime's argument
        checks), or why the GPU backend does not compile the kernel; None where it would launch.
        `converted`: of the arrays as the interpreter takes them (any float dtype), each converted
        to its argument's dtype and packed, so only their shapes can be refused. Needs no GPU."""
        from tkc.runtime.launch import bind
        from tkc.runtime.run import launch_arrays

        try:
            abi = self.abi
        except TkError as e:
            return f"the GPU backend does not compile this kernel: {e.message}"
        try:
            if converted:
                bind(abi, tuple(launch_arrays(abi, inputs)), {})
            else:
                bind(abi, (), dict(inputs))
        except TkError as e:
            return e.message
        return None

    def _located(self, error: TkError) -> TkError:
        """An error about the arguments of a call, which has no place in the source: named after
        the kernel's file instead of `<input>`."""
        if error.filename is None:
            error.filename = self.path
        return error

    @property
    def whole_tiles(self) -> CompiledKernel | None:
        """This kernel compiled with `@whole_tiles`: without the masks of tiles past the end, for
        shapes whose dims its ABI needs in whole tiles are; None where there are no masks to
        leave out (or the input had its tile passes behind it)."""
        if not self._has_tail_masks:
            return None
        if self._whole_tiles is None:
            pins: dict[str, Attribute] = {"whole_tiles": UnitAttr()}
            producer, consumer, ctas = self._register_split
            if producer == MIN_SETMAXNREG and ctas == 1 and "registers" not in self._input_annotations():
                # the masked kernel's demand came near its budget: keep its split, though the
                # estimate without masks is lower (ALiBi attention spilled 16 bytes at 40/232)
                pins["registers"] = ArrayAttr([IntegerAttr(producer, 64), IntegerAttr(consumer, 64)])
            self._whole_tiles = self._pinned(pins)
        return self._whole_tiles

    @property
    def one_cta_per_tile(self) -> CompiledKernel | None:
        """This kernel with `@persistent(0)`, one CTA per tile launched heavy-first, where the plan
        walks its tiles persistent and heavy-first; None otherwise. A launch takes it where the
        grid holds ONE_CTA_FROM_TILES or more tiles along the walked axis."""
        if self._walk_axis < 0:
            return None
        if self._one_cta is None:
            self._one_cta = self._pinned({"persistent": IntegerAttr(0, 64)})
        return self._one_cta

    def _input_annotations(self) -> dict[str, Attribute]:
        (kernel,) = kernels_of(self._input)
        return dict(kernel.annotations.data)  # type: ignore[attr-defined]  # every kernel op has them

    @property
    def clustered(self) -> CompiledKernel | None:
        """This kernel with `@cluster(2)`, whose CTA pairs multicast the tile they share; None
        where the kernel pins its cluster, its plan already pairs CTAs, or nothing can be shared.
        A stream-K kernel's variant runs whole tiles (@stream_k(0)): its split walks no pairs."""
        if not self._may_cluster:
            return None
        if self._clustered is None:
            pins: dict[str, Attribute] = {"cluster": IntegerAttr(2, 64)}
            if self._splits_k:
                pins["stream_k"] = IntegerAttr(0, 64)
            try:
                clustered = self._pinned(pins)
                shares = bool(clustered.abi.multicast)
            except TkError:  # the planner or the lowering found no pair to make
                shares = False
            if not shares:
                self._may_cluster = False
                return None
            self._clustered = clustered
        return self._clustered

    def _pinned(self, annotations: dict[str, Attribute]) -> CompiledKernel:
        """This kernel compiled with these annotations set on its input."""
        pinned = self._input.clone()
        (kernel,) = kernels_of(pinned)
        kernel.annotations = DictionaryAttr({**kernel.annotations.data, **annotations})  # type: ignore[attr-defined]
        return CompiledKernel(self.path, self.kernel, self.params, _input=pinned)

    def __call__(self, *tensors: Any, stream: Any = None, **named: Any) -> Any:
        """Launch on `tensors`, given in the kernel's order or by name (`k(A=a, B=b, C=c)`)."""
        try:
            if named:
                from tkc.runtime.launch import arrange

                tensors = tuple(arrange(self.abi, tensors, named).values())
            return self._call(tensors, stream)
        except TkError as e:
            raise self._located(e) from None

    def _call(self, tensors: tuple[Any, ...], stream: Any) -> Any:
        if stream is None and (key := torch_signature(tensors)) is not None:
            # torch tensors launched on before: the variant's loaded kernel launches as it did then,
            # without choosing the variant or checking the arguments again (host time per call:
            # a small GEMM runs shorter than its launch path)
            launcher = self._ready_launchers.get(key)
            if launcher is not None and launcher.launch_ready(key, tensors[0]):
                return None
            variant = self._variant_for(tensors)
            variant._launch(*tensors)
            if len(self._ready_launchers) >= READY_CACHE_SIZE:
                self._ready_launchers.pop(next(iter(self._ready_launchers)))
            self._ready_launchers[key] = variant._launcher
            return None
        return self._variant_for(tensors)._launch(*tensors, stream=stream)

    def _variant_for(self, tensors: tuple[Any, ...]) -> CompiledKernel:
        """The variant a launch on these tensors takes (remembered per shapes and strides): first
        `one_cta_per_tile` where a heavy-first walk's grid holds ONE_CTA_FROM_TILES tiles along its
        axis, then (of that or this kernel) `whole_tiles` where its ABI takes the shapes, then its
        `clustered` where a tile it would share has rows that do not start on whole cache lines."""
        if not (self._has_tail_masks or self._may_cluster or self._walk_axis >= 0):
            return self
        quick = _quick_layouts(tensors)
        layouts = None if quick is not None else tuple(_layout(t) for t in tensors)
        key: tuple[tuple[Any, ...], ...] = quick or layouts or ()
        choice = self._launch_choice.get(key)
        if choice is None:
            if layouts is None:
                layouts = tuple(_layout(t) for t in tensors)
            shapes = tuple(shape for shape, _ in layouts)
            strides = tuple(steps for _, steps in layouts)
            base = self
            if (one_cta := self.one_cta_per_tile) is not None:
                tiles = one_cta.abi.grid_extents(shapes)
                if tiles is not None and tiles[self._walk_axis] >= ONE_CTA_FROM_TILES:
                    base = one_cta
            whole = base.whole_tiles
            choice = whole if whole is not None and whole.abi.divides(shapes) else base
            loaded = {p.arg for p in choice.abi.params if isinstance(p, TensorMapParam)} - set(choice.abi.written)
            if choice._may_cluster and choice.abi.unaligned_rows(shapes, sorted(loaded), strides):
                clustered = choice.clustered
                if (clustered is not None and clustered.abi.divides(shapes)
                        and clustered.abi.unaligned_rows(shapes, clustered.abi.multicast, strides)):
                    choice = clustered
            if len(self._launch_choice) >= 64:
                self._launch_choice.pop(next(iter(self._launch_choice)))
            self._launch_choice[key] = choice
        return choice

    def _launch(self, *tensors: Any, stream: Any = None) -> Any:
        if self._launcher is None:
            from tkc.runtime import CudaError, load

            cubin = self.cubin
            try:
                self._launcher = None if cubin is None else load(cubin=cubin, abi=self.abi)
            except CudaError:  # a driver older than the ptxas that made it: its JIT takes the PTX
                self._launcher = None
            if self._launcher is None:
                self._launcher = load(ptx=self.ptx, abi=self.abi)
        return self._launcher(*tensors, stream=stream)

    def __repr__(self) -> str:
        params = "".join(f", {k}={v}" for k, v in self.params.items())
        return f"tkc.compile({self.path!r}, kernel={self.kernel!r}{params})"

    def _dump_options(self) -> DumpOptions | None:
        """TKC_DUMP_DIR: the IR after every pass, into a directory of this kernel's own."""
        root = os.environ.get("TKC_DUMP_DIR")
        if not root:
            return None
        (kernel,) = kernels_of(self._input)
        name = kernel.sym_name.data  # type: ignore[attr-defined]  # every op of KERNEL_OPS has one
        dumps = DumpOptions(sys.stderr, dump_dir=Path(root) / f"{name}-{self._key[:12]}")
        dumps.input(self._input)
        return dumps

    def _observer(self) -> _Snapshots:
        if self._dumps is not None:
            self._dumps.restart()
        return _Snapshots(self._ir, self._dumps)

    def _recompiling(self) -> bool:
        """Whether the cache is to be ignored: TKC_ALWAYS_COMPILE, or dumps that need the passes."""
        return cache.always_compile() or self._dumps is not None

    def _load_cached(self) -> bool:
        from tkc.abi import KernelABI

        if self._recompiling():
            return False
        ptx = cache.read_text(self._key + cache.ARTEFACTS["ptx"])
        abi = cache.read_text(self._key + cache.ABI_SUFFIX)
        if ptx is None or abi is None:
            return False
        self._ptx, self._abi = ptx, KernelABI.from_json(abi)
        return True

    def _lower(self) -> None:
        from tkc.abi import KernelABI

        module = compile_module(self._input.clone(), "ptx", self._observer())
        ptx = emit_output(module, "ptx")
        assert isinstance(ptx, str)
        abi = find_abi(module)
        self._ptx, self._abi = ptx, KernelABI.from_json(abi)
        cache.write(self._key + cache.ARTEFACTS["ptx"], ptx)
        cache.write(self._key + cache.ABI_SUFFIX, abi)


def _quick_layouts(tensors: tuple[Any, ...]) -> tuple[tuple[Any, ...], ...] | None:
    """What the launch's choice of variant depends on, read cheaply where every argument is a
    torch tensor (shape, element strides, dtype; None: take _layout's general reading). Reading
    it through tkc.runtime.adapt cost some 25 us per call on the H200's host, more than a small
    GEMM runs."""
    key = []
    for t in tensors:
        if type(t).__module__ != "torch":
            return None
        key.append((t.shape, t.stride(), t.dtype))
    return tuple(key)


def _layout(array: Any) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """An argument's shape and the byte strides the kernel sees, which the launch's choice of
    variant depends on (a view's rows start where its strides put them); None for the strides
    of what tkc cannot read them from (taken as contiguous: the launch checks the object)."""
    try:
        info = adapt(array)
    except ValueError:
        info = None
    if info is None or info.dtype is None:
        return tuple(getattr(array, "shape", ())), None
    return info.shape, device_strides(info, BY_NAME[info.dtype].bytes)
