"""convert-sm90-to-ptx patterns for stream-K's partial tiles and the flags that hand them from
CTA to CTA (sm90.store_partial, sm90.add_partial, sm90.flag_signal, sm90.flag_wait).

A partial tile goes to global memory in the register order of the warpgroup that wrote it
(_PartialOp): the CTA that finishes the tile holds the same fragment layout, so neither side
moves values between threads, and each 4-register group of the warpgroup is one 2 KB line of
16-byte writes or reads. The flags are u32s: the writer's release add after its threads' stores
and fences, the finisher's acquire spin, then its reset to zero for the next launch.
"""

from __future__ import annotations

from typing import cast

from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tkc.dialects import sm90
from tkc.passes.plan import WARPGROUP_THREADS
from tkc.passes.sm90_to_ptx.emitter import Emitter

GROUP_BYTES = 16 * WARPGROUP_THREADS
"""The bytes of one 4-register group of a warpgroup's partial tile."""


def _thread_address(e: Emitter, op: sm90.StorePartialOp | sm90.AddPartialOp) -> SSAValue:
    """base + offset + 16 * (this thread's index in its warpgroup)."""
    b = e.b
    thread = b.and_("b32", b.sreg("tid.x"), WARPGROUP_THREADS - 1)
    offset = b.add("u32", e.reg(op.offset), b.shl("b32", thread, 4))
    return b.add("u64", e.reg(op.base), b.cvt("u64", "u32", offset))


class LowerStorePartial(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.StorePartialOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        regs = e.frag(op.source)
        addr = _thread_address(e, op)
        for group in range(len(regs) // 4):
            e.b.st("global", "f32", addr, regs[4 * group: 4 * group + 4], group * GROUP_BYTES)
        rewriter.erase(op)


class LowerAddPartial(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.AddPartialOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        regs = e.frag(op.source)
        addr = _thread_address(e, op)
        sums: list[SSAValue] = []
        for group in range(len(regs) // 4):
            partial = cast(list[SSAValue], b.ld("global", "f32", addr, group * GROUP_BYTES, vec=4, mods="cg"))
            sums += [b.add("f32", mine, theirs) for mine, theirs in zip(regs[4 * group: 4 * group + 4], partial)]
        e.replace(rewriter, sums)


def _flag_address(e: Emitter, op: sm90.FlagSignalOp | sm90.FlagWaitOp) -> SSAValue:
    return e.b.add("u64", e.reg(op.base), e.b.mul_wide("u32", e.reg(op.index), 4))


class LowerFlagSignal(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.FlagSignalOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.b.red("global", "add", "u32", _flag_address(e, op), 1, sem="release", scope="gpu")
        rewriter.erase(op)


class LowerFlagWait(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.FlagWaitOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        addr = _flag_address(e, op)
        with b.loop("FLAG"):
            raised = cast(SSAValue, b.ld("global", "u32", addr, sem="acquire", scope="gpu"))
            b.repeat_if(b.setp("eq", "u32", raised, 0))
        b.st("global", "u32", addr, b.mov("u32", 0))
        rewriter.erase(op)


PATTERNS: list[RewritePattern] = [LowerStorePartial(), LowerAddPartial(), LowerFlagSignal(), LowerFlagWait()]
