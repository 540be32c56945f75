"""tile-mask-tails: mask the elements past the end of a tensor where a reduction or an mma would see them.

A tile at tile coordinates may run past the end of its tensor (`grid (ceildiv(M, BM), ...)`,
`for k in 0 .. ceildiv(K, BK)`). The language makes those elements *padding*: a load reads 0
for them, reductions leave them out, an mma counts them as 0, and a store never writes them
(docs/language.md, "Tiles past the end of a tensor"). A dim the program counts in whole tiles
(`N / BKV`, which the runtime then requires to be a multiple) has no partial tiles of a dividing
extent, and needs nothing here. TMA already reads zeros past the end and
clips stores at the end, so most kernels need nothing more: a GEMM's ragged K is zeros times
zeros. This pass finds the places where that is not enough:

- a reduction along an axis with padding that does not hold the reduction's identity (`row_max`
  of attention scores over keys past N: those scores are 0, not -inf);
- a vector reduced to a scalar (`sum(v)`) whose padding does not hold the identity (a cumsum
  needs no mask: padding only ever ends an axis, so no valid element's sum reaches it);
- an mma whose contraction axis has padding that is not 0 in an operand (attention's P past the
  last key is exp2(0 - m)); a shared operand made by `tile.to_shared` is masked in registers
  before the move;
- a store whose value may have padding where the destination does not end (a tile loaded at
  other coordinates than it is stored at: TMA clips only at the destination's end).

What it decides, per value and axis: its *tails*, the (tensor dim, tile coordinate, tile
extent) triples whose end bounds it (a load adds one per axis whose dim is not a whole number of
tiles; fills and positions have none; element-wise ops, selects included, take the union of
their operands' (cumsums and transposes their operand's), reductions and mmas keep the surviving axes', values joined by `scf.if` and
`scf.for` the union of what flows in), and the value the padding holds where that is known (0
after a load, the fill after a mask, f(fill) after an element-wise op of it, a select's where
the condition's padding picks a branch whose padding is known). A mask goes where the padding's
value is unknown or wrong; one mask serves every use that needs the same one (row_sum(p) and
bf16(p) as an mma operand share it).

Where no mask can make the program exact — a carried value whose tiles come from coordinates the
loop changes (its padding moves from one iteration to the next), a store of a value whose end
is not provably the destination's — the kernel keeps working on whole tiles: the pass requires
the dims involved to be multiples of the tile extents, and the runtime refuses other shapes
before launching, naming the dim and the reason (`whole_tiles` on the kernel). A dim the kernel
requires to be a multiple (`require N % 64 == 0`: tile.required_multiples) ends its tiles exactly
where their extent divides the multiple, so nothing is masked there.

A kernel annotated `@whole_tiles` (or compiled with `tile-mask-tails{whole_tiles=true}`) gets no
masks: every dim one would guard must be whole tiles instead. The masks cost full tiles too
(their compares, branches and live registers: attention forward at whole-tile shapes ran 0-6%
slower with its one mask on the H200), so `tkc.compile` builds this variant beside the masked
one and launches it when the shapes allow.

Written:
  %limit = dim - coord * extent, %past = dim < (coord + 1) * extent   once per tail
  %masked = scf.if %past -> (...) {
    %m = tile.bounds_mask %x[%rows, %cols] fill F {tails = "why"}
    scf.yield %m
  } else { scf.yield %x }
  tail_masks = #tile.decision<N, "...">          on the kernel, when it inserts any
  whole_tiles = {N = #tile.decision<64, "why">}  on the kernel, when a dim must be whole tiles
Only a partial tile runs the selects; a full one pays the compares and a uniform branch per mask.
The pass is idempotent: its masks' padding holds the identity, so running it again adds nothing.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FloatAttr, IndexType, IntegerAttr, LocationAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, OpResult, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from tkc import dtypes
from tkc.diagnostics import error_at, line_label
from tkc.dialects import tile
from tkc.dialects.tile import CLIPPED, REDUCE_IDENTITY, Axis, BinaryFn, ReduceFn, UnaryFn
from tkc.passes.divisibility import known_multiple
from tkc.passes.alias import defined_within


@dataclass(frozen=True)
class Tail:
    """Along one axis, the elements from `dim - coord * scale` on lie past the end of a tensor,
    for a tile of `extent` elements at coordinate `coord`, which counts tiles (`scale` is the
    extent) or elements (`elem(x)`: `scale` is 1). `dim` is the tensor's dim, or the run-time
    end of an element range (`elem(x, end)`). A range of a fixed length (`elem(x, x + 1)`: an
    embedding row) has the tail (length, None, extent, 1) wherever x lies: its padding is the
    same from one gathered row to the next, so it stays exact where a loop carries it. Where
    such a range may also run past the tensor's end (`elem(g * 4, g * 4 + 4)` of 10 rows), it
    has the tensor's tail (dim, x, extent, 1) as well, and its padding begins at the nearer."""

    dim: str | int | SSAValue
    coord: SSAValue | None
    extent: int
    scale: int
    bound: str | int | None = None
    """Of an element range, the tensor's dim: the language bounds the range's end by it, but a
    run-time end may lie past it (a KV cache shorter than the keys a sequence counts), and the
    interpreter then ends the range at the dim, so the masks end it at min(end, dim) too (TMA
    reads zeros between the two, which are padding, not elements). The analysis (_limit,
    covers) keeps comparing ends as written."""

    cuts_fixed_range: bool = False
    """The tensor's end cutting a range of a fixed length (`elem(x, x + 4)` of 10 rows): masks
    leave what lies past it out of reductions and mmas, and a store along rows ends there
    (clip_stores). A store that cannot end there (along columns) is not refused for it: it writes
    what the kernel computed from TMA's zeros, where the interpreter writes nothing. Refusing
    would refuse every such store of biases gathered at offsets read at run time, which lie
    inside the tensor wherever the offsets are right."""

    @property
    def element(self) -> bool:
        """Whether the coordinate counts elements: then no multiple of the dim makes the tile
        end at it, and only a mask keeps the padding exact."""
        return self.scale != self.extent


