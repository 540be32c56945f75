"""ptx-flatten-control-flow: replace `ptx.if`, `ptx.for` and `ptx.loop` by labels and branches,
leaving each `ptx.entry` one flat block, which is what PTX text is.

What this pass decides, and why:
  - The shape of each construct. `ptx.if`: `@!p bra ELSE; then; bra.uni END; ELSE: else; END:`
    (`@!p bra END; then; END:` without an else; `@p` when negated). `ptx.for` is rotated into
    a guarded do-while, `@!(iv < ub) bra END; TOP: body; iv += step; @(iv < ub) bra TOP; END:`,
    so an iteration costs one compare and one branch. `ptx.loop`: `TOP: body; @p bra TOP`.
    A guarded branch is never `bra.uni`, even where the condition is warp-uniform (roles, the
    language's conditions): marked `.uni`, attention forward ran 3-13% slower on the H200.
  - Copies. Where a region's `ptx.yield` hands values to the op's registers, they are copied in
    parallel (a register that is both read and written is saved first), because PTX has no
    phis: `scf.yield %b, %a` swaps.
  - Label names: the op's prefixes (`ELSE`/`ENDIF` unless it names others, `LOOP`/`ENDLOOP`, a
    loop's own) numbered per prefix in the order the ops begin, so a dump reads as the PTX.
It is a pass of its own so that the conversion's patterns, and the IR between the two, see
loops and branches as regions (as xDSL's RISC-V backend lowers scf before flattening it).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from tkc.dialects import ptx
from tkc.dialects.ptx_builder import PtxBuilder


def flatten_control_flow(root: Operation) -> None:
    """Flatten every entry under `root` (a ptx.module or a module holding one)."""
    for entry in [op for op in root.walk() if isinstance(op, ptx.EntryOp)]:
        _Flattener(entry.body.block).block(entry.body.block)


class _Flattener:
    """Flattens the structured ops of one entry, numbering labels across it."""

    def __init__(self, entry_block: Block):
        self.b = PtxBuilder.at_end(entry_block)

    def block(self, block: Block) -> None:
        for op in list(block.ops):
            if isinstance(op, ptx.StructuredOp):
                self.op(op)

    def splice(self, region_block: Block, before: Operation) -> Operation | None:
        """Move the ops of `region_block` before `before`, then flatten the structured ones there
        (so each op moves once, not once per level it is nested at); returns its terminator."""
        terminator = region_block.last_op
        target = before.parent_block()
        assert target is not None
        moved = [o for o in region_block.ops if o is not terminator]
        for o in moved:
            o.detach()
            target.insert_op_before(o, before)
        for o in moved:
            if isinstance(o, ptx.StructuredOp):
                self.op(o)
        self.b.insertion = InsertPoint.before(before)
        return terminator

    def op(self, op: ptx.StructuredOp) -> None:
        b = self.b
        match op:
            case ptx.IfOp():
                has_else = bool(op.else_region.blocks)
                other = b.fresh_label(op.else_label.data) if has_else else None
                end = b.fresh_label(op.end_label.data)
                b.insertion = InsertPoint.before(op)
                b.bra(other or end, op.cond, negate=op.negate is None)
                self.copy(op.outs, self.splice(op.then_region.block, op))
                if other is not None:
                    b.bra(end)
                    b.label(other)
                    self.copy(op.outs, self.splice(op.else_region.block, op))
                b.label(end)
            case ptx.ForOp():
                top, end = b.fresh_label("LOOP"), b.fresh_label("ENDLOOP")
                b.insertion = InsertPoint.before(op)
                ub = op.bound()
                b.bra(end, b.setp("lt", "s32", op.iv, ub), negate=True)
                b.label(top)
                self.copy(op.carried, self.splice(op.body.block, op))
                b.assign(op.iv, b.add("u32", op.iv, op.increment()))
                b.bra(top, b.setp("lt", "s32", op.iv, ub))
                b.label(end)
            case ptx.LoopOp():
                top = b.fresh_label(op.label.data)
                b.insertion = InsertPoint.before(op)
                b.label(top)
                repeat = self.splice(op.body.block, op)
                assert isinstance(repeat, ptx.RepeatIfOp)
                b.bra(top, repeat.cond, negate=repeat.negate is not None)
            case _:
                raise AssertionError(f"no flattening for {op.name}")
        op.detach()
        op.erase()

    def copy(self, dsts: Sequence[SSAValue], terminator: Operation | None) -> None:
        assert isinstance(terminator, ptx.YieldOp)
        self.b.parallel_copy(dsts, terminator.values)


class PtxFlattenControlFlowPass(ModulePass):
    """Replace the structured control flow of every ptx.entry by labels and branches."""

    name = "ptx-flatten-control-flow"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        flatten_control_flow(op)
