"""Rings: the loads of a loop iteration (or of one output tile) are one stage of an S-stage
ring in shared memory, a stage per value of the ring count `it`, which runs on across the tiles
of a persistent CTA.

Each role addresses every ring through its own `sm90.ring` (SharedMemory.ring_values): the
producer acquires stage `it` and fills it, the consumers wait for it, view it, and release it
once the wgmmas reading it are done, in every CTA it was multicast to. The mbarriers that make
this safe, and the phases they are waited with, are sm90-build-rings'.
"""

from __future__ import annotations

from xdsl.ir import Block, SSAValue

from tkc.dialects import sm90, tile
from tkc.passes.tile_to_sm90.roles import RoleEmitter
from tkc.passes.tile_to_sm90.shared_memory import Ring


def acquire_stage(role: RoleEmitter, ring: Ring, it: SSAValue, tx_bytes: int, block: Block) -> tuple[SSAValue, SSAValue]:
    """The producer takes stage `it` to fill with `tx_bytes`: its address and the barrier its
    loads complete on."""
    acquire = role.op(sm90.RingAcquireOp(role.rings[ring], it, tx_bytes), block)
    assert isinstance(acquire, sm90.RingAcquireOp)
    return acquire.stage, acquire.full


def wait_stage(role: RoleEmitter, ring: Ring, it: SSAValue, block: Block) -> SSAValue:
    """The consumers wait until stage `it`'s loads landed; its address."""
    return role.op(sm90.RingWaitOp(role.rings[ring], it), block).results[0]


def stage_address(role: RoleEmitter, ring: Ring, it: SSAValue, block: Block) -> SSAValue:
    """The address of stage `it`, which the role already waited for."""
    return role.op(sm90.RingStageOp(role.rings[ring], it), block).results[0]


def view_stage(role: RoleEmitter, ring: Ring, loads: list[tile.LoadOp], stage: SSAValue, block: Block) -> None:
    """Map each of `loads` to a view of its tile in the stage at address `stage`."""
    for load in loads:
        buffer = ring.buffers[load]
        addr = role.add(stage, role.const(buffer.offset, block), block)
        role.values[load.result] = role.op(sm90.SmemViewOp(addr, buffer.ref_type), block).results[0]


def release(role: RoleEmitter, ring: Ring, it: SSAValue, block: Block) -> None:
    """The consumers free stage `it` (their wgmmas that read it are complete), here and, for a
    loop's ring in a cluster (whose stages are multicast), in the peer CTA."""
    rank = role.tiles.rank if ring.loop is not None else None
    role.op(sm90.RingReleaseOp(role.rings[ring], it, rank), block)
