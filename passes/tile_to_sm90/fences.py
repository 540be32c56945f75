"""tile.fence (tile-memory-order): the stores before it are visible to the accesses after it.

Consumers: each thread fences its st.global stores for the async proxy, the thread that issued
its warpgroup's TMA stores waits until they are written (not only read), all consumers meet on
named barrier consumers + 1, and the first one counts the pass on the fence's slot. The
producer counts its own pass and spins until the consumers' count catches up before it issues
a later load. Counts, not mbarrier phases, because consumers may pass a fence several times
before the producer does. A fence the producer never passes (in a loop without loads) has no
slot and only orders the consumers' stores.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, SSAValue

from tkc.dialects import sm90, tile
from tkc.passes.plan import WARPGROUP_THREADS
from tkc.passes.tile_to_sm90.lowering import KernelLowering
from tkc.passes.tile_to_sm90.roles import RoleEmitter


def init_store_fences(lowering: KernelLowering, base: SSAValue, block: Block) -> None:
    """Zero every store-fence slot, then fence the inits (of the rings' mbarriers too, which
    sm90-build-rings puts before these) for the other threads and the async proxy."""
    for slot in lowering.memory.fence_slots.values():
        offset = arith.ConstantOp(IntegerAttr(slot, IndexType()))
        address = arith.AddiOp(base, offset.result)
        block.add_ops([offset, address, sm90.StoreFenceInitOp(address.result)])
    block.add_op(sm90.FenceBarrierInitOp())


def _slot(role: RoleEmitter, op: tile.FenceOp, block: Block) -> SSAValue | None:
    offset = role.memory.fence_slots.get(op)
    return role.add(role.smem_base, role.const(offset, block), block) if offset is not None else None


def producer_fence(role: RoleEmitter, op: tile.FenceOp, block: Block) -> None:
    slot = _slot(role, op, block)
    if slot is None:
        return  # in a loop without loads: the fence orders only the consumers' stores
    role.op(sm90.StoreFenceWaitOp(slot), block)
    role.op(sm90.FenceProxyAsyncGlobalOp(), block)


def consumer_fence(role: RoleEmitter, op: tile.FenceOp, consumer_index: SSAValue, block: Block) -> None:
    slot = _slot(role, op, block)
    consumers = role.lowering.consumers
    role.op(sm90.FenceProxyAsyncGlobalOp(), block)
    issuer = sm90.SingleThreadOp("warpgroup")
    role.op(issuer, block)
    role.op(sm90.TmaStoreWaitOp(0, read=False), issuer.body.block)
    role.op(sm90.NamedBarrierOp(role.const(consumers + 1, block), WARPGROUP_THREADS * consumers), block)
    if slot is None:
        return
    first = role.op(arith.CmpiOp(consumer_index, role.const(0, block), "eq"), block).results[0]
    signal = Block()
    counter = sm90.SingleThreadOp("warpgroup")
    role.op(counter, signal)
    role.op(sm90.StoreFenceSignalOp(slot), counter.body.block)
    role.emit_if_then(first, signal, block)
