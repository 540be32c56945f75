"""convert-sm90-to-ptx: expand the `sm90.kernel` into one `ptx.entry` of PTX instructions, with
its control flow still structured (`ptx.if`, `ptx.for`, `ptx.loop`; ptx-flatten-control-flow
makes labels and branches of them).

What this pass decides, and why:
  - The frame: one `ptx.module` with one entry, whose parameters are the ABI's (tensor maps by
    value, pointers as u64, dims as u32), launch bounds from the kernel (`maxntid`, one CTA per
    SM or more: `minnctapersm`, the cluster shape), and the ABI itself on the module as
    `tkc.abi`, which the runtime launches by.
  - The code of every op, by one rewrite pattern per op (or per few ops lowered alike), grouped
    by family in `passes/sm90_to_ptx/`: params, scalars, control, sync (barriers, mbarriers,
    TMA), wgmma, fragments, shared. `sm90_to_ptx/emitter.py` is the type converter: which
    registers hold a value of each sm90 type, and how constants become immediates. The walk
    goes once over the kernel in program order, so each op's code lands where the op was and
    registers are numbered as the program reads.
  - Completeness: an op no pattern converts is an error naming it, never silently dropped (a
    pattern is found by the op's class, so renaming an op cannot orphan its lowering).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnrealizedConversionCastOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker, RewritePattern

from tkc.dialects import ptx, sm90
from tkc.dialects.ptx_builder import PtxBuilder
from tkc.diagnostics import error_at
from tkc.passes.sm90_to_ptx import control, fragments, params, partials, scalars, shared, sync, wgmma
from tkc.passes.sm90_to_ptx.emitter import Value, converted


def patterns(kernel: sm90.KernelOp) -> list[RewritePattern]:
    """Every pattern of the conversion (wgmma's know which accumulators are shared)."""
    return [*params.PATTERNS, *scalars.PATTERNS, *control.PATTERNS, *sync.PATTERNS, *wgmma.patterns(kernel),
            *fragments.PATTERNS, *shared.PATTERNS, *partials.PATTERNS]

_PARAM_KIND = {"tensormap": "tensormap", "pointer": "u64", "scratch": "u64", "dim": "u32"}
_CONVERTED = (ptx.PtxInst, ptx.StructuredOp, ptx.YieldOp, ptx.RepeatIfOp)
_LEFT_FOR_USERS = (UnrealizedConversionCastOp, arith.ConstantOp, sm90.MbarrierGroupOp)
"""What the patterns leave for their users to read; erased once every op is converted."""


def convert_kernel(kernel: sm90.KernelOp, trace: Sequence[SSAValue] = ()) -> tuple[ptx.ModuleOp, list[Value]]:
    """The ptx.module of `kernel`, whose body moves into it (the kernel is left empty), and the
    registers that hold each value of `trace` (values of the kernel's top level) at its end."""
    rewrites = patterns(kernel)
    abi = kernel.kernel_abi()
    b = PtxBuilder.kernel(
        kernel.sym_name.data,
        [(p.name, _PARAM_KIND[p.kind]) for p in abi.params],
        maxntid=kernel.threads.value.data,
        minnctapersm=kernel.min_ctas_per_sm.value.data,
        reqnctapercluster=[kernel.cluster.value.data, 1, 1] if kernel.cluster is not None else None,
    )
    b.module.attributes["tkc.abi"] = StringAttr(abi.to_json())
    body = b.entry.body.block
    for op in list(kernel.body.block.ops):
        op.detach()
        body.add_op(op)
    probes = [UnrealizedConversionCastOp.get([v], [v.type]) for v in trace]
    body.add_ops(probes)
    b.ret()
    # DCE off: an unused op still gets its code, as the source asked (ptxas drops what is dead).
    walker = PatternRewriteWalker(GreedyRewritePatternApplier(rewrites, dce_enabled=False), apply_recursively=False)
    walker.rewrite_region(b.entry.body)
    for op in b.entry.body.walk():
        if not isinstance(op, _CONVERTED + _LEFT_FOR_USERS):
            raise error_at(op, f"convert-sm90-to-ptx cannot lower {op.name}")
    traced = [converted(probe.inputs[0]) for probe in probes]
    leftovers = [op for op in b.entry.body.walk() if isinstance(op, _LEFT_FOR_USERS)]
    for op in reversed(leftovers):  # users before what they use
        op.detach()
        op.erase()
    return b.module, traced


class ConvertSm90ToPtxPass(ModulePass):
    """Replace the module's contents with one ptx.module holding the entry of its sm90.kernel."""

    name = "convert-sm90-to-ptx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = [k for k in op.body.block.ops if isinstance(k, sm90.KernelOp)]
        if len(kernels) != 1:
            raise error_at(op, f"convert-sm90-to-ptx expects one sm90.kernel at the top of the module, found {len(kernels)}")
        module, _ = convert_kernel(kernels[0])
        for old in list(op.body.block.ops):
            op.body.block.erase_op(old)
        op.body.block.add_op(module)
