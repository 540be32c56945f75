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

The online softmax's pair (and the online logsumexp's) defers too:

    m_new = max(m, row_max(x))          (or row_max(x) times a positive constant)
    l = l * exp(m - m_new) + row_sum(exp(sub_row(x, m_new)))      (exp or exp2 in both places)
    m = m_new

Each warp keeps its own running maximum m_w and its sum l_w of exp(x - m_w) over its own
columns; after the loop M = max_w m_w and L = sum_w l_w * exp(m_w - M), which is the sum the
combined form computes, up to rounding. It applies where m and m_new are used only so, l starts
at zero, and nothing else in the body reads m_new. A warp whose columns are all -inf so far
(the tail of a short row) has m_w = -inf: inside the loop m_new is read as at least -FLT_MAX,
so its exp(-inf - m_new) terms are 0, not NaN, where the combined form saw another warp's
finite maximum; after the loop M is read so too, so a loop that ran no iteration gives L = 0.
A 16-row softmax's first sweep then has no barrier in its loop.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import Float32Type, FloatAttr
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tkc.dialects import sm90
from tkc.dialects.tile import BinaryFn, BinaryFnAttr, ReduceFn, ReduceFnAttr, UnaryFn

FLOAT32_LOWEST = -3.4028234663852886e38

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


def _only_use(value: SSAValue) -> Operation | None:
    return next(iter(value.uses)).operation if value.has_one_use() else None


def _combined_max(value: SSAValue) -> sm90.BandCombineOp | None:
    """The max combine `value` is, or is times a positive constant (row_max(x * c) = row_max(x) * c)."""
    owner = value.owner
    if isinstance(owner, sm90.BinaryOp) and owner.fn.data == BinaryFn.MUL:
        for vector, scale in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            constant = scale.owner
            if (isinstance(constant, arith.ConstantOp) and isinstance(constant.value, FloatAttr)
                    and constant.value.value.data > 0 and vector.has_one_use()):
                return _combined_max(vector)
        return None
    if isinstance(owner, sm90.BandCombineOp) and owner.fn.data == ReduceFn.MAX and value.has_one_use():
        return owner
    return None


