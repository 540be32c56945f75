"""sm90-build-rings: give every ring of an `sm90.kernel` its mbarriers, and expand the ring ops
(`sm90.ring_acquire`, `ring_wait`, `ring_stage`, `ring_release`) into typed mbarrier ops.

convert-tile-to-sm90 says what each role does with a ring's stages; this pass decides how the
barriers make that safe, so the protocol is in one place:
- **Barriers.** Ring k (`sm90.ring k`, every role's value of it) gets two groups of S mbarriers,
  `full` then `empty`, after ring k-1's from offset 0 of shared memory (the first kilobyte
  that tile-pipeline keeps for barriers; convert-tile-to-sm90 places its store-fence slots after
  them, RING_BARRIERS_PER_STAGE barriers a stage). Each role's groups are addressed from that
  role's `sm90.smem_base`, as its ring is.
- **Arrival counts**, initialised by the kernel-level `single_thread "block"` (before its own
  ops, so its `fence_barrier_init` publishes them): `full` 1 (the producer's arrive.expect_tx;
  TMA completes the bytes), `empty` one lane of every consumer warp, in every CTA of the cluster
  when the ring's releases name the cluster rank (the stage was multicast to all of them).
- **Stage and phase** of ring count `it`: stage it % S, phase bit (it / S) & 1. The producer
  waits `empty` with the flipped phase, so its first lap passes at once; consumers wait `full`
  with the plain one. A release is one elected lane per warp arriving on `empty` (and on each
  other CTA's of the cluster, through `mapa`: rank xor 1, .., xor n-1).
Every ring op computes the stage's address and both of its barriers (the values any op on the
stage may use; ptxas drops those this one does not), then does its part. sm90-verify-barriers
checks the result.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tkc.diagnostics import error_at
from tkc.dialects import sm90
from tkc.passes.plan import MBARRIER_REGION, WARPGROUP_THREADS


@dataclass
class RingLayout:
    """Ring k's place among the mbarriers: its groups' offsets and the empty barriers' count."""

    stages: int
    full: int
    empty: int
    releasers: int


@dataclass
class StageValues:
    """What every ring op computes of stage it % S: its address, barriers and phase bit."""

    address: SSAValue
    full: SSAValue
    empty: SSAValue
    parity: SSAValue


class _Emitter:
    """Inserts ops before `anchor` (the ring op they expand), or at the end of a block of theirs,
    with the anchor's location (constants, which the PTX lowering folds, keep none)."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor

    def _insert(self, op: Operation, block: Block | None) -> None:
        Rewriter.insert_op(op, InsertPoint.before(self.anchor) if block is None else InsertPoint.at_end(block))

    def op(self, op: Operation, block: Block | None = None) -> Operation:
        op.location = self.anchor.location
        self._insert(op, block)
        return op

    def const(self, value: int, block: Block | None = None) -> SSAValue:
        constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
        self._insert(constant, block)
        return constant.result

    def value(self, op: Operation, block: Block | None = None) -> SSAValue:
        return self.op(op, block).results[0]


def _layouts(kernel: sm90.KernelOp, cluster: int) -> dict[int, RingLayout]:
    rings: dict[int, sm90.RingOp] = {}
    for ring in (op for op in kernel.walk() if isinstance(op, sm90.RingOp)):
        first = rings.setdefault(ring.number.value.data, ring)
        if any(getattr(first, p) != getattr(ring, p) for p in ("offset", "stages", "stage_bytes")):
            raise error_at(
                ring, f"the roles disagree on ring {ring.number.value.data}: its offset, stages or stage bytes differ"
            )
    peers: dict[int, set[bool]] = {}
    for release in (op for op in kernel.walk() if isinstance(op, sm90.RingReleaseOp)):
        peers.setdefault(release.ring_op().number.value.data, set()).add(release.rank is not None)
    roles = next((op for op in kernel.walk() if isinstance(op, sm90.RolesOp)), None)
    consumer_warps = WARPGROUP_THREADS // 32 * (roles.consumers.value.data if roles is not None else 1)
    layouts: dict[int, RingLayout] = {}
    offset = 0
    for number, ring in sorted(rings.items()):
        if len(peers.get(number, set())) > 1:
            raise error_at(ring, f"ring {number} is released in the peer CTA by some of its releases only")
        stages = ring.stages.value.data
        releasing_ctas = cluster if peers.get(number) == {True} else 1
        full, empty = offset, offset + sm90.MBARRIER_BYTES * stages
        layouts[number] = RingLayout(stages, full, empty, consumer_warps * releasing_ctas)
        offset += sm90.MBARRIER_BYTES * sm90.RING_BARRIERS_PER_STAGE * stages
        if offset > MBARRIER_REGION:
            raise error_at(ring, f"the rings' mbarriers do not fit the {MBARRIER_REGION}-byte barrier region")
    return layouts


def _groups(base: SSAValue, layout: RingLayout, before: Operation) -> tuple[SSAValue, SSAValue]:
    """The ring's full and empty groups addressed from `base`, inserted before `before`."""
    full, empty = (sm90.MbarrierGroupOp(base, offset, layout.stages) for offset in (layout.full, layout.empty))
    Rewriter.insert_op([full, empty], InsertPoint.before(before))
    return full.result, empty.result


