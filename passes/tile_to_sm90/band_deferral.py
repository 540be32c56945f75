"""Loop-carried row reductions of band tiles meet the warps' partials once, after the loop.

A band tile's row reduction is each warp's reduction of its own columns (sm90.row_reduce), then
the 4 warps' partials through shared memory (sm90.band_combine: two syncs). In a loop that only
accumulates the combined value, `acc = acc + row_sum(x)` (or max, or min, of the same reduction),
the warps may as well keep their own partial accumulators and combine them once after the loop:
the sums and extrema are the same up to the order of the additions, and every warp holds the
combined value wherever it is used, since only the loop's result is. So the combine leaves the
loop, and with it two syncs per iteration (layernorm's two row sums: four).

It applies where the accumulator's only use in the body is that one op, the combined value's
only use is the accumulation, the accumulated value's only use is the yield (a body that reads
the running sum, `add_row(x, acc)` after `acc += row_sum(x)`, needs it combined in every
iteration), and, for a sum, the accumulator starts at zero (a partial sum per
warp starting at c would count c four times); a maximum or minimum may start anywhere.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tkc.dialects import sm90
from tkc.dialects.tile import BinaryFn, ReduceFn

_ACCUMULATE = {ReduceFn.SUM: BinaryFn.ADD, ReduceFn.MAX: BinaryFn.MAX, ReduceFn.MIN: BinaryFn.MIN}
"""The element-wise op that accumulates each reduction across iterations."""


def _starts_at_zero(value: SSAValue) -> bool:
    fill = value.owner
    return isinstance(fill, sm90.FillOp) and float(fill.value.value.data) == 0.0


class _AfterLoop:
    """Copies of values the loop body computes, placed after the loop in order."""

    def __init__(self, loop: scf.ForOp):
        self.loop = loop
        self.last: Operation = loop

    def insert(self, op: Operation) -> None:
        Rewriter.insert_op(op, InsertPoint.after(self.last))
        self.last = op

    def value(self, value: SSAValue) -> SSAValue | None:
        """`value` where the loop's results are used: itself if the loop does not define it, else
        a copy of its index math (constants, adds, multiplies: the combine's scratch address
        and barrier id), or None."""
        if not self.loop.is_ancestor(value.owner):  # a block argument's owner is its block
            return value
        owner = value.owner
        if not isinstance(owner, arith.ConstantOp | arith.AddiOp | arith.MuliOp):
            return None
        operands = [self.value(v) for v in owner.operands]
        if any(v is None for v in operands):
            return None
        copy = owner.clone()
        for index, operand in enumerate(operands):
            assert operand is not None
            copy.operands[index] = operand
        self.insert(copy)
        return copy.results[0]


def _defer(loop: scf.ForOp, index: int) -> bool:
    body = loop.body.block
    accumulator = body.args[index + 1]  # after the induction variable
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    step = yielded.operands[index].owner
    if not isinstance(step, sm90.BinaryOp) or not accumulator.has_one_use() or step.parent_block() is not body:
        return False
    if not step.results[0].has_one_use():
        return False  # the body reads the running value (add_row(x, acc)): each warp must hold it combined
    combined = step.rhs if step.lhs is accumulator else step.lhs if step.rhs is accumulator else None
    if combined is None or not isinstance(combine := combined.owner, sm90.BandCombineOp) or not combined.has_one_use():
        return False
    fn = combine.fn.data
    if _ACCUMULATE[fn] != step.fn.data or fn == ReduceFn.SUM and not _starts_at_zero(loop.iter_args[index]):
        return False
    after = _AfterLoop(loop)
    scratch, warpgroup, barrier_id = (after.value(v) for v in (combine.scratch, combine.warpgroup, combine.barrier_id))
    if scratch is None or warpgroup is None or barrier_id is None:
        return False  # any copies placed above stay unused: ptxas drops dead code
    result = loop.results[index]
    uses = list(result.uses)
    final = sm90.BandCombineOp(combine.fn, result, scratch, warpgroup, combine.warpgroups.value.data, barrier_id)
    final.attributes.update(combine.attributes)
    after.insert(final)
    for use in uses:
        use.operation.operands[use.index] = final.result
    combined.replace_all_uses_with(combine.vector)
    Rewriter.erase_op(combine)
    return True


def defer_band_combines(root: Operation) -> None:
    """Move the combine of every accumulated band row reduction out of its loop (module
    docstring), innermost loops first."""
    for loop in reversed([op for op in root.walk() if isinstance(op, scf.ForOp)]):
        for index in range(len(loop.iter_args)):
            _defer(loop, index)
