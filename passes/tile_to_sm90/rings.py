"""Rings and their mbarriers: the loads of a loop iteration (or of one output tile) are one
stage of an S-stage ring in shared memory.

Each stage has a `full` barrier (the producer's expect_tx; TMA completes it) and an `empty`
barrier (one lane of every consumer warp arrives once the wgmmas reading the stage are done,
in every CTA the stage was multicast to): a ring's barriers are two `!sm90.mbarriers<S>`
groups (SharedMemory.barrier_groups), and `sm90.mbarrier_at` picks stage s of both. Stage and
parity follow the ring count `it`, which runs on across the tiles of a persistent CTA:
s = it % S, parity = (it / S) & 1. The producer waits `empty` with the opposite parity, so its
first lap passes at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, SSAValue

from tkc.dialects import sm90, tile
from tkc.passes.plan import WARPGROUP_THREADS
from tkc.passes.tile_to_sm90.lowering import KernelLowering
from tkc.passes.tile_to_sm90.roles import RoleEmitter
from tkc.passes.tile_to_sm90.shared_memory import Ring


def init_barriers(lowering: KernelLowering, base: SSAValue, block: Block) -> None:
    """Every ring stage's full and empty mbarrier and every store-fence slot, by one thread."""

    def constant(value: int) -> SSAValue:
        op = arith.ConstantOp(IntegerAttr(value, IndexType()))
        block.add_op(op)
        return op.result

    def barrier(group: SSAValue, stage: int) -> SSAValue:
        at = sm90.MbarrierAtOp([group], constant(stage))
        block.add_op(at)
        return at.barriers[0]

    groups = lowering.memory.barrier_groups(base, block)
    for ring in lowering.memory.rings:
        for stage in range(ring.stages):
            block.add_op(sm90.MbarrierInitOp(barrier(groups[ring].full, stage), 1))
            # a multicast stage is free once the consumers of every CTA that receives it are done
            releasers = WARPGROUP_THREADS // 32 * lowering.consumers * (lowering.cluster if ring.loop is not None else 1)
            block.add_op(sm90.MbarrierInitOp(barrier(groups[ring].empty, stage), releasers))
    for slot in lowering.memory.fence_slots.values():
        add = arith.AddiOp(base, constant(slot))
        block.add_op(add)
        block.add_op(sm90.StoreFenceInitOp(add.result))
    block.add_op(sm90.FenceBarrierInitOp())


@dataclass
class RingSlot:
    """Ring iteration `it`'s stage address, its barriers and the parity to wait for."""

    stage: SSAValue
    full: SSAValue
    empty: SSAValue
    parity: SSAValue


def ring_slot(role: RoleEmitter, ring: Ring, it: SSAValue, block: Block) -> RingSlot:
    stages = role.const(ring.stages, block)
    stage = role.rem(it, stages, block)
    lap = role.div(it, stages, block)
    parity = role.op(arith.AndIOp(lap, role.const(1, block)), block).results[0]
    base = role.smem_base
    stage_addr = role.add(
        role.add(base, role.const(ring.base, block), block),
        role.mul(stage, role.const(ring.stage_bytes, block), block),
        block,
    )
    groups = role.barriers[ring]
    full, empty = role.op(sm90.MbarrierAtOp([groups.full, groups.empty], stage), block).results
    return RingSlot(stage_addr, full, empty, parity)


def view_stage(role: RoleEmitter, ring: Ring, loads: list[tile.LoadOp], stage: SSAValue, block: Block) -> None:
    """Map each of `loads` to a view of its tile in the stage at address `stage`."""
    for load in loads:
        buffer = ring.buffers[load]
        addr = role.add(stage, role.const(buffer.offset, block), block)
        role.values[load.result] = role.op(sm90.SmemViewOp(addr, buffer.ref_type), block).results[0]


def release(role: RoleEmitter, ring: Ring, it: SSAValue, block: Block) -> None:
    """One lane of each consumer warp frees the stage (its warpgroup's wgmmas that read it are
    complete), here and in the peer CTA of a cluster."""
    empty = ring_slot(role, ring, it, block).empty
    lane = sm90.SingleThreadOp("warp")
    role.op(lane, block)
    role.op(sm90.MbarrierArriveOp(empty), lane.body.block)
    rank = role.tiles.rank
    if rank is not None and ring.loop is not None:
        peer = role.op(arith.XOrIOp(rank, role.const(1, lane.body.block)), lane.body.block).results[0]
        role.op(sm90.MbarrierArriveOp(empty, cta=peer), lane.body.block)
