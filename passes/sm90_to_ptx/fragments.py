"""convert-sm90-to-ptx patterns for register fragments: fill, elementwise ops, row and column
reductions and broadcasts, conversions, the causal and the bounds mask, positions, conditions
(a setp and a selp of 1 or 0) and selects, register by register in
the wgmma accumulator layout (emitter docstring).

Register n of an m-block of a [R, C] tile holds row r0 + 8*((n >> 1) & 1) and column
8*(n >> 2) + 2*quad + (n & 1), where r0 is the thread's row and quad its lane % 4. A row
reduction reduces a thread's registers of one row, then the 4 lanes of its quad (shfl bfly 1,
2); a column reduction meets in a shared scratch buffer. A scan along columns is a pair sum per
thread, a scan over the quad (shfl.up) and a carry over 8-column groups; a vector changes
between the row and the column layout through the shared scratch. Division by a value is a multiplication
by its reciprocal where that is exact (`reciprocal`).
"""

from __future__ import annotations

import struct
from math import copysign, inf, isfinite
from typing import cast

from xdsl.dialects.builtin import Float16Type, Float32Type, IntegerAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tkc.dialects import ptx, sm90
from tkc.dialects.tile import Axis, BinaryFn, ReduceFn, element_bytes, element_name
from tkc.diagnostics import error_at
from tkc.passes.plan import WARPGROUP_THREADS
from tkc.passes.sm90_to_ptx.emitter import Emitter, dtype_name, fragment_register
from tkc.passes.sm90_to_ptx.scalars import fma_exp2_f32, unary_f32

_F32_NORMAL = (2.0**-126, (2 - 2.0**-23) * 2.0**127)
"""The smallest and the largest normal f32 magnitudes."""
_FN_METHOD = {BinaryFn.ADD: "add", BinaryFn.SUB: "sub", BinaryFn.MUL: "mul", BinaryFn.DIV: "div",
              BinaryFn.MAX: "max", BinaryFn.MIN: "min"}
REDUCE_METHOD = {ReduceFn.MAX: "max", ReduceFn.MIN: "min", ReduceFn.SUM: "add"}
_ROUNDED = frozenset({BinaryFn.ADD, BinaryFn.SUB, BinaryFn.MUL})
"""The packed ops that take `.rn` (which also keeps ptxas from contracting a mul and an add)."""
_SETP = {BinaryFn.LT: "lt", BinaryFn.LE: "le", BinaryFn.GT: "gt", BinaryFn.GE: "ge", BinaryFn.EQ: "eq",
         BinaryFn.NE: "neu"}
"""The setp of each comparison: IEEE's (ordered, so false for NaN), and `ne` unordered (true for
NaN), as numpy compares."""
_LOGIC = {BinaryFn.AND: "and_", BinaryFn.OR: "or_"}
"""The predicate op of each logic op on conditions."""


def reciprocal(divisor: float) -> float | None:
    """r such that x * r is x / divisor (to rounding) for every x, or None: then emit a div.

    IEEE gives x / ±0 = x * ±inf and x / ±inf = x * ±0 for every x, signed zeros, infinities
    and NaN included. Otherwise 1/divisor must be a normal f32: for a subnormal divisor it
    overflows to inf (x * inf is not x / divisor), beyond 2**126 it is subnormal and has lost
    precision. The test is on the divisor as the f32 immediate of a div would hold it.
    """
    divisor = struct.unpack("<f", struct.pack("<I", ptx.f32_bits(divisor)))[0]
    if divisor == 0:
        return copysign(inf, divisor)
    inverse = 1.0 / divisor
    if not isfinite(divisor) or _F32_NORMAL[0] <= abs(inverse) <= _F32_NORMAL[1]:
        return inverse
    return None


def _half_bits(value: float, element_type: Attribute) -> int:
    """The 16-bit pattern of `value` in bf16 (round to nearest even) or f16."""
    if isinstance(element_type, Float16Type):
        return struct.unpack("<H", struct.pack("<e", value))[0]
    bits = ptx.f32_bits(value)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _f32_binary(e: Emitter, fn: BinaryFn, a: SSAValue | float, c: SSAValue | float) -> SSAValue:
    b = e.b
    if fn in _SETP:
        return b.selp("f32", 1.0, 0.0, b.setp(_SETP[fn], "f32", a, c))
    if fn in _LOGIC:
        return b.selp("f32", 1.0, 0.0, getattr(b, _LOGIC[fn])("pred", nonzero(e, a), nonzero(e, c)))
    return getattr(b, _FN_METHOD[fn])("f32", a, c)


