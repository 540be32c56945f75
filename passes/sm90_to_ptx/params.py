"""convert-sm90-to-ptx patterns for what a kernel reads of its launch: parameters, block and
cluster ids, the grid, the base of its dynamic shared memory, and scalars of its i32 arguments.

Tensor maps are passed by value in param space and used by their generic address (mov +
cvta.param); pointers are loaded and converted to global addresses; the shared base is rounded
up to 1024 bytes (the 128B swizzle repeats every 1024 bytes, so tiles must start aligned).
"""

from __future__ import annotations

from xdsl.dialects.builtin import Float32Type
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tkc.dialects import sm90
from tkc.passes.sm90_to_ptx.emitter import Emitter


class LowerTensorMap(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.TensorMapParamOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.replace(rewriter, e.b.tmap_addr(op.param.data))


class LowerDim(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.DimParamOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.replace(rewriter, e.b.ld_param("u32", op.param.data))


class LowerPointer(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.PointerParamOp | sm90.ScratchParamOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.replace(rewriter, e.b.global_ptr(op.param.data))


class LowerLoadGlobalScalar(RewritePattern):
    """ld.global.nc.u32 (an index) or .f32: the kernel never writes a tensor it reads scalars
    from, so the read may go through the non-coherent (read-only) cache."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.LoadGlobalScalarOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        addr = b.add("u64", e.reg(op.base), b.mul_wide("s32", e.reg(op.offset), 4))
        e.replace(rewriter, b.ld("global", "f32" if isinstance(op.result.type, Float32Type) else "u32", addr, mods="nc"))


class LowerGridIds(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.BlockIdOp | sm90.GridDimOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        register = "ctaid." if isinstance(op, sm90.BlockIdOp) else "nctaid."
        e.replace(rewriter, e.b.sreg(register + "xyz"[op.axis.value.data]))


class LowerClusterRank(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.ClusterRankOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.replace(rewriter, e.b.sreg("cluster_ctarank"))


class LowerSmemBase(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.SmemBaseOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.replace(rewriter, e.b.and_("b32", e.b.add("u32", e.b.smem_base(), 1023), 0xFFFFFC00))


class LowerSmemView(RewritePattern):
    """A view is its address: the layout lives in the type, which the users read."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.SmemViewOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        e.replace(rewriter, e.reg(op.addr))


PATTERNS: list[RewritePattern] = [
    LowerTensorMap(), LowerDim(), LowerPointer(), LowerLoadGlobalScalar(), LowerGridIds(), LowerClusterRank(), LowerSmemBase(), LowerSmemView(),
]
