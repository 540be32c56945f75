"""tile-hoist-invariants: compute the scalar arithmetic a loop does not change once, before it.

A coordinate written in full inside a loop (`load X[elem(start + 64, end), k]`) and again after it
(`store Y[elem(start + 64, end), j] = ...`) is the same number, but the frontend builds each
expression where it is written: two SSA values, one in the loop body. tile-mask-tails compares
the tails of a value (which end bounds its padding) by SSA value, so it could not tell that the
stored tile ends where its destination does, and refused an exact program that the same code
with `let row = start + 64` hoisted by hand compiles. So this pass decides:

  every scalar op (arith or math on index, integer or f32 values, no tiles) in a loop body whose
  operands are all defined outside the loop, with no side effects and safe to run where the loop
  runs no iteration (no division by a value that may be 0: xDSL's `is_speculatable`), moves to
  right before the loop, innermost loops first, so a nest hoists it as far out as its operands
  allow.

`cse`, which runs next, then merges the hoisted expression with the equal one after the loop. The
loop also stops recomputing it (the producer and consumers each ran it every iteration). Tile ops
stay where they are: a tile hoisted out of a loop would hold its registers across all of it
(tile-rematerialize moves the other way), and loads and scalar loads (`tile.load_scalar`, which
traps past the end of its tensor) are not free of side effects. Ops in `scf.if` bodies stay: they
run only where the condition holds.

It writes no attribute: it only moves ops, and running it again moves none.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, math, scf
from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free, is_speculatable

from tkc.dialects.tile import KernelOp
from tkc.passes.alias import defined_within

_SCALAR_DIALECTS = (arith.Arith, math.Math)


def _is_scalar_math(op: Operation) -> bool:
    """An arith/math op on index, integer or f32 scalars only (tiles and vectors stay in loops)."""
    if not any(op.name.startswith(dialect.name + ".") for dialect in _SCALAR_DIALECTS):
        return False
    types = [v.type for v in (*op.operands, *op.results)]
    return all(isinstance(t, IndexType | IntegerType | Float32Type) for t in types)


def _invariant(op: Operation, loop: scf.ForOp) -> bool:
    return not any(defined_within(operand, loop) for operand in op.operands)


def hoist_out_of(loop: scf.ForOp) -> int:
    """Move the loop body's invariant scalar ops (module docstring) before `loop`; how many moved."""
    moved = 0
    changed = True
    while changed:  # an op whose operands were hoisted becomes invariant in turn
        changed = False
        for op in list(loop.body.block.ops):
            if (_is_scalar_math(op) and is_side_effect_free(op) and is_speculatable(op)
                    and _invariant(op, loop)):
                op.detach()
                Rewriter.insert_op(op, InsertPoint.before(loop))
                moved += 1
                changed = True
    return moved


class TileHoistInvariantsPass(ModulePass):
    name = "tile-hoist-invariants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.body.block.ops if isinstance(k, KernelOp)]:
            # post-order: inner loops first, so what they hoist can leave the outer loop too
            for loop in [o for o in kernel.walk(region_first=True) if isinstance(o, scf.ForOp)]:
                hoist_out_of(loop)
