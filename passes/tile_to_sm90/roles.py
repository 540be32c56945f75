"""What the producer's and the consumers' copies of a kernel body share: the walk over the
output tiles, the index math, and the small builders every op family uses.

A role emitter copies the tile kernel's body into one role's region, op by op, in program
order, keeping the tile value → lowered value map. The walk over output tiles is the same for
both roles (they must agree on the tile and on each ring's iteration count `it`): one tile per
CTA at the block indices (the plan's `heavy_first` axis reversed), or with `persistent` a loop
over tiles t = blockIdx.x, += gridDim.x in grouped order (or, with a `heavy_first` axis, that
axis slowest and reversed; with a `table_first` axis, that axis slowest), carrying the tile
count and each loop ring's count across tiles. What a role does with loads, loops, ifs, fences
and compute is its subclass's (producer.py, consumer.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, LocationAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from tkc.dialects import sm90, tile
from tkc.passes.plan import WHOLE_AXIS
from tkc.passes.tile_to_sm90.launch_abi import dim_name
from tkc.passes.tile_to_sm90.lowering import KernelLowering
from tkc.passes.tile_to_sm90.shared_memory import Ring
from tkc.passes.warp_roles import ROLE


@dataclass
class TileWalk:
    """Where the role stands in the walk over output tiles."""

    block_ids: list[SSAValue]
    """The current tile's block index along each grid axis."""
    count: SSAValue
    """How many tiles this CTA ran before the current one (a kernel-level ring's `it`)."""
    rank: SSAValue | None = None
    """The CTA's rank in its cluster (clusters only)."""
    split: KSlice | None = None
    """The share of the tile's K iterations this CTA runs (stream-K only)."""


@dataclass
class KSlice:
    """A stream-K CTA's slice of one tile: K iterations [begin, end) of the tile's `units`
    (its trip count, at least 1 so a tile without iterations is still one unit of work)."""

    cta: SSAValue
    """This CTA (blockIdx.x), the slot of the partial sum it leaves where it began inside the tile."""
    begins_inside: SSAValue
    """Whether the slice starts past the tile's first iteration: the CTA leaves its partial sum
    and flag for the CTA that began the tile, and does not finish it."""
    last_helper: SSAValue
    """The last CTA that runs iterations of this tile: the CTAs after this one up to it left
    partial sums this one adds before it finishes the tile (none where it is this CTA)."""
    scratch: SSAValue
    """The scratch memory: one u32 flag per CTA, then the partial-sum slots from `slots` bytes on."""
    slots: SSAValue


