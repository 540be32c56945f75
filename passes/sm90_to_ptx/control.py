"""convert-sm90-to-ptx patterns for control flow: scf.for, scf.if, their yields, sm90.roles and
sm90.single_thread become ptx.for / ptx.if regions (ptx-flatten-control-flow makes them labels).

PTX has no phis: a loop's carried values and an if's results are registers declared before the
op (`ptx.reg`, written with a parallel copy at entry), and each region's `ptx.yield` says what
to copy into them. The induction variable is a b32 register compared signed (`lt.s32`).
`sm90.roles` is one if/else on the warpgroup index, so each role's `setmaxnreg` is uniform per
warpgroup and ptxas honours it; `sm90.single_thread` runs its body under tid 0, or in the
`elect.sync` lane of warp 0 of the warpgroup. Every thread meets again after a region.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.ir import Block, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tkc.dialects import ptx, sm90
from tkc.passes.sm90_to_ptx.emitter import Emitter, Value, flat


def _bind(e: Emitter, args: Sequence[SSAValue], regs: Sequence[Value], into: Block) -> None:
    """Uses of the block arguments `args` read `regs` through casts appended to `into` (ahead of
    the body that moves in after them)."""
    with e.b.inside(into):
        for arg, value in zip(args, regs, strict=True):
            arg.replace_all_uses_with(e.as_value(arg, value))


class LowerFor(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        body = op.body.block
        iv = b.reg("b32")
        b.assign(iv, e.src(op.lb, "u32"))
        carried = [e.fresh(arg) for arg in body.args[1:]]
        e.assign(carried, [e.value(v) for v in op.iter_args])
        loop = ptx.ForOp(iv, e.int_src(op.ub, "s32"), e.int_src(op.step, "u32"), flat(carried))
        b.insert(loop)
        _bind(e, body.args, [iv, *carried], loop.body.block)
        e.move_into(body, loop.body.block)
        e.replace(rewriter, *carried)


class LowerIf(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.IfOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        results = [e.fresh(r) for r in op.results]
        branch = ptx.IfOp(e.reg(op.cond), flat(results), has_else=True)
        e.b.insert(branch)
        e.move_into(op.true_region.block, branch.then_region.block)
        if op.false_region.blocks:
            e.move_into(op.false_region.block, branch.else_region.block)
        else:
            branch.else_region.block.add_op(ptx.YieldOp())
        e.replace(rewriter, *results)


class LowerYield(RewritePattern):
    """The yield of a converted scf.for or scf.if: the registers to copy into the carried values."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.YieldOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.parent_op(), ptx.IfOp | ptx.ForOp):
            return
        e = Emitter(op)
        rewriter.replace(op, ptx.YieldOp(flat([e.value(v) for v in op.operands])))


class LowerRoles(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.RolesOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        warpgroup = b.shr("u32", b.sreg("tid.x"), 7)
        roles = ptx.IfOp(b.setp("ne", "u32", warpgroup, 0), negate=True, has_else=True,
                         labels=("CONSUMER", "ENDROLES"))
        b.insert(roles)
        producer, consumer = roles.then_region.block, roles.else_region.block
        with b.inside(producer):
            if op.producer_registers.value.data:
                b.setmaxnreg("dec", op.producer_registers.value.data)
        e.move_into(op.producer.block, producer)
        producer.add_op(ptx.YieldOp())
        with b.inside(consumer):
            if op.consumer_registers.value.data:
                b.setmaxnreg("inc", op.consumer_registers.value.data)
            index = b.sub("u32", warpgroup, 1)
        _bind(e, op.consumer.block.args, [index], consumer)
        e.move_into(op.consumer.block, consumer)
        consumer.add_op(ptx.YieldOp())
        rewriter.erase(op)


class LowerSingleThread(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.SingleThreadOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        tid = b.sreg("tid.x")
        if op.scope.data == "block":
            with b.if_(b.setp("eq", "u32", tid, 0)) as only:
                e.move_into(op.body.block, only.then_region.block)
        elif op.scope.data == "warp":
            with b.if_(b.elect()) as only:
                e.move_into(op.body.block, only.then_region.block)
        else:
            with b.if_(b.setp("lt", "u32", b.and_("b32", tid, 127), 32)), b.if_(b.elect()) as only:
                e.move_into(op.body.block, only.then_region.block)
        rewriter.erase(op)


PATTERNS: list[RewritePattern] = [LowerFor(), LowerIf(), LowerYield(), LowerRoles(), LowerSingleThread()]
