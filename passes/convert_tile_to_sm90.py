"""convert-tile-to-sm90: split a tile kernel into a producer and consumer warpgroups.

What it decides, and why:
- **Roles.** Warpgroup 0 produces: one elected thread walks the kernel's control flow keeping
  only index math and loads, and issues each load as TMA boxes into shared memory. Warpgroups
  1..C consume: they run everything else on register fragments, each owning R/C rows of every
  register tile (the occupancy plan's `consumers`). Producer and consumers never share a
  register, only shared memory and mbarriers, so neither waits on the other's latency.
- **Rings.** The loads inside a loop form one stage of an S-stage ring (S from the pipeline
  decision); loads outside loops form a one-stage ring that turns over once per output tile.
  Each stage has a `full` barrier (the producer's expect_tx; TMA completes it) and an `empty`
  barrier (one lane of every consumer warp arrives once the wgmmas reading the stage are done). Stage and
  parity follow the iteration count `it`, which runs on across the tiles of a persistent CTA:
  s = it % S, parity = (it / S) & 1; the producer waits `empty` with the opposite parity, so its
  first lap passes at once.
- **Tensor-core overlap.** A loop that only accumulates (acc = mma(a, b, acc), as GEMM's K loop)
  keeps one wgmma group in flight across the back edge: it waits for the previous group, not the
  one just issued, and frees the previous group's stage, so the tensor cores never idle on a
  barrier. A loop with tile-pipeline's `overlap` decision (attention: S = QK^T heads the body,
  O = P.V only accumulates) runs its last mma one iteration late, as FlashAttention-3 does within
  a warpgroup: iteration j rescales O, issues QK^T_j and then P.V_{j-1}, waits for QK^T_j only,
  computes softmax while P.V_{j-1} runs, waits for it just before P is rewritten (ptxas gives
  P_j the registers of P_{j-1}), and frees stage j-1. The first head and the last tail sit
  before and after the loop under `trips > 0`. Other products are waited on at once.
- **Shared memory.** Barriers first, then the single tiles (hoisted loads, `tile.to_shared`
  tiles) in program order, then every ring's stages, then the epilogue's staging chunks (the
  order of plan.smem_plan), which a kernel running one tile per CTA puts in the bytes of its
  kernel-level loads instead, once all consumers have met after their last wgmma (attention's Q); every tile 1024-aligned (the 128B swizzle repeat), plus 1 KB slack
  for aligning the dynamic base. Over 227 KB is a compile error naming the budget.
- **Register tiles as wgmma operands** (`tile.to_shared`, e.g. bf16(state) as B). wgmma reads
  B only from shared memory: every consumer stores its rows of the tile (st.shared under the
  tile's swizzle) into one buffer that each consumer's wgmma then reads whole, so all consumers
  sync before the write (the wgmmas reading the previous contents are waited on) and after it
  (each writer's proxy fence first), on named barrier consumers + 1.
- **Epilogue.** Each consumer stages its rows of an output tile one swizzle panel of columns
  at a time (64 bf16 columns: a 64x64 chunk) through two chunk buffers of its own, and one of
  its threads stores each chunk with TMA while the others write the next. Two small buffers
  per consumer instead of a whole output tile is what leaves room for a deep input ring.
  Consumers sync only their own warpgroup (named barrier 1 + consumer); before a buffer is
  rewritten, the store issued from it two chunks earlier has finished reading it.
- **Column vectors** (a vector broadcast over a tile's columns or reduced from them, e.g.
  layernorm's weights). Every consumer holds all C columns, each thread the C/4 its accumulator
  registers cover (`!sm90.frag<C, col>`), so a column broadcast is register-local; a column
  reduction meets the other warps and consumers in a shared scratch buffer after the plan's
  buffers, between two syncs of named barrier consumers + 1.
- **Clusters** (the plan's `cluster` decision, or `@cluster(2)`).
  A persistent GEMM-like kernel whose ring holds a tile that neighbouring output tiles along the
  first grid axis share (B of a GEMM: its coordinates do not involve that axis) runs as
  clusters of 2 CTAs walking pairs of such tiles. Each CTA loads half of the shared
  tile's panels and multicasts them to both, which halves the L2 traffic for that operand; a
  stage is free again only when the consumers of both CTAs have released it, so consumers
  arrive on their own `empty` barrier and on the peer's. With an odd number of tile rows the
  last pair's second tile is out of bounds: its TMA loads read zeros and its TMA stores are
  dropped (a kernel with pointer stores instead needs an even count, which the launch checks).
- **Persistent grid.** With `persistent`, the grid is min(tiles, SMs x CTAs/SM) and each CTA walks
  tiles t = blockIdx.x, += gridDim.x in grouped order (`group_m` tile rows at a time) so that
  concurrently running CTAs share A and B panels in L2. Otherwise one CTA runs per tile, and the
  plan's `heavy_first` axis is walked from its last index down (block b computes tile
  extent - 1 - b), so the tiles with the most loop iterations start first.
The kernel's launch contract (tkc.abi.KernelABI) is computed here and kept on `sm90.kernel`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, LocationAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from tkc import abi as kabi
from tkc.diagnostics import error_at
from tkc.dialects import sm90, tile
from tkc.passes.wgmma_layout import widest_span
from tkc.passes.plan import (
    WARPGROUP_THREADS,
    WGMMA_ROWS,
    KernelPlan,
    column_vectors,
    depends_on_block_axis,
    kernel_load_groups,
    late_tail,
    staging_chunk,
)

CLUSTER = 2
"""CTAs of a cluster sharing multicast loads (pairs along grid axis 0)."""
SMEM_LIMIT = 232448
"""Shared memory a block may opt in to on H100/H200 (227 KB)."""
TILE_ALIGN = 1024
BARRIER_REGION = 1024


def _align(value: int, to: int) -> int:
    return (value + to - 1) // to * to


def _swizzle_of(t: tile.SharedTileType | tile.SharedVectorType) -> int:
    if isinstance(t, tile.SharedTileType) and t.swizzle.data >= 0:
        return t.swizzle.data
    if isinstance(t, tile.SharedVectorType):
        return 0
    # tile-swizzle-select did not run: the widest span a row fills, as it would choose
    return widest_span(t.get_shape()[-1] * tile.element_bytes(t.element_type))


# --------------------------------------------------------------------------- planning


@dataclass
class SharedBuffer:
    """A tile's place in shared memory (offset from the aligned base) and the layout it has."""

    offset: int
    ref_type: sm90.SharedRefType

    @property
    def panel_bytes(self) -> int:
        shape = self.ref_type.get_shape()
        rows = shape[0] if len(shape) == 2 else 1
        return rows * self.ref_type.panel_cols * tile.element_bytes(self.ref_type.element_type)

    @property
    def panels(self) -> int:
        return self.ref_type.get_shape()[-1] // self.ref_type.panel_cols


@dataclass
class Ring:
    """Loads that complete together: one stage each time `it` advances."""

    loads: list[tile.LoadOp]
    stages: int
    loop: scf.ForOp | None
    """The loop whose iterations advance the ring; None: once per output tile."""
    buffers: dict[tile.LoadOp, SharedBuffer] = field(default_factory=dict)
    stage_bytes: int = 0
    base: int = 0
    full: int = 0
    empty: int = 0

    @property
    def tx_bytes(self) -> int:
        return sum(cast(tile.SharedTileType, load.result.type).num_bytes for load in self.loads)


@dataclass
class Staging:
    """A consumer's chunk buffers for one register-tile store, at offset + consumer * stride."""

    offset: int
    chunk: sm90.SharedRefType
    buffers: int
    reuses_single_tiles: bool = False
    """In the bytes of the kernel-level loads (plan.staging_reuses_single_tiles): all consumers
    meet before writing them, so no wgmma still reads them."""

    @property
    def consumer_stride(self) -> int:
        return self.buffers * _align(self.chunk.num_bytes, TILE_ALIGN)


@dataclass
class _LateTail:
    """What an overlapped loop's iteration needs to issue the previous iteration's tail."""

    ops: list[Operation]
    """The tail (plan.late_tail): element-wise ops, then the mma."""
    crossing: list[SSAValue]
    """Head values the tail reads (P, the rescale factors), carried one iteration."""
    carried: list[SSAValue]
    """Their previous iteration's values."""
    loads: list[tile.LoadOp]
    """Ring loads the tail reads (V), viewed at the previous iteration's stage."""
    iteration: SSAValue
    """The previous iteration's ring count."""


