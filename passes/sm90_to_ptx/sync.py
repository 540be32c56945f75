"""convert-sm90-to-ptx patterns for synchronisation and bulk copies: named barriers, fences,
mbarriers, the store-fence counters and TMA.

A barrier group is no code: it stays (like a constant) until the `sm90.mbarrier_at` that
address its barriers are converted, each barrier at base + group offset + 8 * stage, the
stage's byte offset computed once for all the groups of one `mbarrier_at` (a constant stage
folds into the offset).

An mbarrier wait is a spin loop (`try_wait` may time out): a `ptx.loop`. A store fence is two
u32 counters (see `StoreFenceWaitOp`): the consumers' passes, which they count with a release
`red.add`, and the producer's, which it counts itself and then spins (ld.acquire) until the
consumers' count reaches it. A remote arrive goes through `mapa` to the barrier of another CTA
of the cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tkc.dialects import sm90
from tkc.dialects.ptx_builder import PtxBuilder
from tkc.passes.sm90_to_ptx.emitter import Emitter, constant

CONSUMER_PASSES, PRODUCER_PASSES = 0, 4
"""Byte offsets of the two u32 counters of a store-fence slot."""


def _fence_barrier_init(b: PtxBuilder) -> None:
    b.fence("mbarrier_init.release.cluster")
    b.fence("proxy.async.shared::cta")


_NO_OPERANDS: dict[type[Operation], Callable[[PtxBuilder], None]] = {
    sm90.SyncBlockOp: lambda b: b.bar_sync(0),
    sm90.ClusterSyncOp: lambda b: b.cluster_sync(),
    sm90.FenceBarrierInitOp: _fence_barrier_init,
    sm90.FenceProxyAsyncOp: lambda b: b.fence("proxy.async.shared::cta"),
    sm90.FenceProxyAsyncGlobalOp: lambda b: b.fence("proxy.async.global"),
    sm90.FenceGpuOp: lambda b: b.fence("acq_rel.gpu"),
    sm90.TmaStoreCommitOp: lambda b: b.bulk_commit(),
    sm90.TrapOp: lambda b: b.trap(),
    sm90.GridDependencyWaitOp: lambda b: b.griddepcontrol_wait(),
    sm90.LaunchDependentsOp: lambda b: b.griddepcontrol_launch_dependents(),
}
"""The PTX of each sm90 op without operands or results."""


class LowerNoOperands(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        emit = _NO_OPERANDS.get(type(op))
        if emit is not None:
            emit(Emitter(op).b)
            rewriter.erase(op)


class LowerNamedBarrier(RewritePattern):
    """bar.sync (wait there) or bar.arrive (count in and go on) at a named barrier."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, sm90.NamedBarrierOp | sm90.NamedBarrierArriveOp):
            return
        e = Emitter(op)
        emit = e.b.bar_sync if isinstance(op, sm90.NamedBarrierOp) else e.b.bar_arrive
        emit(e.int_src(op.barrier_id, "u32"), op.threads.value.data)
        rewriter.erase(op)


class LowerMbarrierAt(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.MbarrierAtOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        groups = op.group_ops()
        stage = constant(op.stage)
        if isinstance(stage, int):
            stage_offset = sm90.MBARRIER_BYTES * stage
            e.replace(rewriter, *(b.add("u32", e.reg(g.base), g.offset.value.data + stage_offset) for g in groups))
            return
        stride = b.mul("u32", e.reg(op.stage), sm90.MBARRIER_BYTES)
        e.replace(rewriter, *(b.add("u32", b.add("u32", e.reg(g.base), g.offset.value.data), stride) for g in groups))


class LowerMbarrierInit(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.MbarrierInitOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.b.mbar_init(e.reg(op.barrier), op.count.value.data)
        rewriter.erase(op)


class LowerMbarrierArrive(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.MbarrierArriveOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        if op.tx_bytes is not None:
            e.b.mbar_arrive_expect_tx(e.reg(op.barrier), op.tx_bytes.value.data)
        elif op.cta is not None:
            remote = e.b.mapa(e.reg(op.barrier), e.int_src(op.cta, "u32"))
            e.b.mbar_arrive(remote, cluster=True)
        else:
            e.b.mbar_arrive(e.reg(op.barrier))
        rewriter.erase(op)


class LowerMbarrierWait(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.MbarrierWaitOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        parity = e.int_src(op.parity, "u32")
        e.b.mbar_wait(e.reg(op.barrier), parity if not isinstance(parity, int) else parity & 1)
        rewriter.erase(op)


class LowerStoreFenceInit(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.StoreFenceInitOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        slot = e.reg(op.slot)
        e.b.st("shared", "u32", slot, e.b.mov("u32", 0), CONSUMER_PASSES)
        e.b.st("shared", "u32", slot, e.b.mov("u32", 0), PRODUCER_PASSES)
        rewriter.erase(op)


class LowerStoreFenceSignal(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.StoreFenceSignalOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.b.red("shared", "add", "u32", e.reg(op.slot), 1, sem="release")
        rewriter.erase(op)


class LowerStoreFenceWait(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.StoreFenceWaitOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        slot = e.reg(op.slot)
        passes = b.add("u32", cast(SSAValue, b.ld("shared", "u32", slot, PRODUCER_PASSES)), 1)
        b.st("shared", "u32", slot, passes, PRODUCER_PASSES)
        with b.loop("STORES"):
            done = cast(SSAValue, b.ld("shared", "u32", slot, CONSUMER_PASSES, sem="acquire"))
            b.repeat_if(b.setp("lt", "u32", done, passes))
        rewriter.erase(op)


class LowerTmaLoad(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.TmaLoadOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        coords = [e.reg(c) for c in op.coords]
        multicast = op.multicast.value.data if op.multicast is not None else None
        e.b.tma_load(e.reg(op.dst), e.reg(op.tensor_map), coords, e.reg(op.barrier), multicast)
        rewriter.erase(op)


class LowerTmaStore(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.TmaStoreOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        reduce = None if op.reduce is None else op.reduce.data.value
        e.b.tma_store(e.reg(op.tensor_map), [e.reg(c) for c in op.coords], e.reg(op.src), reduce)
        rewriter.erase(op)


class LowerTmaStoreWait(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.TmaStoreWaitOp, rewriter: PatternRewriter) -> None:
        Emitter(op).b.bulk_wait(op.pending.value.data, op.read is not None)
        rewriter.erase(op)


PATTERNS: list[RewritePattern] = [
    LowerNoOperands(), LowerNamedBarrier(), LowerMbarrierAt(), LowerMbarrierInit(), LowerMbarrierArrive(), LowerMbarrierWait(),
    LowerStoreFenceInit(), LowerStoreFenceSignal(), LowerStoreFenceWait(), LowerTmaLoad(), LowerTmaStore(),
    LowerTmaStoreWait(),
]