@dataclass(frozen=True)
class AxisPadding:
    """One axis of a tile or vector: the tails that end it; whether they are `exact` (false when a
    coordinate changes where the value is carried: the dims are known, the positions are not);
    and the value of every element that lies in the padding along this axis (None: unknown).
    `nan_lines`: the fill holds except in the lines across this axis whose valid elements are
    all NaN, where the padding is NaN too (`sub_row(x, m)` of -inf padding by a row max `m`:
    m = -inf only where the row's valid x are -inf, and then its valid differences are NaN). A
    sum, max or mma over such a line is NaN with or without its padding, so the fill serves
    them; an op that can turn NaN into a number (relu, max, min) makes the fill unknown."""

    tails: frozenset[Tail] = frozenset()
    exact: bool = True
    fill: float | None = None
    nan_lines: bool = False
    stable: bool = True
    """Where not `exact`: whether each tail's valid extent is still one expression of values
    defined outside the loop or if that carries the value (the taps of a shifted window,
    `elem(t * BT - 3 + k, T - 3 + k)`, all hold T - t * BT elements): the padding begins at the
    same element whatever the coordinates, which a store can check (`covers`)."""

    def __or__(self, other: AxisPadding) -> AxisPadding:
        """Padding of an element-wise result: the union; the fill is unknown unless given."""
        return AxisPadding(self.tails | other.tails, self.exact and other.exact, stable=self.stable and other.stable)

    @property
    def dims(self) -> dict[str | int, int]:
        """The multiple each dim must be for the tails at tile coordinates to end exactly at it."""
        multiples: dict[str | int, int] = {}
        for t in self.tails:
            if not t.element:
                assert not isinstance(t.dim, SSAValue), "a run-time end comes with an element coordinate"
                multiples[t.dim] = math.lcm(multiples.get(t.dim, 1), t.extent)
        return multiples


Padding = tuple[AxisPadding, ...]


def none(rank: int) -> Padding:
    return (AxisPadding(),) * rank


def _tensor_axis(op: tile.LoadOp | tile.StoreOp, axis: int) -> int:
    """The tensor axis of the tile's `axis`."""
    value = op.result if isinstance(op, tile.LoadOp) else op.value
    return cast(tile.GlobalType, op.tensor.type).rank - len(cast(tile.ShapedTileType, value.type).get_shape()) + axis


def box_padding(op: tile.LoadOp | tile.StoreOp, whole_tiles: Mapping[str, int],
                canonical: Callable[[SSAValue], SSAValue] = lambda v: v) -> Padding:
    """The padding of the tile `op` loads, or of the part of a store's box past the destination's
    end. `whole_tiles`: the dims the launch contract makes multiples (tile.floor_divided_dims,
    tile.required_multiples),
    whose tiles at tile coordinates of a dividing extent end exactly at the dim (a tile at
    element coordinates may end anywhere)."""
    tensor_type = cast(tile.GlobalType, op.tensor.type)
    value = op.result if isinstance(op, tile.LoadOp) else op.value
    shape = cast(tile.ShapedTileType, value.type).get_shape()
    scales = tile.coord_scales(op)
    ends = tile.element_ends(op)
    first = tensor_type.rank - len(shape)
    axes = []
    for axis, extent in enumerate(shape):
        dim = tensor_type.get_dims()[first + axis]
        end = ends.get(first + axis)
        coord = canonical(op.coords[first + axis])
        if end is not None and CLIPPED not in op.attributes:
            # a clipped store's end is this pass's own (its value's valid rows from the store's
            # start, which may run past the dim: TMA clips there); the user's was checked before
            _check_end_within(op, end, dim)
        tail = Tail(dim if end is None else canonical(end), coord, extent, scales[first + axis], None if end is None else dim)
        terms, length = _limit(tail)
        fixed = end is not None and tail.scale == 1 and not terms  # a range of a fixed length: elem(x, x + c)
        multiple = dim if isinstance(dim, int) else whole_tiles.get(dim, 1)
        tails: set[Tail] = set()
        if fixed:
            if length < extent:
                tails.add(Tail(length, None, extent, 1))
            if _partly_past(coord, min(length, extent), multiple):
                # the range ends at the tensor's end where that comes first: TMA's zeros between
                # the two are padding, not elements (the interpreter leaves them out)
                tails.add(Tail(dim, coord, extent, 1, cuts_fixed_range=True))
        elif not (not tail.element and multiple % extent == 0
                  or _inside(dim, end, op.coords[first + axis], scales[first + axis], extent)):
            tails.add(tail)
        # TMA reads zeros past the tensor's end, but what the tensor holds past a range's end
        # (unless the consumers zero it)
        zeroed = end is None or (axis == 0 and tile.ZERO_PAST_END in op.attributes)
        axes.append(AxisPadding(frozenset(tails), True, 0.0 if zeroed else None))
    return tuple(axes)


def _check_end_within(op: tile.LoadOp | tile.StoreOp, end: SSAValue, dim: str | int) -> None:
    """An element range's end is at most its dim (the language's rule). One provably past it
    (`elem(x, H + 1)` of a dim H) would end at the dim at run time while the analysis, which
    compares ends as written, takes it for longer: a store from it would write padding."""
    (terms, constant), (dim_terms, dim_constant) = _linear(end), _linear(dim)
    if terms == dim_terms and constant > dim_constant:
        raise error_at(
            op,
            f"the end of this element range lies {constant - dim_constant} past dim {dim}: an end is at most the "
            f"dim (the range ends at the tensor's end anyway); end it at {dim}",
        )


def _partly_past(start: SSAValue, length: int, multiple: int) -> bool:
    """Whether a range of `length` elements from `start` may end past a dim that is a multiple of
    `multiple`: not one element (it lies wholly inside or wholly past, which traps), nor `length`
    elements from a multiple of `length` in a dim of whole lengths."""
    return length > 1 and not (multiple % length == 0 and known_multiple(start).aligned(length))


def _inside(dim: str | int, end: SSAValue | None, coord: SSAValue, scale: int, extent: int) -> bool:
    """Whether a tile lies wholly inside a dim of constant size at every coordinate it takes: a
    constant one, or a block index along a grid axis of constant extent (the first 256 columns
    of a 320-wide row: no padding, though 320 is no multiple of 256)."""
    if not isinstance(dim, int) or end is not None:
        return False
    last = _constant(coord)
    if last is None and isinstance(block := coord.owner, tile.BlockIdOp) and (body := block.parent_block()):
        grid = next((op for op in body.ops if isinstance(op, tile.GridOp)), None)
        axis = block.axis.value.data
        size = _constant(grid.extents[axis]) if grid is not None and axis < len(grid.extents) else None
        last = None if size is None else size - 1
    return last is not None and 0 <= last * scale <= dim - extent


def _through(axis: AxisPadding, fill: float | None, fn: object, *operands: AxisPadding) -> AxisPadding:
    """`axis` with the padding an element-wise `fn` computes as `fill` from the operands'."""
    nan_lines = any(a.nan_lines for a in (axis, *operands))
    if nan_lines and fn in NAN_TO_NUMBER:
        fill = None
    return replace(axis, fill=fill, nan_lines=nan_lines and fill is not None)


def _same(values: Iterable[float | None]) -> float | None:
    distinct = {"nan" if v is not None and math.isnan(v) else v for v in values}
    return cast(float, distinct.pop()) if len(distinct) == 1 and None not in distinct else None


