"""The occupancy plan of a kernel, as the tile passes leave it on `tile.kernel` for the lowering.

tile-occupancy-plan writes it as the kernel's `plan = #tile.plan<...>`, one
`#tile.decision<value, "reason">` per field, and tile-pipeline adds the smem_bytes of its layout
when no plan ran (KernelPlan.decide); the ring of each pipelined loop is a decision on the loop.
Passes, the lowering and `tkc report` read the plan only through `KernelPlan.of(kernel)`, which
holds the reasons too. A kernel that no pass planned gets the defaults below, which are always
legal: one consumer warpgroup, one stage, no register reallocation.

`smem_plan(kernel, stages)` is the shared-memory layout both passes use, the one
convert-tile-to-sm90 builds: a 1 KB mbarrier region, single-copy tiles (loads outside
pipelined rings, hoisted loads, `tile.to_shared` tiles; S copies of the kernel-level loads where
the kernel streams its tiles, streams_tiles), one S-stage ring per pipelined loop
(at any depth) and one per if whose branches load
(ring_owners), the epilogue staging tile of each store of a register tile, every tile 1024-aligned, plus 1 KB
of slack for aligning the base; tile-occupancy-plan sizes stages with it and tile-pipeline
records it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, cast

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.traits import Pure

from tkc.passes.alias import defined_within, may_overlap_in_loop
from tkc.passes.shared_tiles import buffer_columns, buffer_rows
from tkc.passes.signs import never_negative
from tkc.passes.wgmma_layout import widest_span
from tkc.dialects.tile import (
    BAND_COLUMNS,
    MBARRIER_BYTES,
    RING_BARRIERS_PER_STAGE,
    WARPGROUP_THREADS,
    WGMMA_ROWS,
    Axis,
    BinaryOp,
    BlockIdOp,
    BroadcastOp,
    CumsumOp,
    DecisionAttr,
    PlanAttr,
    SMEM_BUDGET,
    TMA_SMEM_ALIGN,
    element_bytes,
    realignment,
    element_ends,
    FenceOp,
    GlobalType,
    KernelOp,
    LoadOp,
    MmaOp,
    ReduceOp,
    RetainOp,
    RegisterTileType,
    RegisterVectorType,
    SharedTileType,
    SharedVectorType,
    StoreOp,
    ToSharedOp,
    TransposeOp,
    UnaryOp,
    VectorReduceOp,
    ZERO_PAST_END,
)

TILE_ALIGN = 1024
"""Every shared tile starts at a multiple of 1024 (the 128B swizzle repeat)."""
VECTOR_ALIGN = 128
MBARRIER_REGION = 1024
"""The mbarriers come first, in a region of this size (128 of them at most)."""
SPLIT_RING_STAGES = 2
"""The deepest ring an overlapped loop splits without a pin (tile-pipeline's split_ring)."""
NAMED_BARRIERS = 16
"""Hardware named barriers of a CTA (bar.sync ids 0..15). The lowering's ids: 0 the whole block,
1 + i consumer i's warpgroup, 1 + consumers all the consumers, turn_barrier(...) the turns."""
ALIGN_SLACK = 1024
"""Dynamic shared memory is only 16-byte aligned: aligning its base to 1024 may cost this much."""



def defined_before_its_loop(op: Operation, value: SSAValue, loops: tuple[type[Operation], ...] = (scf.ForOp,)) -> bool:
    """Whether `op` is in a loop (the innermost of the `loops` kinds around it) that `value` is
    defined before. A wgmma's register A operand defined so is copied in the loop
    (sm90_to_ptx/wgmma.py: ptxas before 13.3 reuses its registers), and the register estimate
    counts the copies (occupancy.peak_registers)."""
    loop = op.parent_op()
    while loop is not None and not isinstance(loop, loops):
        loop = loop.parent_op()
    if loop is None:
        return False
    return not defined_within(value, loop)


WHOLE_AXIS = 0
"""The plan's group_m where a persistent walk takes grid axis 0 whole (fastest): its tiles share
every tile their loops load."""


@dataclass(frozen=True)
class KernelPlan:
    consumers: int = 1
    """Consumer warpgroups; warpgroup 0 is the producer, 1..consumers compute."""
    stages: int = 1
    """Depth of the TMA ring of each pipelined loop."""
    producer_registers: int = 0
    """setmaxnreg value of the producer; 0 = no reallocation."""
    consumer_registers: int = 0
    persistent: bool = False
    """One CTA per SM looping over tiles, instead of one CTA per tile."""
    group_m: int = 1
    """L2-friendly tile order of a persistent grid: this many tile rows walk together
    (WHOLE_AXIS: all of grid axis 0, which then walks fastest)."""
    ctas_per_sm: int = 1
    cluster: int = 1
    """CTAs per cluster (2: pairs of tiles along grid axis 0 multicast the tile they share)."""
    heavy_first: int = -1
    """Grid axis launched in reverse (longest tiles first); -1 = none."""
    table_first: int = -1
    """Grid axis a persistent walk takes slowest, in grid order: its block index reads the tile
    table a loop's trip count comes from; -1 = none."""
    stream_k: bool = False
    """A persistent grid splits the tiles' K iterations evenly over the CTAs (stream-K): a CTA
    that ends inside a tile leaves its partial sum for the CTA that began the tile."""
    dependent_launch: bool = False
    """Launched as a programmatic dependent of the kernel before it on the stream: the blocks
    start while that kernel finishes, set up their shared memory, and wait for it to complete
    before they touch global memory (griddepcontrol)."""
    fma_exp2: int = 0
    """Every this many-th element of a register tile's exp2 is computed on the FMA pipe (a
    polynomial) instead of the MUFU unit (ex2.approx); 0 = none (fma_exp2_f32 in sm90_to_ptx)."""
    schedule_wgmma: bool = False
    """sm90-schedule-wgmma issues the consumers' wgmmas early and waits for them late."""
    replicated_rows: int = 0
    """Register tiles and row vectors of at most this many rows are replicated: every consumer
    computes them whole (consumer_rows); taller ones are split by rows. 0 = none."""
    band: bool = False
    """The register tiles (all shorter than a wgmma's 64 rows) are held in the band layout: every
    warp holds all their rows, the 4 warps of a warpgroup a quarter of the columns each
    (sm90.FragmentType), instead of padded to 64 rows."""
    whole_staging: bool = False
    """Each register-tile store stages the whole tile (every chunk of a consumer's rows a buffer
    of its own) between one pair of syncs, instead of two chunk buffers taking turns."""
    shared_staging: bool = False
    """The register-tile stores stage in one region instead of one each (staging_shareable): a
    store's first chunk waits until every store its consumer issued has read its staging either
    way, so they never use staging at once."""
    smem_bytes: int = 0
    """Dynamic shared memory the block requests; 0 = not planned."""
    reasons: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Why each decided field (threads included) has its value; a field not here kept its default."""

    @property
    def threads(self) -> int:
        return WARPGROUP_THREADS * (1 + self.consumers)

    def consumer_rows(self, rows: int) -> int:
        """The rows of a register tile or row vector of `rows` rows that one consumer holds: all
        of them where it is replicated, else its slice of the padded height (padded_rows)."""
        return rows if rows <= self.replicated_rows else padded_rows(rows) // self.consumers

    def storing_consumers(self, rows: int) -> int:
        """How many consumers store a register tile of `rows` rows, each its own slice: the first
        alone where every consumer holds the tile whole (replicated), else all of them."""
        return 1 if rows <= self.replicated_rows else self.consumers

    def fragment_rows(self, rows: int) -> int:
        """The rows of a consumer's fragment of a register tile or row vector of `rows` rows
        (plan.fragment_rows)."""
        return self.consumer_rows(rows) if self.band else align(self.consumer_rows(rows), WGMMA_ROWS)

    @staticmethod
    def overlaps(loop: scf.ForOp) -> bool:
        """tile-pipeline's `overlap` decision on a loop (late_tail): absent means no."""
        decision = loop.attributes.get("overlap")
        return isinstance(decision, DecisionAttr) and decision.int_value == 1

    @staticmethod
    def takes_turns(loop: scf.ForOp) -> bool:
        """tile-pipeline's `turns` decision on an overlapped loop: absent means no."""
        decision = loop.attributes.get("turns")
        return isinstance(decision, DecisionAttr) and decision.int_value == 1

    @staticmethod
    def splits_ring(loop: scf.ForOp) -> bool:
        """tile-pipeline's `split_ring` decision on an overlapped loop: absent means no."""
        decision = loop.attributes.get("split_ring")
        return isinstance(decision, DecisionAttr) and decision.int_value == 1

    @staticmethod
    def of(kernel: Operation) -> KernelPlan:
        """The kernel's `#tile.plan` (the kernel's verifier checked it); without one, the defaults."""
        plan = kernel.attributes.get("plan")
        if not isinstance(plan, PlanAttr):
            return KernelPlan()
        decisions = {name: decision for name, decision in plan.decisions.data.items() if isinstance(decision, DecisionAttr)}
        values: dict[str, Any] = {
            f.name: decisions[f.name].int_value for f in fields(KernelPlan) if f.name in decisions
        }
        for flag in ("persistent", "stream_k", "dependent_launch", "band", "whole_staging", "shared_staging"):
            if flag in values:
                values[flag] = bool(values[flag])
        return KernelPlan(**values, reasons={name: decision.reason.data for name, decision in decisions.items()})

    @staticmethod
    def decide(kernel: Operation, name: str, value: int, reason: str) -> None:
        """Write one field of the kernel's plan (tile-occupancy-plan, tile-pipeline)."""
        plan = kernel.attributes.get("plan")
        plan = plan if isinstance(plan, PlanAttr) else PlanAttr({})
        kernel.attributes["plan"] = plan.with_decision(name, DecisionAttr(value, reason))

    @staticmethod
    def undecide(kernel: Operation, name: str) -> None:
        """Take back one field of the kernel's plan, which then keeps its default."""
        plan = kernel.attributes.get("plan")
        if isinstance(plan, PlanAttr):
            kernel.attributes["plan"] = plan.without(name)


def padded_rows(rows: int) -> int:
    """The rows a register tile or row vector of `rows` rows is computed in: whole wgmmas of 64
    rows (m64), the rows past its own padding (16 rows as 64, 96 as 128)."""
    return align(rows, WGMMA_ROWS)


def turn_barrier(consumers: int, index: int) -> int:
    """The named barrier consumer `index` waits on for its turn to issue mmas (tile-pipeline's
    `turns`), after the ids of the warpgroups and of all consumers (NAMED_BARRIERS)."""
    barrier = consumers + 2 + index
    assert barrier < NAMED_BARRIERS, f"{consumers} consumers leave no named barrier for turns"
    return barrier


def replicated(rows: int, consumers: int) -> bool:
    """Whether `consumers` warpgroups replicate a register tile or row vector of `rows` rows
    rather than split it: with a padded height (padded_rows) below one wgmma (64 rows) per
    consumer it cannot be split over them, so every consumer computes it whole; a tile of fewer
    than 64 rows always is (with one consumer, it is just computed whole). Values only change
    height through shared memory, which every consumer reads whole (a tile.to_shared buffer, a
    wgmma's shared A and B), so tiles of each height may be distributed their own way."""
    return rows < WGMMA_ROWS or padded_rows(rows) < WGMMA_ROWS * consumers


def fragment_rows(rows: int, consumers: int) -> int:
    """The rows of a consumer's fragment of a register tile or row vector of `rows` rows: all
    of its padded height (padded_rows) where the consumers replicate it, else its slice of it,
    whole wgmmas of 64 rows either way. The rows past the tile's own are padding, in the last
    consumer's fragment where the tile is split (96 rows over 2: 64 + 32 and 32 padding): every
    op but a column reduction computes rows independently, so those rows cost registers and work
    but never reach a result (loads leave them undefined, stores and moves to shared memory skip
    them, a column reduction masks them)."""
    held = padded_rows(rows) if replicated(rows, consumers) else padded_rows(rows) // consumers
    return align(held, WGMMA_ROWS)


def short_heights(heights: Iterable[int]) -> list[int]:
    """The heights that are no multiple of one wgmma's 64 rows, which the lowering pads
    (padded_rows, fragment_rows)."""
    return sorted(rows for rows in heights if rows % WGMMA_ROWS)


def replicated_rows(heights: Iterable[int], consumers: int) -> int:
    """The tallest of `heights` that `consumers` warpgroups replicate (0: none)."""
    return max((rows for rows in heights if replicated(rows, consumers)), default=0)


def register_heights(kernel: Operation) -> dict[int, Operation]:
    """The rows of every register tile and row vector of the kernel (column vectors have none),
    each with the first op that makes or reads one of them (where a diagnostic points)."""
    heights: dict[int, Operation] = {}
    for op in kernel.walk():
        values = [*op.results, *op.operands, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for v in values:
            t = v.type
            if isinstance(t, RegisterTileType) or isinstance(t, RegisterVectorType) and not t.is_column:
                heights.setdefault(t.rows, op)
    return heights


def align(n: int, to: int) -> int:
    return -(-n // to) * to


def loop_variant_values(loop: scf.ForOp) -> set[SSAValue]:
    """The values of the loop body's own block that may change between iterations: its
    arguments, and the results of ops that are not pure, have regions, or read a variant value.
    The rest, and everything defined outside the loop, is loop-invariant. One pass over the
    block in program order, so a deep chain of lets costs its length."""
    block = loop.body.block
    variant: set[SSAValue] = set(block.args)
    for op in block.ops:
        if op.regions or not op.has_trait(Pure) or any(v in variant for v in op.operands):
            variant.update(op.results)
    return variant


def loop_loads(loop: scf.ForOp) -> tuple[list[LoadOp], list[LoadOp]]:
    """(loop-invariant, pipelined) tile loads directly in the loop body. A load is invariant when
    its coordinates are, no store in the loop may write what it reads, and no tile.fence before it
    in the body orders it: then every iteration reads the same values and it is loaded once, before
    the loop. A fence in the body orders the load after stores an enclosing loop's earlier
    iteration made (tile-memory-order), which the loop's own stores do not show: hoisted above
    that fence, the producer would read the tile before those stores land."""
    loads = [op for op in loop.body.block.ops if isinstance(op, LoadOp)]
    variant = loop_variant_values(loop)
    invariant = [op for op in loads if not any(v in variant for v in op.operands) and _memory_lets_hoist(op, loop)]
    hoisted = set(invariant)
    return invariant, [op for op in loads if op not in hoisted]


def _memory_lets_hoist(load: LoadOp, loop: scf.ForOp) -> bool:
    """Whether `load`, whose coordinates `loop` does not change, reads the same values in every
    iteration of it: no store in the loop may write what it reads, and, where tile-memory-order
    ordered it after stores, no tile.fence in the loop's body comes before it (loop_loads and
    load_home both ask this)."""
    order = load.attributes.get("memory_order")
    for op in loop.body.block.ops:
        if op is load or op.is_ancestor(load):
            break
        if isinstance(op, FenceOp) and isinstance(order, DecisionAttr) and order.int_value:
            return False
    return not any(may_overlap_in_loop(load, store, loop) for store in loop.walk() if isinstance(store, StoreOp))


def _varies_in(value: SSAValue, loop: scf.ForOp) -> bool:
    """Whether `value` may change between iterations of `loop`: it is an argument of a block in
    the loop, or computed in the loop from one, or by an op that is not pure or has regions."""
    pending, seen = [value], set()
    while pending:
        v = pending.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op()
            if owner is not None and loop.is_ancestor(owner):
                return True
            continue
        op = v.owner
        assert isinstance(op, Operation)
        if not loop.is_ancestor(op):
            continue
        if op.regions or not op.has_trait(Pure):
            return True
        pending.extend(op.operands)
    return False


def load_home(load: LoadOp) -> Operation:
    """The op whose block holds `load` once tile-pipeline has hoisted it: the load moves out of
    each loop, from the innermost out, whose iterations all read the same tile (loop_loads'
    test, applied to the moved load and the index math it takes along). So the planners see
    the layout tile-pipeline will build before it runs."""
    home = load.parent_op()
    while isinstance(home, scf.ForOp) and not any(_varies_in(v, home) for v in load.operands) and _memory_lets_hoist(
        load, home
    ):
        home = home.parent_op()
    assert home is not None
    return home


def kernel_load_groups(kernel: Operation) -> list[list[LoadOp]]:
    """The loads that run once per output tile (in the kernel body, or loop-invariant in the
    loops around them up to a top-level one, which tile-pipeline hoists to just before it),
    grouped by the tile.fence ops of the kernel body and by the loops and ifs that load tiles
    of their own: each group is a TMA stage of its own. The loads after a fence wait for stores
    that those before it do not; and the producer issues a stage where its last load stands,
    the consumers wait for it where its first does, so a stage whose loads lay on both sides of
    a loop with a ring (a bias loaded for the epilogue) would have the producer fill the loop's
    ring first while the consumers wait for the stage before the loop: a deadlock once the loop
    runs more iterations than the ring has stages."""
    groups: list[list[LoadOp]] = [[]]
    for op in kernel.regions[0].block.ops:
        if isinstance(op, FenceOp) and groups[-1]:
            groups.append([])
            continue
        loads = [load for load in op.walk() if isinstance(load, LoadOp)]
        groups[-1].extend(load for load in loads if load_home(load) is kernel)
        if groups[-1] and any(load_home(load) is not kernel for load in loads):
            groups.append([])
    return [group for group in groups if group]


RingOwner = scf.ForOp | scf.IfOp
"""What a ring belongs to: a loop (a stage per iteration) or an if (a stage per run of a branch
that loads)."""


def ring_loads(owner: RingOwner) -> list[LoadOp]:
    """The loads that make one stage of the owner's ring, in program order: those whose block,
    once tile-pipeline hoisted what it hoists (load_home), is the loop's body or a branch of the
    if. A loop's stage holds all of them each iteration; a run of an if's branch fills only its
    own loads, which share the stage's bytes with the other branch's (_stage_layouts)."""
    return [op for op in owner.walk() if isinstance(op, LoadOp) and load_home(op) is owner]


def _stage_layouts(owner: RingOwner) -> list[list[LoadOp]]:
    """The loads that fill one stage together: a loop's all; an if's, per branch (one branch
    runs per stage, so each branch's loads start at the stage's first byte)."""
    loads = ring_loads(owner)
    if isinstance(owner, scf.ForOp):
        return [loads]
    return [[load for load in loads if region.is_ancestor(load)] for region in owner.regions]


def ring_owners(kernel: Operation) -> list[RingOwner]:
    """Every loop and if, at any depth, that holds ring loads, in program order: each gets a
    ring of its own."""
    homes = {load_home(op) for op in kernel.walk() if isinstance(op, LoadOp)}  # once per load, not per nest level
    return [op for op in kernel.walk() if isinstance(op, scf.ForOp | scf.IfOp) and op in homes]


def _tile_loads_ringable(kernel: Operation) -> bool:
    """Whether the kernel-level loads could be loaded a tile ahead: they are one TMA stage (no
    fence between them) and no tile.to_shared buffer lives across a tile."""
    return len(kernel_load_groups(kernel)) == 1 and not any(isinstance(op, ToSharedOp) for op in kernel.walk())


def streaming_candidate(kernel: Operation) -> bool:
    """Whether the kernel's per-tile loads could stream through a ring over the tiles of a
    persistent CTA (streams_tiles): they are all its loads (no loop or if loads) and may be
    loaded a tile ahead."""
    return not ring_owners(kernel) and _tile_loads_ringable(kernel)


def streams_tiles(kernel: Operation) -> bool:
    """Whether the kernel is a persistent one whose every load is a tile's own
    (streaming_candidate): its tile ring (tile_ring_stages) is as deep as a loop's would be, so
    the producer loads the next tiles while the consumers compute and store this one
    (memory-bound kernels: rotary, quantisers)."""
    return KernelPlan.of(kernel).persistent and streaming_candidate(kernel)


def tile_ring_stages(kernel: Operation, stages: int) -> int:
    """The stages of the ring of the kernel-level loads (those a tile loads once: attention's Q),
    `stages` being the loops' ring depth. One where the CTA runs one tile or they may not be
    loaded a tile ahead; in a persistent kernel `stages` where it streams its tiles, else two:
    the next tile's loads land while this one's loops run, so its loops' loads follow at once
    (FlashAttention-3's persistent kernels)."""
    if not KernelPlan.of(kernel).persistent or not _tile_loads_ringable(kernel):
        return 1
    return 2 if ring_owners(kernel) else stages


def value_name(value: SSAValue) -> str:
    """How the IR's reasons and `tkc report` name a tile or vector: its name in the program, else
    the tensor a load of it reads (`LSE[...]`), else what it is."""
    if value.name_hint:
        return value.name_hint
    owner = value.owner
    if isinstance(owner, LoadOp) and owner.tensor.name_hint:
        return f"{owner.tensor.name_hint}[...]"
    return "vector" if isinstance(value.type, SharedVectorType | RegisterVectorType) else "tile"


def pipelined_loops(kernel: Operation) -> list[scf.ForOp]:
    return [owner for owner in ring_owners(kernel) if isinstance(owner, scf.ForOp)]


def ring_loops(kernel: Operation) -> list[scf.ForOp]:
    """The loops whose iterations fill a ring: those that hold ring loads themselves and those
    around a loop or an if that does (a K loop whose loads sit in the branches of an if). Their
    rings are worth more than one stage; a kernel whose only rings are kernel-level ifs fills
    each once per tile."""
    owners = ring_owners(kernel)
    return [op for op in kernel.walk()
            if isinstance(op, scf.ForOp) and any(owner is op or op.is_ancestor(owner) for owner in owners)]


def buffer_bytes(op: Operation) -> int:
    """Bytes of shared memory the tile or vector `op` makes (a load or tile.to_shared) occupies."""
    type_ = op.results[0].type
    assert isinstance(type_, SharedTileType | SharedVectorType | RegisterTileType | RegisterVectorType)
    if isinstance(type_, SharedTileType):
        return type_.num_bytes // type_.rows * buffer_rows(op) * buffer_columns(op) // type_.get_shape()[-1]
    if isinstance(type_, SharedVectorType):  # a realigned box holds the elements before the start too
        return (type_.get_shape()[-1] + realignment(op)) * element_bytes(type_.element_type)
    return type_.num_bytes


def buffer_align(type_: Attribute) -> int:
    return TILE_ALIGN if isinstance(type_, SharedTileType | RegisterTileType) else VECTOR_ALIGN


@dataclass(frozen=True)
class Ring:
    """The S-stage TMA ring of one pipelined loop or of an if whose branches load."""

    owner: RingOwner
    offset: int
    stage_bytes: int
    loads: tuple[tuple[LoadOp, int], ...]
    """Each pipelined load and its offset within a stage."""


@dataclass(frozen=True)
class SmemPlan:
    single: tuple[tuple[Operation, int], ...]
    """Loads outside rings (loaded once) and tile.to_shared tiles, with their offsets."""
    rings: tuple[Ring, ...]
    staging: tuple[tuple[StoreOp, int], ...]
    """Each store of a register tile and the offset of its staging tile."""
    barrier_count: int
    """full[s] and empty[s] per ring stage, and one pair per group of single loads
    (kernel_load_groups); they sit at offset 0."""
    total: int
    """Bytes to request, including the slack for aligning the base to 1024."""
    staging_reused: bool = False
    """The staging tiles lie in the bytes of the kernel-level loads (staging_reuses_single_tiles)."""
    col_scratch: int | None = None
    """Where the column reductions' scratch buffer starts (after the staging), if there is one."""
    fence_count: int = 0
    """Store fences the producer passes (producer_fences): a barrier-region slot each."""
    barrier_bound: int = 0
    """barrier_count where tile-pipeline has not yet decided which rings split: as if every ring
    it may split did (rings_of's bound)."""
    retained: tuple[tuple[int, int], ...] = ()
    """Each retention buffer (tile-retain-sweep) and its offset, after the column scratch."""

    @property
    def barriers_fit(self) -> bool:
        """Whether the mbarriers (as many as the rings may take) and the store fences fit the
        barrier region (8 bytes each)."""
        return (max(self.barrier_count, self.barrier_bound) + self.fence_count) * MBARRIER_BYTES <= MBARRIER_REGION

    @property
    def staging_bytes(self) -> int:
        """The bytes of the staging regions: stores that share one (shared_staging) count it once."""
        return sum(max(staging_bytes(op) for op, at in self.staging if at == start)
                   for start in dict.fromkeys(at for _, at in self.staging))


STAGING_BUFFERS = 2
"""Chunk buffers per consumer for a staged epilogue: one is written while the other is stored."""


def ends_rows(store: StoreOp) -> bool:
    """Whether a register-tile store stops its rows at an element range's end (`elem(x, end)` on
    its row axis), where TMA does not clip. The lowering stores the rows before the end of a tile
    that reaches past it as one-row TMA boxes, each from its row of the staged chunk, so those
    rows must start on TMA_SMEM_ALIGN-byte lines (tile-bank-conflicts picks such a staging
    layout). It stores the rows from row 0 on of a tile that `may_start_before` row 0 the same
    way."""
    return cast(GlobalType, store.tensor.type).rank - 2 in element_ends(store)


def may_start_before(store: StoreOp) -> bool:
    """Whether a register-tile store's rows may start before its tensor's first row (a row
    coordinate not provably at least 0, as `elem(t * BT - 3)`), where a TMA store box faults."""
    rank = cast(GlobalType, store.tensor.type).rank
    return rank >= 2 and not never_negative(store.coords[rank - 2])


def staging_chunk(store: Operation) -> tuple[int, int, int]:
    """(swizzle, chunk columns, buffers) of the staged epilogue of a register-tile store: chunks
    of one swizzle panel of columns (the layout tile-bank-conflicts chose), double-buffered, or
    where the plan says whole_staging, a buffer for every chunk."""
    value_type = store.operands[-1].type
    assert isinstance(value_type, RegisterTileType)
    chosen = store.attributes.get("staging")
    if isinstance(chosen, DecisionAttr):
        swizzle = chosen.int_value
    else:
        swizzle = widest_span(value_type.cols * element_bytes(value_type.element_type))
    cols = min(value_type.cols, swizzle // element_bytes(value_type.element_type)) if swizzle else value_type.cols
    chunks = value_type.cols // cols
    return swizzle, cols, chunks if KernelPlan.of(_kernel_of(store)).whole_staging else min(STAGING_BUFFERS, chunks)


def _kernel_of(op: Operation) -> KernelOp:
    kernel = op.parent_op()
    while kernel is not None and not isinstance(kernel, KernelOp):
        kernel = kernel.parent_op()
    assert kernel is not None, "a store lies in a kernel"
    return kernel


def staging_chunk_bytes(store: Operation, rows: int) -> int:
    """The bytes of one staging chunk of `rows` rows (a consumer's share of the tile) and the
    stride from one chunk to the next: its rows of one swizzle panel, aligned to the swizzle's
    repeat (8 rows of its span; a 128-byte line unswizzled), so every chunk starts where TMA and
    the swizzle pattern need it to. The planner reserves and the lowering builds these same bytes."""
    value_type = store.operands[-1].type
    assert isinstance(value_type, RegisterTileType)
    swizzle, cols, _ = staging_chunk(store)
    return align(rows * cols * element_bytes(value_type.element_type), 8 * swizzle if swizzle else TMA_SMEM_ALIGN)


def staged_stores(kernel: Operation) -> list[StoreOp]:
    """The stores of register tiles: each stages its tile in shared memory for TMA."""
    return [op for op in kernel.walk() if isinstance(op, StoreOp) and isinstance(op.value.type, RegisterTileType)]


def staging_shareable(stores: list[StoreOp]) -> bool:
    """Whether the staged stores of register tiles may share one region (plan.shared_staging):
    there are several, and each consumer's chunks lie at the same offset and stride in every one
    of them (the same storing consumers, the same bytes per consumer). A consumer's thread waits,
    before a store's first chunk, until its own earlier stores have read their staging; it cannot
    wait for another consumer's, so no consumer may write where another's store is still read."""
    if len(stores) < 2:
        return False
    plan = KernelPlan.of(_kernel_of(stores[0]))

    def layout(store: StoreOp) -> tuple[int, int]:
        rows = cast(RegisterTileType, store.value.type).rows
        return plan.storing_consumers(rows), staging_bytes(store) // plan.storing_consumers(rows)

    return len({layout(store) for store in stores}) == 1


def staging_bytes(store: Operation) -> int:
    """Shared memory of a staged epilogue over all consumers: each owns `buffers` chunks of its
    rows (KernelPlan.consumer_rows: its slice of the padded height, whose last rows are padding),
    or where every consumer holds the whole tile, the first one stores it from its own."""
    value_type = store.operands[-1].type
    assert isinstance(value_type, RegisterTileType)
    _, _, buffers = staging_chunk(store)
    plan = KernelPlan.of(_kernel_of(store))
    return plan.storing_consumers(value_type.rows) * buffers * staging_chunk_bytes(store, plan.consumer_rows(value_type.rows))


def col_reduce_scratch_bytes(cols: int, warpgroups: int) -> int:
    """The buffer sm90.col_reduce reduces `cols` columns through: one f32 row per warp (4 per
    warpgroup) of every one of `warpgroups` warpgroups."""
    return 4 * warpgroups * cols * 4


def col_scan_scratch_bytes(rows: int, cols: int) -> int:
    """The buffer sm90.col_scan carries sums down a [rows, cols] tile through: one f32 row of the
    columns per 16-row slab (a warp's rows of an m-block)."""
    return rows // 16 * cols * 4


def col_scratch_bytes(kernel: Operation) -> int:
    """The shared scratch that column reductions, column scans and the moves of vectors between
    the row and the column layout share: an f32 row of the widest reduced tile's columns per warp
    of every consumer (tile-occupancy-plan's count; before it decides, at most one consumer per 64
    rows and at most 4), one per 16 rows of a scanned tile, and one f32 per element of the longest
    vector moved (a tile or vector of fewer than 64 rows counting its 64 fragment rows); after
    those, a region per band row reduction for its warps' partial row sums (band_region)."""
    needs = [4 * align(cast(RegisterVectorType, op.operands[0].type).length, WGMMA_ROWS) for op in kernel.walk()
             if _moves_vector(op)]
    needs += [col_scan_scratch_bytes(align(t.rows, WGMMA_ROWS), t.cols) for op in kernel.walk()
              if isinstance(op, CumsumOp) and op.axis is not None and op.axis.data == Axis.COL
              and isinstance(t := op.source.type, RegisterTileType)]
    tiles = [op.source.type for op in kernel.walk()
             if isinstance(op, ReduceOp) and op.axis.data == Axis.COL and isinstance(op.source.type, RegisterTileType)]
    if tiles:
        plan = KernelPlan.of(kernel)
        if "consumers" in plan.reasons:
            consumers = plan.consumers
        else:
            consumers = min(4, max(1, max(t.rows for t in tiles) // WGMMA_ROWS))
        needs.append(col_reduce_scratch_bytes(max(t.cols for t in tiles), consumers))
    plan = KernelPlan.of(kernel)
    shared = align(max(needs, default=0), BAND_REGION_ALIGN)
    return shared + len(band_reductions(kernel)) * band_scratch_bytes(kernel, plan.consumers if "consumers" in plan.reasons else 4)


BAND_REGION_ALIGN = 16
"""Alignment of each band row reduction's region of the scratch (ld.shared.v4 at most)."""


def band_reductions(kernel: Operation) -> list[ReduceOp]:
    """Where the plan says band, the row reductions of tiles (all of fewer than 64 rows), in
    program order: each meets its warps' partials in a region of the scratch of its own."""
    if not KernelPlan.of(kernel).band:
        return []
    return [op for op in kernel.walk() if isinstance(op, ReduceOp) and op.axis.data == Axis.ROW
            and isinstance(t := op.source.type, RegisterTileType) and t.rows < WGMMA_ROWS]


def band_region(kernel: Operation, reduction: ReduceOp) -> int:
    """Where `reduction`'s region starts in the scratch: past what column reductions, scans and
    vector moves share, one region per band row reduction. Regions of their own let a combine
    skip the sync before its write where another combine's sync already orders it
    (sm90.band_combine `ordered`)."""
    plan = KernelPlan.of(kernel)
    reductions = band_reductions(kernel)
    per = band_scratch_bytes(kernel, plan.consumers)
    return col_scratch_bytes(kernel) - (len(reductions) - reductions.index(reduction)) * per


def band_obstacle(kernel: KernelOp) -> str | None:
    """Why the kernel's register tiles cannot take the band layout (sm90.FragmentType), or None:
    a wgmma computes 64 rows (an mma, or a tile of 64 rows or more, keeps the wgmma layout), the
    scans and the moves between the row and the column layout are written for the wgmma layout,
    and the 4 warps share the columns in groups of 8, so tiles and column vectors are whole
    32-column groups."""
    heights = register_heights(kernel)
    if not any(isinstance(v.type, RegisterTileType) for op in kernel.walk() for v in op.results):
        return "no register tiles"
    if max(heights) >= WGMMA_ROWS:
        return f"{max(heights)}-row register tiles fill whole wgmma m-blocks of {WGMMA_ROWS} rows"
    for op in kernel.walk():
        if isinstance(op, MmaOp | CumsumOp | TransposeOp | VectorReduceOp) or _moves_vector(op):
            return f"{op.name} is computed in the wgmma layout"
        for v in op.results:
            t = v.type
            width = t.cols if isinstance(t, RegisterTileType) else t.length if (
                isinstance(t, RegisterVectorType) and t.is_column) else None
            if width is not None and width % BAND_COLUMNS:
                return f"a register tile or column vector {width} wide is no multiple of {BAND_COLUMNS} columns"
    return None


def band_scratch_bytes(kernel: Operation, consumers: int) -> int:
    """The region a band tile's row reduction meets the 4 warps' partials in (sm90.band_combine):
    per consumer warpgroup, one f32 per row of the tallest reduced tile per warp."""
    rows = [cast(RegisterTileType, op.source.type).rows for op in band_reductions(kernel)]
    return 4 * 4 * max(rows) * consumers if rows else 0


def _moves_vector(op: Operation) -> bool:
    """Whether the lowering moves `op`'s vector operand between layouts: a transpose, and a
    cumsum or a reduction to a scalar of a row vector (done in the column layout)."""
    if isinstance(op, TransposeOp):
        return True
    if isinstance(op, CumsumOp | VectorReduceOp):
        return isinstance(op.source.type, RegisterVectorType) and not op.source.type.is_column
    return False


def column_vectors(kernel: Operation) -> set[SSAValue]:
    """The register vectors that hold one value per column of a tile (fragments replicated over
    the warpgroup) rather than one per row (split by rows like the tiles): those whose type
    tile-vector-layout made `!tile.rv<N, col>`."""
    values = [arg for op in kernel.walk() for region in op.regions for block in region.blocks for arg in block.args]
    values += [result for op in kernel.walk() for result in op.results]
    return {v for v in values if isinstance(v.type, RegisterVectorType) and v.type.is_column}


def depends_on_block_axis(op: Operation, axis: int) -> bool:
    """Whether any operand of `op` is computed from the block index along `axis`."""
    return any(from_block_axis(v, axis) for v in op.operands)


def from_block_axis(value: SSAValue, axis: int) -> bool:
    """Whether `value` is the block index along `axis` or computed from it."""
    seen: set[Operation] = set()
    pending = [value.owner] if isinstance(value.owner, Operation) else []
    while pending:
        owner = pending.pop()
        if owner in seen:
            continue
        seen.add(owner)
        if isinstance(owner, BlockIdOp) and owner.axis.value.data == axis:
            return True
        pending += [v.owner for v in owner.operands if isinstance(v.owner, Operation)]
    return False


def late_tail(loop: scf.ForOp) -> list[Operation] | None:
    """The loop's tail when its last mma can run one iteration late (FlashAttention-3's
    intra-warpgroup overlap): the mma accumulates into a loop-carried tile (o = mma(p, v, f(o)))
    whose value nothing else in the body reads, and an earlier mma heads the body (s = mma(q, k)).
    The tail is that mma plus the element-wise ops between the carried tile and its accumulator
    (mul_row(o, alpha)), in program order. Then iteration j issues its head mma, then the tail of
    iteration j-1, and works on the head's product (softmax) while the tensor cores run the tail.
    Not with tile.to_shared or stores in the loop, whose order with the tail would change, nor
    with loops or ifs in it that load (their rings' stages would be waited for out of order)."""
    block = loop.body.block
    ops = list(block.ops)
    if any(isinstance(op, ToSharedOp | StoreOp) for op in loop.walk()):
        return None
    if any(isinstance(op, scf.ForOp | scf.IfOp) and op is not loop and ring_loads(op) for op in loop.walk()):
        return None
    mmas = [op for op in ops if isinstance(op, MmaOp)]
    if len(mmas) < 2:
        return None
    mma, yield_op = mmas[-1], ops[-1]
    if mma.acc is None or [use.operation for use in mma.result.uses] != [yield_op]:
        return None
    carried = block.args[1 + list(yield_op.operands).index(mma.result)]
    tail: list[Operation] = [mma]
    value = mma.acc
    while value is not carried:
        owner = value.owner
        if not isinstance(owner, BroadcastOp | BinaryOp | UnaryOp) or owner.parent_block() is not block:
            return None
        if len(list(value.uses)) != 1:
            return None
        tail.append(owner)
        value = owner.operands[0]
    if len(list(carried.uses)) != 1 or mmas[0] in tail:
        return None
    for op in tail:
        for operand in op.operands:
            if operand is block.args[0] or (operand in block.args and operand is not carried):
                return None
    return sorted(tail, key=ops.index)


def split_ring_loads(loop: scf.ForOp, assume_overlap: bool = False) -> tuple[list[LoadOp], list[LoadOp]] | str:
    """The head and tail loads of an overlapped loop whose ring splits in two (tile-pipeline's
    `split_ring`), or why it cannot: the late tail (late_tail: P.V) reads loads (V) no head op
    reads, and the head (Q.K^T) the others. Each part is a ring of its own over the same stage
    bytes, with its own full and empty mbarriers: the consumers wait for the tail's part where
    the late tail runs and free the head's part at the end of its own iteration, so with S
    stages the producer refills K one iteration and V about one and a half iterations ahead,
    where one ring frees both with the late tail. A tail load whose rows past the tensor's end
    the consumers zero (zero_past_end) stays in one ring: they zero them where the load stands,
    with that iteration's coordinates."""
    # the decision first: late_tail walks the loop, and tile-pipeline asks this of every loop
    # (`assume_overlap`: whether it could split were the loop overlapped, before that is decided)
    tail = late_tail(loop) if assume_overlap or KernelPlan.overlaps(loop) else None
    if tail is None:
        return "the loop is not overlapped (its last mma does not run one iteration late)"
    loads = ring_loads(loop)
    readers = {load: {use.operation for use in load.result.uses} for load in loads}
    tail_ops = set(tail)
    tail_loads = [load for load in loads if readers[load] and readers[load] <= tail_ops]
    head_loads = [load for load in loads if load not in tail_loads]
    if not tail_loads or not head_loads:
        return "the late tail and the rest of the loop do not read separate loads"
    if any(readers[load] & tail_ops for load in head_loads):
        return "a load is read both by the late tail and by the rest of the loop"
    if any(ZERO_PAST_END in load.attributes for load in tail_loads):
        return "the late tail reads a tile whose rows past the tensor's end are zeroed where it is loaded"
    return head_loads, tail_loads


def _top_level(op: Operation, kernel: Operation) -> Operation:
    while op.parent_op() is not kernel:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def staging_reuses_single_tiles(kernel: Operation, single: list[LoadOp]) -> bool:
    """Whether the epilogue staging takes the bytes of the kernel-level loads (attention's Q)
    instead of its own: the CTA runs one tile (not persistent), so nothing reloads them, and
    every use of them comes before the first staged store (before which all consumers meet,
    their wgmmas done). It is what leaves attention at D=128 room for a third K/V stage."""
    if KernelPlan.of(kernel).persistent or any(isinstance(op, ToSharedOp) for op in kernel.walk()):
        return False
    body = list(kernel.regions[0].block.ops)
    stores = [body.index(_top_level(op, kernel)) for op in kernel.walk()
              if isinstance(op, StoreOp) and isinstance(op.value.type, RegisterTileType)]
    if not single or not stores:
        return False
    first_store = min(stores)
    return all(body.index(_top_level(use.operation, kernel)) < first_store
               for load in single for use in load.result.uses)


def smem_plan(kernel: Operation, stages: int) -> SmemPlan:
    offset = MBARRIER_REGION

    def place(op: Operation) -> int:
        nonlocal offset
        start = align(offset, buffer_align(op.results[0].type))
        offset = start + buffer_bytes(op)
        return start

    owners = ring_owners(kernel)
    ringed = {load for owner in owners for load in ring_loads(owner)}
    single: list[tuple[Operation, int]]
    tile_stages = tile_ring_stages(kernel, stages)
    if tile_stages > 1:
        # the kernel-level loads (every single tile: tile_ring_stages) are stage 0 of a ring
        # over the tiles; stages 1.. follow
        single = [(op, place(op)) for op in kernel.walk() if isinstance(op, LoadOp) and op not in ringed]
        offset = MBARRIER_REGION + tile_stages * (align(offset, TILE_ALIGN) - MBARRIER_REGION)
    else:
        single = [(op, place(op)) for op in kernel.walk() if isinstance(op, LoadOp | ToSharedOp) and op not in ringed]
    rings: list[Ring] = []
    for owner in owners:
        start = align(offset, TILE_ALIGN)
        placed: list[tuple[LoadOp, int]] = []
        stage_end = 0
        for branch in _stage_layouts(owner):
            offset = 0
            placed += [(load, place(load)) for load in branch]
            stage_end = max(stage_end, offset)
        stage_bytes = align(stage_end, TILE_ALIGN)
        rings.append(Ring(owner, start, stage_bytes, tuple(placed)))
        offset = start + stages * stage_bytes
    staging = []
    stores = staged_stores(kernel)
    single_loads = [(op, at) for op, at in single if isinstance(op, LoadOp)]
    # one region for all stores, as large as the largest store's (each consumer's chunks at the
    # same place), or a region each
    shared = KernelPlan.of(kernel).shared_staging and staging_shareable(stores)
    needed = max(map(staging_bytes, stores), default=0) if shared else sum(map(staging_bytes, stores))
    # (whole-tile staging takes a region of its own: the lowering writes the reused bytes a chunk
    # at a time, so the two never meet)
    reused = not KernelPlan.of(kernel).whole_staging and staging_reuses_single_tiles(
        kernel, [op for op, _ in single_loads]) and needed <= (
        single_loads[-1][1] + buffer_bytes(single_loads[-1][0]) - single_loads[0][1])
    if reused:
        at = single_loads[0][1]
        for op in stores:
            staging.append((op, at))
            at += 0 if shared else staging_bytes(op)
        stores = []
    if shared and stores:
        staging += [(op, align(offset, TILE_ALIGN)) for op in stores]
        offset = align(offset, TILE_ALIGN) + needed
        stores = []
    for op in stores:
        staging.append((op, align(offset, TILE_ALIGN)))
        offset = align(offset, TILE_ALIGN) + staging_bytes(op)
    scratch = col_scratch_bytes(kernel)
    col_scratch = offset if scratch else None
    offset += scratch
    retained = []
    for buffer, size in retention_bytes(kernel).items():
        retained.append((buffer, align(offset, TILE_ALIGN)))
        offset = align(offset, TILE_ALIGN) + size
    groups = tile_stages * len(kernel_load_groups(kernel))
    count = RING_BARRIERS_PER_STAGE * (stages * sum(rings_of(owner, stages) for owner in owners) + groups)
    bound = RING_BARRIERS_PER_STAGE * (stages * sum(rings_of(owner, stages, bound=True) for owner in owners) + groups)
    total = align(offset, TILE_ALIGN) + ALIGN_SLACK
    return SmemPlan(tuple(single), tuple(rings), tuple(staging), count, total, reused, col_scratch,
                    len(producer_fences(kernel)), bound, tuple(retained))


def retention_slot_bytes(layout: SharedTileType) -> int:
    """The bytes of one slot of a tile-retain-sweep buffer: its tile's, rounded up to TILE_ALIGN
    (a swizzled tile's alignment), so every slot starts aligned."""
    return align(layout.num_bytes, TILE_ALIGN)


def retention_bytes(kernel: Operation) -> dict[int, int]:
    """Each retention buffer of tile-retain-sweep (tile.retain's `buffer`) and its bytes."""
    return {op.buffer.value.data: op.slots.value.data * retention_slot_bytes(op.layout)
            for op in kernel.walk() if isinstance(op, RetainOp)}


def rings_of(owner: RingOwner, stages: int, bound: bool = False) -> int:
    """The rings a ring owner's loads make: two where tile-pipeline splits an overlapped loop's
    ring (its `split_ring` decision, once it has laid out the loop's ring: `ring_offset`), else
    one. `bound`: before tile-pipeline decides, as many as it may make: two for a loop whose ring
    could split (split_ring_loads, were it overlapped, which takes 2 stages or more) under an
    @split_ring(1) pin (on the loop, else the kernel) or unpinned where the ring is at most
    SPLIT_RING_STAGES deep, so that the barrier region the plan sizes (SmemPlan.barriers_fit) is
    never too small for the rings the lowering builds."""
    if not isinstance(owner, scf.ForOp):
        return 1
    if "ring_offset" in owner.attributes or not bound:
        return 2 if KernelPlan.splits_ring(owner) else 1
    pin = owner.attributes.get("split_ring")
    if not isinstance(pin, IntegerAttr):
        kernel = owner.parent_op()
        while kernel is not None and not isinstance(kernel, KernelOp):
            kernel = kernel.parent_op()
        pin = kernel.annotations.data.get("split_ring") if isinstance(kernel, KernelOp) else None
    pinned = pin.value.data if isinstance(pin, IntegerAttr) else None
    may_split = pinned == 1 or (pinned is None and stages <= SPLIT_RING_STAGES)
    # an overlapped loop (the only kind that splits) needs a ring of 2 stages or more
    return 2 if may_split and stages >= 2 and not isinstance(split_ring_loads(owner, assume_overlap=True), str) else 1


def producer_fences(kernel: Operation) -> list[FenceOp]:
    """The tile.fence ops the producer passes (in the kernel body and every block around a
    load): each takes a slot of the barrier region after the mbarriers (store-fence flags)."""
    walked: dict[Block, None] = {cast(KernelOp, kernel).body.block: None}
    for op in kernel.walk():
        if isinstance(op, LoadOp):
            block = op.parent_block()
            while block is not None and block is not cast(KernelOp, kernel).body.block:
                walked[block] = None
                parent = block.parent_op()
                block = parent.parent_block() if parent is not None else None
    return [op for op in kernel.walk() if isinstance(op, FenceOp) and op.parent_block() in walked]