def nonzero(e: Emitter, x: SSAValue | float) -> SSAValue:
    """The predicate x != 0 of a condition, NaN counting as nonzero (setp.neu). A condition this
    module made (`selp 1.0, 0.0, p`) is p itself: a select or a logic op of a comparison then tests
    the comparison's predicate, not its 0/1 register again."""
    made = x.owner if isinstance(x, SSAValue) else None
    if isinstance(made, ptx.SelpOp) and _immediate(made.a) == 1.0 and _immediate(made.b) == 0.0:
        return made.p
    return e.b.setp("neu", "f32", x, 0.0)


def _f32_immediate(imm: IntegerAttr) -> float:
    """The f32 number an instruction's immediate holds (its bits)."""
    return struct.unpack("<f", struct.pack("<I", imm.value.data & 0xFFFFFFFF))[0]


def _immediate(register: SSAValue) -> float | None:
    """The f32 number a `mov` of an immediate put in `register`, else None."""
    mov = register.owner
    if not isinstance(mov, ptx.MovOp) or mov.imm is None:
        return None
    return _f32_immediate(mov.imm)


def reduce_tree(e: Emitter, method: str, vals: list[SSAValue]) -> SSAValue:
    """`method` over `vals` pairwise, as a balanced tree."""
    while len(vals) > 1:
        vals = [getattr(e.b, method)("f32", x, y) for x, y in zip(vals[::2], vals[1::2])] + vals[len(vals) & ~1:]
    return vals[0]