@dataclass
class KernelLayout:
    rings: list[Ring]
    staging: dict[tile.StoreOp, Staging]
    shared: dict[tile.ToSharedOp, SharedBuffer]
    """The one buffer of each tile.to_shared tile: every consumer writes its rows, all read it whole."""
    barriers: int
    smem_bytes: int
    col_scratch: int = 0
    """The scratch buffer all column reductions share (sm90.ColReduceOp.scratch_bytes of the widest)."""
    fence_slots: dict[tile.FenceOp, int] = field(default_factory=dict)
    """The counter slot (offset from the base, after the mbarriers) of each fence the producer
    passes: those in the kernel body and in loops it walks. Other fences only order stores."""

    @property
    def kernel_rings(self) -> list[Ring]:
        """The one-stage rings of the loads that run once per output tile."""
        return [ring for ring in self.rings if ring.loop is None]


def _ref_type(t: tile.SharedTileType | tile.SharedVectorType | tile.RegisterTileType, swizzle: int) -> sm90.SharedRefType:
    return sm90.SharedRefType(t.get_shape(), t.element_type, swizzle)


def _check_ring_order(loop: scf.ForOp, loads: list[tile.LoadOp]) -> None:
    """A loop iteration's loads are one TMA stage, which consumers wait for at its first load and
    the producer issues at its last: a fence between them (a load that must follow a store of the
    same iteration) would make each wait for the other."""
    body = loop.body.block
    first = body.get_operation_index(loads[0])
    for op in body.ops:
        if isinstance(op, tile.FenceOp) and body.get_operation_index(op) > first:
            raise error_at(
                op,
                "the GPU backend loads a loop iteration's tiles as one TMA stage, so it cannot load a tile after a "
                "store earlier in the same iteration that it may read: move the store after the loads, or load "
                "the stored tile in a later iteration or loop",
            )


def _offset(op: Operation, key: str) -> int:
    """An offset tile-pipeline recorded on `op`: the lowering lays out nothing itself."""
    attr = op.attributes.get(key)
    if not isinstance(attr, IntegerAttr):
        raise error_at(
            op, f"convert-tile-to-sm90 reads the shared-memory layout tile-pipeline records, but {op.name} has no "
            f"{key}: run tile-pipeline first",
        )
    return attr.value.data


def _read_shared_memory(kernel: tile.KernelOp, plan: KernelPlan, consumers: int, rows_per_consumer: int) -> KernelLayout:
    """The kernel's shared memory as tile-pipeline laid it out (plan.smem_plan): offsets of the
    single tiles, rings and staging tiles, the total; the mbarriers and store-fence slots of the
    first 1 KB are numbered here."""
    body = kernel.body.block
    rings = [Ring(group, 1, None) for group in kernel_load_groups(kernel)]
    walked = [body]
    for op in body.ops:
        if isinstance(op, scf.ForOp):
            loads = [inner for inner in op.body.block.ops if isinstance(inner, tile.LoadOp)]
            if loads:
                _check_ring_order(op, loads)
                rings.append(Ring(loads, _stages_of(op, plan), op))
                walked.append(op.body.block)
    for op in kernel.walk():
        if isinstance(op, tile.LoadOp) and not any(op in ring.loads for ring in rings):
            raise error_at(op, "the GPU backend loads tiles only at kernel level or directly in a top-level loop")

    def buffer(op: Operation, key: str, base: int = 0) -> SharedBuffer:
        t = cast(tile.SharedTileType, op.results[0].type)
        return SharedBuffer(_offset(op, key) - base, _ref_type(t, _swizzle_of(t)))

    shared = {op: buffer(op, "smem_offset") for op in kernel.walk() if isinstance(op, tile.ToSharedOp)}
    single_end = max((s.offset + s.ref_type.num_bytes for s in shared.values()), default=BARRIER_REGION)
    barriers = 0
    for ring in rings:
        if ring.loop is None:
            # the kernel-level rings share one stage: the single tiles, from the barrier region's end
            ring.base = BARRIER_REGION
            for load in ring.loads:
                ring.buffers[load] = buffer(load, "smem_offset", BARRIER_REGION)
                single_end = max(single_end, BARRIER_REGION + ring.buffers[load].offset + ring.buffers[load].ref_type.num_bytes)
        else:
            ring.base, ring.stage_bytes = _offset(ring.loop, "ring_offset"), _offset(ring.loop, "stage_bytes")
            for load in ring.loads:
                ring.buffers[load] = buffer(load, "stage_offset")
        ring.full, ring.empty = barriers, barriers + ring.stages
        barriers += 2 * ring.stages
    for ring in rings:
        if ring.loop is None:
            ring.stage_bytes = _align(single_end, TILE_ALIGN) - BARRIER_REGION
    fences = [op for block in walked for op in block.ops if isinstance(op, tile.FenceOp)]
    fence_slots = {fence: 8 * (barriers + k) for k, fence in enumerate(fences)}
    if (barriers + len(fences)) * 8 > BARRIER_REGION:
        raise error_at(
            kernel,
            f"{barriers} mbarriers and {len(fences)} store fences do not fit the {BARRIER_REGION}-byte barrier region",
        )

    staging: dict[tile.StoreOp, Staging] = {}
    for op in kernel.walk():
        if isinstance(op, tile.StoreOp) and isinstance(op.value.type, tile.RegisterTileType):
            swizzle, chunk_cols, buffers = staging_chunk(op)
            chunk = sm90.SharedRefType([rows_per_consumer, chunk_cols], op.value.type.element_type, swizzle)
            reused = isinstance(op.attributes.get("staging_reuse"), tile.DecisionAttr)
            staging[op] = Staging(_offset(op, "smem_offset"), chunk, buffers, reuses_single_tiles=reused)
    col_scratch = _offset(kernel, "col_scratch_offset") if "col_scratch_offset" in kernel.attributes else 0
    smem_bytes = plan.smem_bytes
    if not smem_bytes:
        raise error_at(kernel, "convert-tile-to-sm90 needs the kernel's smem_bytes decision: run tile-pipeline first")
    if smem_bytes > SMEM_LIMIT:
        raise error_at(
            kernel,
            f"shared memory overflows: the plan needs {smem_bytes} bytes, a block may use {SMEM_LIMIT} "
            f"(reduce @stages or the tile sizes)",
        )
    return KernelLayout(rings, staging, shared, barriers, smem_bytes, col_scratch, fence_slots)


def _stages_of(loop: scf.ForOp, plan: KernelPlan) -> int:
    decision = loop.attributes.get("pipeline") or loop.attributes.get("stages")
    if isinstance(decision, tile.DecisionAttr):
        return decision.int_value
    if isinstance(decision, IntegerAttr):
        return decision.value.data
    return plan.stages


def _register_rows(kernel: tile.KernelOp, columns: set[SSAValue]) -> int:
    """The rows every register tile and row vector shares (column vectors have no rows)."""
    rows = {
        v.type.rows
        for op in kernel.walk()
        for v in (*op.results, *op.operands)
        if isinstance(v.type, tile.RegisterTileType | tile.RegisterVectorType) and v not in columns
    }
    if len(rows) > 1:
        raise error_at(
            kernel,
            f"the GPU backend needs every register tile and row vector to have the same rows, got {sorted(rows)}",
        )
    return rows.pop() if rows else WGMMA_ROWS


def _consumers(kernel: tile.KernelOp, plan: KernelPlan, rows: int) -> int:
    """tile-occupancy-plan's count (one consumer where no plan ran), checked against the rows."""
    consumers = plan.consumers
    if rows % (consumers * WGMMA_ROWS):
        raise error_at(
            kernel,
            f"{rows} register-tile rows cannot be split over {consumers} consumer warpgroups of 64-row multiples",
        )
    return consumers


# --------------------------------------------------------------------------- ABI


def _dim_name(kernel: tile.KernelOp, dim: tile.DimOp) -> str | int:
    t = cast(tile.GlobalType, dim.tensor.type)
    return t.get_dims()[dim.axis.value.data]


def _grid_expr(value: SSAValue, kernel: tile.KernelOp) -> kabi.Expr:
    op = value.owner
    binary = {
        arith.DivUIOp: "div",
        arith.DivSIOp: "div",
        arith.CeilDivUIOp: "ceildiv",
        arith.CeilDivSIOp: "ceildiv",
        arith.MuliOp: "mul",
        arith.AddiOp: "add",
        arith.SubiOp: "sub",
        arith.MinUIOp: "min",
        arith.MaxUIOp: "max",
    }
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    if isinstance(op, tile.DimOp):
        return _dim_name(kernel, op)
    if isinstance(op, arith.IndexCastOp):
        return _grid_expr(op.input, kernel)
    if type(op) in binary:
        operation = cast(arith.SignlessIntegerBinaryOperation, op)
        expr = (binary[type(op)], _grid_expr(operation.lhs, kernel), _grid_expr(operation.rhs, kernel))
        if expr[0] in ("div", "ceildiv") and expr[2] == 0:
            raise error_at(op, "a grid extent divides by zero")
        return expr
    raise error_at(
        op if isinstance(op, Operation) else kernel,
        "a grid extent must be computed from dims and constants with + - * / ceildiv min max",
    )


