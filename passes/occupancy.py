"""The occupancy model tile-occupancy-plan decides with (its docstring says what it decides and
why): the register demand of a kernel's tiles (a live-range sweep), the register pools and
setmaxnreg splits, the index growth behind heavy_first, and the `Planner` that checks pins and
makes every decision. `check_budgets` is the part no plan escapes, which tile-bank-conflicts
checks before it simulates any tile.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import cast
from functools import cached_property
from collections.abc import Iterable, Mapping
from fractions import Fraction

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr
from xdsl.ir import Attribute, Block, OpResult, Operation, SSAValue

from tkc import dtypes
from tkc.diagnostics import TkError, error_at, location_of
from tkc.dialects.tile import (
    MAX_PINNED_STAGES,
    BLOCK_RESERVED_SMEM,
    MAX_CTAS_PER_SM,
    MAX_THREAD_REGISTERS,
    SM_REGISTERS,
    SM_SMEM,
    entry_registers,
    REALIGNED,
    BinaryOp,
    BlockIdOp,
    BoundsMaskOp,
    BroadcastOp,
    ConvertOp,
    CumsumOp,
    FenceOp,
    FillOp,
    GlobalType,
    GridOp,
    KernelOp,
    LoadOp,
    LoadScalarOp,
    MmaOp,
    PositionOp,
    ReduceOp,
    RegisterTileType,
    RegisterVectorType,
    SharedTileType,
    SelectOp,
    SharedVectorType,
    StoreOp,
    TMA_BOX_MAX,
    TMA_GLOBAL_ALIGN,
    TMA_SMEM_ALIGN,
    ToSharedOp,
    UnaryFn,
    UnaryOp,
    element_bytes,
    innermost_element_start,
    vector_box,
)
from tkc.passes.divisibility import alignment_shortfall, known_multiple
from tkc.passes.plan import (
    ALIGN_SLACK,
    MBARRIER_BYTES,
    MBARRIER_REGION,
    KernelPlan,
    band_obstacle,
    SMEM_BUDGET,
    WARPGROUP_THREADS,
    WGMMA_ROWS,
    WHOLE_AXIS,
    band_reductions,
    buffer_bytes,
    col_scratch_bytes,
    column_vectors,
    defined_before_its_loop,
    fragment_rows,
    padded_rows,
    pipelined_loops,
    ring_loops,
    register_heights,
    replicated,
    replicated_rows,
    short_heights,
    smem_plan,
    staged_stores,
    staging_chunk,
    staging_shareable,
    streaming_candidate,
    streams_tiles,
    tile_ring_stages,
)

MAX_CONSUMERS = 4
WGMMA_MAX_N = 256
"""Columns one wgmma produces at most (m64nNk16, N <= 256)."""
MAX_STAGES = 4
"""The deepest ring the plan picks by itself; a pin may ask for up to 16, and the tuner tries 6 and 8
(64x128x64 GEMM tiles ran 0.55-0.71x cuBLAS at 4 stages, 0.89-1.06x at 8; 128x128x64 ones best at 4)."""
TWO_BLOCK_STAGES = 3
"""The shallowest ring a kernel without an mma keeps to fit a second block on its SM: its consumers'
latency, not the tensor cores, bounds it, and a second block's warpgroup hides more of it than a
fourth stage does (layernorm with 32-row blocks on an H100: 3 stages and 2 blocks 1.10-1.11x as fast
as 4 stages and 1 at D 1024, alike at D 4096; 2 stages and 3 blocks 0.88-0.92x of 3 and 2)."""
MAX_THREADS = 1024
SETMAXNREG_RANGE = (24, 256)
"""The counts setmaxnreg takes (multiples of 8)."""
MIN_SETMAXNREG = SETMAXNREG_RANGE[0]
OVERHEAD_REGISTERS = 32
"""Registers a consumer thread needs besides its tiles: addresses, indices, descriptors, phases."""
SPILL_MARGIN = 8
"""How far under the consumers' budget their estimated demand must stay for the producer to keep
more than setmaxnreg's minimum: ptxas needed a few more than estimated (attention backward's dQ
at D = 128, causal: 228 estimated, 8 bytes spilled at 232; GLA decay attention: 226, 4-8 bytes)."""
GROUP_M = 8


def floor8(n: int) -> int:
    return n // 8 * 8


WGMMA_OPERAND_REGISTERS = 26
"""Registers ptxas needs for one wgmma besides its accumulators (descriptors, addresses): its
C7602 'register target' for the instruction is N/2 + 26 for m64nN with A in shared memory, over
every gemm, attention and fp8 variant measured (N 16..256, K 16..128, ptxas 13)."""
A_FRAGMENT_REGISTERS = 4
"""A from registers adds its fragment: 4 x b32 per thread (m64k16 16-bit, m64k32 fp8)."""


def mma_registers(mma: MmaOp) -> int:
    """Registers per thread one wgmma of this product needs at once (the accumulators are f32)."""
    a_fragment = A_FRAGMENT_REGISTERS if isinstance(mma.a.type, RegisterTileType) else 0
    return mma.result.type.cols // 2 + WGMMA_OPERAND_REGISTERS + a_fragment


def register_pool(consumers: int, ctas: int) -> tuple[int, int]:
    """(registers per thread at entry, the block's pool) with .maxntid + .minnctapersm `ctas`."""
    threads = WARPGROUP_THREADS * (1 + consumers)
    entry = entry_registers(threads, ctas)
    return entry, threads * entry


def register_split(consumers: int, ctas: int, demand: int = 0) -> tuple[int, int]:
    """(producer, consumer) setmaxnreg values that share the block's entry pool. The producer
    keeps 40 (32 beside 3 consumers, 24 beside 4: ThunderKittens' splits) unless that leaves the
    consumers less than `demand` + SPILL_MARGIN; then it drops to setmaxnreg's minimum, 24 (it
    issues TMA and computes coordinates, which no shipped producer spilled at), as
    FlashAttention-3 splits 24/240. Not always 24: 64-dim attention ran 3 % slower at 24/240
    than at 40/232 on an H100 (register-split-2026-12-05.log), ptxas scheduling it otherwise."""
    _, pool = register_pool(consumers, ctas)

    def share(producer: int) -> int:
        return min(256, floor8((pool // WARPGROUP_THREADS - producer) // consumers))

    producer = 40 if consumers <= 2 else 32 if consumers == 3 else MIN_SETMAXNREG
    if share(producer) < demand + SPILL_MARGIN:
        producer = MIN_SETMAXNREG
    return producer, share(producer)


def register_cost(value: SSAValue, consumers: int, columns: set[SSAValue], band: bool = False) -> Fraction:
    """Registers per consumer thread that a value holds, as sm90.FragmentType counts its fragment
    (exact, so sums do not depend on their order): a tile's slice of rows / consumers rows (all
    its rows where the consumers replicate it, plan.replicated), padded to 64 rows
    (plan.fragment_rows: a 16-row tile costs what a 64-row one does), one f32 or two narrower
    elements per register; a row vector 2 per 64 rows of the slice; a column vector (`columns`, replicated
    in every consumer) a quarter of its columns, an eighth when narrow. In the band layout
    (plan.band) a tile costs its own rows, a row vector 2 per 16 rows, a column vector a
    sixteenth of its columns (a warp's quarter of them), a thirty-second when narrow."""
    type_ = value.type
    if not isinstance(type_, RegisterTileType | RegisterVectorType):
        return Fraction(0)
    per_register = 1 if element_bytes(type_.element_type) == 4 else 2
    if isinstance(type_, RegisterVectorType) and value in columns:
        return Fraction(type_.length, (16 if band else 4) * per_register)
    rows = type_.rows if band else fragment_rows(type_.rows, consumers)
    if isinstance(type_, RegisterTileType):
        return Fraction(rows * type_.cols, WARPGROUP_THREADS * per_register)
    return Fraction(2 * rows // (16 if band else WGMMA_ROWS))


def overlap_registers(loop: scf.ForOp, late: MmaOp, consumers: int, band: bool = False) -> int:
    """Registers per consumer thread an overlapped loop (tile-pipeline's `overlap`) holds while
    its late mma runs beside the next iteration's: the product of every mma of the body (the
    accumulators the tensor cores may be writing at once), the late mma's A operand where it is
    a register tile (the previous iteration's, read until that mma completes), and
    OVERHEAD_REGISTERS. ptxas allocates these together or serialises the wgmmas (C7512)."""
    products = sum((register_cost(op.result, consumers, set(), band)
                    for op in loop.body.block.ops if isinstance(op, MmaOp)), Fraction(0))
    operand = register_cost(late.a, consumers, set(), band)  # nothing where A is in shared memory
    return math.ceil(products + operand) + OVERHEAD_REGISTERS


def program_order(root: Operation) -> dict[Operation, int]:
    """Every op under `root` numbered in program order, so the ops nested in an op follow it
    contiguously (an explicit stack: xDSL's recursive walk costs the nesting depth per op)."""
    order: dict[Operation, int] = {}
    stack = [root]
    while stack:
        op = stack.pop()
        order[op] = len(order)
        stack.extend(reversed([nested for region in op.regions for b in region.blocks for nested in b.ops]))
    return order


def streamed(kernel: KernelOp) -> frozenset[SSAValue]:
    """The tiles an element-wise chain never holds whole: in a run of consecutive element-wise
    ops (maps, broadcasts, conversions, positions, selects), a result used only by later ops of the run or by a
    reduction right after it (`row_sum(f32(x) * f32(x))`). Every op of the run computes register
    n from registers n of its operands (the lowering is per register), so ptxas evaluates the run
    register by register and only the run's inputs and the tiles it hands on are live at once.
    A fill is a run's member too (its registers are constants ptxas folds into their users), and
    an op that reads nothing of the run (a vector's load between `add_row(zero, doc_q)` and
    `add_col(zero, doc_k)`) does not end it: ptxas schedules the run around it."""
    elementwise = UnaryOp | BinaryOp | BroadcastOp | ConvertOp | PositionOp | SelectOp | FillOp
    values: set[SSAValue] = set()
    for block in (b for op in kernel.walk() for r in op.regions for b in r.blocks):
        run: list[Operation] = []
        for op in [*block.ops, None]:
            if isinstance(op, elementwise):
                run.append(op)
                continue
            if op is not None and not op.regions and (not _touches_tiles(op) or _aside(op, run)):
                continue  # scalar math, or a load the run does not feed: the run goes on
            inside = set(run) | ({op} if isinstance(op, ReduceOp) else set())
            values.update(
                result
                for member in run
                for result in member.results
                if isinstance(result.type, RegisterTileType) and all(use.operation in inside for use in result.uses)
                and any(True for _ in result.uses)
            )
            run = []
    return frozenset(values)


def _aside(op: Operation, run: list[Operation]) -> bool:
    """Whether the run can be evaluated after `op` (a vector's load and read into registers): `op`
    reads nothing the run computes and makes no register tile, and the run so far reads no
    register tile from outside it (fills, vectors, positions, scalars), so deferring it keeps no
    tile live across `op`."""
    return (not any(v.owner in run for v in op.operands)
            and not any(isinstance(r.type, RegisterTileType) for r in op.results)
            and all(v.owner in run or not isinstance(v.type, RegisterTileType) for member in run for v in member.operands))


def _touches_tiles(op: Operation) -> bool:
    return any(isinstance(v.type, RegisterTileType | RegisterVectorType | SharedTileType | SharedVectorType)
               for v in (*op.operands, *op.results))


def peak_registers(block: Block, consumers: int, order: dict[Operation, int], columns: set[SSAValue],
                   streamed: frozenset[SSAValue] = frozenset(), band: bool = False,
                   live_in: frozenset[SSAValue] = frozenset(), witness: list[SSAValue] | None = None) -> Fraction:
    """Peak registers per consumer thread of the values live in `block` (and nested blocks).

    A value is live from its definition to the op of `block` that holds its last use (found by
    bisecting the ops' program-order numbers); one sweep over the ops keeps the total of the
    values live through the current op, so the cost is about linear in the program. A tile
    `streamed` through an element-wise chain costs nothing. `live_in`: values defined outside
    the block whose last use is in it, live from its start to that use (the branch of an
    `scf.if`: `acc = mma(a, b, acc)` under an if reuses acc's registers as a straight-line one
    does; a loop's body keeps every outside value it reads for all its iterations instead).
    `witness`, where given, receives the values live at the peak (crowded_point names them)."""

    def cost(value: SSAValue) -> Fraction:
        return Fraction(0) if value in streamed else register_cost(value, consumers, columns, band)

    ops = list(block.ops)
    numbers = [order[op] for op in ops]
    starts = [Fraction(0)] * (len(ops) + 1)
    """starts[i]: registers of the values that become live through op i, minus those that end."""
    dying = [Fraction(0)] * len(ops)
    """dying[i]: registers of the values whose last use is op i."""
    last: dict[SSAValue, int] = {}
    defined = ([(arg, -1) for arg in block.args] + [(v, -1) for v in live_in]
               + [(r, i) for i, op in enumerate(ops) for r in op.results])
    for value, at in defined:
        registers = cost(value)
        if not registers:
            continue
        uses = [use for use in value.uses if value not in live_in or block.is_ancestor(use.operation)]
        end = max((bisect_right(numbers, order[use.operation]) - 1 for use in uses), default=at)
        if end > at:
            starts[at + 1] += registers
            starts[end] -= registers
            dying[end] += registers
            last[value] = end
    peak = through = Fraction(0)
    peak_at = -1
    for i, op in enumerate(ops):
        through += starts[i]
        if op.regions:
            ending_here = {v for v in last if last[v] == i}
            consumed = sum((cost(v) for v in ending_here & set(op.operands)), Fraction(0))
            # a branch's values that end in it are its live-ins; a loop keeps them throughout
            handed = frozenset(ending_here - set(op.operands)) if isinstance(op, scf.IfOp) else frozenset()
            inner = max((peak_registers(b, consumers, order, columns, streamed, band,
                                        frozenset(v for v in handed if _used_in(v, b)))
                         for r in op.regions for b in r.blocks), default=Fraction(0))
            here = through + dying[i] - consumed - sum((cost(v) for v in handed), Fraction(0)) + inner
        else:
            results = sum((cost(r) for r in op.results), Fraction(0))
            here = through + max(dying[i], results) + _copied_operands(op, consumers, columns, band)
        if here > peak:
            peak, peak_at = here, i
    if witness is not None and peak_at >= 0:
        defined_at = dict(defined)
        live = [v for v, end in last.items() if defined_at[v] < peak_at < end]
        op = ops[peak_at]
        ending = [v for v, end in last.items() if end == peak_at]
        if op.regions:
            handed = frozenset(v for v in ending if v not in op.operands) if isinstance(op, scf.IfOp) else frozenset()
            live += [v for v in ending if v not in op.operands and v not in handed]
            branches = [b for r in op.regions for b in r.blocks]
            inner_live: list[list[SSAValue]] = [[] for _ in branches]
            inner_peaks = [peak_registers(b, consumers, order, columns, streamed, band,
                                          frozenset(v for v in handed if _used_in(v, b)), found)
                           for b, found in zip(branches, inner_live)]
            if branches:
                live += inner_live[inner_peaks.index(max(inner_peaks))]
        else:
            born = [r for r in op.results if cost(r)]
            live += ending if sum((cost(v) for v in ending), Fraction(0)) >= sum((cost(v) for v in born), Fraction(0)) \
                else born
        witness.extend(live)
    return peak


def _copied_operands(op: Operation, consumers: int, columns: set[SSAValue], band: bool) -> Fraction:
    """Registers of the copies an mma's register A operand gets in a loop it is defined before
    (plan.defined_before_its_loop), live beside the original while the wgmma reads them."""
    if isinstance(op, MmaOp) and isinstance(op.a.type, RegisterTileType) and defined_before_its_loop(op, op.a):
        return register_cost(op.a, consumers, columns, band)
    return Fraction(0)


def _used_in(value: SSAValue, block: Block) -> bool:
    return any(block.is_ancestor(use.operation) for use in value.uses)


def crowded_point(kernel: KernelOp, consumers: int, band: bool = False) -> tuple[str, Operation | None]:
    """Where the estimate's peak is and the largest values live there, for a refusal:
    ` (at line 17 these are live together: o 128x128xf32 (64), s 128x128xf32 (64), ...)` (the
    values peak_registers counts at its peak, streamed tiles left out), and the op that makes
    the latest of them (the refusal's location)."""
    order, columns, stream = program_order(kernel), column_vectors(kernel), streamed(kernel)
    live: list[SSAValue] = []
    peak_registers(kernel.body.block, consumers, order, columns, stream, band, witness=live)
    costs = sorted(((register_cost(v, consumers, columns, band), v) for v in live), key=lambda c: -c[0])
    if not costs:
        return "", None
    # the point: where the latest of them is made
    made = [v.owner for _, v in costs if isinstance(v.owner, Operation)]
    point = max(made, key=lambda op: order.get(op, -1)) if made else None
    _, line, _ = location_of(point) if point is not None else (None, None, None)
    names = ", ".join(f"{_described(v)} {_shape(v)} ({float(c):g})" for c, v in costs[:4])
    more = f" and {len(costs) - 4} more" if len(costs) > 4 else ""
    return (f" (at {f'line {line}' if line else 'one point'} these are live together: {names}{more}: "
            f"{float(sum(c for c, _ in costs)):g} registers per thread, and {OVERHEAD_REGISTERS} for addresses "
            f"and indices)"), point


_MADE_BY = {"tile.binary": "an element-wise result", "tile.unary": "an element-wise result",
            "tile.broadcast": "a broadcast", "tile.mma": "an mma product", "tile.select": "a where",
            "tile.convert": "a conversion", "tile.reduce": "a reduction", "tile.fill": "a fill",
            "tile.to_reg": "a tile read from shared memory", "tile.position": "a position tile",
            "tile.cumsum": "a cumulative sum"}
"""How a refusal names an unnamed value by the op that makes it."""


def _described(value: SSAValue) -> str:
    """A value by its name, or an unnamed one by what makes it (a product, a mask); a tail mask's
    copy (tile-mask-tails: an if whose branch masks the value past the end) as the value masked."""
    owner = value.owner
    if isinstance(owner, scf.IfOp) and isinstance(value, OpResult) and owner.false_region.blocks:
        if any(isinstance(op, BoundsMaskOp) for op in owner.true_region.block.ops):
            unmasked = owner.false_region.block.last_op
            assert isinstance(unmasked, scf.YieldOp)
            return f"{_described(unmasked.operands[value.index])}, masked past the end"
    if value.name_hint:
        return value.name_hint
    if isinstance(owner, Operation):
        _, line, _ = location_of(owner)
        made_by = _MADE_BY.get(owner.name, f"a value of {owner.name}")
        return f"a temporary ({made_by}{f' at line {line}' if line else ''})"
    return "a temporary"


def _shape(value: SSAValue) -> str:
    t = value.type
    if isinstance(t, RegisterTileType):
        return f"{t.rows}x{t.cols}x{t.element_type}"
    return f"{cast(RegisterVectorType, t).length}x{cast(RegisterVectorType, t).element_type}"


def register_demand(kernel: KernelOp, consumers: int, band: bool = False) -> int:
    peak = peak_registers(kernel.body.block, consumers, program_order(kernel), column_vectors(kernel),
                          streamed(kernel), band)
    return -(-math.floor(peak * 8) // 8) + OVERHEAD_REGISTERS


@dataclass(frozen=True)
class IndexGrowth:
    """Which index values of a kernel depend on `source` (a block index) and which never
    decrease when it grows: sums, products, minima and maxima of it, differences and quotients with it on the
    left only. One pass over the kernel in program order (operands are defined before their
    uses), so a deep chain of index lets costs its length, not 2^length."""

    depends: frozenset[SSAValue]
    grows: frozenset[SSAValue]

    @staticmethod
    def of(kernel: KernelOp, source: SSAValue) -> IndexGrowth:
        depends, grows = {source}, {source}
        for op in kernel.walk():
            if not any(v in depends for v in op.operands):
                continue
            depends.update(op.results)
            if isinstance(op, arith.AddiOp | arith.MuliOp | arith.MinUIOp | arith.MaxUIOp | arith.MinSIOp | arith.MaxSIOp):
                monotone = all(v in grows or v not in depends for v in op.operands)
            elif isinstance(op, arith.SubiOp | arith.DivUIOp | arith.CeilDivUIOp | arith.FloorDivSIOp | arith.CeilDivSIOp):
                monotone = op.lhs in grows and op.rhs not in depends
            else:
                monotone = False
            if monotone:
                grows.update(op.results)
        return IndexGrowth(frozenset(depends), frozenset(grows))


def int_pin(attr: Attribute | None) -> int | None:
    return attr.value.data if isinstance(attr, IntegerAttr) else None


PlanOptions = Mapping[str, int | bool | tuple[int, ...]]
"""tile-occupancy-plan's pass options that were given, by name (its dataclass fields)."""


def _read_at_run_time(value: SSAValue) -> bool:
    """Whether `value` is computed from a scalar load (tile.load_scalar)."""
    seen: set[SSAValue] = set()
    work = [value]
    while work:
        v = work.pop()
        if v in seen or not isinstance(v, OpResult):
            continue
        seen.add(v)
        if isinstance(v.op, LoadScalarOp):
            return True
        work.extend(v.op.operands)
    return False


def stream_k_obstacle(kernel: KernelOp) -> str | None:
    """What keeps the CTAs from splitting the kernel's tiles along K (stream-K), or None. A split
    tile's slices are summed by the CTA that began it, so the tile must be one K loop of
    accumulations from zero (acc = mma(a, b, acc), its only carried values) with the same bounds
    in every tile, all its loads in that loop and nothing after it but compute and stores, which
    the finishing CTA runs once on the sum."""
    ops = list(kernel.body.block.ops)
    grid = next(op for op in ops if isinstance(op, GridOp))
    per_tile = ops[ops.index(grid) + 1:]
    loops = [op for op in per_tile if isinstance(op, scf.ForOp)]
    if len(loops) != 1:
        return f"the tile has {len(loops)} kernel-level loops, not one K loop"
    loop = loops[0]
    # the user's reasons first: an if in the loop may be tile-mask-tails' around what they wrote
    inside = [op for op in kernel.walk() if loop.is_ancestor(op)]
    if any(isinstance(op, StoreOp | FenceOp) for op in inside):
        return "the K loop stores"
    if any(isinstance(op, ToSharedOp) for op in inside):
        return "the K loop moves a register tile to shared memory (an mma operand computed in registers)"
    outside = [inner for op in per_tile if op is not loop for inner in op.walk() if isinstance(inner, LoadOp | LoadScalarOp)]
    if outside:
        _, line, _ = location_of(outside[0])
        what = "reads a scalar" if isinstance(outside[0], LoadScalarOp) else "loads a tile"
        return f"the tile {what} outside its K loop" + (f" (line {line})" if line is not None else "")
    if any(isinstance(inner, scf.ForOp) for inner in loop.body.block.ops):
        return "the K loop holds a loop"
    if any(isinstance(inner, scf.IfOp) for inner in loop.body.block.ops):
        return ("the K loop holds an if (its own, or tile-mask-tails' around an mma or reduction that would see "
                "past the end of a tensor)")
    if any(isinstance(op, FenceOp | ToSharedOp) for op in kernel.walk()):
        return "the kernel orders stores and loads (a fence) or moves register tiles to shared memory"
    growths = [IndexGrowth.of(kernel, op.result) for op in kernel.walk() if isinstance(op, BlockIdOp)]
    bounds = (loop.lb, loop.ub, loop.step)
    if any(bound in growth.depends for growth in growths for bound in bounds) or any(map(_read_at_run_time, bounds)):
        return "the K loop's bounds differ between tiles"
    yielded = loop.body.block.last_op
    assert isinstance(yielded, scf.YieldOp)
    for arg, init, value in zip(loop.body.block.args[1:], loop.iter_args, yielded.operands):
        mma = value.owner
        if not (isinstance(mma, MmaOp) and mma.acc is arg):
            return "the K loop carries a value that is not an mma's accumulator (acc = mma(a, b, acc))"
        fill = init.owner
        if not (isinstance(fill, FillOp) and fill.value.value.data == 0.0):
            return "an accumulator of the K loop does not start from zero"
    return None


@dataclass
class Planner:
    kernel: KernelOp
    options: PlanOptions = field(default_factory=dict)
    """Pins from the pass options (`tkc-opt -p 'tile-occupancy-plan{stages=2}'`): each is applied as
    the annotation of the same name would be, over the kernel's own."""
    _demand: dict[int, int] = field(default_factory=dict)
    """register_demand by consumer count: the IR does not change while planning."""

    def demand(self, consumers: int) -> int:
        if consumers not in self._demand:
            self._demand[consumers] = register_demand(self.kernel, consumers, bool(self.band[0]))
        return self._demand[consumers]

    def annotation(self, key: str) -> Attribute | None:
        """The pin of `key`, as the annotation's attribute: the pass option's, else the kernel's."""
        if key not in self.options:
            return self.kernel.annotations.data.get(key)
        value = self.options[key]
        return ArrayAttr([IntegerAttr(v, 64) for v in value]) if isinstance(value, tuple) else IntegerAttr(int(value), 64)

    def pin(self, key: str, arguments: str = "") -> str:
        """How reasons and diagnostics name the pin of `key`: the pass option, else the annotation."""
        if key in self.options:
            value = self.options[key]
            text = str(value).lower() if isinstance(value, bool) else (
                ",".join(map(str, value)) if isinstance(value, tuple) else str(value))
            return f"the pass option {key}={text}"
        return f"@{key}({arguments})" if arguments else f"@{key}"

    def decide(self, name: str, value: int, reason: str) -> None:
        KernelPlan.decide(self.kernel, name, value, reason)

    def heights(self) -> dict[int, Operation]:
        """The rows of the kernel's register tiles and row vectors (plan.register_heights), each
        computed in slices of the 64 rows a wgmma computes, its height rounded up to them
        (plan.padded_rows, plan.fragment_rows)."""
        return register_heights(self.kernel)

    def has_tiles(self) -> bool:
        """Whether the kernel computes register tiles (else only vectors and scalars)."""
        return any(isinstance(v.type, RegisterTileType) for op in self.kernel.walk() for v in op.results)

    @staticmethod
    def splits(heights: Iterable[int], n: int) -> bool:
        """Whether `n` consumers can hold tiles of these heights: each one they do not replicate
        (plan.replicated) splits into slices of whole wgmmas of its padded height."""
        return all(replicated(rows, n) or padded_rows(rows) % (WGMMA_ROWS * n) == 0 for rows in heights)

    def smaller_tiles_hint(self) -> str:
        """What shrinks the register tiles: at 64 rows or fewer, fewer rows gain nothing outside
        the band layout, so name it and the column chunks."""
        if max(self.heights(), default=0) > WGMMA_ROWS:
            return "use smaller tiles"
        has_mma = any(isinstance(op, MmaOp) for op in self.kernel.walk())
        if self.band[0] or has_mma and min(self.heights(), default=WGMMA_ROWS) >= WGMMA_ROWS:
            band = ""
        elif has_mma:
            band = (" (a tile of fewer than 64 rows costs the registers of its 64-row padding, as an mma computes "
                    "64 rows: a 16-row tile only saves registers in the band layout, which takes no mma)")
        else:
            band = (", or 16- or 32-row tiles in the band layout (a 16-row tile takes a quarter of the registers of "
                    "its 64-row padding; `tkc report` says why a kernel cannot take it)")
        return f"use fewer columns per tile (walk the columns in a loop of narrower tiles){band}"

    def consumers(self) -> int:
        heights = self.heights()
        rows = max(heights, default=0)
        pin = int_pin(self.annotation("consumers"))
        if pin is not None:
            self.check_consumers(pin, heights)
            return pin
        most = min(MAX_CONSUMERS, max(1, padded_rows(rows) // WGMMA_ROWS))
        options = [n for n in range(most, 0, -1) if self.splits(heights, n)]
        for n in options:
            if self.demand(n) <= register_split(n, 1, self.demand(n))[1] and self.widest_mma_fits(n):
                return n
        # the smallest share of the tiles a thread holds: the most consumers, unless they replicate tiles
        n = min(options, key=lambda n: (self.demand(n) - register_split(n, 1, self.demand(n))[1], -n))
        if self.demand(n) > register_split(n, 1, self.demand(n))[1]:
            replicated_height = replicated_rows(heights, n)
            crowded, point = crowded_point(self.kernel, n, bool(self.band[0]))
            raise error_at(
                point or self.kernel,
                f"the register {'tiles' if self.has_tiles() else 'vectors'} need {self.demand(n)} "
                f"registers per thread even split over "
                f"{n} consumer warpgroup(s)"
                + (f" (those of up to {replicated_height} rows replicated in each)" if replicated_height else "")
                + f", over the {register_split(n, 1, self.demand(n))[1]} each can get from the {SM_REGISTERS}-register file"
                + crowded + ": "
                + (self.smaller_tiles_hint() if self.has_tiles() else
                   "use shorter vectors (one that is scanned, summed or broadcast along columns holds a quarter "
                   "of its elements in every thread)"),
            )
        raise error_at(
            self.kernel,
            f"{n} consumer warpgroups leave {register_pool(n, 1)[0]} registers per thread at kernel entry, too few "
            f"for one wgmma of this kernel's widest product with its accumulators; use narrower tiles or "
            f"fewer rows per block",
        )

    def check_mma_widths(self) -> None:
        """The lowering issues one wgmma per mma, which produces at most 256 columns."""
        for op in self.kernel.walk():
            if isinstance(op, MmaOp) and op.result.type.cols > WGMMA_MAX_N:
                raise error_at(op, f"this mma produces {op.result.type.cols} columns, and the GPU backend computes an "
                                   f"mma as one wgmma of at most {WGMMA_MAX_N}: use tiles of at most {WGMMA_MAX_N} columns")

    def check_tma_boxes(self, consumers: int) -> None:
        """Each TMA box the lowering issues spans at most 256 elements per dimension: a loaded
        tile's rows and the row of one panel (the swizzle span, the whole row unswizzled), and a
        stored register tile's rows per consumer (each stores its own). A longer vector is loaded as
        several boxes (tile.vector_box), which must each start on a TMA_SMEM_ALIGN-byte line."""
        for op in self.kernel.walk():
            if isinstance(op, LoadOp) and isinstance(op.result.type, RegisterVectorType | SharedVectorType):
                length, eb = op.result.type.get_shape()[-1], element_bytes(op.result.type.element_type)
                if vector_box(length, eb) is None:
                    line = TMA_SMEM_ALIGN // eb
                    raise error_at(op, f"a vector of {length} elements is loaded as several TMA boxes (one spans at "
                                       f"most {TMA_BOX_MAX}), equal ones each starting on a {TMA_SMEM_ALIGN}-byte "
                                       f"line of shared memory, so a multiple of {line} elements; none divide "
                                       f"{length}: load a vector whose length is a multiple of {line}, or "
                                       f"{TMA_BOX_MAX} elements or fewer")
            if isinstance(op, LoadOp) and isinstance(op.result.type, SharedTileType):
                t = op.result.type
                if t.rows > TMA_BOX_MAX:
                    raise error_at(op, f"a TMA box spans at most {TMA_BOX_MAX} rows, and this tile has {t.rows}: "
                                       f"load tiles of at most {TMA_BOX_MAX} rows")
                if t.swizzle.data <= 0 and t.cols > TMA_BOX_MAX:  # a swizzle span is at most 128 elements
                    raise error_at(op, f"the tile is not swizzled, so one TMA box spans its whole {t.cols}-element "
                                       f"rows, over the {TMA_BOX_MAX} a box can: use narrower tiles")
            elif isinstance(op, StoreOp) and isinstance(op.value.type, RegisterTileType):
                rows = op.value.type.rows if replicated(op.value.type.rows, consumers) else fragment_rows(
                    op.value.type.rows, consumers)
                if rows > TMA_BOX_MAX or staging_chunk(op)[1] > TMA_BOX_MAX:
                    raise error_at(op, f"each of the {consumers} consumer warpgroup(s) stores its {rows} rows of "
                                       f"this {op.value.type.rows}x{op.value.type.cols} tile as TMA boxes of "
                                       f"{staging_chunk(op)[1]} columns, and a box spans at most {TMA_BOX_MAX}: "
                                       f"store smaller tiles")

    def check_tma_starts(self) -> None:
        """TMA starts a box on a TMA_GLOBAL_ALIGN-byte boundary of a tensor's innermost dim (the
        GPU stops with an illegal instruction otherwise), so an `elem(x)` coordinate along that
        dim of a load, or of a tile's store (a vector's is st.global), must be a multiple of 16
        bytes' elements. Refused here where the kernel alone decides x and it is not provably
        such a multiple; one a dim or a table entry reaches is the run time's to check
        (divisibility). A vector's load tile-swizzle-select realigned starts anywhere; one it
        could not is refused wherever x comes from, as the interpreter takes any vector start."""
        for op in self.kernel.walk():
            if not isinstance(op, LoadOp | StoreOp) or (isinstance(op, StoreOp) and isinstance(
                    op.value.type, RegisterVectorType | SharedVectorType)) or REALIGNED in op.attributes:
                continue
            if (element_start := innermost_element_start(op)) is None:
                continue
            coord, line = element_start
            start = known_multiple(coord)
            vector = isinstance(op, LoadOp) and isinstance(op.result.type, SharedVectorType)
            if start.aligned(line) or (start.launch_time and not vector):
                continue
            dtype = dtypes.of_type(cast(GlobalType, op.tensor.type).element_type)
            assert dtype is not None, "a tensor's element type is one of tkc's dtypes"
            access = "load" if isinstance(op, LoadOp) else op.statement
            name = self.kernel.arg_names[self.kernel.body.block.args.index(op.tensor)]
            why = (f"; a vector's load starts its box below the start where it fits one box {line} elements longer "
                   f"and only registers read it") if vector else ""
            raise error_at(op, f"this {access} of {name} starts at elem(...) along {name}'s innermost dim, and the "
                               f"start {alignment_shortfall(start, line)}; "
                               f"TMA starts a box there only on a {TMA_GLOBAL_ALIGN}-byte boundary, a multiple of "
                               f"{line} {dtype.name} elements (any other start stops the kernel){why}: make the start "
                               f"a multiple of {line}")

    def widest_mma_fits(self, consumers: int, ctas: int = 1) -> bool:
        """ptxas compiles each instruction within the registers a thread has at kernel entry
        (.maxntid with .minnctapersm `ctas`; setmaxnreg only moves registers at run time: C7602
        otherwise), so the largest wgmma must fit that count."""
        need = max((mma_registers(op) for op in self.kernel.walk() if isinstance(op, MmaOp)), default=0)
        return need <= register_pool(consumers, ctas)[0]

    def check_consumers(self, n: int, heights: Iterable[int]) -> None:
        threads = WARPGROUP_THREADS * (1 + n)
        if n < 1 or threads > MAX_THREADS:
            raise error_at(
                self.kernel,
                f"{self.pin('consumers', str(n))} needs {threads} threads (1 producer + {n} consumer warpgroups), "
                f"over the {MAX_THREADS}-thread block limit",
            )
        tallest = max(heights, default=0)
        for rows in sorted(heights):
            if not self.splits([rows], n) or rows == tallest and n > 1 and replicated(rows, n):
                padded = padded_rows(rows)
                raise error_at(
                    self.kernel,
                    f"{self.pin('consumers', str(n))} splits the {rows}-row register tiles"
                    + (f" (computed as {padded})" if padded != rows else "")
                    + f" into {padded / n:g} rows per warpgroup; wgmma needs multiples of {WGMMA_ROWS} (tiles "
                    f"shorter than the tallest may be replicated in every consumer instead, the tallest are split)",
                )
        demand = self.demand(n)
        _, consumer = register_split(n, 1, demand)
        if demand > consumer:
            _, pool = register_pool(n, 1)
            raise error_at(
                self.kernel,
                f"{self.pin('consumers', str(n))}: each consumer thread needs {demand} registers, over the {consumer} it can get "
                f"beside the producer ({threads} threads share {pool} of the SM's {SM_REGISTERS} registers)",
            )
        if not self.widest_mma_fits(n):
            raise error_at(
                self.kernel,
                f"{self.pin('consumers', str(n))} leaves {register_pool(n, 1)[0]} registers per thread at kernel entry, too few "
                f"for one wgmma of this kernel's widest product with its accumulators",
            )

    def registers(self, n: int, ctas: int) -> tuple[int, int, str]:
        pin = self.annotation("registers")
        demand = self.demand(n)
        entry, pool = register_pool(n, ctas)
        threads = WARPGROUP_THREADS * (1 + n)
        if pin is None:
            producer, consumer = register_split(n, ctas, demand)
            margin = (f" (the producer at setmaxnreg's minimum: within {SPILL_MARGIN} of 40's share, ptxas may spill)"
                      if producer < register_split(n, ctas)[0] else "")
            # ptxas reports the PTX's limit (MAX_THREAD_REGISTERS at 256 threads); the plan counts in setmaxnreg's 8s
            capped = SM_REGISTERS // (threads * ctas) > MAX_THREAD_REGISTERS
            limit = f"; ptxas reports up to {MAX_THREAD_REGISTERS}, the plan counts in setmaxnreg's multiples of 8"
            return producer, consumer, (
                f"{threads} threads get {entry} registers each at entry ({pool} in all{limit if capped else ''}); "
                f"the producer only issues "
                f"TMA, so {producer}/{consumer} gives the consumers the rest; they need about {demand}{margin}"
            )
        values = [int_pin(v) for v in pin.data] if isinstance(pin, ArrayAttr) else []
        low, high = SETMAXNREG_RANGE
        pins = [v for v in values if v is not None and v % 8 == 0 and low <= v <= high]
        if len(values) != 2 or len(pins) != 2:
            raise error_at(self.kernel, f"@registers(producer, consumer) takes two multiples of 8 in [{low}, {high}]")
        producer, consumer = pins
        pinned = self.pin("registers", f"{producer}, {consumer}")
        need = WARPGROUP_THREADS * (producer + n * consumer)
        if need > pool:
            raise error_at(
                self.kernel,
                f"{pinned} needs 128 x {producer} + {128 * n} x {consumer} = {need} "
                f"registers, over the {pool} a {threads}-thread block gets at entry ({entry} per thread; {SM_REGISTERS} per SM)",
            )
        if producer > consumer:  # ptxas refuses a setmaxnreg.dec above every count the program sets
            raise error_at(
                self.kernel,
                f"{pinned}: the producer gives registers back (setmaxnreg.dec) and the "
                f"consumers take them (setmaxnreg.inc), so the producer's count cannot exceed the consumers'",
            )
        if consumer < demand:
            raise error_at(
                self.kernel,
                f"{pinned}: each consumer thread needs about {demand} registers "
                f"for its tiles and addressing; {consumer} would spill",
            )
        return producer, consumer, f"pinned by {pinned}; {need} of {pool} registers"

    def stages(self, loops: list[scf.ForOp]) -> tuple[int, str]:
        pinned: list[tuple[Operation, int, str]] = [
            (loop, s, f"@stages({s})") for loop in loops if (s := int_pin(loop.attributes.get("stages"))) is not None
        ]
        kernel_pin = int_pin(self.annotation("stages"))
        if "stages" in self.options:  # the pass option overrides the loops' annotations (the kernel's does not)
            pinned = []
        if kernel_pin is not None:
            pinned.append((self.kernel, kernel_pin, self.pin("stages", str(kernel_pin))))
        for where, s, pin in pinned:
            plan = smem_plan(self.kernel, s)
            if s < 1 or plan.total > SMEM_BUDGET:
                raise error_at(
                    where,
                    f"{pin} needs {plan.total} bytes of shared memory ({self.smem_breakdown(s)}), over the "
                    f"{SMEM_BUDGET}-byte budget{self.deepest_fit()}",
                )
            if not plan.barriers_fit:
                raise error_at(
                    where,
                    f"{pin} needs {max(plan.barrier_count, plan.barrier_bound)} mbarriers and {plan.fence_count} store fences, over the "
                    f"{MBARRIER_REGION // MBARRIER_BYTES} slots of the {MBARRIER_REGION}-byte barrier region"
                    f"{self.deepest_fit()}",
                )
        if pinned:
            where, s, pin = pinned[0]
            if (other := next((p for p in pinned if p[1] != s), None)) is not None:
                # every ring of a kernel has the plan's one depth (smem_plan, tile-pipeline)
                raise error_at(other[0], f"{other[2]} asks for another ring depth than {pin} at line "
                                         f"{location_of(where)[1]}: a kernel's rings share one depth, so pin them alike "
                                         f"(or pin the kernel)")
            return s, f"pinned by {pin}; {smem_plan(self.kernel, s).total} of {SMEM_BUDGET} bytes"
        self.check_shared_memory(loops)
        s = max(s for s in range(1, MAX_STAGES + 1) if self.stages_fit(s))
        if (shallower := self.stages_for_two_blocks(s)) is not None:
            return shallower, (f"{shallower} stages ({self.smem_breakdown(shallower)}), so 2 blocks fit an SM where "
                               f"{s} would leave room for 1: a kernel without an mma is bound by its consumers' "
                               f"latency, which a second block hides better than a deeper ring")
        if s == MAX_STAGES:
            why = "the deepest ring the plan builds (as ThunderKittens); @stages(n) pins a deeper one, and tkc tune tries 6 and 8"
        else:
            why = f"{s + 1} would need {smem_plan(self.kernel, s + 1).total} bytes, over {SMEM_BUDGET}"
        return s, f"{s} {'stages fit' if s > 1 else 'stage fits'} ({self.smem_breakdown(s)}); {why}"

    def deepest_fit(self) -> str:
        """'; at most N stages fit' (the deepest pinnable ring that fits), for a pin's error."""
        fit = [t for t in range(1, MAX_PINNED_STAGES + 1) if self.stages_fit(t)]
        return f"; at most {fit[-1]} stages fit" if fit else ""

    def stages_fit(self, stages: int) -> bool:
        """Whether rings of `stages` fit: the shared-memory budget and the barrier region."""
        plan = smem_plan(self.kernel, stages)
        return plan.total <= SMEM_BUDGET and plan.barriers_fit

    def stages_for_two_blocks(self, deepest: int) -> int | None:
        """The deepest ring of at least TWO_BLOCK_STAGES, shallower than `deepest`, at which a kernel
        without an mma or a scan fits more blocks per SM than at `deepest`, its consumers' demand
        within the entry registers of two blocks; None where there is none (or an @ctas_per_sm pin
        decides the blocks)."""
        if self.annotation("ctas_per_sm") is not None or any(isinstance(op, MmaOp | CumsumOp) for op in self.kernel.walk()):
            return None  # scans: the register estimate runs 40-54 under ptxas (register-demand-vs-ptxas log)
        plan = KernelPlan.of(self.kernel)
        if self.demand(plan.consumers) + SPILL_MARGIN > register_pool(plan.consumers, 2)[0]:
            return None  # ptxas allocates a thread's registers at its entry count, which 2 blocks halve
        blocks = self.ctas_per_sm(plan.consumers, smem_plan(self.kernel, deepest).total, plan.persistent)[0]
        for stages in range(deepest - 1, TWO_BLOCK_STAGES - 1, -1):
            if self.ctas_per_sm(plan.consumers, smem_plan(self.kernel, stages).total, plan.persistent)[0] > blocks:
                return stages
        return None

    def check_shared_memory(self, loops: list[scf.ForOp]) -> None:
        """One stage of each ring with every other buffer must fit: no plan needs less."""
        plan = smem_plan(self.kernel, 1)
        total = plan.total
        if total > SMEM_BUDGET:
            need = "one stage already needs" if loops else "the shared tiles need"
            raise error_at(
                loops[0] if loops else self.kernel,
                f"{need} {total} bytes of shared memory ({self.smem_breakdown(1)}), over the {SMEM_BUDGET}-byte "
                f"budget: use smaller tiles",
            )
        if not plan.barriers_fit:
            raise error_at(
                self.kernel,
                f"one stage of each ring already needs {max(plan.barrier_count, plan.barrier_bound)} mbarriers and {plan.fence_count} store "
                f"fences, over the {MBARRIER_REGION // MBARRIER_BYTES} slots of the {MBARRIER_REGION}-byte barrier "
                "region: fewer loops or ifs that load, or fewer fences",
            )

    def smem_breakdown(self, stages: int) -> str:
        plan = smem_plan(self.kernel, stages)
        single = sum(buffer_bytes(op) for op, _ in plan.single)
        staging = plan.staging_bytes
        fences = f" and {plan.fence_count} store fence{'s' if plan.fence_count > 1 else ''}" if plan.fence_count else ""
        # before tile-pipeline decides which rings split, as many as they may take
        count = (f"up to {plan.barrier_bound}" if plan.barrier_bound > plan.barrier_count else str(plan.barrier_count))
        parts = [(f"1 KB for {count} mbarriers{fences}", MBARRIER_REGION)]
        reused = bool(plan.single and plan.staging and plan.staging[0][1] == plan.single[0][1])
        if (tile_stages := tile_ring_stages(self.kernel, stages)) > 1:
            parts.append((f"{tile_stages} x {single} B ring of each tile's loads", tile_stages * single))
        elif plan.single:
            parts.append((f"{single} B of single tiles" + (" (the epilogue stages its output in them)" if reused else ""),
                          single))
        parts += [(f"{stages} x {ring.stage_bytes} B ring", stages * ring.stage_bytes) for ring in plan.rings]
        parts += [(f"{staging} B epilogue staging", staging)] if plan.staging and not reused else []
        scratch = col_scratch_bytes(self.kernel)
        regions = len(band_reductions(self.kernel))
        uses = "column reductions and scans, vector moves" + (
            f"; a region for each of the {regions} band row reductions" if regions > 1 else
            "; the band row reduction's region" if regions else "")
        parts += [(f"{scratch} B scratch ({uses})", scratch)] if scratch else []
        # what the buffers' alignments add between them (a 1024-byte swizzled tile after a 512-byte one)
        if padding := plan.total - ALIGN_SLACK - sum(size for _, size in parts):
            parts.append((f"{padding} B aligning buffers", padding))
        parts.append(("1 KB alignment slack", ALIGN_SLACK))
        return " + ".join(text for text, _ in parts)

    def persistent(self, loops: list[scf.ForOp]) -> tuple[bool, str]:
        grid = next(op for op in self.kernel.body.block.ops if isinstance(op, GridOp))
        names = ", ".join(n.data for n in grid.names.data)
        annotation = self.kernel.annotations.data.get("persistent")
        pinned = None if annotation is None else not isinstance(annotation, IntegerAttr) or bool(annotation.value.data)
        pin = self.options.get("persistent", pinned)
        if pin is not None:
            walk = f"one CTA per SM walks the ({names}) tiles" if pin else "one CTA per tile"
            return bool(pin), f"pinned by {self.pin('persistent', '' if pin else '0')}: {walk}"
        k_loop = any(isinstance(op, MmaOp) for loop in loops for op in loop.walk())
        table = self.table_first(loops) if k_loop else None
        if table is None and any(_read_at_run_time(bound) for loop in loops for bound in (loop.lb, loop.ub)):
            return False, (
                "a loop's trip count is read from memory (load T[i] : i32), so tiles take different times: one CTA "
                "per tile, the hardware scheduler balances them (a persistent CTA's tiles are fixed in advance)"
            )
        if streaming_candidate(self.kernel):
            return True, (
                "every load is a tile's own, outside loops: one CTA per SM (or two) walks the tiles, its loads a "
                "ring over them, so the next tiles load while this one computes and stores"
            )
        if len(grid.extents) == 2 and k_loop and table is None:
            return True, (
                f"2-D grid ({names}) with a K loop (GEMM-like): one CTA per SM walks the output tiles, so one "
                "tile's epilogue overlaps the next tile's loads and the ring never drains"
            )
        # a loop whose trip count grows with a block index (causal attention) is walked heavy-first:
        # qi slowest from the last down balances the CTAs' strided shares (H200, D 64, N 1024-2048:
        # 0.93-0.95x cuDNN against 0.81-0.88x one CTA per tile); where the grid holds many tiles
        # along that axis, a launch takes the one-CTA-per-tile variant (tkc.api, ONE_CTA_FROM_TILES)
        heavy = self.heavy_first(loops, persistent=True) if k_loop else None
        if k_loop and (self.same_work_per_tile(loops) or heavy is not None or table is not None):
            one_tile = self.deepest_ring(persistent=False)
            consumers = KernelPlan.of(self.kernel).consumers
            blocks, _ = self.ctas_per_sm(consumers, smem_plan(self.kernel, one_tile).total, persistent=False)
            if blocks > 1:
                return False, (
                    f"{blocks} one-tile CTAs fit an SM, a persistent CTA walks alone: one CTA per tile, the hardware "
                    "scheduler fills the SMs"
                )
            walking = self.deepest_ring(persistent=True)
            if walking >= one_tile:
                own = "own loads (a 2-stage ring) and " if tile_ring_stages(self.kernel, walking) > 1 else ""
                tiles = (f"a K loop whose trip count grows with a block index: one CTA per SM walks the ({names}) "
                         f"tiles heavy-first (the tile order below)" if heavy is not None else
                         f"a K loop whose trip count a table in memory gives (read at a block index): one CTA per "
                         f"SM walks the ({names}) tiles "
                         f"in the table's order (the tile order below)" if table is not None else
                         f"a K loop whose bounds no block index changes, so every ({names}) tile costs the same: one "
                         f"CTA per SM walks them")
                stages_pin = int_pin(self.annotation("stages"))
                depth = (f"the ring keeps its {walking} stages" if stages_pin is None else
                         f"walked, the plan's ring would keep its {walking} stages "
                         f"({self.pin('stages', str(stages_pin))} pins {stages_pin})")
                return True, (
                    f"{tiles}, the next tile's {own}first loop stages in flight while this tile ends and "
                    f"stores; {depth}"
                )
            return False, (
                f"a persistent CTA would hold the next tile's own loads, leaving its loop's ring {walking} stages "
                f"instead of {one_tile}: one CTA per tile, the hardware scheduler fills the SMs"
            )
        branches = "; its loops load only in the branches of ifs" if ring_loops(self.kernel) and not loops else ""
        if k_loop and (growing := self.heavy_first_pinned_off(loops)) is not None:
            return False, (f"a K loop whose trip count grows with {growing}, kept in grid order by "
                           f"{self.pin('heavy_first', '0')}: one CTA per tile, the hardware scheduler balances the tiles")
        shape = (f"no K loop (a loop that loads its mmas' operands itself{branches})" if not k_loop
                 else f"a {len(grid.extents)}-D grid ({names})")
        return False, f"{shape}: one CTA per tile, the hardware scheduler fills the SMs"

    def stream_k(self, persistent: bool, clustered: bool, heavy: bool) -> tuple[bool, str]:
        """Stream-K where @stream_k(1) asks and the kernel allows it: a persistent GEMM-like grid
        runs its whole waves of tiles as before and splits the K iterations of the last partial
        wave's tiles evenly over all CTAs (roles.py), so no SM idles through most of a last wave;
        a tile split between CTAs costs an f32 partial tile written and read through L2 and a
        flag. Not the default: on the H200 it took 1024x5120x13824 from 0.65 to 0.87x cuBLAS
        and 3072^3 from 0.76 to 0.87x, but cost grids of fewer tiles than SMs (1024x3072^2:
        0.83 to 0.70x), whose slices run at different K and so fetch their panels from memory;
        `tkc tune` can try it (a space item @stream_k=0,1)."""
        pin = int_pin(self.annotation("stream_k"))
        obstacle = (stream_k_obstacle(self.kernel) if persistent and not clustered and not heavy else
                    "the grid is not a persistent one-CTA walk in tile order")
        if pin and obstacle is not None:
            raise error_at(self.kernel, f"{self.pin('stream_k', '1')} cannot split this kernel's tiles along K: {obstacle}")
        if pin:
            return True, (f"pinned by {self.pin('stream_k', '1')}: whole waves of tiles, then the last partial wave's K "
                          f"iterations split evenly over the CTAs; a CTA that ends inside a tile writes its partial sum "
                          f"for the CTA that began the tile")
        if pin == 0:
            return False, f"pinned off by {self.pin('stream_k', '0')}"
        if obstacle is not None:
            return False, f"no stream-K: {obstacle}"
        return False, ("each CTA walks whole tiles; @stream_k(1) splits the last partial wave's K iterations evenly "
                       "over the CTAs (faster where that wave is a small share of the SMs, slower under one wave)")

    def dependent_launch(self) -> tuple[int, str]:
        """A programmatic dependent launch unless @dependent_launch(0) pins it off: the kernel
        before on the stream lets this one's blocks start as its own last blocks run
        (griddepcontrol.launch_dependents at their start), and this one's blocks initialise
        their barriers, then wait for it to complete (griddepcontrol.wait) before any global
        access, so the order of the two kernels' memory accesses is the stream's. On the H200 a
        batch of back-to-back launches ran 0.3-8 % faster (a 1000^3 GEMM 15.2 -> 14.0 us, layernorm
        16384 x 1024 45.1 -> 43.4 us); after a kernel that is not a dependent launch's primary
        it waits as a plain launch would."""
        if int_pin(self.annotation("dependent_launch")) == 0:
            return 0, f"pinned off by {self.pin('dependent_launch', '0')}: a plain launch after the kernel before it"
        return 1, ("the blocks may start while the kernel before them on the stream ends: they set up shared memory "
                   "and barriers, then wait for it (griddepcontrol.wait) before their first global access; each "
                   "block lets the next kernel's blocks start (launch_dependents) as it begins")

    @cached_property
    def band(self) -> tuple[int, str]:
        """Whether the register tiles take the band layout (plan.band): where every one is shorter
        than a wgmma's 64 rows, nothing needs the wgmma layout (band_obstacle) and no
        @band(0) pins it off. A 16-row tile then costs a thread a quarter of the registers and
        the work of the 64 rows it is otherwise padded to, for one exchange of partial sums
        through shared memory per row reduction."""
        pin = int_pin(self.annotation("band"))
        obstacle = band_obstacle(self.kernel)
        if pin == 0 and all(h >= WGMMA_ROWS for h in register_heights(self.kernel)):
            return 0, f"{self.pin('band', '0')} finds no register tile of fewer than {WGMMA_ROWS} rows"
        if pin == 0:
            return 0, (f"pinned off by {self.pin('band', '0')}: tiles of fewer than {WGMMA_ROWS} rows are computed "
                       f"as {WGMMA_ROWS}-row fragments (the wgmma layout)")
        if obstacle is not None:
            if pin == 1:
                raise error_at(self.kernel, f"{self.pin('band', '1')} cannot hold the register tiles in the band "
                                            f"layout: {obstacle}")
            return 0, f"the wgmma layout: {obstacle}"
        heights = ", ".join(map(str, sorted(register_heights(self.kernel))))
        return 1, (f"the {heights}-row register tiles are held in the band layout: every warp holds their rows, the "
                   f"4 warps interleave 8-column groups, so a thread holds rows x columns / 128 elements (the wgmma "
                   f"layout would pad them to {WGMMA_ROWS} rows); row reductions meet the warps' partials in shared "
                   f"memory")

    @cached_property
    def growth_by_axis(self) -> dict[int, IndexGrowth]:
        """Per grid axis, which index values of the kernel depend on (and grow with) its block index."""
        return {op.axis.value.data: IndexGrowth.of(self.kernel, op.result)
                for op in self.kernel.body.block.ops if isinstance(op, BlockIdOp)}

    def group_rows(self, loops: list[scf.ForOp]) -> tuple[int, str]:
        """How many tile rows (grid axis 0) a persistent walk takes together. Where no load in
        the loops depends on axis 0, every tile of an axis-0 row of tiles reads the same tiles in
        its loops (attention's K and V, for every query tile qi of a head): the walk takes axis 0
        whole (WHOLE_AXIS), so the running CTAs share one head's keys in L2 (GROUP_M rows spread
        them over 16 heads; on the H100 the fused attention backward at D = 64 ran 1.024x faster
        walking qi whole, dQ and the forward 0.99-1.02x). Where they do not depend on axis 1, that
        axis walks fastest (1); otherwise GROUP_M rows, as a GEMM's A and B panels each repeat
        along one axis."""
        grid = next(op for op in self.kernel.body.block.ops if isinstance(op, GridOp))
        names = [name.data for name in grid.names.data]
        growth = self.growth_by_axis
        loads = [op for loop in loops for op in loop.walk() if isinstance(op, LoadOp)]

        def reads_along(load: LoadOp, axis: int) -> bool:
            return any(coord in growth[axis].depends for coord in (*load.coords, *load.ends))

        def shared_along(axis: int) -> bool:
            return axis in growth and bool(loads) and not any(reads_along(load, axis) for load in loads)

        if len(names) == 1:
            return 1, "a 1-D grid: the tiles walk in grid order"
        if len(names) > 1 and shared_along(0):
            return WHOLE_AXIS, (f"every load in the loops reads the same tiles for each {names[0]}: the walk takes "
                                f"{names[0]} fastest, whole, so the running CTAs share those tiles in L2")
        if len(names) > 1 and shared_along(1):
            return 1, (f"every load in the loops reads the same tiles for each {names[1]}: the walk takes {names[1]} "
                       f"fastest, so the running CTAs share those tiles in L2")
        if all(axis in growth for axis in (0, 1)) and not any(
                not reads_along(load, axis) for load in loads for axis in (0, 1)):
            return GROUP_M, (f"every load in the loops depends on both {names[0]} and {names[1]}, so no order shares "
                             f"tiles between them: {GROUP_M} tile-rows at a time, as for a GEMM")
        return GROUP_M, (f"tiles walk {GROUP_M} tile-rows at a time, so what they share along the other grid axis "
                         "(a GEMM's B panels) stays in L2")

    def same_work_per_tile(self, loops: list[scf.ForOp]) -> bool:
        """Whether no loop's bounds depend on a block index (a causal mask's shorter loops do)."""
        growths = [IndexGrowth.of(self.kernel, op.result) for op in self.kernel.walk() if isinstance(op, BlockIdOp)]
        return not any(bound in growth.depends for growth in growths for loop in loops for bound in (loop.lb, loop.ub))

    def deepest_ring(self, persistent: bool) -> int:
        """The most ring stages (at most MAX_STAGES) whose layout fits, were the grid persistent
        or not (a trial decision: the layout reads it)."""
        self.decide("persistent", int(persistent), "trial")
        return max((s for s in range(1, MAX_STAGES + 1) if self.stages_fit(s)), default=0)

    def cluster(self) -> tuple[int, str] | None:
        """2-CTA clusters only where @cluster asks (the lowering checks the kernel can multicast):
        on the H200 the multicast GEMM measured from 2.4% slower to 2.2% faster than the plain one
        across runs, within the spread of repeated runs, so it is not the default."""
        pin = int_pin(self.annotation("cluster"))
        return (pin, f"pinned by {self.pin('cluster', str(pin))}") if pin is not None else None

    def table_first(self, loops: list[scf.ForOp]) -> tuple[int, str] | None:
        """The grid axis whose block index reads a tile table (scalar loads) that gives a
        kernel-level loop's trip count, when it is the only axis the trip count depends on
        (varlen attention's tile t; its head h does not change it). A persistent grid walks
        the tiles with that axis slowest, in grid order: a table that lists the heaviest tiles
        first (attention_varlen_ref.tile_table) then gives each CTA's strided share as many
        tiles of each length, the longest first, as heavy_first does for causal attention."""
        grid = next(op for op in self.kernel.body.block.ops if isinstance(op, GridOp))
        growth_by_axis = self.growth_by_axis
        read = [bound for loop in loops if loop.parent_op() is self.kernel
                for bound in (loop.lb, loop.ub) if _read_at_run_time(bound)]
        axes = {axis for axis, growth in growth_by_axis.items() for bound in read if bound in growth.depends}
        if not read or len(axes) != 1:
            return None
        axis = axes.pop()
        name = grid.names.data[axis].data
        return axis, (
            f"a loop's trip count is read from a table at {name}: the persistent CTAs walk the tiles with {name} "
            f"slowest, in the table's order, so a table that lists the heaviest tiles first gives each CTA's share "
            f"as many tiles of each length, the longest first (@persistent(0): one CTA per tile, balanced by the "
            f"hardware whatever the table's order)"
        )

    def heavy_first(self, loops: list[scf.ForOp], persistent: bool) -> tuple[int, str] | None:
        """The grid axis to launch in reverse, when a kernel-level loop's trip count grows with
        its block index (and its start does not depend on it). A persistent grid walks its tiles
        with that axis slowest, reversed."""
        axis = self.growing_axis(loops)
        if axis is None or int_pin(self.annotation("heavy_first")) == 0:
            return None
        grid = next(op for op in self.kernel.body.block.ops if isinstance(op, GridOp))
        name = grid.names.data[axis].data
        if persistent:
            return axis, (
                f"the loop's trip count grows with {name}: the persistent CTAs walk the tiles with {name} "
                f"slowest, from the last {name} down, so each CTA's share holds as many tiles of each "
                f"length and the longest run first"
            )
        return axis, (
            f"the loop's trip count grows with {name}: blocks launch from the last {name} down, so the "
            f"longest tiles start first and the short ones fill the last wave"
        )

    def growing_axis(self, loops: list[scf.ForOp]) -> int | None:
        """The grid axis whose block index a kernel-level loop's trip count grows with (its end
        grows, its start does not depend on it), or None."""
        growth_by_axis = self.growth_by_axis
        for loop in loops:
            if loop.parent_op() is not self.kernel:
                continue
            for axis in sorted(growth_by_axis):
                growth = growth_by_axis[axis]
                if loop.ub in growth.grows and loop.lb not in growth.depends:
                    return axis
        return None

    def heavy_first_pinned_off(self, loops: list[scf.ForOp]) -> str | None:
        """The grid axis a loop's trip count grows with, by name, where @heavy_first(0) keeps the
        tiles in grid order; None where the pin is absent or has nothing to turn off."""
        axis = self.growing_axis(loops)
        if axis is None or int_pin(self.annotation("heavy_first")) != 0:
            return None
        grid = next(op for op in self.kernel.body.block.ops if isinstance(op, GridOp))
        return grid.names.data[axis].data

    def plan(self) -> None:
        # a fresh plan (IR planned before is planned again): the models below read what is decided
        self.kernel.attributes.pop("plan", None)
        self.check_mma_widths()
        n = self.consumers()
        self.check_tma_boxes(n)
        self.check_tma_starts()
        heights = register_heights(self.kernel)
        rows = max(heights, default=0)
        split_padded = [h for h in short_heights(heights) if not replicated(h, n)]
        padding = "".join(
            f"; {h}-row tiles are split as {padded_rows(h)} rows, {fragment_rows(h, n)} per consumer, the last "
            f"consumer's last {padded_rows(h) - h} rows padding: computed, never stored, masked before column "
            f"reductions" for h in split_padded)
        self.decide(
            "consumers",
            n,
            (f"pinned by {self.pin('consumers', str(n))}"
             if self.annotation("consumers") is not None
             else f"{rows}-row register tiles: {fragment_rows(rows, n) if rows >= WGMMA_ROWS else rows} rows per "
             f"consumer warpgroup{'' if rows < WGMMA_ROWS and self.band[0] else ' (wgmma m64)'}; the demand of "
             f"{self.demand(n)} registers per thread fits" if self.has_tiles() else
             f"no register tiles, only vectors: {n} consumer warpgroup(s); the demand of {self.demand(n)} registers "
             f"per thread fits") + padding,
        )
        replicated_height = replicated_rows(heights, n)
        plans_band = bool(replicated_height and replicated_height < WGMMA_ROWS or self.annotation("band") is not None)
        banded = plans_band and bool(self.band[0])
        if replicated_height:
            shorter = ", ".join(str(h) for h in sorted(heights) if h <= replicated_height)
            padded_heights = [] if banded else [h for h in short_heights(heights) if h <= replicated_height]
            padded = ", ".join(map(str, padded_heights))
            short = max(padded_heights, default=0) < WGMMA_ROWS
            cost = f"{WGMMA_ROWS} rows" if short else "their heights rounded up to a multiple of 64"
            fragments = f"{WGMMA_ROWS}-row fragments" if short else f"fragments of {WGMMA_ROWS}-row slices"
            split = "" if replicated(rows, n) else (
                f"; they meet the {rows}-row tiles, split {fragment_rows(rows, n)} rows per consumer, only through "
                f"shared memory (tile.to_shared, wgmma operands), which every consumer reads whole")
            self.decide(
                "replicated_rows",
                replicated_height,
                (f"register tiles and row vectors of {shorter} rows are replicated: each of the {n} consumers computes "
                 f"them whole, as a wgmma computes {WGMMA_ROWS} rows and {n} consumers cannot split fewer than "
                 f"{WGMMA_ROWS * n}" if n > 1 else f"register tiles and row vectors of {shorter} rows are computed "
                 f"whole by the one consumer")
                + (f"; those of {padded} rows as {fragments} (a wgmma's m64) whose rows past their own "
                   f"are padding: computed, never stored, masked before column reductions, and costing the registers "
                   f"of {cost}" if padded else "")
                + split,
            )
        if plans_band:
            self.decide("band", *self.band)
        self.decide("threads", WARPGROUP_THREADS * (1 + n), f"1 producer + {n} consumer warpgroup(s) of 128 threads")
        loops = pipelined_loops(self.kernel)
        # before the stages: the staging's size is part of what a ring's depth must fit beside;
        # whole_staging weighs each choice with the region the stores would share under it
        # (staging_choice)
        if self.annotation("whole_staging") is not None:
            self.decide("whole_staging", *self.whole_staging())
        elif self.chunked_stores():
            self.decide("whole_staging", *self.whole_staging_unpinned(n, loops))
        whole = KernelPlan.of(self.kernel).whole_staging
        whole_reason = KernelPlan.of(self.kernel).reasons.get("whole_staging")
        _, shared, shared_reason = self.staging_choice(n, loops, whole)
        if whole_reason is None:  # staging_choice decided it provisionally
            KernelPlan.undecide(self.kernel, "whole_staging")
        else:
            self.decide("whole_staging", int(whole), whole_reason)
        if shared_reason is None:
            KernelPlan.undecide(self.kernel, "shared_staging")
        else:
            self.decide("shared_staging", shared, shared_reason)
        # before the stages: a CTA that runs one tile may stage its epilogue in its single tiles
        persistent, why = self.persistent(loops)
        self.decide("persistent", int(persistent), why)
        stages = 1
        filling = ring_loops(self.kernel)
        if filling or streams_tiles(self.kernel):
            stages, why = self.stages(filling)
            self.decide("stages", stages, why)
        else:
            self.check_shared_memory(loops)
        smem = smem_plan(self.kernel, stages).total
        self.decide("smem_bytes", smem, f"{self.smem_breakdown(stages)}; budget {SMEM_BUDGET}")
        cluster = self.cluster()
        # clusters walk pairs of tiles along axis 0 in grouped order: a persistent one keeps it
        clustered = cluster is not None and cluster[0] > 1
        heavy = None if persistent and clustered else self.heavy_first(loops, persistent)
        table = self.table_first(loops) if persistent and not clustered and heavy is None else None
        group_m = int_pin(self.annotation("group_m"))
        if group_m is not None and not persistent:
            self.decide("group_m", 1, f"one CTA per tile: launch order ({self.pin('group_m', str(group_m))} orders "
                                      f"only a persistent walk)")
        elif group_m is not None and (heavy is not None or table is not None):
            order = "heavy-first order (heavy_first)" if heavy is not None else "the table's order (table_first)"
            self.decide("group_m", 1, f"the tiles walk in {order}, not in groups ({self.pin('group_m', str(group_m))} "
                                      f"orders only a grouped walk)")
        elif group_m is not None:
            self.decide("group_m", group_m, f"pinned by {self.pin('group_m', str(group_m))}")
        elif streams_tiles(self.kernel):
            self.decide("group_m", 1, "the tiles stream in grid order: they share no panel to keep in L2")
        elif persistent and heavy is not None:
            self.decide("group_m", 1, "the tiles walk in heavy-first order (heavy_first), not in groups")
        elif persistent and table is not None:
            self.decide("group_m", 1, "the tiles walk in the table's order (table_first), not in groups")
        elif persistent:
            self.decide("group_m", *self.group_rows(loops))
        else:
            self.decide("group_m", 1, "one CTA per tile: launch order")
        ctas, why = self.ctas_per_sm(n, smem, persistent)
        self.decide("ctas_per_sm", ctas, why)
        if cluster is not None:
            self.decide("cluster", *cluster)
        if heavy is not None:
            self.decide("heavy_first", *heavy)
        elif (growing := self.heavy_first_pinned_off(loops)) is not None:
            self.decide("heavy_first", -1, f"pinned off by {self.pin('heavy_first', '0')}: the loop's trip count "
                                           f"grows with {growing}, and the tiles keep grid order")
        elif int_pin(self.annotation("heavy_first")) == 0:
            self.decide("heavy_first", -1, f"{self.pin('heavy_first', '0')} turns off nothing: no kernel-level loop's "
                                           f"trip count grows with a block index, so the tiles keep grid order anyway")
        if table is not None:
            self.decide("table_first", *table)
        if (persistent and not streams_tiles(self.kernel)) or self.annotation("stream_k") is not None:
            stream_k, why = self.stream_k(persistent, clustered, heavy is not None or table is not None)
            self.decide("stream_k", int(stream_k), why)
        self.decide("dependent_launch", *self.dependent_launch())
        if self.annotation("fma_exp2") is not None:
            self.decide("fma_exp2", *self.fma_exp2())
        if self.annotation("schedule_wgmma") is not None:
            self.decide("schedule_wgmma", *self.schedule_wgmma())
        producer, consumer, why = self.registers(n, ctas)
        self.decide("producer_registers", producer, why)
        self.decide("consumer_registers", consumer, why)

    def fma_exp2(self) -> tuple[int, str]:
        """@fma_exp2(k): every k-th element of each register tile's exp2 is a degree-3 polynomial
        on the FMA pipe, the rest ex2.approx on the MUFU unit, which a kernel with two MUFU
        functions per score (softcapped attention: tanh and exp2) keeps as busy as the tensor
        cores. Pinned only: on the H200 softcapped D128 attention ran 0.94-1.04x at k = 2 and 3
        and 0.84x at k = 1 (the polynomial lengthens the softmax that the other warpgroup's
        mmas must cover), plain attention 0.87-0.94x at k = 3."""
        k = int_pin(self.annotation("fma_exp2")) or 0
        if not k:
            return 0, f"pinned off by {self.pin('fma_exp2', '0')}: every exp2 on the MUFU unit"
        if not any(isinstance(op, UnaryOp) and op.fn.data == UnaryFn.EXP2 and isinstance(op.result.type, RegisterTileType)
                   for op in self.kernel.walk()):
            raise error_at(self.kernel, f"{self.pin('fma_exp2', str(k))} finds no exp2 of a register tile")
        share = "every element" if k == 1 else f"one element in {k}"
        return k, (f"pinned by {self.pin('fma_exp2', str(k))}: {share} of a register tile's exp2 is a polynomial on "
                   f"the FMA pipe (relative error under 1e-4, inputs clamped to [-127, 128)), the rest ex2.approx "
                   f"on the MUFU unit")

    def schedule_wgmma(self) -> tuple[int, str]:
        """@schedule_wgmma(1): sm90-schedule-wgmma moves the consumers' wgmma issues up and their
        waits down within each block. Pinned only: it keeps each product's arithmetic (the same
        bits) and ptxas assembles every shipped kernel with it, but on the H200 it ran the 13
        kernels it changes 0.85-1.05x as fast batched, 0.87-1.03x under do_bench (dK/dV 0.99-1.05x,
        Hedgehog 1.04x; dQ at D = 64 0.85x, FFTConv 0.94x: pin_ab-2026-12-05.json), ptxas's own
        scheduling doing as well where the products are independent."""
        if not any(isinstance(op, MmaOp) for op in self.kernel.walk()):
            return 0, f"{self.pin('schedule_wgmma', str(int_pin(self.annotation('schedule_wgmma'))))} finds no mma"
        if not int_pin(self.annotation("schedule_wgmma")):
            return 0, f"pinned off by {self.pin('schedule_wgmma', '0')}: each product waited for where it is issued"
        return 1, (f"pinned by {self.pin('schedule_wgmma', '1')}: each wgmma issued as early as its operands "
                   "allow and waited for where its product is first read (sm90-schedule-wgmma)")

    def whole_staging(self) -> tuple[int, str]:
        """@whole_staging(1): each register-tile store stages its whole tile, a buffer for every
        swizzle-panel chunk of a consumer's rows, written between one pair of syncs and stored as
        one bulk group, where two chunk buffers taking turns need two syncs per chunk and a wait
        for the TMA reads of the chunk two back (8 syncs for a 16x256 bf16 tile). Unpinned, the
        plan decides it (whole_staging_unpinned); a pin takes it or leaves it whatever it costs."""
        pin = int_pin(self.annotation("whole_staging"))
        if not staged_stores(self.kernel):
            return 0, f"{self.pin('whole_staging', str(pin))} finds no store of a register tile"
        if not pin:
            return 0, f"pinned off by {self.pin('whole_staging', '0')}: two chunk buffers per store take turns"
        return 1, (f"pinned by {self.pin('whole_staging', '1')}: each register-tile store writes every chunk of its "
                   "tile to a buffer of its own between one pair of syncs and stores them as one bulk group")

    def staging_choice(self, n: int, loops: list[scf.ForOp], whole: bool
                       ) -> tuple[tuple[int, int, int, bool] | None, int, str | None]:
        """With whole-tile staging or without: (depth_and_blocks' outcome, shared_staging, its
        reason, None where there is nothing to decide) of the register-tile stores' staging. A
        store's first chunk waits until every store its consumer issued has read its staging, with
        a region each as with one, so sharing one (plan.shared_staging) costs no wait; the stores
        share where their chunks lie alike (staging_shareable) and a region each would not fit or
        would cost the ring a stage, and every other kernel's layout stays as it was: a block more
        per SM is left to a pin, since the register estimate that would admit it runs up to 54
        under ptxas on scans (bf16_cumsum spilled at two blocks of two consumers).
        @shared_staging(b) pins it; 1 where the chunks lie differently is an error (a consumer's
        wait covers its own stores only). It decides `whole_staging` and `shared_staging`
        provisionally: plan() decides both again."""
        self.decide("whole_staging", int(whole), "provisional")
        stores = staged_stores(self.kernel)
        pin = int_pin(self.annotation("shared_staging"))
        KernelPlan.undecide(self.kernel, "shared_staging")
        apart = self.depth_and_blocks(n, loops, None)
        if pin == 0:
            return apart, 0, f"pinned off by {self.pin('shared_staging', '0')}: a staging region per store"
        if not staging_shareable(stores):
            if pin is None:
                return apart, 0, None
            raise error_at(self.kernel, f"{self.pin('shared_staging', '1')}: " + (
                "the kernel has fewer than two stores of register tiles" if len(stores) < 2 else
                "its stores' chunks lie differently (a replicated tile stored by the first consumer beside a split "
                "one, or tiles of different sizes or staged in different chunks): a consumer could write where "
                "another's store is still read"))
        self.decide("shared_staging", 1, "provisional")
        shared = self.depth_and_blocks(n, loops, None)
        one = (f"the {len(stores)} stores stage in one region (a store's first chunk waits until its consumer's "
               "earlier stores have read their staging, as with a region each)")
        if pin == 1:
            return shared, 1, f"pinned by {self.pin('shared_staging', '1')}: {one}"
        if shared is None:
            return apart, 0, "a staging region per store (one region would not fit either)"
        if apart is None:
            return shared, 1, f"a region per store would not fit: {one}"
        if apart[0] < shared[0]:
            return shared, 1, (f"a region per store would leave {apart[0]} stage(s) where one keeps {shared[0]}: "
                               f"{one}")
        more = f"({apart[2] - shared[2]} more bytes) " if apart[2] > shared[2] else ""
        blocks = (f"; one region would fit {shared[1]} blocks per SM, which the plan does not take on staging "
                  f"alone (its register estimate can run under what ptxas allocates; "
                  f"{self.pin('shared_staging', '1')} tries it)" if shared[1] > apart[1] else "")
        return apart, 0, f"a region per store {more}keeps the ring's {apart[0]} stage(s){blocks}"

    def chunked_stores(self) -> list[StoreOp]:
        """The register-tile stores staged in more than one swizzle-panel chunk: those whole-tile
        staging (whole_staging) changes."""
        return [op for op in self.kernel.walk() if isinstance(op, StoreOp)
                and isinstance(op.value.type, RegisterTileType) and staging_chunk(op)[1] < op.value.type.cols]

    def depth_and_blocks(self, n: int, loops: list[scf.ForOp], whole: bool | None) -> tuple[int, int, int, bool] | None:
        """(ring stages, blocks per SM, the epilogue staging's bytes, whether it lies in the
        kernel-level loads' bytes) the plan would take with or without whole-tile staging (None:
        as decided), or None where it would not fit at all. It decides `whole_staging` (unless
        None) and `persistent` provisionally: plan() decides both again."""
        if whole is not None:
            self.decide("whole_staging", int(whole), "provisional")
        filling = ring_loops(self.kernel)
        try:
            persistent, _ = self.persistent(loops)
            self.decide("persistent", int(persistent), "provisional")
            stages = self.stages(filling)[0] if filling or streams_tiles(self.kernel) else 1
            smem = smem_plan(self.kernel, stages)
            if smem.total > SMEM_BUDGET:
                return None
            staging = smem.staging_bytes
            return stages, self.ctas_per_sm(n, smem.total, persistent)[0], staging, smem.staging_reused
        except TkError:
            return None

    def whole_staging_unpinned(self, n: int, loops: list[scf.ForOp]) -> tuple[int, str]:
        """Unpinned, a kernel without an mma stages each register-tile store whole where that keeps
        its ring's depth and its blocks per SM: such a kernel is bound by its consumers' latency,
        which the syncs of chunk-by-chunk staging add to (on an H100, softmax 1.00-1.18x, layernorm
        1.01-1.03x: whole-staging-default-h100-2026-12-07.log); a kernel with an mma keeps two chunk buffers (its epilogue overlaps the next tile's
        loads, and whole tiles were not timed there; @whole_staging(1) pins them)."""
        turns = "two chunk buffers per store take turns, two syncs per chunk"
        if any(isinstance(op, MmaOp) for op in self.kernel.walk()):
            return 0, f"a kernel with an mma: {turns} ({self.pin('whole_staging', '1')} stages whole tiles)"
        chunked, _, _ = self.staging_choice(n, loops, False)
        self.decide("whole_staging", 1, "provisional")
        if int_pin(self.annotation("shared_staging")) == 1 and not staging_shareable(staged_stores(self.kernel)):
            return 0, (f"whole tiles would give the stores chunks that lie differently, which "
                       f"{self.pin('shared_staging', '1')} refuses: {turns}")
        whole, _, _ = self.staging_choice(n, loops, True)
        if chunked is None:
            return 0, turns  # the plan does not fit even so: deciding the stages below says why
        stages, blocks, staging, reused = chunked
        if reused:
            return 0, "the epilogue stages in the kernel-level loads' bytes, which the next tile loads into: chunk by chunk"

        def depth(stages: int, blocks: int) -> str:
            return f"{stages} stage{'s' if stages > 1 else ''} and {blocks} block{'s' if blocks > 1 else ''} per SM"

        if whole is None or whole[0] < stages or whole[1] < blocks:
            cost = "would not fit" if whole is None else f"({whole[2] - staging} more bytes) would leave {depth(*whole[:2])}"
            return 0, f"whole tiles {cost} where chunks keep {depth(stages, blocks)}: {turns}"
        extra = f"{whole[2] - staging} more bytes" if whole[2] > staging else "no more shared memory"
        return 1, (f"no mma, and whole tiles keep the ring's {depth(stages, blocks)} ({extra}): each register-tile "
                   "store writes every chunk of its tile to a buffer of its own between one pair of syncs and stores "
                   "them as one bulk group")

    def ctas_per_sm(self, n: int, smem: int, persistent: bool) -> tuple[int, str]:
        """Blocks per SM: 2 where two fit its shared memory and registers (each consumer keeping
        the registers it needs, a thread's entry count the widest wgmma's), else 1.
        @ctas_per_sm(k) pins k (up to MAX_CTAS_PER_SM), an error where k do not fit. More blocks
        hide more of each one's latency but hold more rows in flight: on the H200, 16-row band
        softmax and layernorm ran 1.1-1.24x faster with 3-4 blocks than with 2, 32-row softmax
        1.09-1.19x slower with 3 (its re-read misses L2), so the plan stops at 2 unpinned."""
        pin = int_pin(self.annotation("ctas_per_sm"))
        pinned = self.pin("ctas_per_sm", str(pin)) if pin is not None else ""

        def refuse(why: str) -> tuple[int, str]:
            if pin is not None and pin > 1:
                raise error_at(self.kernel, f"{pinned}: {why}")
            return 1, why

        if persistent and not streams_tiles(self.kernel):
            return refuse("persistent grid: one CTA per SM" + (
                " walks the tiles (@persistent(0) launches one CTA per tile, and those may share an SM)"
                if pin is not None and pin > 1 else ""))
        if self.annotation("registers") is not None:
            return refuse(f"{self.pin('registers')} pins the split of one block's registers")
        if pin == 1:
            return 1, f"pinned by {pinned}"
        limit = pin or 2
        demand = self.demand(n)
        ctas, why = 1, ""
        for blocks in range(2, limit + 1):
            consumer = register_split(n, blocks, demand)[1]
            if blocks * (smem + BLOCK_RESERVED_SMEM) > SM_SMEM:
                why = (f"{blocks} blocks would need {blocks} x ({smem} + {BLOCK_RESERVED_SMEM} reserved) bytes, "
                       f"over the SM's {SM_SMEM}")
            elif demand > consumer:
                why = f"with {blocks} blocks a consumer gets {consumer} registers, under the {demand} it needs"
            elif not self.widest_mma_fits(n, blocks):
                why = (f"with {blocks} blocks a thread starts with {register_pool(n, blocks)[0]} registers, too few "
                       f"for one wgmma of the widest product with its accumulators")
            else:
                ctas = blocks
                continue
            break
        if pin is not None and ctas < pin:
            return refuse(why + (f", so {pin} do not fit either" if ctas + 1 < pin else ""))
        consumer = register_split(n, ctas, demand)[1]
        fit = (f"{ctas} blocks fit: {smem} bytes of shared memory and {consumer} registers per consumer thread each"
               if ctas > 1 else why)
        if pin is not None:
            return ctas, f"pinned by {pinned}: {fit}"
        if ctas == limit and ctas > 1:
            fit += f" (@ctas_per_sm(k) pins up to {MAX_CTAS_PER_SM})"
        return ctas, fit


def check_budgets(kernel: KernelOp) -> None:
    """The budgets no plan escapes, checked before anything whose cost grows with the tiles
    (tile-bank-conflicts simulates every warp access of the tiles it lays out): the register
    tiles fit the consumer warpgroups, and the shared tiles, one copy each, fit the shared memory
    (the lower bound of every layout and stage count; over it, the planner's own message)."""
    planner = Planner(kernel)
    planner.check_mma_widths()
    planner.consumers()
    tiles = sum(buffer_bytes(op) for op in kernel.walk() if isinstance(op, LoadOp | ToSharedOp))
    if tiles > SMEM_BUDGET:
        planner.check_shared_memory(pipelined_loops(kernel))
