"""Which loop re-reads the tiles of the loop before it, as tile-sweep-order (which walks it
backwards) and tile-retain-sweep (which keeps some of those tiles in shared memory) both ask:
coordinates that are the same function of each loop's counter, the counter as the body reads it
(a reversed loop's `(lb + ub - 1) - r`)."""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.ir import Operation, SSAValue

from tkc.dialects.tile import DecisionAttr, KernelOp, index_constant
from tkc.passes.alias import Access

SWEEP = "sweep"
"""tile-sweep-order's decision on a loop: 1 where it walks backwards."""
MATCH_DEPTH = 8
"""How many arith ops deep two coordinates are compared for the same walk."""


def walks_backwards(loop: scf.ForOp) -> bool:
    decision = loop.attributes.get(SWEEP)
    return isinstance(decision, DecisionAttr) and decision.int_value == 1


def tensor_name(access: Access) -> str:
    kernel = access.parent_op()
    while not isinstance(kernel, KernelOp):
        assert kernel is not None
        kernel = kernel.parent_op()
    return kernel.arg_names[kernel.body.block.args.index(access.tensor)]


def same_walk(a: SSAValue, b: SSAValue, loop_a: scf.ForOp, loop_b: scf.ForOp, depth: int = 0) -> bool:
    """Whether index value `a` in `loop_a` is the same function of its counter as `b` of `loop_b`'s."""
    if a is b:  # defined before both loops (a sibling loop's values are out of the other's scope)
        return True
    counter_a = loop_counter(loop_a)
    if counter_a is not None and a is counter_a and b is loop_counter(loop_b):
        return True
    oa, ob = a.owner, b.owner
    if depth >= MATCH_DEPTH or not isinstance(oa, Operation) or not isinstance(ob, Operation):
        return False
    if (index_constant(a), index_constant(b)) != (None, None):
        return index_constant(a) == index_constant(b)
    return (oa.name == ob.name and oa.name.startswith("arith.") and len(oa.operands) == len(ob.operands)
            and oa.attributes == ob.attributes and oa.properties == ob.properties
            and all(same_walk(x, y, loop_a, loop_b, depth + 1) for x, y in zip(oa.operands, ob.operands)))


def loop_counter(loop: scf.ForOp) -> SSAValue | None:
    """The value the loop's body reads as its counter: the block argument, or in a reversed loop
    the (lb + ub - 1) - counter that tile-sweep-order put first in its body (None where a hand-edited
    `sweep` claims a reversal the body does not start with: its walk is unknown)."""
    if walks_backwards(loop):
        first = loop.body.block.first_op
        if isinstance(first, arith.SubiOp) and first.rhs is loop.body.block.args[0]:
            return first.result
        return None
    return loop.body.block.args[0]


def previous_loop(loop: scf.ForOp) -> scf.ForOp | None:
    op = loop.prev_op
    while op is not None and not isinstance(op, scf.ForOp):
        op = op.prev_op
    return op