def _product(exprs: list[kabi.Expr]) -> kabi.Expr:
    result = exprs[0]
    for e in exprs[1:]:
        result = ("mul", result, e)
    return result


# --------------------------------------------------------------------------- emission


class _Emitter:
    """Builds one sm90.kernel from one tile.kernel."""

    def __init__(self, kernel: tile.KernelOp):
        self.kernel = kernel
        self.plan = KernelPlan.of(kernel)
        self.columns = column_vectors(kernel)
        self.rows = _register_rows(kernel, self.columns)
        self.consumers = _consumers(kernel, self.plan, self.rows)
        self.rows_per_consumer = self.rows // self.consumers
        self.layout = _read_shared_memory(kernel, self.plan, self.consumers, self.rows_per_consumer)
        self.arg_names = {arg: name for arg, name in zip(kernel.body.block.args, kernel.arg_names)}
        self.tensor_maps: dict[tuple[str, tuple[int, ...], int], str] = {}
        self.pointers: dict[str, str] = {}
        self.grid_op = next(op for op in kernel.body.block.ops if isinstance(op, tile.GridOp))
        self.symbolic_dims = sorted(
            {
                d
                for arg in kernel.body.block.args
                for d in cast(tile.GlobalType, arg.type).get_dims()
                if isinstance(d, str)
            }
        )
        self.multicast, self.paired_dim = self._cluster_plan()
        self.cluster = CLUSTER if self.multicast else 1

    def _cluster_plan(self) -> tuple[set[tile.LoadOp], tuple[str, int] | None]:
        """With `@cluster(2)`: the ring loads a 2-CTA cluster along grid axis 0 shares, and the dim
        that must then hold an even number of tiles, if any (see the module docstring)."""
        size = self.plan.cluster
        if size == 1:
            return set(), None
        extents = [_grid_expr(v, self.kernel) for v in self.grid_op.extents]
        first = extents[0]
        # a stored tensor is never multicast: one CTA's producer cannot wait for the other's stores
        stored = {op.tensor for op in self.kernel.walk() if isinstance(op, tile.StoreOp)}
        shared = {
            load
            for ring in self.layout.rings
            if ring.loop is not None
            for load in ring.loads
            if not depends_on_block_axis(load, 0) and ring.buffers[load].panels % CLUSTER == 0
            and load.tensor not in stored
        }
        simple = isinstance(first, tuple) and first[0] == "div" and isinstance(first[1], str) and isinstance(first[2], int)
        if size != CLUSTER or not self.plan.persistent or len(extents) < 2 or not simple or not shared:
            raise error_at(
                self.kernel,
                f"@cluster({size}) needs a persistent kernel with a 2-D grid whose first extent is a dim "
                f"divided by a tile size, and a pipelined tile shared along that axis with an even number of "
                f"swizzle panels; tkc builds clusters of {CLUSTER}",
            )
        assert isinstance(first, tuple)
        # the extra tile of an odd last pair is out of bounds: TMA reads it as zeros and drops its
        # stores, but a pointer store would write it, so then the tile rows must pair up exactly
        pointer_stores = any(isinstance(op, tile.StoreOp) and not isinstance(op.value.type, tile.RegisterTileType)
                             for op in self.kernel.walk())
        return shared, (first[1], CLUSTER * first[2]) if pointer_stores else None

    # ----- small builders

    def _insert(self, block: Block, op: Operation) -> Operation:
        block.add_op(op)
        return op

    def _const(self, block: Block, value: int) -> SSAValue:
        return self._insert(block, arith.ConstantOp(IntegerAttr(value, IndexType()))).results[0]

    def _binop(self, block: Block, cls: type[Operation], lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self._insert(block, cls(lhs, rhs)).results[0]  # type: ignore[call-arg]

    def _tensor_map(self, tensor: SSAValue, box: tuple[int, ...], swizzle: int) -> str:
        arg = self.arg_names[tensor]
        key = (arg, box, swizzle)
        if key not in self.tensor_maps:
            self.tensor_maps[key] = f"tmap_{arg}_{len(self.tensor_maps)}"
        return self.tensor_maps[key]

    # ----- the kernel

    def emit(self) -> sm90.KernelOp:
        kernel = sm90.KernelOp(
            self.kernel.sym_name.data,
            "",
            WARPGROUP_THREADS * (1 + self.consumers),
            self.layout.smem_bytes,
            max(1, self.plan.ctas_per_sm),
            self.cluster,
        )
        block = kernel.body.block
        base = self._insert(block, sm90.SmemBaseOp()).results[0]
        init = sm90.SingleThreadOp("block")
        block.add_op(init)
        for ring in self.layout.rings:
            for stage in range(ring.stages):
                full = self._binop(init.body.block, arith.AddiOp, base, self._const(init.body.block, 8 * (ring.full + stage)))
                self._insert(init.body.block, sm90.MbarrierInitOp(full, 1))
                empty = self._binop(
                    init.body.block, arith.AddiOp, base, self._const(init.body.block, 8 * (ring.empty + stage))
                )
                # a multicast stage is free once the consumers of every CTA that receives it are done
                releasers = WARPGROUP_THREADS // 32 * self.consumers * (self.cluster if ring.loop is not None else 1)
                self._insert(init.body.block, sm90.MbarrierInitOp(empty, releasers))
        for slot in self.layout.fence_slots.values():
            address = self._binop(init.body.block, arith.AddiOp, base, self._const(init.body.block, slot))
            self._insert(init.body.block, sm90.StoreFenceInitOp(address))
        self._insert(init.body.block, sm90.FenceBarrierInitOp())
        # the peer's multicasts complete on our barriers: they must be initialised cluster-wide
        self._insert(block, sm90.ClusterSyncOp() if self.cluster > 1 else sm90.SyncBlockOp())
        roles = sm90.RolesOp(self.consumers, self.plan.producer_registers, self.plan.consumer_registers)
        block.add_op(roles)
        producer_body = sm90.SingleThreadOp("warpgroup")
        roles.producer.block.add_op(producer_body)
        _RoleEmitter(self, "producer", producer_body.body.block, None).emit_kernel_body()
        _RoleEmitter(self, "consumer", roles.consumer.block, roles.consumer.block.args[0]).emit_kernel_body()
        if self.cluster > 1:
            # no CTA leaves while its peer may still multicast into it or arrive on its barriers
            self._insert(block, sm90.ClusterSyncOp())
        kernel.properties["abi"] = _abi(self)
        return kernel


def _abi(emitter: _Emitter) -> StringAttr:
    kernel = emitter.kernel
    args = tuple(
        kabi.ArgSpec(
            name,
            tile.element_name(cast(tile.GlobalType, arg.type).element_type),
            cast(tile.GlobalType, arg.type).get_dims(),
        )
        for arg, name in emitter.arg_names.items()
    )
    params: list[kabi.Param] = [
        kabi.TensorMapParam(name, arg, box, swizzle) for (arg, box, swizzle), name in emitter.tensor_maps.items()
    ]
    params += [kabi.PointerParam(name, arg) for arg, name in emitter.pointers.items()]
    params += [kabi.DimParam(f"dim_{d}", d) for d in emitter.symbolic_dims]
    extents = [_grid_expr(v, kernel) for v in emitter.grid_op.extents]
    if emitter.cluster > 1:
        pairs = _product([("ceildiv", extents[0], emitter.cluster), *extents[1:]])
        clusters = ("min", pairs, ("div", "num_sms", emitter.cluster))
        grid: tuple[kabi.Expr, ...] = (("mul", clusters, emitter.cluster), 1, 1)
    elif emitter.plan.persistent:
        grid = (
            ("min", _product(extents), ("mul", "num_sms", max(1, emitter.plan.ctas_per_sm))),
            1,
            1,
        )
    else:
        grid = tuple(extents) + (1,) * (3 - len(extents))
    divisibility: dict[str, int] = {}
    for op in kernel.walk():
        if isinstance(op, tile.LoadOp | tile.StoreOp):
            value_type = op.result.type if isinstance(op, tile.LoadOp) else op.value.type
            tensor_type = cast(tile.GlobalType, op.tensor.type)
            extents_per_axis = _tile_extents(tensor_type, cast(tile.SharedTileType, value_type))
            for dim, extent in zip(tensor_type.get_dims(), extents_per_axis):
                if isinstance(dim, str) and extent > 1:
                    divisibility[dim] = max(divisibility.get(dim, 1), extent)
    if emitter.paired_dim is not None:
        dim, multiple = emitter.paired_dim
        divisibility[dim] = max(divisibility.get(dim, 1), multiple)
    contract = kabi.KernelABI(
        entry=kernel.sym_name.data,
        args=args,
        params=tuple(params),
        grid=cast(tuple[kabi.Expr, kabi.Expr, kabi.Expr], grid),
        block=WARPGROUP_THREADS * (1 + emitter.consumers),
        smem_bytes=emitter.layout.smem_bytes,
        divisibility=tuple(sorted(divisibility.items())),
        written=tuple(name for arg, name in emitter.arg_names.items()
                      if any(isinstance(op, tile.StoreOp) and op.tensor is arg for op in kernel.walk())),
    )
    return StringAttr(contract.to_json())


def _accumulation_chain(loop: scf.ForOp) -> tile.MmaOp | None:
    """The loop's one mma when it only accumulates into a loop-carried tile (acc = mma(a, b, acc)
    yielded and used by nothing else): its wgmma can stay in flight across the back edge, with
    the wait deferred by one iteration, so the tensor cores never idle on a barrier. Not when it
    reads a tile.to_shared tile written in the loop: the next write must find its reads done."""
    mmas = [op for op in loop.body.block.ops if isinstance(op, tile.MmaOp)]
    if len(mmas) != 1 or mmas[0].acc is None:
        return None
    if any(isinstance(v.owner, tile.ToSharedOp) and loop.is_ancestor(v.owner) for v in (mmas[0].a, mmas[0].b)):
        return None
    mma = mmas[0]
    yield_op = loop.body.block.last_op
    uses = [use.operation for use in mma.result.uses]
    carried = mma.acc in loop.body.block.args and len(list(mma.acc.uses)) == 1
    return mma if carried and uses == [yield_op] else None


_TILE_TYPES = (tile.RegisterTileType, tile.RegisterVectorType, tile.SharedTileType, tile.SharedVectorType)
"""Values only the consumers hold; the producer carries the scalars (index, bool, f32)."""


def _tile_extents(tensor_type: tile.GlobalType, value_type: Attribute) -> tuple[int, ...]:
    """The tile's extent along each tensor axis (1 for the leading axes the tile does not span)."""
    shape = cast(tile.SharedTileType, value_type).get_shape()
    return (1,) * (tensor_type.rank - len(shape)) + shape


class _RoleEmitter:
    """Emits one role's copy of the kernel body: the producer keeps index math and loads, the
    consumers keep everything but loads (which become waits on the ring)."""

    def __init__(self, emitter: _Emitter, role: str, block: Block, consumer_index: SSAValue | None):
        self.e = emitter
        self.role = role
        self.block = block
        self.values: dict[SSAValue, SSAValue] = {}
        self.consumer_index = consumer_index
        self.row0: SSAValue | None = None
        self.smem_base: SSAValue | None = None
        self.dims: dict[str, SSAValue] = {}
        self.location: LocationAttr = emitter.kernel.location

    @property
    def is_producer(self) -> bool:
        return self.role == "producer"

    def _const(self, value: int, block: Block | None = None) -> SSAValue:
        return self.e._const(block or self.block, value)

    def _op(self, op: Operation, block: Block | None = None) -> Operation:
        op.location = self.location  # errors found later still point at the .tk construct
        (block or self.block).add_op(op)
        return op

    def _add(self, lhs: SSAValue, rhs: SSAValue, block: Block | None = None) -> SSAValue:
        return self._op(arith.AddiOp(lhs, rhs), block).results[0]

    def _mul(self, lhs: SSAValue, rhs: SSAValue, block: Block | None = None) -> SSAValue:
        return self._op(arith.MuliOp(lhs, rhs), block).results[0]

    # ----- the body, once per output tile

    def emit_kernel_body(self) -> None:
        self.smem_base = self._op(sm90.SmemBaseOp()).results[0]
        for name in self.e.symbolic_dims:
            self.dims[name] = self._op(sm90.DimParamOp(f"dim_{name}")).results[0]
        if self.consumer_index is not None:
            self.row0 = self._mul(self.consumer_index, self._const(self.e.rows_per_consumer))
        kernel_ops = list(self.e.kernel.body.block.ops)
        grid_at = kernel_ops.index(self.e.grid_op)
        prologue, per_tile = kernel_ops[:grid_at], kernel_ops[grid_at + 1 :]
        for op in prologue:
            self._emit_op(op, self.block)
        extents = [self.values[v] for v in self.e.grid_op.extents]
        if not self.e.plan.persistent:
            self.block_ids = [self._op(sm90.BlockIdOp(axis)).results[0] for axis in range(len(extents))]
            axis = self.e.plan.heavy_first
            if axis >= 0:
                # the planner's heavy-first order: block b of the axis computes tile (extent - 1 - b)
                last = self._op(arith.SubiOp(self._op(sm90.GridDimOp(axis)).results[0], self._const(1))).results[0]
                self.block_ids[axis] = self._op(arith.SubiOp(last, self.block_ids[axis])).results[0]
            self.tile_count = self._const(0)
            self.ring_counts = {id(r): self._const(0) for r in self.e.layout.rings if r.loop is not None}
            self._emit_tile(per_tile, self.block)
            return
        self._emit_persistent_loop(per_tile, extents)

    def _emit_persistent_loop(self, per_tile: list[Operation], extents: list[SSAValue]) -> None:
        num_tiles = extents[0]
        for extent in extents[1:]:
            num_tiles = self._mul(num_tiles, extent)
        start = self._op(sm90.BlockIdOp(0)).results[0]
        step = self._op(sm90.GridDimOp(0)).results[0]
        if self.e.cluster > 1:
            # clusters walk pairs of tiles along axis 0; the rank picks the tile of the pair
            size = self._const(self.e.cluster)
            self.rank = self._op(sm90.ClusterRankOp()).results[0]
            start = self._op(arith.DivUIOp(start, size)).results[0]
            step = self._op(arith.DivUIOp(step, size)).results[0]
            extents = [self._op(arith.CeilDivUIOp(extents[0], size)).results[0], *extents[1:]]
            num_tiles = extents[0]
            for extent in extents[1:]:
                num_tiles = self._mul(num_tiles, extent)
        loop_rings = [r for r in self.e.layout.rings if r.loop is not None]
        carried = [self._const(0)] + [self._const(0) for _ in loop_rings]
        body = Block(arg_types=[IndexType()] * (1 + len(carried)))
        loop = scf.ForOp(start, num_tiles, step, carried, body)
        self._op(loop)
        tile_index, tile_count, *ring_bases = body.args
        self.block_ids = self._tile_coordinates(tile_index, extents, body)
        if self.e.cluster > 1:
            paired = self._mul(self.block_ids[0], self._const(self.e.cluster, body), body)
            self.block_ids[0] = self._add(paired, self.rank, body)
        self.tile_count = tile_count
        self.ring_counts = {id(r): base for r, base in zip(loop_rings, ring_bases)}
        self._emit_tile(per_tile, body)
        next_counts = [self._add(tile_count, self._const(1, body), body)]
        for ring in loop_rings:
            next_counts.append(self._add(self.ring_counts[id(ring)], self._trip_count(ring.loop, body), body))
        body.add_op(scf.YieldOp(*next_counts))

    def _trip_count(self, loop: scf.ForOp | None, block: Block) -> SSAValue:
        assert loop is not None
        lb, ub, step = (self.values[v] for v in (loop.lb, loop.ub, loop.step))
        span = self._op(arith.SubiOp(ub, lb), block).results[0]
        return self._op(arith.CeilDivUIOp(span, step), block).results[0]

    def _tile_coordinates(self, t: SSAValue, extents: list[SSAValue], block: Block) -> list[SSAValue]:
        """Block indices of tile t: grouped order over the first two axes (group_m rows of tiles
        at a time sweep the columns), the third axis slowest."""
        if len(extents) == 1:
            return [t]
        rows, cols = extents[0], extents[1]
        plane = self._mul(rows, cols, block)
        z = self._op(arith.DivUIOp(t, plane), block).results[0]
        t2 = self._op(arith.RemUIOp(t, plane), block).results[0]
        group_m = self._const(max(1, self.e.plan.group_m), block)
        group_size = self._mul(group_m, cols, block)
        group = self._op(arith.DivUIOp(t2, group_size), block).results[0]
        first_row = self._mul(group, group_m, block)
        rows_left = self._op(arith.SubiOp(rows, first_row), block).results[0]
        group_rows = self._op(arith.MinUIOp(rows_left, group_m), block).results[0]
        in_group = self._op(arith.RemUIOp(t2, group_size), block).results[0]
        i = self._add(first_row, self._op(arith.RemUIOp(in_group, group_rows), block).results[0], block)
        j = self._op(arith.DivUIOp(in_group, group_rows), block).results[0]
        return [i, j, z][: len(extents)]

    def _emit_tile(self, ops: list[Operation], block: Block) -> None:
        kernel_rings = self.e.layout.kernel_rings
        for op in ops:
            if isinstance(op, tile.LoadOp):
                for ring in kernel_rings:
                    if op is self._slot_position(ring):
                        self._ring_slot(ring, self.tile_count, block)
                continue
            self._emit_op(op, block)
        if not self.is_producer:
            for ring in kernel_rings:
                self._release(ring, self.tile_count, block)

    # ----- rings

    def _slot_position(self, ring: Ring) -> tile.LoadOp:
        """Where a ring's stage is handled: the producer issues it where the last load stood
        (every load's coordinates are computed by then); consumers wait where the first stood
        (the first use may come before the last load)."""
        return ring.loads[-1] if self.is_producer else ring.loads[0]

    def _slot(self, ring: Ring, it: SSAValue, block: Block) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        """(stage address, full barrier, empty barrier, parity) of iteration `it`."""
        assert self.smem_base is not None
        stages = self._const(ring.stages, block)
        stage = self._op(arith.RemUIOp(it, stages), block).results[0]
        lap = self._op(arith.DivUIOp(it, stages), block).results[0]
        parity = self._op(arith.AndIOp(lap, self._const(1, block)), block).results[0]
        stage_addr = self._add(
            self._add(self.smem_base, self._const(ring.base, block), block),
            self._mul(stage, self._const(ring.stage_bytes, block), block),
            block,
        )
        stage8 = self._mul(stage, self._const(8, block), block)
        full = self._add(self._add(self.smem_base, self._const(8 * ring.full, block), block), stage8, block)
        empty = self._add(self._add(self.smem_base, self._const(8 * ring.empty, block), block), stage8, block)
        return stage_addr, full, empty, parity

    def _ring_slot(self, ring: Ring, it: SSAValue, block: Block) -> None:
        stage_addr, full, empty, parity = self._slot(ring, it, block)
        if self.is_producer:
            flipped = self._op(arith.XOrIOp(parity, self._const(1, block)), block).results[0]
            self._op(sm90.MbarrierWaitOp(empty, flipped), block)
            self._op(sm90.MbarrierArriveOp(full, ring.tx_bytes), block)
            for load in ring.loads:
                self._issue_load(load, ring.buffers[load], stage_addr, full, block)
            return
        self._op(sm90.MbarrierWaitOp(full, parity), block)
        for load in ring.loads:
            buffer = ring.buffers[load]
            addr = self._add(stage_addr, self._const(buffer.offset, block), block)
            self.values[load.result] = self._op(sm90.SmemViewOp(addr, buffer.ref_type), block).results[0]

    def _release(self, ring: Ring, it: SSAValue, block: Block) -> None:
        """One lane of each consumer warp frees the stage (its warpgroup's wgmmas that read it are
        complete), here and in the peer CTA of a cluster."""
        _, _, empty, _ = self._slot(ring, it, block)
        lane = sm90.SingleThreadOp("warp")
        self._op(lane, block)
        self._op(sm90.MbarrierArriveOp(empty), lane.body.block)
        if self.e.cluster > 1 and ring.loop is not None:
            peer = self._op(arith.XOrIOp(self.rank, self._const(1, lane.body.block)), lane.body.block).results[0]
            self._op(sm90.MbarrierArriveOp(empty, cta=peer), lane.body.block)

    def _element_coords(self, tensor_type: tile.GlobalType, value_type: Attribute, coords: list[SSAValue], block: Block) -> list[SSAValue]:
        """TMA coordinates, innermost first, of the tile at tile coordinates `coords`."""
        extents = _tile_extents(tensor_type, value_type)
        elements = [
            c if extent == 1 else self._mul(c, self._const(extent, block), block) for c, extent in zip(coords, extents)
        ]
        # a rank-1 tensor is mapped as one row of a 2-D tensor (see tkc/abi.py)
        return list(reversed(elements)) + ([self._const(0, block)] if tensor_type.rank == 1 else [])

    def _box(self, buffer: SharedBuffer, rank: int, rows: int) -> tuple[int, ...]:
        shape = buffer.ref_type.get_shape()
        inner = (buffer.ref_type.panel_cols,) if len(shape) == 1 else (buffer.ref_type.panel_cols, rows)
        return inner + (1,) * (max(rank, 2) - len(inner))

    def _issue_load(self, load: tile.LoadOp, buffer: SharedBuffer, stage_addr: SSAValue, full: SSAValue, block: Block) -> None:
        tensor_type = cast(tile.GlobalType, load.tensor.type)
        shape = buffer.ref_type.get_shape()
        box = self._box(buffer, tensor_type.rank, shape[0])
        name = self.e._tensor_map(load.tensor, box, buffer.ref_type.swizzle.data)
        tmap = self._op(sm90.TensorMapParamOp(name), block).results[0]
        coords = self._element_coords(tensor_type, load.result.type, [self.values[c] for c in load.coords], block)
        if load in self.e.multicast:
            # this CTA's share of the panels, delivered to every CTA of the cluster
            share = buffer.panels // self.e.cluster
            first = self._mul(self.rank, self._const(share, block), block)
            for k in range(share):
                panel = self._add(first, self._const(k, block), block)
                dst = self._add(
                    self._add(stage_addr, self._const(buffer.offset, block), block),
                    self._mul(panel, self._const(buffer.panel_bytes, block), block),
                    block,
                )
                column = self._add(coords[0], self._mul(panel, self._const(buffer.ref_type.panel_cols, block), block), block)
                mask = (1 << self.e.cluster) - 1
                self._op(sm90.TmaLoadOp(tmap, dst, full, [column, *coords[1:]], buffer.panel_bytes, mask), block)
            return
        order = load.attributes.get("memory_order")
        for panel in range(buffer.panels):
            dst = self._add(stage_addr, self._const(buffer.offset + panel * buffer.panel_bytes, block), block)
            panel_coords = [self._add(coords[0], self._const(panel * buffer.ref_type.panel_cols, block), block)] + coords[1:]
            issued = self._op(sm90.TmaLoadOp(tmap, dst, full, panel_coords, buffer.panel_bytes), block)
            if isinstance(order, tile.DecisionAttr):
                # tile-memory-order's claim, which sm90-verify-barriers checks: a load after stores
                # follows a store-fence wait; the others are disjoint from every earlier store
                key = "after_stores" if order.int_value else "disjoint_from_stores"
                issued.attributes[key] = StringAttr(order.reason.data)

    # ----- ops

    def _frag_of(self, value: SSAValue) -> Attribute:
        """The type `value` has in a consumer: a column vector is replicated, the rest split by rows."""
        t = value.type
        if value in self.e.columns:
            assert isinstance(t, tile.RegisterVectorType)
            return sm90.FragmentType([t.length], t.element_type, column=True)
        return self._frag_type(t)

    def _frag_type(self, t: Attribute) -> Attribute:
        if isinstance(t, tile.RegisterTileType):
            return sm90.FragmentType([self.e.rows_per_consumer, t.cols], t.element_type)
        if isinstance(t, tile.RegisterVectorType):
            return sm90.FragmentType([self.e.rows_per_consumer], t.element_type)
        return t

    def _emit_op(self, op: Operation, block: Block) -> None:
        self.location = op.location
        if isinstance(op, tile.ReturnOp | tile.GridOp):
            return
        if isinstance(op, tile.DimOp):
            dim = _dim_name(self.e.kernel, op)
            self.values[op.result] = self.dims[dim] if isinstance(dim, str) else self._const(dim, block)
            return
        if isinstance(op, tile.BlockIdOp):
            self.values[op.result] = self.block_ids[op.axis.value.data]
            return
        if isinstance(op, scf.ForOp):
            self._emit_for(op, block)
            return
        if isinstance(op, scf.IfOp):
            self._emit_if(op, block)
            return
        if isinstance(op, tile.FenceOp):
            self._emit_fence(op, block)
            return
        if op.dialect_name() in ("arith", "math"):
            clone = op.clone_without_regions(value_mapper=self.values, clone_operands=True)
            block.add_op(clone)
            for old, new in zip(op.results, clone.results):
                self.values[old] = new
            return
        if self.is_producer:
            return  # compute and stores belong to the consumers
        self._emit_compute(op, block)

    def _emit_for(self, loop: scf.ForOp, block: Block) -> None:
        ring = next((r for r in self.e.layout.rings if r.loop is loop), None)
        lb, ub, step = (self.values[v] for v in (loop.lb, loop.ub, loop.step))
        if self.is_producer:
            self._emit_producer_for(loop, ring, block)
            return
        tail = late_tail(loop) if ring is not None and KernelPlan.overlaps(loop) else None
        if ring is not None and tail is not None:
            self._emit_overlapped_for(loop, ring, tail, block)
            return
        init = [self.values[v] for v in loop.iter_args]
        body = Block(arg_types=[IndexType(), *(self._frag_of(a) for a in loop.body.block.args[1:])])
        new_loop = scf.ForOp(lb, ub, step, init, body)
        self._op(new_loop, block)
        for old, new in zip(loop.body.block.args, body.args):
            self.values[old] = new
        it = self._iteration(ring, loop, body.args[0], body) if ring else None
        chain = _accumulation_chain(loop) if ring else None
        if chain is not None:
            new_loop.attributes["wgmma_in_flight"] = StringAttr(
                "one group: the loop only accumulates (acc = mma(a, b, acc)), so each iteration waits for the "
                "previous wgmma group and frees its stage, and the tensor cores never wait on a barrier"
            )
        for op in loop.body.block.ops:
            if isinstance(op, tile.LoadOp):
                if ring is not None and it is not None and op is self._slot_position(ring):
                    self._ring_slot(ring, it, body)
                continue
            if op is chain:
                self._emit_mma(op, body, pending=1)
                continue
            if isinstance(op, scf.YieldOp):
                if ring is not None and it is not None:
                    self._release_after_mma(ring, it, chain is not None, body)
                body.add_op(scf.YieldOp(*(self.values[v] for v in op.operands)))
                continue
            self._emit_op(op, body)
        for old, new in zip(loop.results, new_loop.results):
            self.values[old] = new
        if chain is not None and ring is not None:
            # the last group is still in flight: wait for it, then free its stage
            index = next(i for i, v in enumerate(loop.body.block.last_op.operands) if v is chain.result)  # type: ignore[union-attr]
            final = self._op(sm90.WgmmaWaitOp(new_loop.results[index], 0), block).results[0]
            self.values[loop.results[index]] = final
            trips = self._trip_count(loop, block)
            last = self._op(arith.SubiOp(self._add(self.ring_counts[id(ring)], trips, block), self._const(1, block)), block)
            ran = self._op(arith.CmpiOp(trips, self._const(0, block), "ugt"), block).results[0]
            guarded = Block()
            self._release(ring, last.results[0], guarded)
            guarded.add_op(scf.YieldOp())
            self._op(scf.IfOp(ran, [], Region(guarded)), block)

    def _emit_producer_for(self, loop: scf.ForOp, ring: Ring | None, block: Block) -> None:
        """The producer's copy of a loop: its loads' ring slot, its index math, its fences, and the
        loop-carried scalars (a var that is a tile coordinate); the tiles it carries are the
        consumers'. A loop with neither loads nor carried scalars is not the producer's."""
        scalars = [i for i, arg in enumerate(loop.body.block.args[1:]) if not isinstance(arg.type, _TILE_TYPES)]
        if ring is None and not scalars:
            return
        lb, ub, step = (self.values[v] for v in (loop.lb, loop.ub, loop.step))
        old = loop.body.block
        body = Block(arg_types=[IndexType(), *(old.args[1 + i].type for i in scalars)])
        new_loop = scf.ForOp(lb, ub, step, [self.values[loop.iter_args[i]] for i in scalars], body)
        self._op(new_loop, block)
        self.values[old.args[0]] = body.args[0]
        for i, arg in zip(scalars, body.args[1:]):
            self.values[old.args[1 + i]] = arg
        it = self._iteration(ring, loop, body.args[0], body) if ring is not None else None
        for op in old.ops:
            if ring is not None and it is not None and op is self._slot_position(ring):
                self._ring_slot(ring, it, body)
            elif isinstance(op, scf.YieldOp):
                body.add_op(scf.YieldOp(*(self.values[op.operands[i]] for i in scalars)))
            elif not isinstance(op, tile.LoadOp):
                self._emit_op(op, body)
        for i, result in zip(scalars, new_loop.results):
            self.values[loop.results[i]] = result

    def _emit_overlapped_for(self, loop: scf.ForOp, ring: Ring, tail: list[Operation], block: Block) -> None:
        """A loop whose tail runs one iteration late (see plan.late_tail), as
            if trips > 0:
                head(first)
                for the rest: issue head mma j; tail(j-1) issued; wait head mma; rest of head(j);
                              wait tail(j-1); free stage j-1
                tail(last); free the last stage
        The values the tail takes from the head (P, the rescale factors) and the stage the tail
        reads (V) are those of the previous iteration: the former ride along as loop-carried
        fragments, the latter's views are rebuilt from the iteration count minus one."""
        old_block = loop.body.block
        yield_op = old_block.last_op
        assert isinstance(yield_op, scf.YieldOp)
        tail_set = set(tail)
        head = [op for op in old_block.ops if op not in tail_set and op is not yield_op]
        first_mma = next(op for op in head if isinstance(op, tile.MmaOp))
        tail_index = list(yield_op.operands).index(tail[-1].results[0])
        carried_acc = old_block.args[1 + tail_index]
        crossing: list[SSAValue] = []
        tail_loads: list[tile.LoadOp] = []
        for op in tail:
            for v in op.operands:
                if isinstance(v.owner, tile.LoadOp) and v.owner.parent_block() is old_block:
                    if v.owner not in tail_loads:
                        tail_loads.append(v.owner)
                elif (isinstance(v.owner, Operation) and v.owner.parent_block() is old_block
                      and v.owner not in tail_set and v not in crossing):
                    crossing.append(v)
        init = [self.values[v] for v in loop.iter_args]
        lb, ub, step = (self.values[v] for v in (loop.lb, loop.ub, loop.step))
        trips = self._trip_count(loop, block)
        ran = self._op(arith.CmpiOp(trips, self._const(0, block), "ugt"), block).results[0]
        then = Block()

        # the first iteration's head
        self.values[old_block.args[0]] = lb
        for arg, value in zip(old_block.args[1:], init):
            self.values[arg] = value
        self._emit_head(head, ring, self.ring_counts[id(ring)], then)
        carried_init = [
            init[i] if i == tail_index else self.values[v] for i, v in enumerate(yield_op.operands)
        ] + [self.values[v] for v in crossing]

        body = Block(arg_types=[IndexType(), *(v.type for v in carried_init)])
        start = self._add(lb, step, then)
        new_loop = scf.ForOp(start, ub, step, carried_init, body)
        new_loop.attributes["softmax_overlap"] = StringAttr(
            "the last mma accumulates into a carried tile nothing else reads, so it runs one iteration late: "
            "each iteration issues its first mma, then the previous iteration's last one, and computes on the "
            "first product while the tensor cores run both"
        )
        self._op(new_loop, then)
        n = len(old_block.args) - 1
        self.values[old_block.args[0]] = body.args[0]
        for arg, value in zip(old_block.args[1:], body.args[1 : 1 + n]):
            self.values[arg] = value
        it = self._iteration(ring, loop, body.args[0], body)
        previous = self._op(arith.SubiOp(it, self._const(1, body)), body).results[0]
        late = _LateTail(tail, crossing, list(body.args[1 + n :]), tail_loads, previous)
        done = self._emit_head(head, ring, it, body, late, first_mma)
        assert done is not None
        self._release(ring, previous, body)
        body.add_op(scf.YieldOp(
            *(done if i == tail_index else self.values[v] for i, v in enumerate(yield_op.operands)),
            *(self.values[v] for v in crossing),
        ))

        # the last iteration's tail
        last = self._op(arith.SubiOp(self._add(self.ring_counts[id(ring)], trips, then), self._const(1, then)), then)
        self.values[carried_acc] = new_loop.results[tail_index]
        _, acc = self._emit_tail(_LateTail(tail, crossing, list(new_loop.results[n:]), tail_loads, last.results[0]), then)
        final = self._op(sm90.WgmmaWaitOp(acc, 0), then).results[0]
        self._release(ring, last.results[0], then)
        then.add_op(scf.YieldOp(*(final if i == tail_index else new_loop.results[i] for i in range(n))))
        skipped = Block()
        skipped.add_op(scf.YieldOp(*init))
        result = self._op(scf.IfOp(ran, [v.type for v in init], Region(then), Region(skipped)), block)
        for old, new in zip(loop.results, result.results):
            self.values[old] = new

    def _emit_head(self, head: list[Operation], ring: Ring, it: SSAValue, block: Block,
                   late: _LateTail | None = None, first_mma: Operation | None = None) -> SSAValue | None:
        """The head of an overlapped loop's iteration `it`; with `late`, the previous iteration's
        tail is issued right after `first_mma`, and its product waited for (and returned) just
        before the head writes the tail's next A operand: ptxas gives both the same registers,
        and rewriting registers an in-flight wgmma reads serializes the wgmmas (C7513)."""
        acc = done = None
        a_operand = cast(tile.MmaOp, late.ops[-1]).a if late is not None else None
        for op in head:
            if isinstance(op, tile.LoadOp):
                if op is self._slot_position(ring):
                    self._ring_slot(ring, it, block)
                continue
            if late is not None and op is first_mma:
                issued, acc = self._emit_tail(late, block, cast(tile.MmaOp, op))
                assert issued is not None
                self.values[op.results[0]] = self._op(sm90.WgmmaWaitOp(issued, 1), block).results[0]
                continue
            if acc is not None and done is None and a_operand in op.results:
                done = self._op(sm90.WgmmaWaitOp(acc, 0), block).results[0]
            self._emit_op(op, block)
        if acc is not None and done is None:
            done = self._op(sm90.WgmmaWaitOp(acc, 0), block).results[0]
        return done

    def _emit_tail(self, late: _LateTail, block: Block,
                   head_mma: tile.MmaOp | None = None) -> tuple[SSAValue | None, SSAValue]:
        """Issue the tail of ring iteration `late.iteration` on the carried head values, and
        `head_mma` between the tail's element-wise ops and its mma: ptxas serializes wgmmas
        (C7513) when other instructions write a wgmma's registers between two groups in flight.
        Returns the head's and the tail's (not yet waited) products; the head's own values are
        restored afterwards."""
        saved = {v: self.values.get(v) for v in [*late.crossing, *(load.result for load in late.loads)]}
        self.values.update(zip(late.crossing, late.carried))
        if late.loads:
            ring = next(r for r in self.e.layout.rings if late.loads[0] in r.loads)
            stage_addr = self._slot(ring, late.iteration, block)[0]
            for load in late.loads:
                buffer = ring.buffers[load]
                addr = self._add(stage_addr, self._const(buffer.offset, block), block)
                self.values[load.result] = self._op(sm90.SmemViewOp(addr, buffer.ref_type), block).results[0]
        for op in late.ops[:-1]:
            self._emit_op(op, block)
        late_values = {v: self.values[v] for v in saved}
        for v, value in saved.items():
            if value is not None:
                self.values[v] = value
        issued = self._issue_mma(head_mma, block) if head_mma is not None else None
        self.values.update(late_values)
        acc = self._issue_mma(cast(tile.MmaOp, late.ops[-1]), block)
        for v, value in saved.items():
            if value is not None:
                self.values[v] = value
        return issued, acc

    def _release_after_mma(self, ring: Ring, it: SSAValue, deferred: bool, block: Block) -> None:
        """Free the stage the finished wgmmas read: this iteration's, or with a deferred wait
        (one group left in flight) the previous iteration's, from the second iteration on."""
        if not deferred:
            self._release(ring, it, block)
            return
        first = self.ring_counts[id(ring)]
        later = self._op(arith.CmpiOp(it, first, "ugt"), block).results[0]
        guarded = Block()
        previous = self._op(arith.SubiOp(it, self._const(1, guarded)), guarded).results[0]
        self._release(ring, previous, guarded)
        guarded.add_op(scf.YieldOp())
        self._op(scf.IfOp(later, [], Region(guarded)), block)

    def _iteration(self, ring: Ring, loop: scf.ForOp, iv: SSAValue, block: Block) -> SSAValue:
        lb, step = self.values[loop.lb], self.values[loop.step]
        local = self._op(arith.SubiOp(iv, lb), block).results[0]
        local = self._op(arith.DivUIOp(local, step), block).results[0]
        return self._add(self.ring_counts[id(ring)], local, block)

    def _emit_if(self, op: scf.IfOp, block: Block) -> None:
        if self.is_producer:
            if any(isinstance(inner, tile.LoadOp) for inner in op.walk()):
                raise error_at(op, "the GPU backend does not load tiles under an if")
            self._emit_producer_if(op, block)
            return
        regions = []
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                regions.append(Region())
                continue
            new_block = Block()
            for inner in region.block.ops:
                if isinstance(inner, scf.YieldOp):
                    new_block.add_op(scf.YieldOp(*(self.values[v] for v in inner.operands)))
                else:
                    self._emit_op(inner, new_block)
            regions.append(Region(new_block))
        new_if = scf.IfOp(self.values[op.cond], [self._frag_of(r) for r in op.results], regions[0], regions[1])
        self._op(new_if, block)
        for old, new in zip(op.results, new_if.results):
            self.values[old] = new

    def _emit_producer_if(self, op: scf.IfOp, block: Block) -> None:
        """The producer's copy of an if that yields scalars (a var a later load's coordinates
        may use): its index math only."""
        scalars = [i for i, result in enumerate(op.results) if not isinstance(result.type, _TILE_TYPES)]
        if not scalars:
            return
        regions = []
        for region in (op.true_region, op.false_region):
            new_block = Block()
            for inner in region.block.ops:
                if isinstance(inner, scf.YieldOp):
                    new_block.add_op(scf.YieldOp(*(self.values[inner.operands[i]] for i in scalars)))
                else:
                    self._emit_op(inner, new_block)
            regions.append(Region(new_block))
        new_if = scf.IfOp(self.values[op.cond], [op.results[i].type for i in scalars], regions[0], regions[1])
        self._op(new_if, block)
        for i, result in zip(scalars, new_if.results):
            self.values[op.results[i]] = result

    def _emit_compute(self, op: Operation, block: Block) -> None:
        v = self.values
        assert self.row0 is not None
        match op:
            case tile.FillOp():
                new = sm90.FillOp(op.value.value.data, self._frag_of(op.result))
            case tile.UnaryOp():
                new = sm90.UnaryOp(op.fn, v[op.source])
            case tile.BinaryOp():
                new = sm90.BinaryOp(op.fn, v[op.lhs], v[op.rhs])
            case tile.ConvertOp():
                new = sm90.ConvertOp(v[op.source], self._frag_of(op.result))
            case tile.ReduceOp() if op.axis.data == tile.Axis.ROW:
                new = sm90.RowReduceOp(op.fn, v[op.source])
            case tile.ReduceOp():
                assert self.smem_base is not None and self.consumer_index is not None
                scratch = self._add(self.smem_base, self._const(self.e.layout.col_scratch, block), block)
                barrier_id = self._const(self.e.consumers + 1, block)
                new = sm90.ColReduceOp(op.fn, v[op.source], scratch, self.consumer_index, self.e.consumers, barrier_id)
            case tile.BroadcastOp() if op.axis.data == tile.Axis.ROW:
                new = sm90.RowBroadcastOp(op.fn, v[op.source], v[op.vector])
            case tile.BroadcastOp():
                new = sm90.ColBroadcastOp(op.fn, v[op.source], v[op.vector])
            case tile.MaskOp():
                row0 = self._add(v[op.row_offset], self.row0, block)
                new = sm90.MaskOp(op.kind, v[op.source], row0, v[op.col_offset], op.fill)
            case tile.MmaOp():
                self._emit_mma(op, block)
                return
            case tile.ToRegOp() if op.result in self.e.columns:
                new = sm90.LoadFragmentOp(v[op.source], self._const(0, block), self._frag_of(op.result))
            case tile.ToRegOp():
                new = sm90.LoadFragmentOp(v[op.source], self.row0, self._frag_type(op.result.type))
            case tile.StoreOp():
                self._emit_store(op, block)
                return
            case tile.ToSharedOp():
                self._emit_to_shared(op, block)
                return
            case _:
                raise error_at(op, f"the GPU backend does not support {op.name} here yet")
        self._op(new, block)
        for old, result in zip(op.results, new.results):
            self.values[old] = result

    def _emit_fence(self, op: tile.FenceOp, block: Block) -> None:
        """Consumers: each thread fences its st.global stores for the async proxy, the thread that
        issued a warpgroup's TMA stores waits until they are written (not only read), all
        consumers meet, and the first one counts the pass on the fence's slot. The producer
        counts its own pass and waits until the consumers' count catches up before it issues a
        later load (a fence the producer never passes only orders the consumers' stores)."""
        assert self.smem_base is not None
        slot_offset = self.e.layout.fence_slots.get(op)
        slot = self._add(self.smem_base, self._const(slot_offset, block), block) if slot_offset is not None else None
        if self.is_producer:
            if slot is None:
                return  # in a loop without loads: the fence orders only the consumers' stores
            self._op(sm90.StoreFenceWaitOp(slot), block)
            self._op(sm90.FenceProxyAsyncGlobalOp(), block)
            return
        assert self.consumer_index is not None
        self._op(sm90.FenceProxyAsyncGlobalOp(), block)
        issuer = sm90.SingleThreadOp("warpgroup")
        self._op(issuer, block)
        self._op(sm90.TmaStoreWaitOp(0, read=False), issuer.body.block)
        self._op(sm90.NamedBarrierOp(self._const(self.e.consumers + 1, block), WARPGROUP_THREADS * self.e.consumers), block)
        if slot is None:
            return
        first = self._op(arith.CmpiOp(self.consumer_index, self._const(0, block), "eq"), block).results[0]
        signal = Block()
        counter = sm90.SingleThreadOp("warpgroup")
        self._op(counter, signal)
        self._op(sm90.StoreFenceSignalOp(slot), counter.body.block)
        signal.add_op(scf.YieldOp())
        self._op(scf.IfOp(first, [], Region(signal)), block)

    def _emit_to_shared(self, op: tile.ToSharedOp, block: Block) -> None:
        """Every consumer writes its rows of the register tile into the tile's one shared buffer,
        which each consumer's wgmma then reads whole, so both sides sync all consumers (named
        barrier `consumers + 1`; 1..consumers are the epilogue's). Before the write: every
        consumer is past the wgmma_wait of the wgmmas that read the previous contents. After it:
        each writer's fence.proxy.async, then the barrier, orders all rows before any wgmma."""
        assert self.smem_base is not None and self.row0 is not None
        if not isinstance(op.result.type, tile.SharedTileType):
            raise error_at(op, "the GPU backend moves register tiles to shared memory, not vectors")
        buffer = self.e.layout.shared[op]
        addr = self._add(self.smem_base, self._const(buffer.offset, block), block)
        view = self._op(sm90.SmemViewOp(addr, buffer.ref_type), block).results[0]
        barrier_id = self._const(self.e.consumers + 1, block)
        threads = WARPGROUP_THREADS * self.e.consumers
        self._op(sm90.NamedBarrierOp(barrier_id, threads), block)
        self._op(sm90.StoreFragmentOp(self.values[op.source], view, self.row0), block)
        self._op(sm90.FenceProxyAsyncOp(), block)
        self._op(sm90.NamedBarrierOp(barrier_id, threads), block)
        self.values[op.result] = view

    def _emit_mma(self, op: tile.MmaOp, block: Block, pending: int = 0) -> None:
        issued = self._issue_mma(op, block)
        self.values[op.result] = self._op(sm90.WgmmaWaitOp(issued, pending), block).results[0]

    def _issue_mma(self, op: tile.MmaOp, block: Block) -> SSAValue:
        """The wgmma group of `op`, issued; its product may be read only after a wgmma_wait."""
        a = self.values[op.a]
        shared_a = isinstance(a.type, sm90.SharedRefType)
        acc = self.values[op.acc] if op.acc is not None else None
        result_type = self._frag_type(op.result.type)
        mma = sm90.WgmmaOp(
            a,
            self.values[op.b],
            acc,
            result_type,
            op.transpose_a is not None,
            op.transpose_b is not None,
            self.row0 if shared_a else None,
        )
        self._op(mma, block)
        return mma.result

    def _emit_store(self, op: tile.StoreOp, block: Block) -> None:
        assert self.row0 is not None and self.consumer_index is not None and self.smem_base is not None
        value_type = op.value.type
        tensor_type = cast(tile.GlobalType, op.tensor.type)
        coords = [self.values[c] for c in op.coords]
        if isinstance(value_type, tile.RegisterVectorType):
            self._emit_vector_store(op, tensor_type, coords, block)
            return
        if not isinstance(value_type, tile.RegisterTileType):
            raise error_at(op, "the GPU backend stores register tiles and vectors; load shared tiles into registers first")
        staging = self.e.layout.staging[op]
        chunk_cols = staging.chunk.get_shape()[1]
        chunk_bytes = _align(staging.chunk.num_bytes, TILE_ALIGN)
        base = self._add(
            self._add(self.smem_base, self._const(staging.offset, block), block),
            self._mul(self.consumer_index, self._const(staging.consumer_stride, block), block),
            block,
        )
        barrier_id = self._add(self.consumer_index, self._const(1, block), block)
        if staging.reuses_single_tiles:
            self._op(sm90.NamedBarrierOp(self._const(self.e.consumers + 1, block), WARPGROUP_THREADS * self.e.consumers), block)
        box = self._box(SharedBuffer(0, staging.chunk), tensor_type.rank, self.e.rows_per_consumer)
        name = self.e._tensor_map(op.tensor, box, staging.chunk.swizzle.data)
        element_coords = self._element_coords(tensor_type, value_type, coords, block)
        element_coords[1] = self._add(element_coords[1], self.row0, block)
        zero = self._const(0, block)
        for chunk in range(value_type.cols // chunk_cols):
            addr = self._add(base, self._const((chunk % staging.buffers) * chunk_bytes, block), block)
            view = self._op(sm90.SmemViewOp(addr, staging.chunk), block).results[0]
            # the store issued from this buffer `buffers` chunks ago has read it (see the wait below)
            self._op(sm90.NamedBarrierOp(barrier_id, WARPGROUP_THREADS), block)
            self._op(sm90.StoreFragmentOp(self.values[op.value], view, zero, chunk * chunk_cols), block)
            self._op(sm90.FenceProxyAsyncOp(), block)
            self._op(sm90.NamedBarrierOp(barrier_id, WARPGROUP_THREADS), block)
            issue = sm90.SingleThreadOp("warpgroup")
            self._op(issue, block)
            inner = issue.body.block
            tmap = self._op(sm90.TensorMapParamOp(name), inner).results[0]
            column = self._add(element_coords[0], self._const(chunk * chunk_cols, inner), inner)
            self._op(sm90.TmaStoreOp(tmap, addr, [column, *element_coords[1:]]), inner)
            self._op(sm90.TmaStoreCommitOp(), inner)
            self._op(sm90.TmaStoreWaitOp(staging.buffers - 1, read=True), inner)

    def _emit_vector_store(self, op: tile.StoreOp, tensor_type: tile.GlobalType, coords: list[SSAValue], block: Block) -> None:
        assert self.row0 is not None
        arg = self.e.arg_names[op.tensor]
        if arg not in self.e.pointers:
            self.e.pointers[arg] = f"ptr_{arg}"
        base = self._op(sm90.PointerParamOp(self.e.pointers[arg]), block).results[0]
        extents = _tile_extents(tensor_type, op.value.type)
        offset: SSAValue | None = None
        for axis, (coord, extent) in enumerate(zip(coords, extents)):
            element = coord if extent == 1 else self._mul(coord, self._const(extent, block), block)
            if offset is not None:
                dim = tensor_type.get_dims()[axis]
                size = self.dims[dim] if isinstance(dim, str) else self._const(dim, block)
                offset = self._add(self._mul(offset, size, block), element, block)
            else:
                offset = element
        assert offset is not None
        value = self.values[op.value]
        if not cast(sm90.FragmentType, value.type).is_column:
            self._op(sm90.StoreVectorGlobalOp(value, base, self._add(offset, self.row0, block)), block)
            return
        # every consumer holds the whole column vector: the first one stores it
        assert self.consumer_index is not None
        first = self._op(arith.CmpiOp(self.consumer_index, self._const(0, block), "eq"), block).results[0]
        store = Block()
        self._op(sm90.StoreVectorGlobalOp(value, base, offset), store)
        store.add_op(scf.YieldOp())
        self._op(scf.IfOp(first, [], Region(store)), block)


class ConvertTileToSm90Pass(ModulePass):
    name = "convert-tile-to-sm90"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.body.block.ops if isinstance(k, tile.KernelOp)]:
            lowered = _Emitter(kernel).emit()
            op.body.block.insert_op_before(lowered, kernel)
            op.body.block.erase_op(kernel)