def join(paddings: Sequence[Padding]) -> Padding:
    """The padding of a value that may be any of `paddings` (an scf.if result, a carried var)."""
    joined = []
    for axes in zip(*paddings):
        merged = AxisPadding()
        for a in axes:
            merged = merged | a
        # a value without some tail holds valid data where the others hold padding
        fill = _same(a.fill for a in axes) if all(a.tails == merged.tails for a in axes) else None
        joined.append(replace(merged, fill=fill, nan_lines=fill is not None and any(a.nan_lines for a in axes)))
    return tuple(joined)


def _f32(x: float) -> float:
    """`x` rounded to f32, the precision the GPU computes the padding in (round to nearest even,
    as a C cast; past f32's range the infinity the GPU gets). Not through numpy: compiling
    imports none."""
    try:
        return float(struct.unpack("f", struct.pack("f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


_UNARY: dict[UnaryFn, Callable[[float], float]] = {
    UnaryFn.EXP: math.exp,
    UnaryFn.EXP2: lambda x: 2.0**x,
    UnaryFn.ABS: abs,
    UnaryFn.RELU: lambda x: max(x, 0.0),
    UnaryFn.NOT: lambda x: float(x == 0),
}
"""The functions whose value on a known fill the analysis follows (the rest: unknown)."""
_BINARY: dict[BinaryFn, Callable[[float, float], float]] = {
    BinaryFn.ADD: lambda x, y: x + y,
    BinaryFn.SUB: lambda x, y: x - y,
    BinaryFn.MUL: lambda x, y: x * y,
    BinaryFn.MAX: max,
    BinaryFn.MIN: min,
    BinaryFn.LT: lambda x, y: float(x < y),
    BinaryFn.LE: lambda x, y: float(x <= y),
    BinaryFn.GT: lambda x, y: float(x > y),
    BinaryFn.GE: lambda x, y: float(x >= y),
    BinaryFn.EQ: lambda x, y: float(x == y),
    BinaryFn.NE: lambda x, y: float(x != y),
    BinaryFn.AND: lambda x, y: float(x != 0 and y != 0),
    BinaryFn.OR: lambda x, y: float(x != 0 or y != 0),
}
NAN_TO_NUMBER = frozenset({UnaryFn.RELU, UnaryFn.NOT, BinaryFn.MAX, BinaryFn.MIN, *tile.COMPARISONS, *tile.LOGIC})
"""The element-wise functions that can give a number for NaN (PTX max/min return the other
operand; a condition is 0 or 1 whatever its operands)."""


def _apply(fn: Callable[..., float] | None, *args: float | None) -> float | None:
    if fn is None or any(a is None for a in args):
        return None
    try:
        value = _f32(fn(*args))
    except (OverflowError, ValueError, ZeroDivisionError):
        return None
    return None if math.isnan(value) else value  # NaN padding helps nothing, and NaN != NaN


def _constant(value: SSAValue) -> float | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr | IntegerAttr):
        return float(op.value.value.data)
    return None


def _rank(value: SSAValue) -> int:
    return len(cast(tile.ShapedTileType, value.type).get_shape())


def _vector_axis(axis: Axis) -> int:
    """The tile axis a row-indexed (ROW) or column-indexed (COL) vector runs along."""
    return 0 if axis == Axis.ROW else 1


def _scoped(padding: Padding, op: scf.ForOp | scf.IfOp) -> Padding:
    """The padding of a value leaving `op` (a carried var, an if's result): a tail whose coordinate
    `op` defines (a loop changes it each iteration; a branch may not run) is no longer exact; it
    stays `stable` where its valid extent reads nothing `op` defines."""
    return tuple(
        AxisPadding(a.tails, False, stable=a.stable and all(_invariant(t, op) for t in a.tails))
        if any(t.coord is not None and defined_within(t.coord, op) or (isinstance(t.dim, SSAValue) and defined_within(t.dim, op)) for t in a.tails)
        else a
        for a in padding
    )


Linear = tuple[dict[object, int], int]
"""An index expression as {atom: coefficient} plus a constant: atoms are a tensor's dim by name
(`("dim", "T")`) and otherwise values by their structure (tile-mask-tails' `_structure`)."""


def _linear(value: SSAValue | str | int) -> Linear:
    """`value` as a Linear, through constants and +, - and * by a constant."""
    if isinstance(value, int):
        return {}, value
    if isinstance(value, str):
        return {("dim", value): 1}, 0
    op = value.owner
    number = _constant(value)
    if number is not None:
        return {}, int(number)
    if isinstance(op, tile.DimOp):
        dim = cast(tile.GlobalType, op.tensor.type).get_dims()[op.axis.value.data]
        return _linear(dim)
    if isinstance(op, arith.AddiOp | arith.SubiOp):
        (a, a0), (b, b0) = _linear(op.lhs), _linear(op.rhs)
        sign = 1 if isinstance(op, arith.AddiOp) else -1
        terms = dict(a)
        for atom, k in b.items():
            terms[atom] = terms.get(atom, 0) + sign * k
        return {atom: k for atom, k in terms.items() if k}, a0 + sign * b0
    if isinstance(op, arith.MuliOp):
        for x, y in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            factor = _constant(y)
            if factor is not None:
                terms, c = _linear(x)
                return {atom: k * int(factor) for atom, k in terms.items() if k * int(factor)}, c * int(factor)
    return {_structure(value): 1}, 0


def _limit(tail: Tail) -> Linear:
    """The tail's valid extent, dim - coord * scale, as a Linear."""
    dim, d0 = _linear(tail.dim)
    if tail.coord is None:
        return dim, d0
    coord, c0 = _linear(tail.coord)
    terms = dict(dim)
    for atom, k in coord.items():
        terms[atom] = terms.get(atom, 0) - tail.scale * k
    return {atom: k for atom, k in terms.items() if k}, d0 - tail.scale * c0


def covers(own: Tail, tail: Tail) -> bool:
    """Whether a destination whose padding is `own` ends at or before `tail`'s padding begins (its
    valid extent is provably no longer): a store then writes none of `tail`'s padding, which lies
    past the destination's end, where TMA clips."""
    (a, a0), (b, b0) = _limit(own), _limit(tail)
    return a == b and a0 <= b0


def _leaves(structure: object) -> Iterable[SSAValue]:
    if isinstance(structure, SSAValue):
        yield structure
    elif isinstance(structure, tuple):
        for part in structure:
            yield from _leaves(part)


def _invariant(tail: Tail, op: Operation) -> bool:
    """Whether the tail's valid extent reads nothing `op` defines."""
    terms, _ = _limit(tail)
    return not any(defined_within(leaf, op) for atom in terms for leaf in _leaves(atom))


def _own_mask(op: scf.IfOp) -> bool:
    """Whether `op` is a mask this pass inserted: the then-branch masks what the else yields."""
    first = op.true_region.block.first_op
    if not (isinstance(first, tile.BoundsMaskOp) and "tails" in first.attributes and op.false_region.blocks):
        return False
    last = op.false_region.block.last_op
    return last is not None and tuple(last.operands) == (first.source,)


class TailAnalysis:
    """The padding of every tile and vector of a kernel (module docstring)."""

    def __init__(self, kernel: tile.KernelOp, whole_dims: Mapping[str, int] | None = None):
        """`whole_dims`: dims taken to be multiples beyond those the kernel counts with `/`."""
        self.padding: dict[SSAValue, Padding] = {}
        self.representatives: dict[object, list[SSAValue]] = {}
        self.whole_tiles = tile.floor_divided_dims(kernel)
        for dim, multiple in [*tile.required_multiples(kernel).items(), *(whole_dims or {}).items()]:
            self.whole_tiles[dim] = math.lcm(self.whole_tiles.get(dim, 1), multiple)
        self.block(kernel.body.block)

    def of(self, value: SSAValue) -> Padding:
        return self.padding.get(value) or none(_rank(value))

    def canonical(self, value: SSAValue) -> SSAValue:
        """The first value seen that computes the same as `value` (the same pure ops on the same
        operands) and dominates it: a load's and a store's `start + qi * BQ` are one coordinate
        before CSE too. A copy inside an `if` does not stand for one after it: the tail's limit
        and test are placed after the representative, and every value with the tail reads them."""
        seen = self.representatives.setdefault(_structure(value), [])
        representative = next((r for r in seen if r is value or isinstance(value, OpResult) and _dominates(r, value.owner)), None)
        if representative is None:
            seen.append(value)
            return value
        return representative

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        match op:
            case tile.LoadOp():
                self.padding[op.result] = box_padding(op, self.whole_tiles, self.canonical)
            case tile.ToRegOp() | tile.ToSharedOp() | tile.TransposeOp():
                self.padding[op.result] = self.of(op.source)
            case tile.CumsumOp():
                self.padding[op.result] = self.cumsum(op)
            case tile.ConvertOp():
                self.padding[op.result] = tuple(replace(a, fill=_converted(a.fill, op.result)) for a in self.of(op.source))
            case tile.FillOp() | tile.PositionOp():
                # neither reads a tile: every element is a value, none is padding
                self.padding[op.result] = none(_rank(op.result))
            case tile.UnaryOp():
                fn = _UNARY.get(op.fn.data)
                self.padding[op.result] = tuple(_through(a, _apply(fn, a.fill), op.fn.data) for a in self.of(op.source))
            case tile.BinaryOp():
                self.padding[op.result] = self.binary(op)
            case tile.SelectOp():
                self.padding[op.result] = self.select(op)
            case tile.BroadcastOp():
                self.padding[op.result] = self.broadcast(op)
            case tile.ReduceOp():
                kept = self.of(op.source)[_vector_axis(op.axis.data)]
                self.padding[op.result] = (replace(kept, fill=None),)
            case tile.MmaOp():
                self.padding[op.result] = self.mma(op)
            case tile.MaskOp():
                fill = op.fill.value.data
                self.padding[op.result] = tuple(
                    a if a.fill == fill else replace(a, fill=None, nan_lines=False) for a in self.of(op.source)
                )
            case tile.BoundsMaskOp():
                self.padding[op.result] = self.bounds_mask(op)
            case scf.IfOp():
                self.branches(op)
            case scf.ForOp():
                self.loop(op)
            case _:
                if any(isinstance(r.type, tile.ShapedTileType) for r in op.results):
                    raise error_at(op, f"tile-mask-tails does not know how {op.name} moves padding (a compiler bug)")

    def binary(self, op: tile.BinaryOp) -> Padding:
        fn = _BINARY.get(op.fn.data)
        lhs_tile = isinstance(op.lhs.type, tile.ShapedTileType)
        rhs_tile = isinstance(op.rhs.type, tile.ShapedTileType)
        if not (lhs_tile and rhs_tile):
            padding = self.of(op.lhs if lhs_tile else op.rhs)
            c = _constant(op.rhs if lhs_tile else op.lhs)
            return tuple(
                _through(a, _apply(fn, *((a.fill, c) if lhs_tile else (c, a.fill))), op.fn.data) for a in padding
            )
        # where only one operand has padding, the other holds valid data: unknown there
        return tuple(
            _through(x | y, _apply(fn, x.fill, y.fill) if x.tails == y.tails else None, op.fn.data, x, y)
            for x, y in zip(self.of(op.lhs), self.of(op.rhs))
        )

    def select(self, op: tile.SelectOp) -> Padding:
        """The union of the operands' padding. Its value is known where every tile operand has the
        condition's tails along the axis and the condition's padding picks a known branch (a
        constant scalar's value, or the branch's fill)."""
        branches = [op.on_true, op.on_false]
        axes = []
        for axis, cond in enumerate(self.of(op.cond)):
            parts = [self.of(b)[axis] if isinstance(b.type, tile.ShapedTileType) else None for b in branches]
            merged = cond
            for part in parts:
                merged = merged | part if part is not None else merged
            fills = [part.fill if part is not None else _constant(b) for part, b in zip(parts, branches)]
            tiles = [cond, *(part for part in parts if part is not None)]
            # NaN lines: a NaN condition picks on_true whatever the fill says, so the value is unknown
            known = all(t.tails == cond.tails and not t.nan_lines for t in tiles) and cond.fill is not None
            chosen = fills[0 if cond.fill != 0 else 1] if known else None
            axes.append(replace(merged, fill=chosen, nan_lines=False))
        return tuple(axes)

    def broadcast(self, op: tile.BroadcastOp) -> Padding:
        source, (vector,) = self.of(op.source), self.of(op.vector)
        along = _vector_axis(op.axis.data)
        # across the vector: valid vector values, unknown, except -inf minus an upper bound
        bounded = op.fn.data == BinaryFn.SUB and _upper_bound(op.vector, op.source, op.axis.data)
        axes = [
            replace(a, nan_lines=True) if bounded and a.fill == -math.inf else replace(a, fill=None, nan_lines=False)
            for a in source
        ]
        x = source[along]
        fill = _apply(_BINARY.get(op.fn.data), x.fill, vector.fill) if x.tails == vector.tails else None
        axes[along] = _through(x | vector, fill, op.fn.data, x, vector)
        return tuple(axes)

    def cumsum(self, op: tile.CumsumOp) -> Padding:
        """The source's tails. Padding only ever ends an axis, so the sums at valid elements
        never reach it (no mask is needed); along the scanned axis the padding holds sums of
        valid elements (unknown), across it a padding line holds the sums of its fill, which are
        the fill itself only for 0 and ±inf."""
        scanned = 0 if op.axis is None or op.axis.data == Axis.COL else 1
        return tuple(
            replace(a, fill=None, nan_lines=False)
            if axis == scanned or a.nan_lines or a.fill not in (0.0, math.inf, -math.inf) else a
            for axis, a in enumerate(self.of(op.source))
        )

    def mma(self, op: tile.MmaOp) -> Padding:
        a, b = self.of(op.a), self.of(op.b)
        rows, cols = a[1 if op.transpose_a else 0], b[0 if op.transpose_b else 1]
        if op.acc is not None:
            acc = self.of(op.acc)
            rows, cols = rows | acc[0], cols | acc[1]
        return (replace(rows, fill=None), replace(cols, fill=None))

    def bounds_mask(self, op: tile.BoundsMaskOp) -> Padding:
        fill = op.fill.value.data
        masked = {axis for axis, limit in enumerate(op.limits) if not _is_extent(limit, op.source, axis)}
        own = "tails" in op.attributes  # this pass's limits are the tails themselves
        axes = []
        for axis, a in enumerate(self.of(op.source)):
            if own and axis in masked:
                axes.append(replace(a, fill=fill, nan_lines=False))
            elif a.fill == fill or not masked:
                axes.append(a)
            else:
                axes.append(replace(a, fill=None, nan_lines=False))
        return tuple(axes)

    def branches(self, op: scf.IfOp) -> None:
        blocks = [op.true_region.block]
        self.block(op.true_region.block)
        if op.false_region.blocks:
            self.block(op.false_region.block)
            blocks.append(op.false_region.block)
        if _own_mask(op):
            blocks = blocks[:1]  # its else runs only on whole tiles, which have no padding
        for index, result in enumerate(op.results):
            if isinstance(result.type, tile.ShapedTileType):
                incoming = [self.of(cast(Operation, b.last_op).operands[index]) for b in blocks]
                self.padding[result] = _scoped(join(incoming), op)

    def loop(self, op: scf.ForOp) -> None:
        body = op.body.block
        carried = [(init, arg, result) for init, arg, result in zip(op.iter_args, body.args[1:], op.results)
                   if isinstance(arg.type, tile.ShapedTileType)]
        incoming: dict[SSAValue, Padding] = {arg: self.of(init) for init, arg, _ in carried}
        while True:
            self.padding.update(incoming)
            self.block(body)
            yielded = dict(zip(body.args[1:], cast(Operation, body.last_op).operands))
            changed = False
            for _, arg, _ in carried:
                merged = _scoped(join([incoming[arg], self.of(yielded[arg])]), op)
                if merged != incoming[arg]:
                    incoming[arg], changed = merged, True
            if not changed:
                break
        for _, arg, result in carried:
            self.padding[result] = incoming[arg]


def _upper_bound(vector: SSAValue, source: SSAValue, axis: Axis) -> bool:
    """Whether `vector` is at least every valid element of its line of `source`: the `axis` max
    reduction of `source`, a max with one, or one scaled by the finite positive constant that scales
    `source` (rounding is monotone: row_max(x) * c is row_max(x * c), as canonicalize writes it)."""
    op = vector.owner
    if isinstance(op, tile.ReduceOp):
        return op.fn.data == ReduceFn.MAX and op.axis.data == axis and op.source == source
    if isinstance(op, tile.BinaryOp) and op.fn.data == BinaryFn.MAX:
        return any(_upper_bound(v, source, axis) for v in (op.lhs, op.rhs) if isinstance(v.type, tile.RegisterVectorType))
    scaled = source.owner
    if isinstance(op, tile.BinaryOp) and isinstance(scaled, tile.BinaryOp) and op.fn.data == scaled.fn.data == BinaryFn.MUL:
        scale = _constant(op.rhs)
        return scale is not None and 0 < scale < math.inf and scale == _constant(scaled.rhs) and _upper_bound(op.lhs, scaled.lhs, axis)
    return False


def _is_extent(limit: SSAValue, source: SSAValue, axis: int) -> bool:
    """Whether `limit` is a constant at least `source`'s extent along `axis` (nothing masked)."""
    value = _constant(limit)
    return value is not None and value >= cast(tile.ShapedTileType, source.type).get_shape()[axis]


def _axis_name(value: SSAValue, axis: int) -> str:
    return ("rows", "columns")[axis] if _rank(value) == 2 else "elements"


@dataclass
class Need:
    """A value whose padding along `axes` must hold `fill` for the uses that asked."""

    value: SSAValue
    axes: frozenset[int]
    fill: float
    why: list[str] = field(default_factory=list)
    uses: list[tuple[Operation, int]] = field(default_factory=list)
    """(op, operand index) to rewire to the masked value."""


class TailMasks:
    """The masks and whole-tile requirements of one kernel (module docstring)."""

    def __init__(self, kernel: tile.KernelOp):
        self.kernel = kernel
        self.analysis = TailAnalysis(kernel)
        self.needs: dict[tuple[SSAValue, float], Need] = {}
        self.whole_tiles: dict[str, tuple[int, str]] = {}
        self.pinned: dict[str, tuple[int, str]] = {}
        """With `@whole_tiles`: the dims required whole instead of masked."""
        self.tail_values: dict[Tail, tuple[SSAValue, SSAValue]] = {}
        self.constants: dict[int, SSAValue] = {}

    def collect(self) -> None:
        for op in self.kernel.walk():
            match op:
                case tile.ReduceOp():
                    axis = 1 - _vector_axis(op.axis.data)
                    name = f"{'row' if op.axis.data == Axis.ROW else 'col'}_{op.fn.data}"
                    self.need(op.source, axis, REDUCE_IDENTITY[op.fn.data], op, 0,
                              f"{name} at {line_label(op)} leaves out the {_axis_name(op.source, axis)} past the end")
                case tile.VectorReduceOp():
                    self.need(op.source, 0, REDUCE_IDENTITY[op.fn.data], op, 0,
                              f"{op.fn.data}(v) at {line_label(op)} leaves out the elements past the end")
                case tile.MmaOp():
                    why = f"the mma at {line_label(op)} counts the padding of its contraction as 0"
                    self.need(op.a, 0 if op.transpose_a else 1, 0.0, op, 0, why)
                    self.need(op.b, 1 if op.transpose_b else 0, 0.0, op, 1, why)
                case tile.StoreOp():
                    self.check_store(op)
                case _:
                    pass

    def need(self, value: SSAValue, axis: int, fill: float, user: Operation, index: int, why: str) -> None:
        padding = self.analysis.of(value)[axis]
        if not padding.tails or padding.fill == fill:
            return
        if not padding.exact:
            self.require_whole_tiles(padding, f"{why}, and the {_axis_name(value, axis)} of its operand come from "
                                              "tiles at coordinates that change where the value is carried")
            return
        source = value.owner
        # 0 and ±inf convert exactly: mask before the conversion, so that the unconverted value's
        # other uses share the mask (row_sum(p) next to bf16(p) in an mma)
        if isinstance(source, tile.ConvertOp) and fill in (0.0, math.inf, -math.inf) and all(
            use.operation is user for use in value.uses
        ):
            self.need(source.source, axis, fill, source, 0, why)
            return
        if isinstance(source, tile.ToSharedOp):
            self.need(source.source, axis, fill, source, 0, why)
            return
        if isinstance(value.type, tile.SharedTileType):
            if isinstance(source, tile.LoadOp) and fill == 0.0 and axis == 0 and (
                tile.element_ends(source).keys() == {_tensor_axis(source, axis)}
            ):
                # the rows past the range's end hold the tensor's next rows: the consumers zero
                # them in the stage (only a tile that reaches past the end)
                source.attributes[tile.ZERO_PAST_END] = tile.DecisionAttr(1, why)
                return
            raise error_at(user, f"{why}: the GPU backend zeroes the rows of a shared tile past the end of an element "
                                 "range (elem(x, end)) for an mma, but not this padding: move the tile to registers "
                                 "first (an element-wise op does)")
        if isinstance(source, scf.IfOp) and _own_mask(source):
            # a mask made for another use's fill (col_max's -inf beside col_sum's 0): this use
            # reads the unmasked value again, whose valid elements are the same, and gets a
            # mask of its own there if its padding is not the fill either
            first = cast(tile.BoundsMaskOp, source.true_region.block.first_op)
            user.operands = [first.source if i == index else v for i, v in enumerate(user.operands)]
            self.need(first.source, axis, fill, user, index, why)
            return
        entry = self.needs.setdefault((value, fill), Need(value, frozenset(), fill))
        entry.axes |= {axis}
        entry.why.append(why)
        entry.uses.append((user, index))

    def clip_stores(self) -> None:
        """End a store's element range where its value's padding begins, where that is known at the
        store: the axis counts elements at the store (`elem(x)`, so it can take an end; of a
        register tile only the rows, which the GPU ends with one-row boxes), the value's padding
        along it is exact, and the coordinates and ends of its tails are defined where the store
        can read them. Padding only ends an axis, so the rows before the first padding row are
        exactly the valid ones, and a store writes no padding: the end is what the store means.
        An embedding gather (`store Y[elem(r, r + 1), j] = load E[elem(id, id + 1), j] ...`)
        writes its row without the dims having to be whole tiles."""
        for op in [op for op in self.kernel.walk() if isinstance(op, tile.StoreOp)]:
            if CLIPPED in op.attributes:
                continue
            destination = box_padding(op, self.analysis.whole_tiles, self.analysis.canonical)
            for axis, (padding, own) in enumerate(zip(self.analysis.of(op.value), destination)):
                extra = padding.tails - own.tails
                tensor_axis = _tensor_axis(op, axis)
                if (not extra or not padding.exact or tensor_axis not in tile.element_axes(op)
                        or isinstance(op.value.type, tile.RegisterTileType) and axis != 0
                        or not all((t.coord is None or _dominates(t.coord, op)) and (not isinstance(t.dim, SSAValue) or _dominates(t.dim, op))
                                   for t in extra)):
                    continue
                self.clip(op, axis, tensor_axis, self.in_order(extra))
                break
        self.analysis = self.analyse()

    def clip(self, op: tile.StoreOp, axis: int, tensor_axis: int, tails: list[Tail]) -> None:
        """Replace `op` by the store whose range along `tensor_axis` ends at its start plus the
        valid extent of its value along `axis` (the least of its `tails`' limits)."""
        ops: list[Operation] = []
        valid: SSAValue | None = None
        for tail in tails:
            limit, _ = self.tail(tail)
            if valid is not None:
                ops.append(lower := arith.MinSIOp(valid, limit))
                limit = lower.result
            valid = limit
        assert valid is not None
        ops.append(end := arith.AddiOp(op.coords[tensor_axis], valid))
        ends = tile.element_ends(op)
        new_end: SSAValue = end.result
        if tensor_axis in ends:
            ops.append(both := arith.MinSIOp(ends[tensor_axis], new_end))
            new_end = both.result
        ends[tensor_axis] = new_end
        for new in ops:
            new.location = op.location
        Rewriter.insert_op(ops, InsertPoint.before(op))
        axes = sorted(ends)
        store = tile.StoreOp(op.value, op.tensor, list(op.coords), [ends[a] for a in axes],
                             op.reduce.data if op.reduce is not None else None)
        store.attributes.update(op.attributes)
        store.attributes[tile.ELEMENT_ENDS] = ArrayAttr([IntegerAttr(a, 64) for a in axes])
        store.attributes[CLIPPED] = tile.DecisionAttr(
            axis,
            f"the {_axis_name(op.value, axis)} of its value end where the padding of a tile it was computed from "
            f"begins ({'; '.join(_span(t) for t in tails)}): the store's element range ends there, since a store "
            "writes no padding",
        )
        store.location = op.location
        Rewriter.replace_op(op, store, [])

    def check_store(self, op: tile.StoreOp) -> None:
        """A store writes no padding (nor does a store_add add any): the value's must end where the
        destination does (TMA clips there); where that is not provable, the dims must be whole tiles."""
        name = self.kernel.arg_names[self.kernel.body.block.args.index(op.tensor)]
        verb = "write" if op.reduce is None else "add"
        destination = box_padding(op, self.analysis.whole_tiles, self.analysis.canonical)
        clipped = op.attributes.get(CLIPPED)
        for axis, (padding, own) in enumerate(zip(self.analysis.of(op.value), destination)):
            padding = replace(padding, tails=frozenset(t for t in padding.tails if not t.cuts_fixed_range))
            if padding.exact and padding.tails <= own.tails:
                continue
            if isinstance(clipped, tile.DecisionAttr) and clipped.int_value == axis:
                continue
            uncovered = frozenset(t for t in padding.tails - own.tails if not any(covers(mine, t) for mine in own.tails))
            if (padding.exact or padding.stable) and not uncovered:
                continue  # its padding begins at or past the destination's end, where TMA clips
            self.require_whole_tiles(
                # the tails the destination does not cover, so that the message names those
                replace(padding, tails=uncovered if padding.exact else padding.tails),
                f"the {op.statement} of {name} at {line_label(op)} must not {verb} padding, and the "
                f"{_axis_name(op.value, axis)} of its value need not end where {name} does",
                op,
            )

    def require_whole_tiles(self, padding: AxisPadding, why: str, at: Operation | None = None) -> None:
        """Record that the dims of `padding` must be whole tiles (`why`); an error at `at` (else
        where the coordinate is computed) where a tile at an element coordinate ends the padding."""
        elements = self.in_order(t for t in padding.tails if t.element)
        cut = next((t for t in elements if t.cuts_fixed_range), None)
        if cut is not None:
            length = min((cast(int, t.dim) for t in padding.tails if t.coord is None), default=cut.extent)
            raise error_at(
                at or _defining_op(cast(SSAValue, cut.coord)),
                f"{why}: a range of a fixed length at an element coordinate (elem) may run past the end of "
                f"dim {cut.dim}, which cuts it where no mask can follow; where {cut.dim} is a whole number of "
                f"{length} (count it as {cut.dim} / {length}) and the range starts at a multiple of {length}, it cannot",
            )
        if elements:
            element = elements[0]
            raise error_at(
                at or (self.kernel if element.coord is None else _defining_op(element.coord)),
                f"{why}: the tile at an element coordinate (elem) {_span(element)} may end anywhere in it, "
                "so no whole number of tiles keeps this exact; where its rows that matter end before the dim "
                "does, give the range that end, elem(start, end), and its rows past end are masked",
            )
        for dim, multiple in padding.dims.items():
            if isinstance(dim, int):
                raise error_at(at or self.kernel, f"{why}: dim {dim} is not a whole number of {multiple}-element tiles")
            known, reason = self.whole_tiles.get(dim, (1, why))
            self.whole_tiles[dim] = (math.lcm(known, multiple), reason)

    def require_instead(self) -> int:
        """`@whole_tiles`: each dim a mask would guard must be whole tiles instead; only tails of
        tiles at element coordinates, which no multiple ends, are still masked."""
        for need in self.needs.values():
            for axis in need.axes:
                why = "; ".join(dict.fromkeys(need.why))
                padding = self.analysis.of(need.value)[axis]
                tile_tails = frozenset(t for t in padding.tails if not t.element)
                self.require_whole_tiles(replace(padding, tails=tile_tails), f"compiled for whole tiles (@whole_tiles): {why}")
        self.pinned = dict(self.whole_tiles)
        self.analysis, self.needs, self.whole_tiles = self.analyse(), {}, {}
        self.collect()
        return self.insert()

    def analyse(self) -> TailAnalysis:
        return TailAnalysis(self.kernel, {dim: multiple for dim, (multiple, _) in self.pinned.items()})

    def required_whole_tiles(self) -> dict[str, tuple[int, str]]:
        """The dims the launch must find whole tiles of: the masks' pass's and `@whole_tiles`'."""
        merged = dict(self.pinned)
        for dim, (multiple, why) in self.whole_tiles.items():
            known, reason = merged.get(dim, (1, why))
            merged[dim] = (math.lcm(known, multiple), reason)
        return merged

    def insert(self) -> int:
        """One mask at a time, that of the first value defined first, and the analysis again:
        values computed from a masked one see its fill (the row max's mask of attention scores
        gives p = exp2(s - m) padding 0, so row_sum(p) and the mma need no mask of their own).
        A value with one need is masked for all its uses (masking changes no valid element);
        one with needs of several fills, for the uses of each."""
        inserted = 0
        while self.needs:
            order = {op: i for i, op in enumerate(self.kernel.walk())}
            need = min(self.needs.values(), key=lambda n: order[_defining_op(n.value)])
            masked = self.mask(need)
            branch = cast(Operation, masked.owner)
            if sum(n.value is need.value for n in self.needs.values()) == 1:
                need.value.replace_uses_with_if(masked, lambda use: not branch.is_ancestor(use.operation))
            else:
                for user, index in need.uses:
                    user.operands = [masked if i == index else v for i, v in enumerate(user.operands)]
            inserted += 1
            self.analysis, self.needs, self.whole_tiles = self.analyse(), {}, {}
            self.collect()
        return inserted

    def mask(self, need: Need) -> SSAValue:
        """`scf.if past { bounds_mask } else { value }` just after the value is defined."""
        value = need.value
        padding = self.analysis.of(value)
        ops: list[Operation] = []
        limits: list[SSAValue] = []
        past: SSAValue | None = None
        for axis, extent in enumerate(cast(tile.ShapedTileType, value.type).get_shape()):
            if axis not in need.axes:
                limits.append(self.const(extent))
                continue
            limit: SSAValue | None = None
            for tail in self.in_order(padding[axis].tails):
                tail_limit, tail_past = self.tail(tail)
                if past is not None:
                    ops.append(either := arith.OrIOp(past, tail_past))
                    tail_past = either.result
                if limit is not None:
                    ops.append(lower := arith.MinSIOp(limit, tail_limit))
                    tail_limit = lower.result
                limit, past = tail_limit, tail_past
            assert limit is not None
            limits.append(limit)
        assert past is not None
        bounds = tile.BoundsMaskOp(value, limits, need.fill)
        bounds.attributes["tails"] = StringAttr("; ".join(dict.fromkeys(need.why)))
        then_block, else_block = Block([bounds, scf.YieldOp(bounds.result)]), Block([scf.YieldOp(value)])
        ops.append(branch := scf.IfOp(past, [value.type], [then_block], [else_block]))
        for new in [*ops, bounds]:
            new.location = _location(value)
        Rewriter.insert_op(ops, _after(value))
        return branch.results[0]

    def in_order(self, tails: Iterable[Tail]) -> list[Tail]:
        """`tails` in the order of the values they read in the kernel, so that the masks' `min`s
        take their operands in the same order in every compile (a set's order follows the
        values' ids, which change from one process to the next)."""
        order = {op: i for i, op in enumerate(self.kernel.walk())}

        def place(value: str | int | SSAValue | None) -> tuple[int, str]:
            if isinstance(value, OpResult):
                return order.get(value.owner, -1), ""
            if isinstance(value, SSAValue):  # a block argument: the kernel's tensors, a loop's index
                return order.get(cast(Operation, value.owner.parent_op()), -1), str(getattr(value, "index", ""))
            return -1, str(value)

        return sorted(tails, key=lambda t: (place(t.dim), t.extent, place(t.coord), t.scale, place(t.bound)))

    def tail(self, tail: Tail) -> tuple[SSAValue, SSAValue]:
        """(dim - coord * scale, whether the tile runs past dim), computed once per tail right
        after its coordinate is defined, where it dominates every value with that tail."""
        if tail not in self.tail_values:
            extent, dim = self.const(tail.extent), self.dim(tail.dim)
            if tail.coord is None:  # a fixed-length range: its length is the limit everywhere
                past = arith.CmpiOp(dim, extent, "ult")
                past.location = self.kernel.location
                Rewriter.insert_op(past, _after(_inner(dim, extent)))
                self.tail_values[tail] = (dim, past.result)
                return self.tail_values[tail]
            ops: list[Operation] = []
            if tail.bound is not None and (bound := self.dim(tail.bound)) is not dim:
                # a range ends at its end or the tensor's, whichever comes first
                ops.append(first_end := arith.MinSIOp(dim, bound))
                dim = first_end.result
            start = tail.coord
            if tail.scale != 1:
                ops.append(scaled := arith.MuliOp(tail.coord, self.const(tail.scale)))
                start = scaled.result
            ops.append(limit := arith.SubiOp(dim, start))
            ops.append(end := arith.AddiOp(start, extent))
            ops.append(past := arith.CmpiOp(dim, end.result, "ult"))
            for op in ops:
                op.location = _location(tail.coord)
            # after the coordinate, and after a range's end where that is defined later
            latest = tail.coord if not isinstance(tail.dim, SSAValue) else _inner(tail.coord, tail.dim)
            Rewriter.insert_op(ops, _after(latest))
            self.tail_values[tail] = (limit.result, past.result)
        return self.tail_values[tail]

    def erase_unused_tests(self) -> None:
        """A clipped store reads a tail's limit only: the test whether the tile runs past the end
        (`tail`'s compare and the end it compares) goes where no mask reads it."""
        for _, past in self.tail_values.values():
            compare = cast(Operation, past.owner)
            if any(True for _ in past.uses):
                continue
            end = compare.operands[1].owner
            Rewriter.erase_op(compare)
            if isinstance(end, Operation) and not any(True for _ in end.results[0].uses):
                Rewriter.erase_op(end)

    def const(self, n: int) -> SSAValue:
        if n not in self.constants:
            constant = arith.ConstantOp(IntegerAttr(n, IndexType()))
            Rewriter.insert_op(constant, InsertPoint.at_start(self.kernel.body.block))
            self.constants[n] = constant.result
        return self.constants[n]

    def dim(self, dim: str | int | SSAValue) -> SSAValue:
        if isinstance(dim, SSAValue):
            return dim
        if isinstance(dim, int):
            return self.const(dim)
        block = self.kernel.body.block
        for op in block.ops:
            if isinstance(op, tile.DimOp) and cast(tile.GlobalType, op.tensor.type).get_dims()[op.axis.value.data] == dim:
                return op.result
        arg = next(a for a in block.args if dim in cast(tile.GlobalType, a.type).get_dims())
        dim_op = tile.DimOp(arg, cast(tile.GlobalType, arg.type).get_dims().index(dim))
        dim_op.result.name_hint = dim
        Rewriter.insert_op(dim_op, InsertPoint.at_start(block))
        return dim_op.result


def _defining_op(value: SSAValue) -> Operation:
    owner = value.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    assert op is not None
    return op


def _inner(a: SSAValue, b: SSAValue) -> SSAValue:
    """Of two values that both dominate one use, the one defined later: in the same block, the
    later one; else the one whose block is nested in the other's."""
    block_a = a.owner if isinstance(a.owner, Block) else a.owner.parent_block()
    block_b = b.owner if isinstance(b.owner, Block) else b.owner.parent_block()
    if block_a is block_b:
        if isinstance(a.owner, Block) or isinstance(b.owner, Block):
            return a if isinstance(b.owner, Block) else b
        assert block_a is not None
        return b if block_a.get_operation_index(b.owner) > block_a.get_operation_index(a.owner) else a
    op: Operation | None = _defining_op(b)
    while op is not None:
        if op.parent_block() is block_a:
            return b
        op = op.parent_op()
    return a


def _converted(fill: float | None, result: SSAValue) -> float | None:
    """A padding fill after a conversion to `result`'s dtype: 0 and ±inf stay exact, except that
    a saturating conversion (fp8's satfinite) turns ±inf into its largest finite value; other
    fills round (unknown)."""
    if fill is None or fill not in (0.0, math.inf, -math.inf):
        return None
    dtype = dtypes.of_type(cast(tile.ShapedTileType, result.type).element_type)
    if math.isinf(fill) and dtype is not None and dtype.saturates_at is not None:
        return math.copysign(dtype.saturates_at, fill)
    return fill


def _structure(value: SSAValue) -> object:
    """A key equal for values that pure ops compute alike from the same operands."""
    op = value.owner
    if not isinstance(value, OpResult) or not isinstance(op, Operation) or not is_side_effect_free(op) or op.regions:
        return value
    return (op.name, value.index, str(op.properties), str(sorted((k, str(v)) for k, v in op.attributes.items()
                                                                 if k != "role")),
            tuple(_structure(operand) for operand in op.operands))


def _span(tail: Tail) -> str:
    """What an element coordinate's tile lies in: a tensor dim, a range with a run-time end or
    one of a fixed length."""
    dim = tail.dim
    if tail.coord is None:
        return f"of a range of {dim} element(s)"
    if isinstance(dim, SSAValue):
        return f"of the range that ends at {dim.name_hint!r}" if dim.name_hint else "of a range with a run-time end"
    return f"of dim {dim}"


def _location(value: SSAValue) -> LocationAttr:
    return _defining_op(value).location


def _after(value: SSAValue) -> InsertPoint:
    owner = value.owner
    return InsertPoint.at_start(owner) if isinstance(owner, Block) else InsertPoint.after(owner)


def _dominates(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined where `op` can read it: a block argument of a block around
    `op`, or the result of an op before `op` in a block around it."""
    owner = value.owner
    block = owner if isinstance(owner, Block) else owner.parent_block()
    if block is None or not block.is_ancestor(op):
        return False
    if isinstance(owner, Block):
        return True
    inner: Operation | None = op
    while inner is not None and inner.parent_block() is not block:
        inner = inner.parent_op()
    return inner is not None and block.get_operation_index(inner) > block.get_operation_index(owner)


@dataclass(frozen=True)
class TileMaskTailsPass(ModulePass):
    name = "tile-mask-tails"

    whole_tiles: bool | None = None
    """Pins the kernels' `@whole_tiles` (true: compile every kernel for whole tiles; false: for
    any shape, over the annotation)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.body.block.ops if isinstance(k, tile.KernelOp)]:
            masks = TailMasks(kernel)
            masks.clip_stores()
            masks.collect()
            pinned = "whole_tiles" in kernel.annotations.data if self.whole_tiles is None else self.whole_tiles
            inserted = masks.require_instead() if pinned else masks.insert()
            if inserted:
                kernel.attributes["tail_masks"] = tile.DecisionAttr(
                    inserted,
                    "reductions and mmas that would see elements past the end of a tensor, masked under an scf.if "
                    "that only a partial tile takes",
                )
            whole_tiles = masks.required_whole_tiles()
            if whole_tiles:
                kernel.attributes["whole_tiles"] = DictionaryAttr(
                    {dim: tile.DecisionAttr(multiple, why) for dim, (multiple, why) in sorted(whole_tiles.items())}
                )
            masks.erase_unused_tests()
