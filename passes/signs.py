"""Whether an index value is provably at least 0.

A TMA store faults on a box at a negative coordinate (the launch stops with an illegal
instruction; TMA clips a store only at a tensor's end), though the language lets a tile or a
vector be stored at an `elem(x)` coordinate below 0 (nothing before element 0 is written). So
the GPU backend stores such a tile from row 0 on, and needs to know which starts may be
negative. A value is at least 0 when it is:

- a constant at least 0, a grid index, a dim, or an index read from a table (a negative one
  stops the kernel: the language's rule for scalar loads);
- a loop counter whose lower bound is (it counts up), or such a counter counted down
  (`(lb + ub - 1) - r`, as tile-sweep-order walks a loop backwards: from ub - 1 down to lb);
- a sum, product, quotient (of any rounding), minimum or select of such values, or a maximum
  with one such value among its operands;
- a remainder `a % b` (the frontend's `a - floor(a / b) * b`, which takes the divisor's sign) by
  such a b, whatever a's sign.

Anything else (a difference, a value a loop carries) may be negative. Both the plan
(tile-bank-conflicts lays the staging out for one-row boxes) and the lowering ask this of the
same tile-level values, so they cannot disagree.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, BlockArgument, SSAValue

from tkc.dialects.tile import BlockIdOp, DimOp, LoadScalarOp, index_constant
from tkc.passes.value_fold import fold

_ALL_OPERANDS = (arith.AddiOp, arith.MuliOp, arith.DivSIOp, arith.DivUIOp, arith.FloorDivSIOp,
                 arith.CeilDivSIOp, arith.MinSIOp, arith.IndexCastOp, arith.ExtUIOp, arith.ExtSIOp)
"""Ops at least 0 where every operand is."""


def _counted_down(value: SSAValue) -> scf.ForOp | None:
    """The loop of step 1 whose counter r `value` counts down, where it is `(lb + ub - 1) - r`."""
    owner = value.owner
    if not isinstance(owner, arith.SubiOp) or not isinstance(counter := owner.rhs, BlockArgument):
        return None
    loop = counter.owner.parent_op()
    last = owner.lhs.owner
    if not isinstance(loop, scf.ForOp) or counter is not loop.body.block.args[0] or index_constant(loop.step) != 1 \
            or not isinstance(last, arith.SubiOp) or index_constant(last.rhs) != 1:
        return None
    span = last.lhs.owner
    return loop if isinstance(span, arith.AddiOp) and (span.lhs, span.rhs) == (loop.lb, loop.ub) else None


def _remainder_divisor(value: SSAValue) -> SSAValue | None:
    """b where `value` is `a - floor(a / b) * b` (the frontend's `a % b`)."""
    owner = value.owner
    if not isinstance(owner, arith.SubiOp) or not isinstance(product := owner.rhs.owner, arith.MuliOp):
        return None
    for quotient, divisor in ((product.lhs, product.rhs), (product.rhs, product.lhs)):
        floor = quotient.owner
        if isinstance(floor, arith.FloorDivSIOp) and floor.lhs is owner.lhs and floor.rhs is divisor:
            return divisor
    return None


def _operands(value: SSAValue) -> tuple[SSAValue, ...]:
    """The values `value`'s sign follows from."""
    if (down := _counted_down(value)) is not None:
        return (down.lb,)
    if (divisor := _remainder_divisor(value)) is not None:
        return (divisor,)
    owner = value.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        return (loop.lb,) if isinstance(loop, scf.ForOp) and value is owner.args[0] else ()
    if isinstance(owner, arith.SelectOp):
        return (owner.lhs, owner.rhs)
    if isinstance(owner, (*_ALL_OPERANDS, arith.MaxSIOp)):
        return tuple(owner.operands)
    return ()


def _at_least_zero(value: SSAValue, known: dict[SSAValue, bool]) -> bool:
    owner = value.owner
    inputs = [known[o] for o in _operands(value)]
    if _counted_down(value) is not None:
        return inputs[0]  # at least the loop's lower bound
    if _remainder_divisor(value) is not None:
        return inputs[0]  # in [0, b) for b > 0 (b = 0 divides by zero)
    if isinstance(owner, Block):
        return bool(inputs) and inputs[0]  # a loop counter from its lower bound; a carried value: no
    if isinstance(owner, arith.ConstantOp):
        return isinstance(owner.value, IntegerAttr) and owner.value.value.data >= 0
    if isinstance(owner, BlockIdOp | DimOp):
        return True
    if isinstance(owner, LoadScalarOp):
        return isinstance(value.type, IndexType)
    if isinstance(owner, arith.MaxSIOp):
        return any(inputs)
    if isinstance(owner, (*_ALL_OPERANDS, arith.SelectOp)):
        return all(inputs)
    return False


def never_negative(value: SSAValue) -> bool:
    """Whether the index `value` is at least 0 at every launch (chains of any depth)."""
    return fold(value, _operands, _at_least_zero)
