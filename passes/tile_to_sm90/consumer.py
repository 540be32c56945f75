"""The consumers' copy of the kernel body: warpgroups 1..C run everything but the loads on
register fragments, each owning rows row0 = index * R/C .. of every register tile of R rows, or
all of them where the plan replicates that height (row0 = 0; stores and writes to shared memory
of such a tile are the first consumer's alone).

A ring stage is waited for (`full`) where its first load stood (the first use may come before
the last load) and its loads become views of the stage; the stage is freed (`empty`) once the
wgmmas reading it are done: at the end of a loop iteration, or of the output tile for the
kernel-level rings. Each op family's conversion is its own module: compute.py (element-wise,
reductions, broadcasts, masks), mma.py (wgmma and its waits), stores.py (epilogue, vector
stores, tile.to_shared), fences.py; loops whose last mma runs one iteration late are
overlap.py's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import cast

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from tkc.diagnostics import error_at
from tkc.dialects import sm90, tile
from tkc.passes.plan import WARPGROUP_THREADS, KernelPlan, late_tail, padded_rows, register_heights, turn_barrier
from tkc.passes.tile_to_sm90.compute import PATTERNS
from tkc.passes.tile_to_sm90.fences import consumer_fence
from tkc.passes.tile_to_sm90.lowering import KernelLowering
from tkc.passes.tile_to_sm90.mma import accumulation_chain, emit_mma
from tkc.passes.tile_to_sm90.overlap import emit_overlapped_for
from tkc.passes.tile_to_sm90.rings import release, view_stage, wait_stage
from tkc.passes.tile_to_sm90.roles import RoleEmitter
from tkc.passes.tile_to_sm90.shared_memory import Ring
from tkc.passes.tile_to_sm90.stores import emit_recall, emit_retain, emit_store, emit_to_shared


class ConsumerEmitter(RoleEmitter):
    role = tile.Role.CONSUMERS

    def __init__(self, lowering: KernelLowering, block: Block):
        super().__init__(lowering, block)
        self.consumer_index: SSAValue = block.args[0]
        self.first_rows = {
            rows: self.const(0) if lowering.replicated(rows)
            else self.mul(self.consumer_index, self.const(lowering.plan.consumer_rows(rows)))
            for rows in sorted(register_heights(lowering.kernel))
        }
        if any(isinstance(op, scf.ForOp) and KernelPlan.takes_turns(op) for op in lowering.kernel.walk()):
            # the first turn is the first consumer's: the last one hands it over once, and from
            # then on each consumer's issue hands the turn to the next (overlap.py)
            last = self.op(arith.CmpiOp(self.consumer_index, self.const(lowering.consumers - 1), "eq")).results[0]
            handover = Block()
            barrier = self.const(turn_barrier(lowering.consumers, 0), handover)
            self.op(sm90.NamedBarrierArriveOp(barrier, 2 * WARPGROUP_THREADS), handover)
            self.emit_if_then(last, handover, self.block)

    def row0(self, t: Attribute) -> SSAValue:
        """The first row this consumer holds of a register tile or row vector of type `t` (0
        where every consumer holds it whole)."""
        return self.first_rows[cast(tile.ShapedTileType, t).rows]

    def valid_rows(self, t: Attribute, block: Block) -> SSAValue | None:
        """The rows of this consumer's fragment of a register tile or row vector of type `t` that
        are the tile's, from the fragment's first: None where it has no padding rows (a multiple
        of 64 rows, or the band layout), the tile's rows where every consumer holds it whole, else those from its
        first row on (more than the fragment's but in the last consumer, plan.fragment_rows)."""
        rows = cast(tile.ShapedTileType, t).rows
        if padded_rows(rows) == rows or self.lowering.plan.band:
            return None
        if self.lowering.replicated(rows):
            return self.const(rows, block)
        return self.sub(self.const(rows, block), self.row0(t), block)

    @contextmanager
    def writer_of(self, t: Attribute, block: Block) -> Iterator[Block]:
        """Where the writes of a value of type `t` go (a store, its rows of a shared tile): `block`
        where each consumer holds rows of its own; where every consumer holds the same whole
        tile, a block only the first consumer runs."""
        if not self.lowering.replicated(cast(tile.ShapedTileType, t).rows):
            yield block
            return
        first = self.op(arith.CmpiOp(self.consumer_index, self.const(0, block), "eq"), block).results[0]
        guarded = Block()
        yield guarded
        self.emit_if_then(first, guarded, block)

    def slot_position(self, loads: list[tile.LoadOp]) -> tile.LoadOp:
        return loads[0]

    def ring_slot(self, ring: Ring, loads: list[tile.LoadOp], it: SSAValue, block: Block) -> None:
        """Wait until the stage's loads landed; its loads are views of the stage."""
        view_stage(self, ring, loads, wait_stage(self, ring, it, block), block)

    def loaded(self, load: tile.LoadOp, block: Block) -> None:
        """A tile whose rows past an element range's end an mma sums over (tile-mask-tails'
        `zero_past_end`): where the tile reaches past the end, every consumer thread zeroes its
        share of those rows in the stage, fences them for the tensor cores (async proxy), and
        all consumers meet before any wgmma reads the tile."""
        if tile.ZERO_PAST_END not in load.attributes:
            return
        axis = cast(tile.GlobalType, load.tensor.type).rank - 2
        start, end = self.values[load.coords[axis]], self.values[tile.element_ends(load)[axis]]
        rows = cast(tile.SharedTileType, load.result.type).get_shape()[0]
        limit = self.sub(end, start, block)
        partial = self.op(arith.CmpiOp(limit, self.const(rows, block), "slt"), block).results[0]
        zero = Block()
        first = self.op(arith.MaxSIOp(limit, self.const(0, zero)), zero).results[0]
        self.op(sm90.ZeroRowsOp(self.values[load.result], first, WARPGROUP_THREADS * self.lowering.consumers), zero)
        self.op(sm90.FenceProxyAsyncOp(), zero)
        consumers = self.lowering.consumers
        self.op(sm90.NamedBarrierOp(self.const(consumers + 1, zero), WARPGROUP_THREADS * consumers), zero)
        self.emit_if_then(partial, zero, block)

    def finish_tile(self, block: Block) -> None:
        for ring in self.memory.kernel_rings:
            release(self, ring, self.tiles.count, block)

    def finish_branch(self, ring: Ring, it: SSAValue, block: Block) -> None:
        release(self, ring, it, block)  # the branch's wgmmas were waited for (emit_mma)

    def finish_slice(self, loop: scf.ForOp, rest: list[Operation], block: Block) -> None:
        """A stream-K slice's end: a CTA that began inside the tile writes its accumulators (all
        the K loop carries, sums from zero) to its slot and raises its flag; the CTA that began
        the tile waits for each later CTA that ran part of it, adds their slots, and runs the
        rest of the tile (its epilogue) on the sum. Each consumer writes and reads its own rows'
        registers, in register order (sm90.store_partial)."""
        split = self.tiles.split
        assert split is not None
        consumers = self.lowering.consumers
        accumulators = [self.values[result] for result in loop.results]
        registers = [cast(sm90.FragmentType, acc.type).registers_per_thread() for acc in accumulators]
        slot_bytes = consumers * sum(registers) * 4 * WARPGROUP_THREADS
        self.lowering.params.scratch_param(slot_bytes)

        def offsets(cta: SSAValue, into: Block) -> list[SSAValue]:
            """Where this consumer's part of each accumulator lies in the slot of `cta`."""
            mine = self.add(self.mul(cta, self.const(slot_bytes, into), into),
                            self.mul(self.consumer_index, self.const(slot_bytes // consumers, into), into), into)
            mine = self.add(split.slots, mine, into)
            starts = [sum(registers[:k]) * 4 * WARPGROUP_THREADS for k in range(len(registers))]
            return [self.add(mine, self.const(start, into), into) for start in starts]

        def first_consumer(into: Block) -> Block:
            """A block one thread of the first consumer runs, added to `into`."""
            first = self.op(arith.CmpiOp(self.consumer_index, self.const(0, into), "eq"), into).results[0]
            single = sm90.SingleThreadOp("warpgroup")
            guarded = Block()
            guarded.add_op(single)
            self.emit_if_then(first, guarded, into)
            return single.body.block

        all_consumers = WARPGROUP_THREADS * consumers
        leave = Block()
        for acc, offset in zip(accumulators, offsets(split.cta, leave)):
            self.op(sm90.StorePartialOp(acc, split.scratch, offset), leave)
        self.op(sm90.FenceGpuOp(), leave)
        self.op(sm90.NamedBarrierOp(self.const(consumers + 1, leave), all_consumers), leave)
        self.op(sm90.FlagSignalOp(split.scratch, split.cta), first_consumer(leave))
        leave.add_op(scf.YieldOp())

        finish = Block()
        helpers = Block(arg_types=[IndexType(), *(acc.type for acc in accumulators)])
        helper, *sums = helpers.args
        self.op(sm90.FlagWaitOp(split.scratch, helper), first_consumer(helpers))
        self.op(sm90.NamedBarrierOp(self.const(consumers + 1, helpers), all_consumers), helpers)
        added = [self.op(sm90.AddPartialOp(acc, split.scratch, offset), helpers).results[0]
                 for acc, offset in zip(sums, offsets(helper, helpers))]
        helpers.add_op(scf.YieldOp(*added))
        after = self.add(split.cta, self.const(1, finish), finish)
        end = self.add(split.last_helper, self.const(1, finish), finish)
        collect = self.op(scf.ForOp(after, end, self.const(1, finish), accumulators, helpers), finish)
        for result, total in zip(loop.results, collect.results):
            self.values[result] = total
        for op in rest:
            self.emit_op(op, finish)
        finish.add_op(scf.YieldOp())
        self.op(scf.IfOp(split.begins_inside, [], Region(leave), Region(finish)), block)

    def yielded(self, op: scf.IfOp, operands: Sequence[SSAValue]) -> list[SSAValue]:
        return [self.values[v] for v in operands]

    def emit_for(self, loop: scf.ForOp, block: Block) -> None:
        rings = self.memory.rings_of(loop)
        tail = late_tail(loop) if rings and KernelPlan.overlaps(loop) else None
        if rings and tail is not None:
            emit_overlapped_for(self, loop, rings, tail, block)
            return
        assert len(rings) <= 1, "tile-pipeline splits only overlapped loops' rings"
        ring = rings[0] if rings else None
        lb, ub, step = self.bounds(loop, block)
        init = [self.values[v] for v in loop.iter_args]
        counts = self.start_loop_counts(loop)
        arg_types = [self.lowering.fragment_type(a.type) for a in loop.body.block.args[1:]]
        body = Block(arg_types=[IndexType(), *arg_types, *(c.type for c in counts)])
        new_loop = scf.ForOp(lb, ub, step, [*init, *counts], body)
        self.op(new_loop, block)
        for arg, new_arg in zip(loop.body.block.args, body.args):
            self.values[arg] = new_arg
        self.bind_counts(loop, body.args[len(loop.body.block.args):])
        it = self.iteration(loop, body.args[0], body) if ring else None
        # one wgmma group in flight frees a stage one iteration late: with a one-stage ring the
        # next iteration would wait for the stage its own release depends on
        chain = accumulation_chain(loop) if ring is not None and ring.stages > 1 else None
        if chain is not None:
            new_loop.attributes["wgmma_in_flight"] = StringAttr(
                "one group: the loop only accumulates (acc = mma(a, b, acc)), so each iteration waits for the "
                "previous wgmma group and frees its stage, and the tensor cores never wait on a barrier"
            )
        for op in loop.body.block.ops:
            if isinstance(op, tile.LoadOp):
                if ring is not None and it is not None and op is self.slot_position(ring.loads):
                    self.location = op.location  # the stage's ops point at the load
                    self.ring_slot(ring, ring.loads, it, body)
                self.loaded(op, body)
                continue
            if chain is not None and op is chain:
                emit_mma(self, chain, body, pending=1)
                continue
            if isinstance(op, scf.YieldOp):
                if ring is not None and it is not None:
                    self._release_after_mma(ring, it, chain is not None, body)
                body.add_op(scf.YieldOp(*(self.values[v] for v in op.operands), *self.carried_counts(loop)))
                continue
            self.emit_op(op, body)
        for old, new in zip(loop.results, new_loop.results):
            self.values[old] = new
        self.end_loop_counts(loop, new_loop.results[len(loop.results):], block)
        if chain is not None and ring is not None:
            # the last group is still in flight: wait for it, then free its stage
            yield_op = loop.body.block.last_op
            assert isinstance(yield_op, scf.YieldOp)
            index = next(i for i, v in enumerate(yield_op.operands) if v is chain.result)
            final = self.op(sm90.WgmmaWaitOp(new_loop.results[index], 0), block).results[0]
            self.values[loop.results[index]] = final
            trips = self.trip_count(loop, block)
            last = self.sub(self.add(self.entries[loop], trips, block), self.const(1, block), block)
            ran = self.op(arith.CmpiOp(trips, self.const(0, block), "ugt"), block).results[0]
            guarded = Block()
            release(self, ring, last, guarded)
            self.emit_if_then(ran, guarded, block)

    def _release_after_mma(self, ring: Ring, it: SSAValue, deferred: bool, block: Block) -> None:
        """Free the stage the finished wgmmas read: this iteration's, or with a deferred wait
        (one group left in flight) the previous iteration's, from the second iteration on."""
        if not deferred:
            release(self, ring, it, block)
            return
        assert ring.loop is not None
        later = self.op(arith.CmpiOp(it, self.entries[ring.loop], "ugt"), block).results[0]
        guarded = Block()
        release(self, ring, self.sub(it, self.const(1, guarded), guarded), guarded)
        self.emit_if_then(later, guarded, block)

    def emit_if(self, op: scf.IfOp, block: Block) -> None:
        """The consumers' copy of an if: a branch that loads waits for its stage of the if's ring
        where its first load stands and frees it at its end; the if yields its values and the
        ring counts it carries (roles.py), the same on both paths as the producer's."""
        carried = self.carried_counts(op)
        regions = []
        for region in (op.true_region, op.false_region):
            if not region.blocks and not carried:
                regions.append(Region())
                continue
            new_block = Block()
            self.emit_branch(op, region, new_block, carried)
            regions.append(Region(new_block))
        result_types = [*(self.lowering.fragment_type(r.type) for r in op.results), *(c.type for c in carried)]
        new_if = scf.IfOp(self.values[op.cond], result_types, regions[0], regions[1])
        self.mark_mirrored(op, new_if)
        self.op(new_if, block)
        for old, new in zip(op.results, new_if.results):
            self.values[old] = new
        self.bind_counts(op, new_if.results[len(op.results):])

    def emit_fence(self, op: tile.FenceOp, block: Block) -> None:
        consumer_fence(self, op, self.consumer_index, block)

    def emit_compute(self, op: Operation, block: Block) -> None:
        if isinstance(op, tile.MmaOp):
            emit_mma(self, op, block)
            return
        if isinstance(op, tile.StoreOp):
            emit_store(self, op, block)
            return
        if isinstance(op, tile.ToSharedOp):
            emit_to_shared(self, op, block)
            return
        if isinstance(op, tile.RetainOp):
            emit_retain(self, op, block)
            return
        if isinstance(op, tile.RecallOp):
            emit_recall(self, op, block)
            return
        pattern = PATTERNS.get(type(op))
        if pattern is None:
            raise error_at(op, f"the GPU backend does not support {op.name} here yet")
        new = pattern(self, op, block)
        self.op(new, block)
        for old, result in zip(op.results, new.results):
            self.values[old] = result