def _defer_online_softmax(loop: scf.ForOp, index: int) -> bool:
    """Defer the online softmax's max and sum whose running maximum is iter_arg `index` (module
    docstring). Every op of the pattern is checked with its uses, so nothing else reads a value
    that becomes one warp's own."""
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    m = body.args[index + 1]
    m_new = yielded.operands[index]
    step = m_new.owner
    if not (isinstance(step, sm90.BinaryOp) and step.fn.data == BinaryFn.MAX and step.parent_block() is body):
        return False
    tile_max = step.rhs if step.lhs is m else step.lhs if step.rhs is m else None
    if tile_max is None or not tile_max.has_one_use() or (max_combine := _combined_max(tile_max)) is None:
        return False
    users = {use.operation for use in m_new.uses}
    gap = next((u for u in users if isinstance(u, sm90.BinaryOp) and u.fn.data == BinaryFn.SUB
                and u.lhs is m and u.rhs is m_new), None)
    shifted = next((u for u in users if isinstance(u, sm90.RowBroadcastOp) and u.fn.data == BinaryFn.SUB
                    and u.vector is m_new), None)
    if gap is None or shifted is None or users != {gap, shifted, yielded} or len(list(m_new.uses)) != 3:
        return False
    if {use.operation for use in m.uses} != {step, gap} or len(list(m.uses)) != 2:
        return False
    rescale, exps = _only_use(gap.result), _only_use(shifted.result)
    if not (isinstance(rescale, sm90.UnaryOp) and isinstance(exps, sm90.UnaryOp)
            and rescale.fn.data == exps.fn.data in (UnaryFn.EXP, UnaryFn.EXP2)):
        return False
    rescaled, partial = _only_use(rescale.result), _only_use(exps.result)
    if not (isinstance(rescaled, sm90.BinaryOp) and rescaled.fn.data == BinaryFn.MUL
            and isinstance(partial, sm90.RowReduceOp) and partial.fn.data == ReduceFn.SUM):
        return False
    sum_combine = _only_use(partial.result)
    if not (isinstance(sum_combine, sm90.BandCombineOp) and sum_combine.fn.data == ReduceFn.SUM):
        return False
    l_new = _only_use(sum_combine.result)
    if not (isinstance(l_new, sm90.BinaryOp) and l_new.fn.data == BinaryFn.ADD
            and {l_new.lhs, l_new.rhs} == {rescaled.result, sum_combine.result}):
        return False
    l_uses = list(l_new.result.uses)
    if len(l_uses) != 1 or l_uses[0].operation is not yielded:
        return False
    l_index = l_uses[0].index
    l = body.args[l_index + 1]
    if {rescaled.lhs, rescaled.rhs} != {l, rescale.result} or not l.has_one_use():
        return False
    if not _starts_at_zero(loop.iter_args[l_index]):
        return False  # each warp's l would count the initial sum once
    after = _AfterLoop(loop)
    operands = [after.value(v) for c in (max_combine, sum_combine) for v in (c.scratch, c.warpgroup, c.barrier_id)]
    if any(v is None for v in operands):
        return False
    max_scratch, max_warpgroup, max_barrier, sum_scratch, sum_warpgroup, sum_barrier = operands
    assert max_scratch and max_warpgroup and max_barrier and sum_scratch and sum_warpgroup and sum_barrier

    lowest = arith.ConstantOp(FloatAttr(FLOAT32_LOWEST, Float32Type()))
    floor = sm90.BinaryOp(BinaryFnAttr(BinaryFn.MAX), m_new, lowest.result)
    Rewriter.insert_op([lowest, floor], InsertPoint.after(step))
    gap.operands[1] = floor.result
    shifted.operands[1] = floor.result
    max_combine.result.replace_all_uses_with(max_combine.vector)
    Rewriter.erase_op(max_combine)
    sum_combine.result.replace_all_uses_with(sum_combine.vector)
    Rewriter.erase_op(sum_combine)

    m_out, l_out = loop.results[index], loop.results[l_index]
    m_uses, l_out_uses = list(m_out.uses), list(l_out.uses)
    row_max = sm90.BandCombineOp(ReduceFnAttr(ReduceFn.MAX), m_out, max_scratch, max_warpgroup,
                                 max_combine.warpgroups.value.data, max_barrier)
    row_max.attributes.update(max_combine.attributes)
    lowest_after = arith.ConstantOp(FloatAttr(FLOAT32_LOWEST, Float32Type()))
    row_floor = sm90.BinaryOp(BinaryFnAttr(BinaryFn.MAX), row_max.result, lowest_after.result)
    own_gap = sm90.BinaryOp(BinaryFnAttr(BinaryFn.SUB), m_out, row_floor.result)
    own_scale = sm90.UnaryOp(rescale.fn, own_gap.result)
    own_sum = sm90.BinaryOp(BinaryFnAttr(BinaryFn.MUL), l_out, own_scale.result)
    row_sum = sm90.BandCombineOp(ReduceFnAttr(ReduceFn.SUM), own_sum.result, sum_scratch, sum_warpgroup,
                                 sum_combine.warpgroups.value.data, sum_barrier)
    row_sum.attributes.update(sum_combine.attributes)
    for op in (row_max, lowest_after, row_floor, own_gap, own_scale, own_sum, row_sum):
        after.insert(op)
    for use in m_uses:
        use.operation.operands[use.index] = row_max.result
    for use in l_out_uses:
        use.operation.operands[use.index] = row_sum.result
    return True


def defer_band_combines(root: Operation) -> None:
    """Move the combine of every accumulated band row reduction out of its loop (module
    docstring), innermost loops first."""
    for loop in reversed([op for op in root.walk() if isinstance(op, scf.ForOp)]):
        for index in range(len(loop.iter_args)):
            if not _defer_online_softmax(loop, index):
                _defer(loop, index)
