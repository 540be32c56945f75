"""Register-tile compute, op by op: each tile op becomes the sm90 op on the consumer's
fragments (lowering.fragment_type, the type converter, gives their types).

Element-wise maps, converts and fills are register-local. A row reduction meets the four
threads of a quad (quad shuffles); a row broadcast is register-local, as a row vector lives in
the rows' threads. A column vector is replicated over the warpgroup, so a column broadcast is
register-local too, while a column reduction meets the other warps and consumers in the shared
scratch buffer tile-pipeline placed (between two syncs of named barrier consumers + 1); of a tile
every consumer holds whole, each consumer reduces its own copy (meeting the others all the same,
as they share the scratch buffer). In the band layout (plan.band) a row reduction is a warp's
(sm90.row_reduce) and then the 4 warps' through a region of the scratch of its own
(plan.band_region; sm90.band_combine), and a column reduction stays in the warp, which holds all rows of its columns. A mask,
a position tile and a register load see the consumer's first row, as each consumer owns rows row0.. of a tile
(0 where every consumer holds it whole):
a bounds mask's row limit becomes relative to it (limit - row0), except a constant limit that
no row of the tile reaches, which stays a constant the consumer's rows do not reach either (its
compares are left out). A column vector is whole in every consumer and keeps its limit.

Element-wise maps, broadcasts, reductions, cumulative sums, layout changes and masks of bf16, f16
or fp8 tiles and vectors compute in f32: the operands are widened, the result rounded back to its
dtype, once per op, as numpy computes on ml_dtypes' types (so the GPU gives what the interpreter
gives). The exception: +, -, *, min and max of two bf16 (or two f16) tiles stay packed, two
elements per instruction (`mul.rn.bf16x2`), which gives the same bits (dtypes.packed_math) with
no f32 copy of either operand: the copies, which ptxas keeps live between ops that read the same
tile, spilled a rotary-embedded attention's K rotation (four bf16 tiles each read twice).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue

from tkc.dialects import sm90, tile
from tkc.dtypes import of_type
from tkc.passes.plan import band_region

if TYPE_CHECKING:
    from tkc.passes.tile_to_sm90.consumer import ConsumerEmitter


def _fill(c: ConsumerEmitter, op: tile.FillOp, block: Block) -> Operation:
    return sm90.FillOp(op.value.value.data, c.lowering.fragment_type(op.result.type))


def _is_narrow(t: object) -> bool:
    """A bf16, f16 or fp8 tile or vector."""
    if not isinstance(t, tile.ShapedTileType):
        return False
    dtype = of_type(t.element_type)
    return dtype is not None and dtype.bytes < 4


def _in_f32(c: ConsumerEmitter, op: Operation, block: Block, build: Callable[..., Operation],
            *operands: SSAValue) -> Operation:
    """`build(*operands)` on the consumer's values of `operands`, widened to f32 where they are
    bf16, f16 or fp8 tiles, and the result rounded back to `op`'s dtype (module docstring)."""
    if not any(_is_narrow(v.type) for v in (*operands, *op.results)):
        return build(*(c.values[v] for v in operands))
    widened = []
    for v in operands:
        value = c.values[v]
        if _is_narrow(v.type):
            f32 = c.lowering.fragment_type(tile.same_kind(v.type, Float32Type()))
            value = c.op(sm90.ConvertOp(value, f32), block).results[0]
        widened.append(value)
    computed = c.op(build(*widened), block)
    return sm90.ConvertOp(computed.results[0], c.lowering.fragment_type(op.results[0].type))


def _unary(c: ConsumerEmitter, op: tile.UnaryOp, block: Block) -> Operation:
    on_fma = op.fn.data == tile.UnaryFn.EXP2 and isinstance(op.result.type, tile.RegisterTileType)
    fma_every = c.lowering.plan.fma_exp2 if on_fma else 0
    return _in_f32(c, op, block, lambda x: sm90.UnaryOp(op.fn, x, fma_every), op.source)


PACKED_FNS = frozenset({tile.BinaryFn.ADD, tile.BinaryFn.SUB, tile.BinaryFn.MUL, tile.BinaryFn.MAX,
                        tile.BinaryFn.MIN})
"""The element-wise ops PTX computes on packed pairs of a dtype with packed_math."""


def _packed(op: tile.BinaryOp) -> bool:
    """Whether `op` computes on two tiles of its own packed_math dtype (module docstring)."""
    t = op.result.type
    dtype = of_type(t.element_type) if isinstance(t, tile.RegisterTileType) else None
    return (dtype is not None and dtype.packed_math and op.fn.data in PACKED_FNS
            and op.lhs.type == t and op.rhs.type == t)


def _binary(c: ConsumerEmitter, op: tile.BinaryOp, block: Block) -> Operation:
    if _packed(op):
        return sm90.BinaryOp(op.fn, c.values[op.lhs], c.values[op.rhs])
    return _in_f32(c, op, block, lambda x, y: sm90.BinaryOp(op.fn, x, y), op.lhs, op.rhs)