def _init(kernel: sm90.KernelOp, layouts: dict[int, RingLayout]) -> None:
    """Every stage's full and empty barrier, at the start of the kernel-level init region."""
    body = kernel.body.block
    base = next((op for op in body.ops if isinstance(op, sm90.SmemBaseOp)), None)
    region = next((op for op in body.ops if isinstance(op, sm90.SingleThreadOp) and op.scope.data == "block"), None)
    if base is None or region is None:
        raise error_at(kernel, "sm90-build-rings initialises barriers in the kernel-level "
                       "single_thread \"block\" region, from the kernel-level sm90.smem_base; found none")
    anchor = region.body.block.first_op  # its own inits and fence_barrier_init: the ring inits go first
    if anchor is None:
        raise error_at(region, "expected sm90.fence_barrier_init in the barrier init region, found none")
    e = _Emitter(anchor)
    for number, layout in layouts.items():
        full, empty = _groups(base.results[0], layout, anchor)
        for stage in range(layout.stages):
            for group, count in ((full, 1), (empty, layout.releasers)):
                e.op(sm90.MbarrierInitOp(e.value(sm90.MbarrierAtOp([group], e.const(stage))), count))


def _stage(e: _Emitter, ring: sm90.RingOp, groups: tuple[SSAValue, SSAValue], it: SSAValue) -> StageValues:
    stages = e.const(ring.stages.value.data)
    stage = e.value(arith.RemUIOp(it, stages))
    lap = e.value(arith.DivUIOp(it, stages))
    parity = e.value(arith.AndIOp(lap, e.const(1)))
    start = e.value(arith.AddiOp(ring.base, e.const(ring.offset.value.data)))
    address = e.value(arith.AddiOp(start, e.value(arith.MuliOp(stage, e.const(ring.stage_bytes.value.data)))))
    full, empty = e.op(sm90.MbarrierAtOp(list(groups), stage)).results
    return StageValues(address, full, empty, parity)


def _expand(op: sm90.RingAcquireOp | sm90.RingWaitOp | sm90.RingStageOp | sm90.RingReleaseOp,
            groups: tuple[SSAValue, SSAValue], cluster: int) -> None:
    e = _Emitter(op)
    stage = _stage(e, op.ring_op(), groups, op.it)
    if isinstance(op, sm90.RingAcquireOp):
        flipped = e.value(arith.XOrIOp(stage.parity, e.const(1)))
        e.op(sm90.MbarrierWaitOp(stage.empty, flipped))
        e.op(sm90.MbarrierArriveOp(stage.full, op.tx_bytes.value.data))
        op.stage.replace_all_uses_with(stage.address)
        op.full.replace_all_uses_with(stage.full)
    elif isinstance(op, sm90.RingWaitOp):
        e.op(sm90.MbarrierWaitOp(stage.full, stage.parity))
        op.stage.replace_all_uses_with(stage.address)
    elif isinstance(op, sm90.RingStageOp):
        op.stage.replace_all_uses_with(stage.address)
    else:
        lane = sm90.SingleThreadOp("warp")
        e.op(lane)
        e.op(sm90.MbarrierArriveOp(stage.empty), lane.body.block)
        if op.rank is not None:
            # every other CTA of the cluster multicast into this stage: each waits for all to free it
            for distance in range(1, cluster):
                peer = e.value(arith.XOrIOp(op.rank, e.const(distance, lane.body.block)), lane.body.block)
                e.op(sm90.MbarrierArriveOp(stage.empty, cta=peer), lane.body.block)
    op.detach()
    op.erase()


def build_rings(kernel: sm90.KernelOp) -> None:
    """Give the kernel's rings their barriers; a kernel without ring ops (built already, or
    hand-written with mbarriers) is left as it is."""
    if not any(isinstance(op, sm90.RingOp) for op in kernel.walk()):
        return
    cluster = kernel.cluster.value.data if kernel.cluster is not None else 1
    layouts = _layouts(kernel, cluster)
    _init(kernel, layouts)
    for ring in [op for op in kernel.walk() if isinstance(op, sm90.RingOp)]:
        groups = _groups(ring.base, layouts[ring.number.value.data], ring)
        for use in list(ring.result.uses):
            user = use.operation
            if not isinstance(user, sm90.RingAcquireOp | sm90.RingWaitOp | sm90.RingStageOp | sm90.RingReleaseOp):
                raise error_at(user, f"expected only ring ops on an sm90.ring, found {user.name}")
            _expand(user, groups, cluster)
        ring.detach()
        ring.erase()


class Sm90BuildRingsPass(ModulePass):
    name = "sm90-build-rings"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, sm90.KernelOp)]:
            build_rings(kernel)