class RoleEmitter(ABC):
    """Emits one role's copy of the kernel body into `block`."""

    role: tile.Role
    """The role this emitter copies the body for (tile-warp-specialize's roles say which ops)."""

    def __init__(self, lowering: KernelLowering, block: Block):
        self.lowering = lowering
        self.memory = lowering.memory
        self.block = block
        self.values: dict[SSAValue, SSAValue] = {}
        self.location: LocationAttr = lowering.kernel.location
        self.walk: TileWalk | None = None
        self.k_bounds: dict[scf.ForOp, tuple[SSAValue, SSAValue]] = {}
        """Iteration bounds that replace a loop's own (a stream-K slice of the K loop)."""
        self.counts: dict[Ring, SSAValue] = {}
        """Each loop's and if's ring count `it` where the copy stands: the stages the role has
        handled so far, which every enclosing loop and if carries, and the tile walk across tiles."""
        self.entries: dict[scf.ForOp, SSAValue] = {}
        """The count of each loop's own ring when the loop starts."""
        self.smem_base = self.op(sm90.SmemBaseOp()).results[0]
        self.rings = self.memory.ring_values(self.smem_base, self.block)
        self.dims = {name: self.op(sm90.DimParamOp(f"dim_{name}")).results[0] for name in lowering.symbolic_dims}

    @property
    def tiles(self) -> TileWalk:
        assert self.walk is not None, "the tile walk starts after the kernel's prologue"
        return self.walk

    # ----- builders

    def const(self, value: int, block: Block | None = None) -> SSAValue:
        constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
        (block or self.block).add_op(constant)
        return constant.result

    def op(self, op: Operation, block: Block | None = None) -> Operation:
        op.location = self.location  # errors found later still point at the .tk construct
        (block or self.block).add_op(op)
        return op

    def add(self, lhs: SSAValue, rhs: SSAValue, block: Block | None = None) -> SSAValue:
        return self.op(arith.AddiOp(lhs, rhs), block).results[0]

    def sub(self, lhs: SSAValue, rhs: SSAValue, block: Block | None = None) -> SSAValue:
        return self.op(arith.SubiOp(lhs, rhs), block).results[0]

    def mul(self, lhs: SSAValue, rhs: SSAValue, block: Block | None = None) -> SSAValue:
        return self.op(arith.MuliOp(lhs, rhs), block).results[0]

    def div(self, lhs: SSAValue, rhs: SSAValue, block: Block | None = None) -> SSAValue:
        return self.op(arith.DivUIOp(lhs, rhs), block).results[0]

    def rem(self, lhs: SSAValue, rhs: SSAValue, block: Block | None = None) -> SSAValue:
        return self.op(arith.RemUIOp(lhs, rhs), block).results[0]

    def emit_if_then(self, condition: SSAValue, then: Block, block: Block) -> None:
        """`scf.if condition` without results at the end of `block`, running the ops of `then`."""
        then.add_op(scf.YieldOp())
        self.op(scf.IfOp(condition, [], Region(then)), block)

    # ----- the body, once per output tile

    def emit_kernel_body(self) -> None:
        lowering = self.lowering
        kernel_ops = list(lowering.kernel.body.block.ops)
        grid_at = kernel_ops.index(lowering.grid_op)
        prologue, per_tile = kernel_ops[:grid_at], kernel_ops[grid_at + 1 :]
        for op in prologue:
            self.emit_op(op, self.block)
        extents = [self.values[v] for v in lowering.grid_op.extents]
        if lowering.plan.stream_k:
            self._emit_stream_k_walk(per_tile, extents)
            return
        if lowering.plan.persistent:
            self._emit_persistent_loop(per_tile, extents)
            return
        block_ids: list[SSAValue] = [self.op(sm90.BlockIdOp(axis)).results[0] for axis in range(len(extents))]
        axis = lowering.plan.heavy_first
        if axis >= 0:
            # the planner's heavy-first order: block b of the axis computes tile (extent - 1 - b)
            last = self.sub(self.op(sm90.GridDimOp(axis)).results[0], self.const(1))
            block_ids[axis] = self.sub(last, block_ids[axis])
        count = self.const(0)
        self.walk = TileWalk(block_ids, count)
        self.counts = {ring: self.const(0) for ring in self.memory.counted_rings}
        self.emit_tile(per_tile, self.block)

    def _emit_persistent_loop(self, per_tile: list[Operation], extents: list[SSAValue]) -> None:
        num_tiles = extents[0]
        for extent in extents[1:]:
            num_tiles = self.mul(num_tiles, extent)
        start: SSAValue = self.op(sm90.BlockIdOp(0)).results[0]
        step: SSAValue = self.op(sm90.GridDimOp(0)).results[0]
        cluster = self.lowering.cluster
        rank = None
        if cluster > 1:
            # a cluster walks `cluster` consecutive tiles along axis 0; its rank picks one of them
            size = self.const(cluster)
            rank = self.op(sm90.ClusterRankOp()).results[0]
            start = self.div(start, size)
            step = self.div(step, size)
            extents = [self.op(arith.CeilDivUIOp(extents[0], size)).results[0], *extents[1:]]
            num_tiles = extents[0]
            for extent in extents[1:]:
                num_tiles = self.mul(num_tiles, extent)
        rings = self.memory.counted_rings
        carried = [self.const(0)] + [self.const(0) for _ in rings]
        body = Block(arg_types=[IndexType()] * (1 + len(carried)))
        self.op(scf.ForOp(start, num_tiles, step, carried, body))
        tile_index, tile_count, *ring_bases = body.args
        block_ids = self._tile_coordinates(tile_index, extents, body)
        if rank is not None:
            paired = self.mul(block_ids[0], self.const(cluster, body), body)
            block_ids[0] = self.add(paired, rank, body)
        self.walk = TileWalk(block_ids, tile_count, rank)
        self.counts = dict(zip(rings, ring_bases))
        self.emit_tile(per_tile, body)
        next_counts = [self.add(tile_count, self.const(1, body), body), *(self.counts[ring] for ring in rings)]
        body.add_op(scf.YieldOp(*next_counts))

    def _emit_stream_k_walk(self, per_tile: list[Operation], extents: list[SSAValue]) -> None:
        """Stream-K for the last partial wave: of T tiles on P CTAs, the T div P whole waves run
        whole tiles, tile c + w P on CTA c in grouped order; the K iterations of the T mod P
        tiles left form one sequence (tile by tile), CTA c running units [c U, (c + 1) U),
        U = ceildiv(those tiles x iterations, P), as slices of consecutive tiles. Only the
        last wave is split because slices of different tiles run at different K, so they share
        no A or B panel in L2: a 128x256 tile's K step alone moves too many bytes per flop to
        keep the tensor cores busy from memory (on the H200, stream-K over the last two waves
        ran 4096^3 at 0.93x cuBLAS, one tile per CTA 1.00x). Both roles walk the same slices (their K loops run the slice's iterations,
        their rings count them); what a slice's end means for the tile is the consumers'
        (finish_slice)."""
        loop = k_loop(per_tile)
        for op in _backward_slice([loop.lb, loop.ub, loop.step], per_tile):
            self.emit_op(op, self.block)  # the trip count is every tile's (tile-occupancy-plan checked)
        iterations = self.trip_count(loop, self.block)
        units = self.op(arith.MaxUIOp(iterations, self.const(1))).results[0]  # a tile without iterations is one unit
        num_tiles = extents[0]
        for extent in extents[1:]:
            num_tiles = self.mul(num_tiles, extent)
        cta: SSAValue = self.op(sm90.BlockIdOp(0)).results[0]
        ctas: SSAValue = self.op(sm90.GridDimOp(0)).results[0]
        whole_waves = self.div(num_tiles, ctas)
        whole_tiles = self.mul(whole_waves, ctas)
        total = self.mul(self.sub(num_tiles, whole_tiles), units)
        share = self.op(arith.CeilDivUIOp(total, ctas)).results[0]
        first_unit = self.op(arith.MinUIOp(self.mul(cta, share), total)).results[0]
        end_unit = self.op(arith.MinUIOp(self.add(first_unit, share), total)).results[0]
        first_tile = self.div(first_unit, units)
        end_tile = self.op(arith.CeilDivUIOp(end_unit, units)).results[0]
        walk_end = self.add(whole_waves, self.sub(end_tile, first_tile))
        scratch = self.op(sm90.ScratchParamOp(self.lowering.params.scratch_param())).results[0]
        # the flags, one u32 per CTA, rounded up to the 16 bytes of a partial sum's vector access
        slots = self.mul(self.op(arith.CeilDivUIOp(ctas, self.const(4))).results[0], self.const(16))
        rings = self.memory.counted_rings
        carried = [self.const(0)] + [self.const(0) for _ in rings]
        body = Block(arg_types=[IndexType()] * (1 + len(carried)))
        self.op(scf.ForOp(self.const(0), walk_end, self.const(1), carried, body))
        step, tile_count, *ring_bases = body.args

        def select(condition: SSAValue, if_true: SSAValue, if_false: SSAValue) -> SSAValue:
            return self.op(arith.SelectOp(condition, if_true, if_false), body).results[0]

        whole = self.op(arith.CmpiOp(step, whole_waves, "ult"), body).results[0]
        # the stream-K part's tile (wrapped where the step is a whole wave's: select discards it)
        split_tile = self.sub(self.add(first_tile, step, body), whole_waves, body)
        tile_start = self.mul(split_tile, units, body)
        tile_end = self.add(tile_start, units, body)
        begin = self.sub(self.op(arith.MaxUIOp(first_unit, tile_start), body).results[0], tile_start, body)
        end = self.sub(self.op(arith.MinUIOp(end_unit, tile_end), body).results[0], tile_start, body)
        zero = self.const(0, body)
        begin = select(whole, zero, begin)
        end = select(whole, units, end)
        self.k_bounds[loop] = (self.op(arith.MinUIOp(begin, iterations), body).results[0],
                               self.op(arith.MinUIOp(end, iterations), body).results[0])
        tile_index = select(whole, self.add(cta, self.mul(step, ctas, body), body), self.add(whole_tiles, split_tile, body))
        begins_inside = self.op(arith.CmpiOp(begin, zero, "ugt"), body).results[0]
        # (share is 0 where every tile is a whole wave's; the select then discards the quotient)
        divisor = self.op(arith.MaxUIOp(share, self.const(1, body)), body).results[0]
        last_helper = select(whole, cta, self.div(self.sub(tile_end, self.const(1, body), body), divisor, body))
        split = KSlice(cta, begins_inside, last_helper, scratch, slots)
        self.walk = TileWalk(self._tile_coordinates(tile_index, extents, body), tile_count, split=split)
        self.counts = dict(zip(rings, ring_bases))
        self.emit_tile(per_tile, body)
        next_counts = [self.add(tile_count, self.const(1, body), body), *(self.counts[ring] for ring in rings)]
        body.add_op(scf.YieldOp(*next_counts))

    def _tile_coordinates(self, t: SSAValue, extents: list[SSAValue], block: Block) -> list[SSAValue]:
        """Block indices of tile t: grouped order over the first two axes (group_m rows of tiles
        at a time sweep the columns), the third axis slowest; with a heavy-first axis, that axis
        slowest and reversed; with a table-first axis, that axis slowest."""
        plan = self.lowering.plan
        if plan.heavy_first >= 0:
            return self._slowest_axis_coordinates(t, extents, plan.heavy_first, block, reversed_=True)
        if plan.table_first >= 0:
            return self._slowest_axis_coordinates(t, extents, plan.table_first, block, reversed_=False)
        if len(extents) == 1:
            return [t]
        rows, cols = extents[0], extents[1]
        plane = self.mul(rows, cols, block)
        z = self.div(t, plane, block)
        t2 = self.rem(t, plane, block)
        if self.lowering.plan.group_m == WHOLE_AXIS:
            return [self.rem(t2, rows, block), self.div(t2, rows, block), z][: len(extents)]
        group_m = self.const(self.lowering.plan.group_m, block)
        group_size = self.mul(group_m, cols, block)
        group = self.div(t2, group_size, block)
        first_row = self.mul(group, group_m, block)
        rows_left = self.sub(rows, first_row, block)
        group_rows = self.op(arith.MinUIOp(rows_left, group_m), block).results[0]
        in_group = self.rem(t2, group_size, block)
        i = self.add(first_row, self.rem(in_group, group_rows, block), block)
        j = self.div(in_group, group_rows, block)
        return [i, j, z][: len(extents)]

    def _slowest_axis_coordinates(self, t: SSAValue, extents: list[SSAValue], slowest: int, block: Block,
                                  reversed_: bool) -> list[SSAValue]:
        """Block indices of tile t with one axis slowest (heavy_first: from its last index down;
        table_first: from 0 up, the table's order), the other axes in grid order below it: the
        CTAs' strided shares (t = blockIdx.x, += gridDim.x) then hold as many tiles of each length
        each, the longest first, so no CTA ends long after the others (with the heavy axis
        fastest, a stride of 132 SMs puts two fixed lengths in each share)."""
        others = [axis for axis in range(len(extents)) if axis != slowest]
        rest = self.const(1, block)
        for axis in others:
            rest = self.mul(rest, extents[axis], block)
        coordinates: list[SSAValue] = [t] * len(extents)
        coordinates[slowest] = self.div(t, rest, block)
        if reversed_:
            last = self.sub(extents[slowest], self.const(1, block), block)
            coordinates[slowest] = self.sub(last, coordinates[slowest], block)
        remainder = self.rem(t, rest, block)
        for position, axis in enumerate(others):
            if position == len(others) - 1:
                coordinates[axis] = remainder
            else:
                coordinates[axis] = self.rem(remainder, extents[axis], block)
                remainder = self.div(remainder, extents[axis], block)
        return coordinates

    def emit_tile(self, ops: list[Operation], block: Block) -> None:
        for position, op in enumerate(ops):
            if isinstance(op, tile.LoadOp):
                self.location = op.location  # the stage's ops point at the load
                for ring in self.memory.kernel_rings:
                    if op is self.slot_position(ring.loads):
                        self.ring_slot(ring, ring.loads, self.tiles.count, block)
                self.loaded(op, block)
                continue
            self.emit_op(op, block)
            if self.tiles.split is not None and isinstance(op, scf.ForOp) and op in self.k_bounds:
                self.finish_slice(op, ops[position + 1:], block)
                break
        self.finish_tile(block)

    def finish_slice(self, loop: scf.ForOp, rest: list[Operation], block: Block) -> None:
        """After a stream-K slice of the K loop: the ops that follow it (the consumers finish the
        tile or leave their partial sum, consumer.py)."""
        for op in rest:
            self.emit_op(op, block)

    def bounds(self, loop: scf.ForOp, block: Block) -> tuple[SSAValue, SSAValue, SSAValue]:
        """The lowered loop's lb, ub and step: the loop's own, or over a stream-K slice's
        iterations [begin, end), lb + begin x step .. lb + end x step."""
        lb, ub, step = (self.values[v] for v in (loop.lb, loop.ub, loop.step))
        if loop not in self.k_bounds:
            return lb, ub, step
        begin, end = self.k_bounds[loop]
        return self.add(lb, self.mul(begin, step, block), block), self.add(lb, self.mul(end, step, block), block), step

    def trip_count(self, loop: scf.ForOp, block: Block) -> SSAValue:
        """How many iterations the loop runs: none where its lower bound is past its upper one
        (`for k in 384 .. ceildiv(N, 128)` at N = 300), which `ub - lb` alone would wrap to a
        huge count, and with it the ring's phases (a hang)."""
        lb, ub, step = self.bounds(loop, block)
        span = self.op(arith.MaxSIOp(self.sub(ub, lb, block), self.const(0, block)), block).results[0]
        return self.op(arith.CeilDivUIOp(span, step), block).results[0]

    def iteration(self, loop: scf.ForOp, iv: SSAValue, block: Block) -> SSAValue:
        """The ring count `it` of the loop's iteration `iv`."""
        lb, _, step = self.bounds(loop, block)
        local = self.div(self.sub(iv, lb, block), step, block)
        return self.add(self.entries[loop], local, block)

    # ----- ring counts through loops and ifs

    def carried_rings(self, op: scf.ForOp | scf.IfOp) -> list[Ring]:
        """The rings whose counts the copy of `op` carries (a loop's block arguments and results,
        an if's results): those of the loops and ifs nested in it, and an if's own. A loop's own
        count is computed, not carried: its entry plus the iterations (`iteration`)."""
        own = self.memory.ring_of(op)
        return ([own] if own is not None and isinstance(op, scf.IfOp) else []) + self.memory.rings_within(op)

    def start_loop_counts(self, loop: scf.ForOp) -> list[SSAValue]:
        """Record where the loop's own ring starts; the initial values of the counts it carries."""
        own = self.memory.ring_of(loop)
        if own is not None:
            self.entries[loop] = self.counts[own]  # a split ring's parts count alike
        return [self.counts[ring] for ring in self.carried_rings(loop)]

    def bind_counts(self, op: scf.ForOp | scf.IfOp, values: Sequence[SSAValue]) -> None:
        """The counts `op` carries are now `values` (a loop body's arguments, `op`'s results)."""
        rings = self.carried_rings(op)
        assert len(values) == len(rings)
        self.counts.update(zip(rings, values))

    def carried_counts(self, op: scf.ForOp | scf.IfOp) -> list[SSAValue]:
        """The values of the counts `op` carries where the copy stands (for its yields)."""
        return [self.counts[ring] for ring in self.carried_rings(op)]

    def end_loop_counts(self, loop: scf.ForOp, results: Sequence[SSAValue], block: Block) -> None:
        """After the loop: the counts it carried are its results; its own ring ran its trips."""
        self.bind_counts(loop, results)
        own = self.memory.rings_of(loop)
        # only an enclosing loop or if, or the walk over a persistent CTA's tiles, reads it on
        if own and (self.lowering.plan.persistent or loop.parent_op() is not self.lowering.kernel):
            count = self.add(self.entries[loop], self.trip_count(loop, block), block)
            self.counts.update((ring, count) for ring in own)

    def mark_mirrored(self, op: scf.IfOp, copy: scf.IfOp) -> None:
        """Number the role's copy of an if whose branches handle ring stages as the if is
        numbered among the kernel's ifs, the same in both roles (sm90.MIRRORED_IF)."""
        if self.carried_rings(op):
            ifs = [other for other in self.lowering.kernel.walk() if isinstance(other, scf.IfOp)]
            copy.attributes[sm90.MIRRORED_IF] = IntegerAttr(ifs.index(op), 64)

    def emit_branch(self, op: scf.IfOp, region: Region, block: Block, carried: Sequence[SSAValue]) -> None:
        """One branch of if `op` into `block`, from the counts at the if (`carried`): its ops, its
        ring stage when it loads, and a yield of the values the role's copy carries (`yielded`)."""
        self.bind_counts(op, carried)
        ring = self.memory.ring_of(op)
        loads = ring.loads_in(region.block) if ring is not None and region.blocks else []
        for inner in region.block.ops if region.blocks else ():
            if isinstance(inner, tile.LoadOp):
                if ring is not None and inner is self.slot_position(loads):
                    self.location = inner.location  # the stage's ops point at the load
                    self.ring_slot(ring, loads, self.counts[ring], block)
                self.loaded(inner, block)
            elif isinstance(inner, scf.YieldOp):
                continue
            else:
                self.emit_op(inner, block)
        if ring is not None and loads:
            self.finish_branch(ring, self.counts[ring], block)
            self.counts[ring] = self.add(self.counts[ring], self.const(1, block), block)
        yield_op = region.block.last_op if region.blocks else None
        yielded = self.yielded(op, yield_op.operands if isinstance(yield_op, scf.YieldOp) else ())
        block.add_op(scf.YieldOp(*yielded, *self.carried_counts(op)))

    # ----- ops both roles copy

    def runs(self, op: Operation) -> bool:
        return self.lowering.roles.of[op] in (self.role, tile.Role.BOTH)

    def emit_op(self, op: Operation, block: Block) -> None:
        self.location = op.location
        if not self.runs(op) or isinstance(op, tile.ReturnOp | tile.GridOp) or op in self.lowering.checked_at_launch:
            return
        if isinstance(op, tile.DimOp):
            dim = dim_name(op)
            self.values[op.result] = self.dims[dim] if isinstance(dim, str) else self.const(dim, block)
            return
        if isinstance(op, tile.BlockIdOp):
            self.values[op.result] = self.tiles.block_ids[op.axis.value.data]
            return
        if isinstance(op, tile.LoadScalarOp):
            self.values[op.result] = self.load_scalar(op, block)
            return
        if isinstance(op, scf.ForOp):
            self.emit_for(op, block)
            return
        if isinstance(op, scf.IfOp):
            self.emit_if(op, block)
            return
        if isinstance(op, tile.FenceOp):
            self.emit_fence(op, block)
            return
        if op.dialect_name() in ("arith", "math"):
            clone = op.clone_without_regions(value_mapper=self.values, clone_operands=True)
            clone.attributes.pop(ROLE, None)  # said which copies hold the op; each copy is one role's
            block.add_op(clone)
            for old, new in zip(op.results, clone.results):
                self.values[old] = new
            return
        self.emit_compute(op, block)

    def load_scalar(self, op: tile.LoadScalarOp, block: Block) -> SSAValue:
        """The element of a row-major i32 or f32 tensor at `op`'s indices, read by each thread that
        needs it (the producer's one thread for coordinates, every consumer thread for compute)."""
        dims = cast(tile.GlobalType, op.tensor.type).get_dims()
        offset: SSAValue | None = None
        outside: SSAValue | None = None
        for dim, index in zip(dims, op.indices):
            size = self.dims[dim] if isinstance(dim, str) else self.const(dim, block)
            value = self.values[index]
            offset = value if offset is None else self.add(self.mul(offset, size, block), value, block)
            past = self.op(arith.CmpiOp(value, size, "uge"), block).results[0]
            outside = past if outside is None else self.op(arith.OrIOp(outside, past), block).results[0]
        assert offset is not None and outside is not None
        # an index outside the tensor would read other memory: the interpreter's error, a trap here
        self.trap_if(outside, block)
        base = self.op(sm90.PointerParamOp(self.lowering.params.pointer(op.tensor)), block).results[0]
        result = self.op(sm90.LoadGlobalScalarOp(base, offset, op.result.type), block).results[0]
        if isinstance(op.result.type, IndexType):
            # a negative index (an index is unsigned) likewise
            self.trap_if(self.op(arith.CmpiOp(result, self.const(1 << 31, block), "uge"), block).results[0], block)
        return result

    def trap_if(self, condition: SSAValue, block: Block) -> None:
        """Stop the kernel (sm90.trap, a failed launch) where `condition` holds: an access broke a
        rule of the language that only the run time can check."""
        trap = Block()
        self.op(sm90.TrapOp(), trap)
        self.emit_if_then(condition, trap, block)

    # ----- what each role does differently

    @abstractmethod
    def slot_position(self, loads: list[tile.LoadOp]) -> tile.LoadOp:
        """The one of a stage's `loads` (all in one block) where the role handles the stage."""

    @abstractmethod
    def ring_slot(self, ring: Ring, loads: list[tile.LoadOp], it: SSAValue, block: Block) -> None:
        """The role's side of ring iteration `it`'s stage of `loads` (issue it, or wait for it)."""

    @abstractmethod
    def finish_branch(self, ring: Ring, it: SSAValue, block: Block) -> None:
        """What the role does at the end of a branch that filled stage `it` of its if's ring."""

    @abstractmethod
    def yielded(self, op: scf.IfOp, operands: Sequence[SSAValue]) -> list[SSAValue]:
        """The values the role's copy of if `op` yields of a branch's yield `operands`."""

    def loaded(self, load: tile.LoadOp, block: Block) -> None:
        """What the role does where `load` stood, once its stage is waited for (nothing, but
        the consumers zero rows past an element range's end)."""

    @abstractmethod
    def finish_tile(self, block: Block) -> None:
        """What the role does once an output tile's ops are emitted."""

    @abstractmethod
    def emit_for(self, loop: scf.ForOp, block: Block) -> None:
        """The role's copy of a loop of the kernel body."""

    @abstractmethod
    def emit_if(self, op: scf.IfOp, block: Block) -> None:
        """The role's copy of an if of the kernel body."""

    @abstractmethod
    def emit_fence(self, op: tile.FenceOp, block: Block) -> None:
        """The role's side of a store fence (fences.py)."""

    @abstractmethod
    def emit_compute(self, op: Operation, block: Block) -> None:
        """A tile op other than loads, loops, ifs, fences and index math."""


def k_loop(per_tile: list[Operation]) -> scf.ForOp:
    """The one kernel-level loop of a stream-K tile (tile-occupancy-plan's stream_k_obstacle)."""
    (loop,) = (op for op in per_tile if isinstance(op, scf.ForOp))
    return loop


def _backward_slice(values: list[SSAValue], ops: list[Operation]) -> list[Operation]:
    """The ops of `ops` that `values` are computed from, in program order."""
    members, needed = set(ops), set[Operation]()
    work = [v.owner for v in values if isinstance(v.owner, Operation)]
    while work:
        op = work.pop()
        if op in needed or op not in members:
            continue
        needed.add(op)
        work.extend(v.owner for v in op.operands if isinstance(v.owner, Operation))
    return [op for op in ops if op in needed]
