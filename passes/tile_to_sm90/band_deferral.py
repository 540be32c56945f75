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

The online log-sum-exp of a softmax's first sweep is deferred the same way, as a pair:

    m_new = max(m, row_max(x));  l = l * exp(m - m_new) + row_sum(exp(sub_row(x, m_new)));  m = m_new

(exp or exp2; x may be scaled by a positive constant on both sides). Each warp keeps its own
running maximum m_w and the sum l_w of its columns' exponentials relative to m_w; after the loop
M = max over warps of m_w and l = sum over warps of l_w * exp(m_w - M), which is the same sum
(m_w <= M: no term overflows). So both combines leave the loop: softmax's first sweep goes from
two syncs per tile to none. Where a warp has seen only -inf so far (a row shorter than the
warps' column groups, a tail), its exponentials are taken relative to -FLT_MAX instead of -inf,
so they are 0 and not NaN (exp(-inf - -inf)); a row whose every column is -inf is NaN, as
without the deferral. It applies where the pair is only used that way in the body: m and the
exponentials feed nothing else (a body that stores p, or reads m_new, needs them combined), and
l starts at zero.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import Float32Type, FloatAttr
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tkc.dialects import sm90
from tkc.dialects.tile import BinaryFn, ReduceFn, UnaryFn

_ACCUMULATE = {ReduceFn.SUM: BinaryFn.ADD, ReduceFn.MAX: BinaryFn.MAX, ReduceFn.MIN: BinaryFn.MIN}
"""The element-wise op that accumulates each reduction across iterations."""

_EXPONENTIALS = (UnaryFn.EXP, UnaryFn.EXP2)

_LOWEST_F32 = -3.4028234663852886e38
"""The lowest finite f32: a warp's running maximum before it has seen a finite value, where the
exponentials are taken (module docstring)."""


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


def _unscaled(value: SSAValue) -> tuple[SSAValue, float]:
    """`value` as x * k with k a positive f32 constant (k = 1 where it is no such product)."""
    op = value.owner
    if isinstance(op, sm90.BinaryOp) and op.fn.data == BinaryFn.MUL:
        for tile, factor in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            constant = factor.owner
            if (isinstance(constant, arith.ConstantOp) and isinstance(constant.value, FloatAttr)
                    and isinstance(factor.type, Float32Type) and float(constant.value.value.data) > 0):
                return tile, float(constant.value.value.data)
    return value, 1.0


def _other(op: Operation, value: SSAValue) -> SSAValue | None:
    """The operand of binary `op` beside `value` (None where `value` is not one of them)."""
    lhs, rhs = op.operands
    return rhs if lhs is value else lhs if rhs is value else None


def _users(value: SSAValue) -> list[Operation]:
    return [use.operation for use in value.uses]


def _defer_log_sum_exp(loop: scf.ForOp, max_index: int, sum_index: int) -> bool:
    """Defer the online log-sum-exp carried in iteration values `max_index` (m) and `sum_index`
    (l), module docstring; False where the body is not exactly that."""
    body = loop.body.block
    m, l = body.args[max_index + 1], body.args[sum_index + 1]
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    m_new, l_new = yielded.operands[max_index], yielded.operands[sum_index]
    step, add = m_new.owner, l_new.owner
    if not (isinstance(step, sm90.BinaryOp) and step.fn.data == BinaryFn.MAX and step.parent_block() is body
            and isinstance(add, sm90.BinaryOp) and add.fn.data == BinaryFn.ADD and add.parent_block() is body):
        return False
    tile_max = _other(step, m)
    if tile_max is None or not tile_max.has_one_use():
        return False
    combined_max, scale = _unscaled(tile_max)
    max_combine = combined_max.owner
    if not (isinstance(max_combine, sm90.BandCombineOp) and max_combine.fn.data == ReduceFn.MAX
            and combined_max.has_one_use() and isinstance(reduce_max := max_combine.vector.owner, sm90.RowReduceOp)
            and reduce_max.fn.data == ReduceFn.MAX):
        return False
    x = reduce_max.source
    # l * exp(m - m_new) on one side of the add, the combined row sum of exponentials on the other
    for rescaled, combined_sum in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        rescale = rescaled.owner
        if isinstance(rescale, sm90.BinaryOp) and rescale.fn.data == BinaryFn.MUL and _other(rescale, l) is not None:
            break
    else:
        return False
    alpha = _other(rescale, l)
    assert alpha is not None
    exponential = alpha.owner
    if not isinstance(exponential, sm90.UnaryOp):
        return False
    gap = exponential.source
    if not (exponential.fn.data in _EXPONENTIALS
            and isinstance(gap_op := gap.owner, sm90.BinaryOp) and gap_op.fn.data == BinaryFn.SUB
            and gap_op.lhs is m and gap_op.rhs is m_new):
        return False
    sum_combine = combined_sum.owner
    if not (isinstance(sum_combine, sm90.BandCombineOp) and sum_combine.fn.data == ReduceFn.SUM
            and isinstance(reduce_sum := sum_combine.vector.owner, sm90.RowReduceOp)
            and reduce_sum.fn.data == ReduceFn.SUM
            and isinstance(p_op := reduce_sum.source.owner, sm90.UnaryOp) and p_op.fn.data == exponential.fn.data
            and isinstance(shift := p_op.source.owner, sm90.RowBroadcastOp) and shift.fn.data == BinaryFn.SUB
            and shift.vector is m_new):
        return False
    shifted, shift_scale = _unscaled(shift.source)
    if shifted is not x or shift_scale != scale:
        return False  # the per-warp maximum must bound the very values exponentiated
    single_uses = (tile_max, combined_max, rescaled, combined_sum, alpha, gap, reduce_sum.result, p_op.result,
                   shift.result, l_new, max_combine.vector)
    if not all(v.has_one_use() for v in single_uses):
        return False  # an intermediate read elsewhere would see a warp's partial
    if set(_users(m)) != {step, gap_op} or _users(l) != [rescale]:
        return False
    if not set(_users(m_new)) <= {yielded, gap_op, shift} or list(yielded.operands).count(m_new) != 1:
        return False
    if list(yielded.operands).count(l_new) != 1 or not _starts_at_zero(loop.iter_args[sum_index]):
        return False
    after = _AfterLoop(loop)
    places = [tuple(after.value(v) for v in (c.scratch, c.warpgroup, c.barrier_id)) for c in (max_combine, sum_combine)]
    if any(v is None for place in places for v in place):
        return False  # any copies placed above stay unused: ptxas drops dead code
    # in the body: each warp's own maximum and sum
    combined_max.replace_all_uses_with(max_combine.vector)
    combined_sum.replace_all_uses_with(sum_combine.vector)
    Rewriter.erase_op(max_combine)
    Rewriter.erase_op(sum_combine)
    lowest = arith.ConstantOp(FloatAttr(_LOWEST_F32, Float32Type()))
    floor = sm90.BinaryOp(step.fn, m_new, lowest.result)
    Rewriter.insert_op([lowest, floor], InsertPoint.after(step))
    gap_op.operands[1] = floor.result
    shift.operands[1] = floor.result
    # after the loop: M = max of the warps' maxima, l = sum of their sums rescaled to M
    m_out, l_out = loop.results[max_index], loop.results[sum_index]
    m_uses, l_uses = list(m_out.uses), list(l_out.uses)
    combines: list[sm90.BandCombineOp] = []
    for combine, value in ((max_combine, m_out), (sum_combine, None)):
        if value is None:
            gap_out = sm90.BinaryOp(gap_op.fn, m_out, combines[0].result)
            weight = sm90.UnaryOp(exponential.fn, gap_out.result)
            weighted = sm90.BinaryOp(rescale.fn, l_out, weight.result)
            for op in (gap_out, weight, weighted):
                after.insert(op)
            value = weighted.result
        scratch, warpgroup, barrier_id = places[len(combines)]
        assert scratch is not None and warpgroup is not None and barrier_id is not None
        final = sm90.BandCombineOp(combine.fn, value, scratch, warpgroup, combine.warpgroups.value.data, barrier_id)
        final.attributes.update(combine.attributes)
        after.insert(final)
        combines.append(final)
    for uses, final in ((m_uses, combines[0]), (l_uses, combines[1])):
        for use in uses:
            use.operation.operands[use.index] = final.result
    return True


def defer_band_combines(root: Operation) -> None:
    """Move the combine of every accumulated band row reduction, and of every online
    log-sum-exp, out of its loop (module docstring), innermost loops first."""
    for loop in reversed([op for op in root.walk() if isinstance(op, scf.ForOp)]):
        count = len(loop.iter_args)
        for max_index in range(count):
            for sum_index in range(count):
                if max_index != sum_index:
                    _defer_log_sum_exp(loop, max_index, sum_index)
        for index in range(count):
            _defer(loop, index)