class LowerFill(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.FillOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        t = op.result.type
        value = float(op.value.value.data)
        if element_bytes(t.element_type) == 4:
            e.replace(rewriter, [e.b.mov("f32", value) for _ in range(t.registers_per_thread())])
            return
        if element_bytes(t.element_type) == 1:  # rounded as a conversion rounds it (satfinite)
            f32 = e.b.mov("f32", value)
            pair = dtype_name(t.element_type) + "x2"
            e.replace(rewriter, [e.b.cvt_pack(pair, f32, f32, "rn.satfinite") for _ in range(t.registers_per_thread())])
            return
        half = _half_bits(value, t.element_type)
        bits = half if t.is_row_vector else half << 16 | half  # a row vector: one value per b16 register
        e.replace(rewriter, [e.b.mov(fragment_register(t), bits) for _ in range(t.registers_per_thread())])


class LowerUnary(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.UnaryOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        every = op.fma_every.value.data if op.fma_every is not None else 0
        e.replace(rewriter, [
            fma_exp2_f32(e, x) if every and i % every == every - 1 else unary_f32(e, op.fn.data, x)
            for i, x in enumerate(e.f32_frag(op.source))
        ])


class LowerBinary(RewritePattern):
    """Fragment with fragment, or with an f32 scalar on either side (an immediate if constant)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.BinaryOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        fn = op.fn.data
        if isinstance(op.lhs.type, Float32Type):
            scalar = e.src(op.lhs, "f32")
            e.replace(rewriter, [_f32_binary(e, fn, scalar, x) for x in e.f32_frag(op.rhs)])
        elif isinstance(op.rhs.type, Float32Type):
            scalar = e.src(op.rhs, "f32")
            if fn == BinaryFn.DIV and not isinstance(scalar, float):
                fn, scalar = BinaryFn.MUL, e.b.rcp("f32", cast(SSAValue, scalar), "rn")
            elif fn == BinaryFn.DIV and isinstance(scalar, float) and (inverse := reciprocal(scalar)) is not None:
                fn, scalar = BinaryFn.MUL, inverse
            e.replace(rewriter, [_f32_binary(e, fn, x, scalar) for x in e.f32_frag(op.lhs)])
        elif not isinstance(element := cast(sm90.FragmentType, op.lhs.type).element_type, Float32Type):
            # two bf16 or f16 tiles (tile-to-sm90's PACKED_FNS): one packed op per register
            pair, rounding = dtype_name(element) + "x2", "rn" if fn in _ROUNDED else None
            method = getattr(e.b, _FN_METHOD[fn])
            e.replace(rewriter, [method(pair, x, y, rounding) for x, y in zip(e.frag(op.lhs), e.frag(op.rhs))])
        elif fn == BinaryFn.SUB and (gaps := _position_gaps(e, e.f32_frag(op.lhs), e.f32_frag(op.rhs))) is not None:
            e.replace(rewriter, gaps)
        else:
            pairs = zip(e.f32_frag(op.lhs), e.f32_frag(op.rhs))
            e.replace(rewriter, [_f32_binary(e, fn, x, y) for x, y in pairs])


def _integer_plus_offset(register: SSAValue) -> tuple[SSAValue, float] | None:
    """(base, d) where `register` is `base + d`, base an integer converted to f32 and d an
    integral immediate: what LowerPosition makes of each register of a position."""
    add = register.owner
    if not isinstance(add, ptx.AddOp) or add.ty.data != "f32" or add.imm is None:
        return None
    cvt = add.a.owner
    if not isinstance(cvt, ptx.CvtOp) or cvt.dst.data != "f32" or cvt.src.data not in ("u32", "s32"):
        return None
    offset = _f32_immediate(add.imm)
    return (add.a, offset) if offset.is_integer() else None


def _position_gaps(e: Emitter, lhs: list[SSAValue], rhs: list[SSAValue]) -> list[SSAValue] | None:
    """`row_index(s, a) - col_index(s, b)` register by register as (base_r - base_c) + (d_r - d_c):
    one subtraction of the two bases, then one add of an immediate per register, where the plain
    form adds each position's offset first (an add per register of the column positions in every
    iteration, and more registers live). Exact, and the same bits, while the positions are below
    2^24, as positions are (tile.position). None unless every register of both is a position's."""
    terms = [(_integer_plus_offset(x), _integer_plus_offset(y)) for x, y in zip(lhs, rhs, strict=True)]
    if not all(left and right for left, right in terms):
        return None
    bases: dict[tuple[SSAValue, SSAValue], SSAValue] = {}
    gaps = []
    for left, right in terms:
        assert left is not None and right is not None
        (base_x, d_x), (base_y, d_y) = left, right
        if (base_x, base_y) not in bases:
            bases[(base_x, base_y)] = e.b.sub("f32", base_x, base_y)
        gaps.append(e.b.add("f32", bases[(base_x, base_y)], d_x - d_y))
    return gaps


class LowerPosition(RewritePattern):
    """Register n holds the thread's row (column 2*quad) plus a fixed offset d (register_offsets):
    first + that converted to f32 once, then + d per register, exact below 2^24. One add per
    register keeps every register its own (a wgmma may accumulate into them in place)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.PositionOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        axis = 0 if op.axis.data == Axis.ROW else 1
        row, column = e.thread_origin(op.result.type)
        thread_first = b.add("s32", row if axis == 0 else column, e.src(op.first, "s32"))
        base = b.cvt("f32", "s32", thread_first, "rn")  # `first` may be negative (a shifted window)
        e.replace(rewriter, [b.add("f32", base, float(d)) for d in register_offsets(op.result.type)[axis]])


class LowerSelect(RewritePattern):
    """cond != 0 (NaN counts as nonzero) ? on_true : on_false per register; a scalar branch is an
    immediate or a register every element shares."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.SelectOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        conds = e.f32_frag(op.cond)
        branches = [e.f32_frag(v) if isinstance(v.type, sm90.FragmentType) else [e.src(v, "f32")] * len(conds)
                    for v in (op.on_true, op.on_false)]
        e.replace(rewriter, [e.b.selp("f32", x, y, nonzero(e, c)) for c, x, y in zip(conds, *branches, strict=True)])


class LowerRowReduce(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.RowReduceOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        method = REDUCE_METHOD[op.fn.data]
        regs = e.f32_frag(op.source)
        t = cast(sm90.FragmentType, op.source.type)
        per = t.warp_cols(t.get_shape()[1]) // 2
        out: list[SSAValue] = []
        for mb in range(t.blocks):
            for half in (0, 1):
                value = reduce_tree(e, method, [regs[mb * per + i] for i in range(per) if (i >> 1) & 1 == half])
                for lane_mask in (1, 2):
                    value = getattr(e.b, method)("f32", value, e.b.shfl("bfly", value, lane_mask))
                out.append(value)
        e.replace(rewriter, out)


class LowerRowBroadcast(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.RowBroadcastOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        fn = op.fn.data
        regs, vector = e.f32_frag(op.source), e.f32_frag(op.vector)
        if fn == BinaryFn.DIV:
            fn, vector = BinaryFn.MUL, [e.b.rcp("f32", v, "rn") for v in vector]
        t = cast(sm90.FragmentType, op.source.type)
        if t.is_vector:
            e.replace(rewriter, [_f32_binary(e, fn, x, v) for x, v in zip(regs, vector)])
            return
        per = t.warp_cols(t.get_shape()[1]) // 2
        e.replace(rewriter, [_f32_binary(e, fn, x, vector[2 * (n // per) + (((n % per) >> 1) & 1)])
                             for n, x in enumerate(regs)])


class LowerColReduce(RewritePattern):
    """Column value j (column 8*(j>>1) + 2*quad + (j&1)) over the thread's registers of it,
    then over the 8 lanes sharing quad (bfly 4, 8, 16): every lane of a warp holds its warp's
    partials. All lanes write them (equal values, so equal writes) to their warp's scratch
    row; after the sync every thread reduces its columns over all rows of the scratch, or of a
    replicated tile over its own warpgroup's rows. A band tile's warp holds all rows of its
    columns: its lanes' reduction is the result, with no scratch."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.ColReduceOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        method = REDUCE_METHOD[op.fn.data]
        regs = e.f32_frag(op.source)
        t = cast(sm90.FragmentType, op.source.type)
        cols = t.get_shape()[1]
        per = t.warp_cols(cols) // 2
        partials: list[SSAValue] = []
        for j in range(per // 2):
            value = reduce_tree(e, method, [regs[mb * per + 4 * (j >> 1) + 2 * h + (j & 1)]
                                            for mb in range(t.blocks) for h in (0, 1)])
            for lane_mask in (4, 8, 16):
                value = getattr(b, method)("f32", value, b.shfl("bfly", value, lane_mask))
            partials.append(value)
        if t.is_band:
            e.replace(rewriter, partials)
            return
        warpgroups = op.warpgroups.value.data
        barrier = e.int_src(op.barrier_id, "u32")
        _, quad = e.thread_row()
        warp = b.shr("u32", b.and_("b32", b.sreg("tid.x"), 127), 5)
        slot = b.add("u32", b.shl("b32", e.reg(op.warpgroup), 2), warp)
        columns = b.mad("u32", quad, 8, e.reg(op.scratch))
        own_row = b.mad("u32", slot, 4 * cols, columns)
        b.bar_sync(barrier, WARPGROUP_THREADS * warpgroups)  # the last reduction has read the scratch
        for k in range(cols // 8):
            b.st("shared", "f32", own_row, partials[2 * k: 2 * k + 2], 32 * k)
        b.bar_sync(barrier, WARPGROUP_THREADS * warpgroups)
        out: list[SSAValue] = []
        # a replicated tile's partials are the same in every warpgroup: its own 4 rows hold them all
        first_row = b.mad("u32", b.shl("b32", e.reg(op.warpgroup), 2), 4 * cols, columns) if op.replicated else columns
        for row in range(4 if op.replicated else 4 * warpgroups):
            loaded = [x for k in range(cols // 8)
                      for x in cast(list[SSAValue], b.ld("shared", "f32", first_row, 4 * (row * cols + 8 * k), vec=2))]
            out = [getattr(b, method)("f32", x, y) for x, y in zip(out, loaded)] if out else loaded
        e.replace(rewriter, out)


class LowerBandCombine(RewritePattern):
    """Lane 0 of each quad writes its warp's partials of rows r and r + 8 per 16-row block to
    the warp's row of the scratch (one f32 per tile row), between two syncs (after it only, where
    the combine is `ordered`); then every thread reduces the 4 warps' values of its rows in warp
    order, the same order in every warp."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.BandCombineOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        method = REDUCE_METHOD[op.fn.data]
        t = cast(sm90.FragmentType, op.vector.type)
        regs = e.f32_frag(op.vector)
        rows = t.rows
        offsets = register_offsets(t)[0]
        row, _ = e.thread_origin(t)
        warp = b.shr("u32", b.and_("b32", b.sreg("tid.x"), 127), 5)
        share = b.mad("u32", e.reg(op.warpgroup), 4 * 4 * rows, e.reg(op.scratch))
        rows_base = b.mad("u32", row, 4, share)
        own = b.mad("u32", warp, 4 * rows, rows_base)
        barrier = e.int_src(op.barrier_id, "u32")
        threads = WARPGROUP_THREADS * op.warpgroups.value.data
        if op.ordered is None:
            b.bar_sync(barrier, threads)  # the last run of this combine has read its region
        with b.if_(b.setp("eq", "u32", b.and_("b32", b.sreg("tid.x"), 3), 0)):
            for value, offset in zip(regs, offsets, strict=True):
                b.st("shared", "f32", own, value, 4 * offset)
        b.bar_sync(barrier, threads)
        out = []
        for offset in offsets:
            parts = [cast(SSAValue, b.ld("shared", "f32", rows_base, 4 * (w * rows + offset))) for w in range(4)]
            value = parts[0]
            for part in parts[1:]:
                value = getattr(b, method)("f32", value, part)
            out.append(value)
        e.replace(rewriter, out)


class LowerColBroadcast(RewritePattern):
    """Tile register i of an m-block covers column 8*(i>>2) + 2*quad + (i&1): the column
    fragment's value 2*(i>>2) + (i&1)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.ColBroadcastOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        fn = op.fn.data
        regs, vector = e.f32_frag(op.source), e.f32_frag(op.vector)
        if fn == BinaryFn.DIV:
            fn, vector = BinaryFn.MUL, [e.b.rcp("f32", v, "rn") for v in vector]
        t = cast(sm90.FragmentType, op.source.type)
        per = t.warp_cols(t.get_shape()[1]) // 2
        e.replace(rewriter, [_f32_binary(e, fn, x, vector[2 * ((n % per) >> 2) + (n & 1)]) for n, x in enumerate(regs)])


class LowerConvert(RewritePattern):
    """Tiles and column vectors hold their values in pairs: bf16x2/f16x2 in a b32, e4m3x2/e5m2x2
    in a b16; a row vector one value per register (a narrow one in a b16, fp8 in its low byte).
    A conversion unpacks the source to f32, which every dtype widens to exactly (fp8 through
    cvt's f16x2 form, exact too), and packs the result: bf16/f16 round to nearest even, fp8 with
    satfinite (the largest finite value for anything larger, infinities included), as the
    interpreter rounds."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.ConvertOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        src_t, dst_t = cast(sm90.FragmentType, op.source.type), op.result.type
        regs = e.frag(op.source)
        if dtype_name(src_t.element_type) == dtype_name(dst_t.element_type):
            e.replace(rewriter, regs)
            return
        values = [v for r in regs for v in _widen(e, r, src_t)]
        if element_bytes(dst_t.element_type) == 4:
            e.replace(rewriter, values)
        elif src_t.is_row_vector:
            e.replace(rewriter, [_narrow(e, v, v, dst_t.element_type) for v in values])
        else:
            e.replace(rewriter, [_narrow(e, lo, hi, dst_t.element_type) for lo, hi in zip(values[::2], values[1::2])])


def _widen(e: Emitter, register: SSAValue, t: sm90.FragmentType) -> list[SSAValue]:
    """The f32 values of one fragment register: itself (f32), the one value of a row vector's
    register, or the low then the high element of a packed pair."""
    size = element_bytes(t.element_type)
    if size == 4:
        return [register]
    name = dtype_name(t.element_type)
    if size == 1:
        register, name = e.b.cvt("f16x2", name + "x2", register, "rn"), "f16"
    elif t.is_row_vector:
        return [e.b.cvt("f32", name, register)]
    halves = e.b.unpack(register)
    return [e.b.cvt("f32", name, half) for half in (halves[:1] if t.is_row_vector else halves)]


def _narrow(e: Emitter, lo: SSAValue, hi: SSAValue, element_type: Attribute) -> SSAValue:
    """f32 values as one register of `element_type`: the pair (lo, hi) packed, or for a row
    vector (lo = hi) its one value: bf16/f16 alone, fp8 in the low byte (and the high)."""
    name = dtype_name(element_type)
    if element_bytes(element_type) == 1:
        return e.b.cvt_pack(name + "x2", lo, hi, "rn.satfinite")
    if lo is hi:
        return e.b.cvt(name, "f32", lo, "rn")
    return e.b.cvt_pack(name + "x2", lo, hi)


class LowerMask(RewritePattern):
    """Causal: element (r, c) is masked when col0 + c > row0 + r. With r = row + dr and
    c = 2*quad + dc, that is dc - dr > row0 - col0 + row - 2*quad (one compare each)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.MaskOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        regs = e.f32_frag(op.source)
        t = cast(sm90.FragmentType, op.source.type)
        row, column = e.thread_origin(t)
        limit = b.sub("u32", b.add("u32", e.reg(op.row0), row), b.add("u32", column, e.reg(op.col0)))
        fill = b.mov("f32", float(op.fill.value.data))
        offsets = register_offsets(t)
        out = []
        for n, x in enumerate(regs):
            delta = offsets[1][n] - offsets[0][n]
            out.append(b.selp("f32", fill, x, b.setp("lt", "s32", limit, delta)))
        e.replace(rewriter, out)


def register_offsets(t: sm90.FragmentType) -> dict[int, list[int]]:
    """Per axis of an f32 fragment (0: rows, 1: columns), each register's index along it less the
    thread's first row or column (Emitter.thread_origin)."""
    groups, height = t.group_stride, t.block_rows
    if t.is_column:
        return {1: [groups * (j >> 1) + (j & 1) for j in range(t.registers_per_thread())]}
    if t.is_row_vector:
        return {0: [height * mb + 8 * half for mb in range(t.blocks) for half in (0, 1)]}
    per = t.warp_cols(t.get_shape()[1]) // 2
    registers = [divmod(n, per) for n in range(t.registers_per_thread())]
    return {0: [height * mb + 8 * ((i >> 1) & 1) for mb, i in registers],
            1: [groups * (i >> 2) + (i & 1) for _, i in registers]}


class LowerBoundsMask(RewritePattern):
    """Element (r, c) becomes fill where r >= rows or c >= cols (signed: a limit may be <= 0 or
    past the fragment). A register's row is the thread's row plus one of a few offsets d (its
    column 2*quad plus one of a few), so each axis takes `left` = limit - the thread's row
    (column) once and one setp `left <= d` per distinct offset, then a selp per register and
    masked axis. An axis whose limit is a constant at least its extent has nothing to mask."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.BoundsMaskOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        t = cast(sm90.FragmentType, op.source.type)
        regs = e.f32_frag(op.source)
        offsets = register_offsets(t)
        bounds = {axis: bound for axis, limit, extent in zip(offsets, op.limits, t.get_shape(), strict=True)
                  if not (isinstance(bound := e.src(limit, "s32"), int) and bound >= extent)}
        if not bounds:
            e.replace(rewriter, [b.mov("f32", x) for x in regs])  # fresh registers: a wgmma may write them in place
            return
        row, column = e.thread_origin(t)
        past: dict[int, list[SSAValue]] = {}  # per masked axis, per register: is it past the limit
        for axis, bound in bounds.items():
            left = b.sub("s32", bound, row if axis == 0 else column)
            compares = {d: b.setp("le", "s32", left, d) for d in sorted(set(offsets[axis]))}
            past[axis] = [compares[d] for d in offsets[axis]]
        fill = b.mov("f32", float(op.fill.value.data))
        out = []
        for n, x in enumerate(regs):
            for predicates in past.values():
                x = b.selp("f32", fill, x, predicates[n])
            out.append(x)
        e.replace(rewriter, out)


QUAD_SEGMENT = 0x1C00
"""shfl.sync's c operand that splits a warp into segments of 4 lanes (a quad), no clamp: a lane
whose source lies before its quad reads its own value."""


def row_lines(t: sm90.FragmentType) -> list[list[int]]:
    """The registers of each row a thread holds of a tile fragment (per m-block, its rows r0 and
    r0 + 8), or the one line of a column fragment, in column order: pairs of neighbouring columns
    8*k + 2*quad + (0, 1) for k = 0, 1, ..."""
    if t.is_column:
        return [list(range(t.registers_per_thread()))]
    per = t.get_shape()[1] // 2
    return [[mb * per + 4 * k + 2 * half + e for k in range(per // 4) for e in (0, 1)]
            for mb in range(t.rows // 64) for half in (0, 1)]


class LowerRowScan(RewritePattern):
    """Per line: each pair of neighbouring columns sums locally; the pair sums are scanned over
    the quad (shfl.up 1, 2 within 4-lane segments; the lanes before it add nothing) and their
    group totals carried from one 8-column group to the next."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.RowScanOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        regs = e.f32_frag(op.source)
        _, quad = e.thread_row()
        after = {d: b.setp("ge", "u32", quad, d) for d in (1, 2)}
        out = list(regs)
        for line in row_lines(cast(sm90.FragmentType, op.source.type)):
            carry: SSAValue | float = 0.0
            for first, second in zip(line[::2], line[1::2]):
                pair = b.add("f32", regs[first], regs[second])
                scan = pair
                for d in (1, 2):
                    scan = b.selp("f32", b.add("f32", scan, b.shfl("up", scan, d, QUAD_SEGMENT)), scan, after[d])
                before = b.selp("f32", b.shfl("up", scan, 1, QUAD_SEGMENT), 0.0, after[1])
                start = b.add("f32", before, carry) if isinstance(carry, SSAValue) else before
                out[first] = b.add("f32", start, regs[first])
                out[second] = b.add("f32", out[first], regs[second])
                total = b.shfl("idx", scan, 3, QUAD_SEGMENT | 0x1F)
                carry = b.add("f32", carry, total) if isinstance(carry, SSAValue) else total
        e.replace(rewriter, out)


class LowerColScan(RewritePattern):
    """Per column value of the thread (column 8*k + 2*quad + e) and m-block: its rows g and g + 8
    of the warp's 16 are scanned over the 8 lanes of the column (shfl.up 4, 8, 16; lanes before
    the offset add nothing) and the rows g + 8 add the total of rows 0..7 (lane 28 + quad); the
    slab's total (16 rows) goes to the scratch row of slab warpgroup * R/16 + 4 * m-block + warp.
    After the sync every thread adds, per m-block, the slabs above its own."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.ColScanOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        regs = e.f32_frag(op.source)
        rows, cols = cast(sm90.FragmentType, op.source.type).get_shape()
        warpgroups = op.warpgroups.value.data
        # a replicated tile: every warpgroup writes the same totals to the tile's own slabs
        per, blocks, slabs = cols // 2, rows // 64, rows // 16 if op.replicated else rows * warpgroups // 16
        row, quad = e.thread_row()
        group = b.and_("b32", row, 7)
        below = {d: b.setp("ge", "u32", group, d) for d in (1, 2, 4)}
        last = b.add("u32", quad, 28)

        def scan(x: SSAValue) -> SSAValue:
            for d in (1, 2, 4):
                x = b.selp("f32", b.add("f32", x, b.shfl("up", x, 4 * d, 0)), x, below[d])
            return x

        out = list(regs)
        totals: list[SSAValue] = []  # per m-block, per column value: the slab's total
        for mb in range(blocks):
            for k in range(cols // 8):
                for parity in (0, 1):  # the column 8 * k + 2 * quad + parity, in rows g and g + 8
                    upper, lower = mb * per + 4 * k + parity, mb * per + 4 * k + 2 + parity
                    first = scan(regs[upper])
                    first_total = b.shfl("idx", first, last)
                    second = scan(regs[lower])
                    out[upper] = first
                    out[lower] = b.add("f32", second, first_total)
                    totals.append(b.add("f32", first_total, b.shfl("idx", second, last)))
        barrier = e.int_src(op.barrier_id, "u32")
        warp = b.shr("u32", b.and_("b32", b.sreg("tid.x"), 127), 5)
        slab = warp if op.replicated else b.mad("u32", e.reg(op.warpgroup), rows // 16, warp)
        columns = b.mad("u32", quad, 8, e.reg(op.scratch))
        own_row = b.mad("u32", slab, 4 * cols, columns)
        b.bar_sync(barrier, WARPGROUP_THREADS * warpgroups)  # the last user of the scratch has read it
        for mb in range(blocks):
            for k in range(cols // 8):
                b.st("shared", "f32", own_row, totals[mb * cols // 4 + 2 * k: mb * cols // 4 + 2 * k + 2],
                     4 * (4 * mb * cols + 8 * k))
        b.bar_sync(barrier, WARPGROUP_THREADS * warpgroups)
        # slab s lies above m-block mb's own (slab + 4 * mb) always when s < 4 * mb, else when slab > s - 4 * mb
        above = {(mb, s): b.setp("gt", "u32", slab, s - 4 * mb) for mb in range(blocks) for s in range(4 * mb, slabs)}
        for s in range(slabs):
            loaded = [x for k in range(cols // 8)
                      for x in cast(list[SSAValue], b.ld("shared", "f32", columns, 4 * (s * cols + 8 * k), vec=2))]
            for mb in range(blocks):
                for j, value in enumerate(loaded):
                    add = b.selp("f32", value, 0.0, above[mb, s]) if (mb, s) in above else value
                    for n in (mb * per + 4 * (j >> 1) + (j & 1), mb * per + 4 * (j >> 1) + 2 + (j & 1)):
                        out[n] = b.add("f32", out[n], add)
        e.replace(rewriter, out)


class LowerVectorReduce(RewritePattern):
    """The thread's columns, then the quad's (bfly 1, 2): every thread holds the result."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.VectorReduceOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        method = REDUCE_METHOD[op.fn.data]
        value = reduce_tree(e, method, e.f32_frag(op.source))
        for lane_mask in (1, 2):
            value = getattr(e.b, method)("f32", value, e.b.shfl("bfly", value, lane_mask))
        e.replace(rewriter, value)


class LowerTranspose(RewritePattern):
    """Every thread writes what it holds to the scratch (element i at 4*i; the lanes that hold
    one element write equal values), all warpgroups sync, every thread reads the elements of its
    new layout. A sync before the writes lets the last user of the scratch finish reading."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.TransposeOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        source, result = cast(sm90.FragmentType, op.source.type), op.result.type
        regs = e.f32_frag(op.source)
        count = WARPGROUP_THREADS * op.warpgroups.value.data
        barrier = e.int_src(op.barrier_id, "u32")
        row, quad = e.thread_row()
        scratch = e.reg(op.scratch)
        rows = b.add("u32", scratch, b.shl("b32", b.add("u32", row, e.reg(op.row0)), 2))
        columns = b.add("u32", scratch, b.shl("b32", quad, 3))
        b.bar_sync(barrier, count)
        if source.is_column:
            for k in range(len(regs) // 2):
                b.st("shared", "f32", columns, regs[2 * k: 2 * k + 2], 32 * k)
        else:
            for n, x in enumerate(regs):
                b.st("shared", "f32", rows, x, 4 * (64 * (n // 2) + 8 * (n % 2)))
        b.bar_sync(barrier, count)
        if result.is_column:
            out = [x for k in range(result.rows // 8)
                   for x in cast(list[SSAValue], b.ld("shared", "f32", columns, 32 * k, vec=2))]
        else:
            out = [cast(SSAValue, b.ld("shared", "f32", rows, 4 * (64 * (n // 2) + 8 * (n % 2))))
                   for n in range(result.registers_per_thread())]
        e.replace(rewriter, out)


PATTERNS: list[RewritePattern] = [
    LowerFill(), LowerUnary(), LowerBinary(), LowerRowReduce(), LowerBandCombine(), LowerRowBroadcast(), LowerColReduce(),
    LowerColBroadcast(), LowerConvert(), LowerMask(), LowerBoundsMask(), LowerPosition(), LowerSelect(), LowerRowScan(),
    LowerColScan(), LowerVectorReduce(), LowerTranspose(),
]
