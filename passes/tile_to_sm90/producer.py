"""The producer's copy of the kernel body: one elected thread of warpgroup 0 runs the ops
tile-warp-specialize gave it (the loads, the fences, and the index math, loops and ifs their
coordinates need), and issues each ring stage as TMA boxes into shared memory where the
stage's last load stood (by then every load's coordinates are computed). Its loops and ifs
carry only the scalars named by their `producer_values`; the tiles are the consumers'.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue

from tkc.diagnostics import error_at
from tkc.dialects import tile
from tkc.passes.tile_to_sm90.fences import producer_fence
from tkc.passes.tile_to_sm90.rings import acquire_stage
from tkc.passes.tile_to_sm90.roles import RoleEmitter
from tkc.passes.tile_to_sm90.shared_memory import Ring
from tkc.passes.tile_to_sm90.tma import issue_load

class ProducerEmitter(RoleEmitter):
    role = tile.Role.PRODUCER

    def slot_position(self, ring: Ring) -> tile.LoadOp:
        return ring.loads[-1]

    def ring_slot(self, ring: Ring, it: SSAValue, block: Block) -> None:
        """Acquire the stage (the consumers freed it; expect its bytes), issue its loads."""
        stage, full = acquire_stage(self, ring, it, block)
        for load in ring.loads:
            issue_load(self, load, ring.buffers[load], stage, full, block)

    def finish_tile(self, block: Block) -> None:
        pass  # the consumers free the stages

    def emit_for(self, loop: scf.ForOp, block: Block) -> None:
        """The producer's copy of a loop: its loads' ring slot, its index math, its fences, and the
        loop-carried scalars the coordinates need (tile-warp-specialize's `producer_values`)."""
        ring = self.memory.ring_of(loop)
        scalars = self.lowering.roles.producer_values[loop]
        lb, ub, step = (self.values[v] for v in (loop.lb, loop.ub, loop.step))
        old = loop.body.block
        body = Block(arg_types=[IndexType(), *(old.args[1 + i].type for i in scalars)])
        new_loop = scf.ForOp(lb, ub, step, [self.values[loop.iter_args[i]] for i in scalars], body)
        self.op(new_loop, block)
        self.values[old.args[0]] = body.args[0]
        for i, arg in zip(scalars, body.args[1:]):
            self.values[old.args[1 + i]] = arg
        it = self.iteration(loop, body.args[0], body) if ring is not None else None
        for op in old.ops:
            if ring is not None and it is not None and op is self.slot_position(ring):
                self.ring_slot(ring, it, body)
            elif isinstance(op, scf.YieldOp):
                body.add_op(scf.YieldOp(*(self.values[op.operands[i]] for i in scalars)))
            elif not isinstance(op, tile.LoadOp):
                self.emit_op(op, body)
        for i, result in zip(scalars, new_loop.results):
            self.values[loop.results[i]] = result

    def emit_if(self, op: scf.IfOp, block: Block) -> None:
        """The producer's copy of an if that yields scalars a later load's coordinates use: its
        index math only."""
        if any(isinstance(inner, tile.LoadOp) for inner in op.walk()):
            raise error_at(op, "the GPU backend does not load tiles under an if")
        scalars = self.lowering.roles.producer_values[op]
        regions = []
        for region in (op.true_region, op.false_region):
            new_block = Block()
            for inner in region.block.ops:
                if isinstance(inner, scf.YieldOp):
                    new_block.add_op(scf.YieldOp(*(self.values[inner.operands[i]] for i in scalars)))
                else:
                    self.emit_op(inner, new_block)
            regions.append(Region(new_block))
        new_if = scf.IfOp(self.values[op.cond], [op.results[i].type for i in scalars], regions[0], regions[1])
        self.op(new_if, block)
        for i, result in zip(scalars, new_if.results):
            self.values[op.results[i]] = result

    def emit_fence(self, op: tile.FenceOp, block: Block) -> None:
        producer_fence(self, op, block)

    def emit_compute(self, op: Operation, block: Block) -> None:
        pass  # compute and stores belong to the consumers
