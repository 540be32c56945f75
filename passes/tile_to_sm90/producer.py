"""The producer's copy of the kernel body: one elected thread of warpgroup 0 runs the ops
tile-warp-specialize gave it (the loads, the fences, and the index math, loops and ifs their
coordinates need, and every loop and if that loads, under the consumers' bounds and conditions), and issues each ring stage as TMA boxes into shared memory where the
stage's last load stood (by then every load's coordinates are computed). Its loops and ifs
carry only the scalars named by their `producer_values` and the ring counts (roles.py); the
tiles are the consumers'.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue

from tkc.dialects import tile
from tkc.passes.tile_to_sm90.fences import producer_fence
from tkc.passes.tile_to_sm90.rings import acquire_stage
from tkc.passes.tile_to_sm90.roles import RoleEmitter
from tkc.passes.tile_to_sm90.shared_memory import Ring
from tkc.passes.tile_to_sm90.tma import issue_load

class ProducerEmitter(RoleEmitter):
    role = tile.Role.PRODUCER

    def slot_position(self, loads: list[tile.LoadOp]) -> tile.LoadOp:
        return loads[-1]

    def ring_slot(self, ring: Ring, loads: list[tile.LoadOp], it: SSAValue, block: Block) -> None:
        """Acquire the stage (the consumers freed it; expect its loads' bytes), issue its loads."""
        stage, full = acquire_stage(self, ring, it, ring.tx_bytes(loads), block)
        for load in loads:
            issue_load(self, load, ring.buffers[load], stage, full, block)

    def finish_tile(self, block: Block) -> None:
        pass  # the consumers free the stages

    def finish_branch(self, ring: Ring, it: SSAValue, block: Block) -> None:
        pass  # the consumers free the stage

    def yielded(self, op: scf.IfOp, operands: Sequence[SSAValue]) -> list[SSAValue]:
        return [self.values[operands[i]] for i in self.lowering.roles.producer_values[op]]

    def emit_for(self, loop: scf.ForOp, block: Block) -> None:
        """The producer's copy of a loop: its loads' ring slot, its index math, its fences, the
        loops and ifs nested in it that load, the loop-carried scalars the coordinates need
        (tile-warp-specialize's `producer_values`) and the ring counts of the nested rings."""
        rings = self.memory.rings_of(loop)
        scalars = self.lowering.roles.producer_values[loop]
        lb, ub, step = self.bounds(loop, block)
        old = loop.body.block
        counts = self.start_loop_counts(loop)
        body = Block(arg_types=[IndexType(), *(old.args[1 + i].type for i in scalars), *(c.type for c in counts)])
        new_loop = scf.ForOp(lb, ub, step, [*(self.values[loop.iter_args[i]] for i in scalars), *counts], body)
        self.op(new_loop, block)
        self.values[old.args[0]] = body.args[0]
        for i, arg in zip(scalars, body.args[1:]):
            self.values[old.args[1 + i]] = arg
        self.bind_counts(loop, body.args[1 + len(scalars):])
        it = self.iteration(loop, body.args[0], body) if rings else None
        slots = {self.slot_position(ring.loads): ring for ring in rings}
        for op in old.ops:
            if it is not None and op in slots:
                self.location = op.location  # the stage's ops point at the load
                self.ring_slot(slots[op], slots[op].loads, it, body)
            elif isinstance(op, scf.YieldOp):
                body.add_op(scf.YieldOp(*(self.values[op.operands[i]] for i in scalars), *self.carried_counts(loop)))
            elif not isinstance(op, tile.LoadOp):
                self.emit_op(op, body)
        for i, result in zip(scalars, new_loop.results):
            self.values[loop.results[i]] = result
        self.end_loop_counts(loop, new_loop.results[len(scalars):], block)

    def emit_if(self, op: scf.IfOp, block: Block) -> None:
        """The producer's copy of an if: under the same condition as the consumers', the stage
        of a branch that loads, the loops and ifs nested in it that load, and the index math;
        it yields the scalars later coordinates use and the ring counts it carries."""
        scalars = self.lowering.roles.producer_values[op]
        carried = self.carried_counts(op)
        regions = []
        for region in (op.true_region, op.false_region):
            new_block = Block()
            self.emit_branch(op, region, new_block, carried)
            regions.append(Region(new_block))
        result_types = [*(op.results[i].type for i in scalars), *(c.type for c in carried)]
        new_if = scf.IfOp(self.values[op.cond], result_types, regions[0], regions[1])
        self.mark_mirrored(op, new_if)
        self.op(new_if, block)
        for i, result in zip(scalars, new_if.results):
            self.values[op.results[i]] = result
        self.bind_counts(op, new_if.results[len(scalars):])

    def emit_fence(self, op: tile.FenceOp, block: Block) -> None:
        producer_fence(self, op, block)

    def emit_compute(self, op: Operation, block: Block) -> None:
        pass  # compute and stores belong to the consumers