def _position(c: ConsumerEmitter, op: tile.PositionOp, block: Block) -> Operation:
    """A column vector's positions run along the columns its threads hold, whole in every
    consumer; a tile's rows and a row vector's from the consumer's first row."""
    first = c.values[op.offset]
    result = op.result.type
    if isinstance(result, tile.RegisterVectorType) and result.is_column:
        return sm90.PositionOp(tile.AxisAttr(tile.Axis.COL), first, c.lowering.fragment_type(result))
    if op.axis.data == tile.Axis.ROW:
        first = c.add(first, c.row0(result), block)
    return sm90.PositionOp(op.axis, first, c.lowering.fragment_type(result))


def _select(c: ConsumerEmitter, op: tile.SelectOp, block: Block) -> Operation:
    f32 = c.lowering.fragment_type(tile.same_kind(op.result.type, Float32Type()))

    def build(cond: SSAValue, on_true: SSAValue, on_false: SSAValue) -> Operation:
        return sm90.SelectOp(cond, on_true, on_false, f32)

    return _in_f32(c, op, block, build, op.cond, op.on_true, op.on_false)


def _convert(c: ConsumerEmitter, op: tile.ConvertOp, block: Block) -> Operation:
    return sm90.ConvertOp(c.values[op.source], c.lowering.fragment_type(op.result.type))


def _reduce(c: ConsumerEmitter, op: tile.ReduceOp, block: Block) -> Operation:
    consumers = c.lowering.consumers
    if op.axis.data == tile.Axis.ROW and not c.lowering.plan.band:
        return _in_f32(c, op, block, lambda x: sm90.RowReduceOp(op.fn, x), op.source)
    scratch = c.add(c.smem_base, c.const(c.memory.col_scratch, block), block)
    barrier_id = c.const(consumers + 1, block)
    if op.axis.data == tile.Axis.ROW:
        # each warp reduces its own columns, then the 4 warps' partials meet in the reduction's
        # own region of the scratch
        scratch = c.add(scratch, c.const(band_region(c.lowering.kernel, op), block), block)

        def combine(x: SSAValue) -> Operation:
            partial = c.op(sm90.RowReduceOp(op.fn, x), block).results[0]
            return sm90.BandCombineOp(op.fn, partial, scratch, c.consumer_index, consumers, barrier_id)

        return _in_f32(c, op, block, combine, op.source)
    source_type = cast(tile.RegisterTileType, op.source.type)
    replicated = c.lowering.replicated(source_type.rows)
    valid = c.valid_rows(source_type, block)
    limits = [valid, c.const(source_type.cols, block)] if valid is not None else []
    identity = FloatAttr(tile.REDUCE_IDENTITY[op.fn.data], Float32Type())

    def reduce(x: SSAValue) -> Operation:
        if limits:
            # the fragment's rows past the tile's are padding: they count as the identity
            x = c.op(sm90.BoundsMaskOp(x, limits, identity), block).results[0]
        return sm90.ColReduceOp(op.fn, x, scratch, c.consumer_index, consumers, barrier_id, replicated)

    return _in_f32(c, op, block, reduce, op.source)


def _transpose_op(c: ConsumerEmitter, value: SSAValue, vector: tile.RegisterVectorType, column: bool,
                  block: Block) -> sm90.TransposeOp:
    """`value`, the fragment of `vector`, moved to the column layout (or the row layout) through
    the scratch buffer tile-pipeline placed."""
    scratch = c.add(c.smem_base, c.const(c.memory.col_scratch, block), block)
    barrier_id = c.const(c.lowering.consumers + 1, block)
    result_type = c.lowering.fragment_type(vector.with_layout(column))
    row0 = c.row0(vector.with_layout(False))
    return sm90.TransposeOp(value, result_type, scratch, row0, c.lowering.consumers, barrier_id)


def _transpose(c: ConsumerEmitter, op: tile.TransposeOp, block: Block) -> Operation:
    """The scratch holds f32: a narrower vector moves widened and is rounded back, which is exact
    (f32 holds every bf16, f16 and fp8 value)."""
    source, result = op.source.type, op.result.type
    assert isinstance(source, tile.RegisterVectorType) and isinstance(result, tile.RegisterVectorType)
    wide = cast(tile.RegisterVectorType, tile.same_kind(source, Float32Type()))
    return _in_f32(c, op, block, lambda x: _transpose_op(c, x, wide, result.is_column, block), op.source)


