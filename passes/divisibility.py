"""What an index value is provably a multiple of, and whether it depends on launch-time data.

TMA addresses a tensor's innermost dim in 16-byte units: a box that starts elsewhere (an
`elem(x)` coordinate along that dim whose x times the element size is not a multiple of 16)
stops the kernel with an illegal-instruction error. The planner refuses such a start at compile
time where the kernel alone decides it, so it needs to know what a start is a multiple of:

- a constant c is a multiple of |c| (0 of every number, written 0 here);
- a sum, difference, min, max or select of values is a multiple of the gcd of theirs;
- a product of the product of theirs, a left shift by a constant c of 2**c times its operand's;
- a loop counter of the gcd of its lower bound's and its step's;
- anything else (a grid index, a quotient, a remainder, a dim, a scalar load, a value carried
  by a loop) of 1.

A value *depends on launch-time data* when a dim or a scalar load (a table entry) reaches it.
Such a start may well be aligned at every launch (sequence offsets of a multiple of 8), so only
the run time can tell; the reference interpreter checks it there as the GPU would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, SSAValue

from tkc.dialects.tile import DimOp, LoadScalarOp
from tkc.passes.value_fold import fold


@dataclass(frozen=True)
class Multiple:
    """`of`: the value is a multiple of it (0: the value is 0); `launch_time`: a dim or a scalar
    load reaches it."""

    of: int
    launch_time: bool

    def aligned(self, multiple: int) -> bool:
        return self.of % multiple == 0


_GCD_OPS = (arith.AddiOp, arith.SubiOp, arith.MinSIOp, arith.MaxSIOp, arith.MinUIOp, arith.MaxUIOp)
_SAME_OPS = (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp)


def _operands(value: SSAValue) -> tuple[SSAValue, ...]:
    """The values `value`'s multiple is computed from."""
    owner = value.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        if isinstance(loop, scf.ForOp) and value is owner.args[0]:
            return (loop.lb, loop.step)
        return ()
    if isinstance(owner, arith.SelectOp):
        return (owner.lhs, owner.rhs)
    return tuple(owner.operands)


def _multiple_of(value: SSAValue, known: dict[SSAValue, Multiple]) -> Multiple:
    owner = value.owner
    inputs = [known[o] for o in _operands(value)]
    launch_time = any(m.launch_time for m in inputs)
    if isinstance(owner, Block):
        loop = owner.parent_op()
        if isinstance(loop, scf.ForOp) and value is owner.args[0]:
            return Multiple(math.gcd(inputs[0].of, inputs[1].of), launch_time)
        return Multiple(1, True)  # a loop-carried value: whatever the iterations made it
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return Multiple(abs(owner.value.value.data), False)
    if isinstance(owner, DimOp | LoadScalarOp):
        return Multiple(1, True)
    if isinstance(owner, _GCD_OPS) or isinstance(owner, arith.SelectOp):
        return Multiple(math.gcd(*(m.of for m in inputs[-2:])), launch_time)
    if isinstance(owner, arith.MuliOp):
        return Multiple(inputs[0].of * inputs[1].of, launch_time)
    if isinstance(owner, arith.ShLIOp) and isinstance(shift := owner.rhs.owner, arith.ConstantOp) \
            and isinstance(shift.value, IntegerAttr):
        return Multiple(inputs[0].of << shift.value.value.data, launch_time)
    if isinstance(owner, _SAME_OPS):
        return inputs[0]
    return Multiple(1, launch_time)


def alignment_shortfall(start: Multiple, line: int) -> str:
    """How an elem(...) start that `known_multiple` found short of `line` elements falls short,
    for a diagnostic or a decision's reason."""
    if start.launch_time:
        return "comes from launch-time data"
    if line % start.of == 0:
        return f"is a multiple of only {start.of} element(s)"
    return (f"is a multiple of {start.of} element(s), which puts it on a multiple of only {math.gcd(start.of, line)}, "
            f"not of the {line} TMA needs")


def known_multiple(value: SSAValue) -> Multiple:
    """What `value` is provably a multiple of (chains of any depth)."""
    return fold(value, _operands, _multiple_of)
