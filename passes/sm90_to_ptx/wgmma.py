"""convert-sm90-to-ptx patterns for wgmma: one `wgmma.fence`, K/16 (K/32 for fp8) `mma_async`
per 64-row m-block, one `commit_group`.

Shared operands get 64-bit descriptors from their `!sm90.smem` layout: K-major tiles step 32
bytes per k-step inside a swizzle panel and jump panels of `rows * span` bytes; MN-major tiles
step 16 rows per k-step with LBO = the distance between MN panels and SBO = 8 rows. The
accumulator registers are written in place (a copy first when the `acc` value has other users)
and nothing touches them until `sm90.wgmma_wait` (ptxas C7517/C7519 otherwise).

Register A operands that a loop reads but does not define (computed before it) are copied
inside the loop, each iteration, by a `shfl.sync.idx` to the thread's own lane, and the wgmma
reads the copies. ptxas before CUDA 13.3 (and the driver JIT of the same age) may give such
registers to other values inside the loop once the wgmma has read them, so the next iteration
multiplies by whatever was computed there: wrong results without an error (measured on an
H100 with ptxas 13.0: attention with rotary-embedded queries computed before its KV loop;
ptxas 13.5 allocates it correctly). A `mov` does not help (ptxas folds it); a shuffle it
cannot see through, and it costs one instruction per register per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tkc.dialects import ptx, sm90
from tkc.dialects.tile import element_bytes
from tkc.diagnostics import error_at
from tkc.passes.plan import defined_before_its_loop
from tkc.passes.sm90_to_ptx.emitter import Emitter, dtype_name, log2
from tkc.passes.wgmma_layout import DESCRIPTOR_LAYOUT, Descriptor, descriptor


def _descriptor(e: Emitter, addr: SSAValue, desc: Descriptor) -> SSAValue:
    """The 64-bit shared-memory matrix descriptor of the tile at shared address `addr`."""
    b = e.b
    field = b.and_("b32", b.shr("u32", addr, 4), 0x3FFF)
    return b.or_("b64", b.cvt("u64", "u32", field), desc.constant)


def _operand_descriptor(e: Emitter, op: Operation, t: sm90.SharedRefType, addr: SSAValue, *, k_major: bool,
                        steps: int) -> tuple[SSAValue, list[int]]:
    """Descriptor of a whole shared operand and the byte offset of each k-step.

    K-major: the tile is [extent, K] in K panels of `span` bytes; MN-major: [K, extent] in
    MN panels of `span` bytes, each covering all K rows."""
    if t.swizzle.data not in DESCRIPTOR_LAYOUT:
        raise error_at(op, "wgmma reads swizzled shared tiles only (32B, 64B or 128B)")
    span = t.panel_cols * element_bytes(t.element_type)
    desc = descriptor(t.get_shape()[0], span, "K" if k_major else "MN", element_bytes(t.element_type))
    if k_major:
        per_panel = span // desc.k_step
        offsets = [(kk // per_panel) * desc.panel_bytes + desc.k_step * (kk % per_panel) for kk in range(steps)]
        return _descriptor(e, addr, desc), offsets
    return _descriptor(e, addr, desc), [desc.k_step * kk for kk in range(steps)]


def _a_descriptor(e: Emitter, op: sm90.WgmmaOp, t: sm90.SharedRefType, steps: int,
                  blocks: int) -> tuple[SSAValue, list[list[int]]]:
    """A from shared memory: the warpgroup's rows (K-major) or columns (transposed) start at
    `a_offset`; returns the descriptor and the byte offset of each (k-step, m-block)."""
    b = e.b
    assert op.a_offset is not None
    span = t.panel_cols * element_bytes(t.element_type)
    rows = t.get_shape()[0]
    offset = e.src(op.a_offset, "u32")
    if op.transpose_a is None:
        base = e.offset(e.reg(op.a), op.a_offset, span)
        desc, k_offsets = _operand_descriptor(e, op, t, base, k_major=True, steps=steps)
        return desc, [[ko + 64 * mb * span for mb in range(blocks)] for ko in k_offsets]
    panel_bytes = rows * span
    if t.panel_cols > 64 or 64 % t.panel_cols:
        raise error_at(op, "a transposed A operand needs MN panels of at most 64 columns")
    first = ((offset // t.panel_cols) * panel_bytes if isinstance(offset, int)
             else b.mul("u32", b.shr("u32", offset, log2(t.panel_cols)), panel_bytes))
    base = b.add("u32", e.reg(op.a), first)
    desc, k_offsets = _operand_descriptor(e, op, t, base, k_major=False, steps=steps)
    return desc, [[ko + (64 * mb // t.panel_cols) * panel_bytes for mb in range(blocks)] for ko in k_offsets]


def _fresh_copies(e: Emitter, regs: list[SSAValue]) -> list[SSAValue]:
    """Each register shuffled to its own lane: a copy ptxas cannot fold back into the original."""
    lane = e.b.sreg("laneid")
    return [e.b.shfl("idx", r, lane) for r in regs]


@dataclass(frozen=True)
class LowerWgmma(RewritePattern):
    copy_acc: frozenset[sm90.WgmmaOp]
    """The wgmmas whose accumulator has other users (counted before the conversion, which
    erases the users it converts): these accumulate into a copy rather than in place."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.WgmmaOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        m, n, k = op.problem_shape()
        b_type = cast(sm90.SharedRefType, op.b.type)
        dtype = dtype_name(b_type.element_type)
        k_step = 32 // element_bytes(b_type.element_type)
        fp8 = k_step == 32
        a_type = op.a.type
        if fp8 and (op.transpose_a is not None or op.transpose_b is None or not isinstance(a_type, sm90.SharedRefType)):
            raise error_at(op, "fp8 wgmma takes both operands K-major from shared memory (mma_ABt)")
        steps, blocks = k // k_step, m // 64

        b_desc, b_offsets = _operand_descriptor(e, op, b_type, e.reg(op.b), k_major=op.transpose_b is not None,
                                                steps=steps)
        if isinstance(a_type, sm90.SharedRefType):
            a_desc, a_offsets = _a_descriptor(e, op, a_type, steps, blocks)
        else:
            a_regs = e.frag(op.a)
            if defined_before_its_loop(op, op.a, (scf.ForOp, ptx.ForOp)):
                a_regs = _fresh_copies(e, a_regs)
            per_block = len(a_regs) // blocks

        if op.acc is None:
            acc = b.regs("f32", blocks * n // 2)
        elif op in self.copy_acc:
            acc = [b.mov("f32", r) for r in e.frag(op.acc)]
        else:
            acc = e.frag(op.acc)
        b.wgmma_fence()
        for kk in range(steps):
            bk = b.add("u64", b_desc, b_offsets[kk] >> 4) if b_offsets[kk] else b_desc
            for mb in range(blocks):
                if isinstance(a_type, sm90.SharedRefType):
                    off = a_offsets[kk][mb]
                    a: SSAValue | list[SSAValue] = b.add("u64", a_desc, off >> 4) if off else a_desc
                else:
                    a = a_regs[mb * per_block + 4 * kk: mb * per_block + 4 * kk + 4]
                b.wgmma(
                    acc[mb * n // 2: (mb + 1) * n // 2], a, bk, dtype,
                    scale_d=0 if op.acc is None and kk == 0 else 1,
                    trans_a=int(op.transpose_a is not None),
                    trans_b=0 if fp8 else int(op.transpose_b is None),
                )
        b.wgmma_commit()
        e.replace(rewriter, acc)


class LowerWgmmaWait(RewritePattern):
    """The wait hands the accumulator registers on: from here on they may be read."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.WgmmaWaitOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.b.wgmma_wait(op.pending.value.data)
        e.replace(rewriter, e.frag(op.acc))


def patterns(kernel: sm90.KernelOp) -> list[RewritePattern]:
    copy_acc = frozenset(op for op in kernel.walk()
                         if isinstance(op, sm90.WgmmaOp) and op.acc is not None and op.acc.has_more_than_one_use())
    return [LowerWgmma(copy_acc), LowerWgmmaWait()]