def _cumsum(c: ConsumerEmitter, op: tile.CumsumOp, block: Block) -> Operation:
    """A scan along columns is quad-local (sm90.row_scan), one down the rows meets the other warps
    and consumers in the scratch (sm90.col_scan); a row vector is scanned in the column layout,
    where each quad holds all its elements, and moved back. A bf16, f16 or fp8 operand is
    scanned in f32 and rounded back (_in_f32)."""
    source = op.source.type
    wide = tile.same_kind(source, Float32Type())

    def scan(x: SSAValue) -> Operation:
        if op.axis is not None and op.axis.data == tile.Axis.COL:
            scratch = c.add(c.smem_base, c.const(c.memory.col_scratch, block), block)
            barrier_id = c.const(c.lowering.consumers + 1, block)
            replicated = c.lowering.replicated(cast(tile.RegisterTileType, op.source.type).rows)
            return sm90.ColScanOp(x, scratch, c.consumer_index, c.lowering.consumers, barrier_id, replicated)
        if isinstance(wide, tile.RegisterVectorType) and not wide.is_column:
            column = c.op(_transpose_op(c, x, wide, True, block), block).results[0]
            scanned = c.op(sm90.RowScanOp(column), block).results[0]
            return _transpose_op(c, scanned, wide, False, block)
        return sm90.RowScanOp(x)

    return _in_f32(c, op, block, scan, op.source)


def _vector_reduce(c: ConsumerEmitter, op: tile.VectorReduceOp, block: Block) -> Operation:
    """A column fragment holds every element in each quad; a row vector is moved there first."""
    source = op.source.type
    assert isinstance(source, tile.RegisterVectorType)
    value = c.values[op.source]
    if not source.is_column:
        value = c.op(_transpose_op(c, value, source, True, block), block).results[0]
    return sm90.VectorReduceOp(op.fn, value)


def _broadcast(c: ConsumerEmitter, op: tile.BroadcastOp, block: Block) -> Operation:
    broadcast = sm90.RowBroadcastOp if op.axis.data == tile.Axis.ROW else sm90.ColBroadcastOp
    return _in_f32(c, op, block, lambda x, v: broadcast(op.fn, x, v), op.source, op.vector)


def _mask(c: ConsumerEmitter, op: tile.MaskOp, block: Block) -> Operation:
    row0 = c.add(c.values[op.row_offset], c.row0(op.source.type), block)
    col0 = c.values[op.col_offset]
    return _in_f32(c, op, block, lambda x: sm90.MaskOp(op.kind, x, row0, col0, op.fill), op.source)


def _bounds_mask(c: ConsumerEmitter, op: tile.BoundsMaskOp, block: Block) -> Operation:
    source_type = op.source.type
    limits = [c.values[v] for v in op.limits]
    if not (isinstance(source_type, tile.RegisterVectorType) and source_type.is_column):
        assert isinstance(source_type, tile.ShapedTileType)
        limits[0] = _consumer_row_limit(c, op.limits[0], source_type, block)
    return _in_f32(c, op, block, lambda x: sm90.BoundsMaskOp(x, limits, op.fill), op.source)


def _consumer_row_limit(c: ConsumerEmitter, limit: SSAValue, source_type: tile.ShapedTileType,
                        block: Block) -> SSAValue:
    """A row limit counted from the consumer's first row: limit - row0, or the consumer's rows
    where the limit is a constant no row of the tile reaches (the mask then skips the rows)."""
    rows = source_type.get_shape()[0]
    constant = limit.owner
    if isinstance(constant, arith.ConstantOp) and isinstance(constant.value, IntegerAttr):
        if constant.value.value.data >= rows:
            return c.const(c.lowering.plan.consumer_rows(rows), block)
    return c.sub(c.values[limit], c.row0(source_type), block)


def _to_reg(c: ConsumerEmitter, op: tile.ToRegOp, block: Block) -> Operation:
    result_type = op.result.type
    is_column = isinstance(result_type, tile.RegisterVectorType) and result_type.is_column
    first = c.const(0, block) if is_column else c.row0(result_type)
    load = op.source.owner
    if isinstance(load, tile.LoadOp) and (line := tile.realignment(load)):
        # the box started at the 16-byte boundary at or below the vector's start: skip to it
        start = c.values[load.coords[-1]]  # a vector's only element coordinate: the innermost
        first = c.add(first, c.op(arith.AndIOp(start, c.const(line - 1, block)), block).results[0], block)
    return sm90.LoadFragmentOp(c.values[op.source], first, c.lowering.fragment_type(result_type))


PATTERNS: dict[type[Operation], Callable[[ConsumerEmitter, Any, Block], Operation]] = {
    tile.FillOp: _fill,
    tile.UnaryOp: _unary,
    tile.BinaryOp: _binary,
    tile.PositionOp: _position,
    tile.SelectOp: _select,
    tile.ConvertOp: _convert,
    tile.ReduceOp: _reduce,
    tile.BroadcastOp: _broadcast,
    tile.CumsumOp: _cumsum,
    tile.TransposeOp: _transpose,
    tile.VectorReduceOp: _vector_reduce,
    tile.MaskOp: _mask,
    tile.BoundsMaskOp: _bounds_mask,
    tile.ToRegOp: _to_reg,
}
"""The sm90 op of each register-tile compute op (built after any index math it needs)."""
