"""convert-sm90-to-ptx patterns that move fragments between registers and memory: fragment
stores and loads of shared tiles, column-vector loads, vector stores to global memory.

Shared tiles carry the TMA swizzle (hopper-ptx.md §7): inside a 1024-aligned panel the XOR
depends only on the row mod 8, which is the same for all of a thread's registers, so the XOR is
applied per thread once and each register costs one st/ld with an immediate offset (plus one
add per 16-byte column chunk).
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import Float32Type
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tkc.dialects import sm90
from tkc.dialects.tile import element_bytes
from tkc.diagnostics import error_at
from tkc.passes.sm90_to_ptx.emitter import Emitter, dtype_name, fragment_register, log2, memory_type

_SWIZZLE_MASK = {128: 7, 64: 3, 32: 1, 0: 0}


def _padded(frag_type: sm90.FragmentType, ref: sm90.SharedRefType) -> bool:
    """Whether the fragment's rows may reach past the shared tile's: a tile whose rows are no
    multiple of 64 (16, 96) in fragments of whole 64-row slices (plan.fragment_rows), whose rows
    past the tile's are padding."""
    return not frag_type.is_column and not frag_type.is_band and ref.get_shape()[0] % 64 != 0


def _mblock_slots(e: Emitter, frag_type: sm90.FragmentType, ref: sm90.SharedRefType, base: SSAValue,
                  rows: list[SSAValue], quad: SSAValue, col_start: int = 0,
                  only: int | None = None) -> list[Slot]:
    """_shared_slots of each 64-row m-block of the fragment (or of m-block `only`) from its own
    first row `rows[mb]` (the thread's row in the tile, 64·mb below the first m-block's, or
    wherever a padding row goes instead), the slot indices counted over the whole fragment."""
    if len(rows) == 1:
        return _shared_slots(e, frag_type, ref, base, rows[0], quad, col_start)
    shape = [64] if frag_type.is_vector else [64, frag_type.get_shape()[1]]
    one = sm90.FragmentType(shape, frag_type.element_type)
    per = 2 if frag_type.is_vector else frag_type.get_shape()[1] // 4
    return [(mb * per + n, addr, offset, guard) for mb, r in enumerate(rows) if only in (None, mb)
            for n, addr, offset, guard in _shared_slots(e, one, ref, base, r, quad, col_start)]


def _mblock_rows(e: Emitter, frag_type: sm90.FragmentType, r: SSAValue) -> list[SSAValue]:
    """The thread's row in each 64-row m-block of the fragment, the first's being `r`."""
    return [r] + [e.b.add("u32", r, 64 * mb) for mb in range(1, frag_type.rows // 64)]


def _check_dtypes(e: Emitter, frag_type: sm90.FragmentType, ref: sm90.SharedRefType) -> None:
    if dtype_name(frag_type.element_type) != dtype_name(ref.element_type):
        raise error_at(e.op, f"{frag_type} and {ref} differ in element type; convert the fragment first")


Slot = tuple[int, SSAValue, int, SSAValue | None]
"""A register's (or column pair's) place in shared memory: its index in the fragment, the address
register, the immediate offset, and the predicate it moves under (None: always)."""


def _shared_slots(e: Emitter, frag_type: sm90.FragmentType, ref: sm90.SharedRefType, base: SSAValue,
                  r: SSAValue, quad: SSAValue, col_start: int = 0) -> list[Slot]:
    """(slot index, address register, immediate offset, predicate) of each column pair of the
    fragment (rank 2) that falls in the shared tile's columns (the fragment's from `col_start`
    on), or of each value (rank 1), under the tile's panels and swizzle; `r` is the thread's
    first row in the tile and `quad` its lane % 4.

    In the band layout the thread's first column (8*warp + 2*quad) is a register, its groups
    32 columns apart: the register part is under 32 columns and the constant part a multiple of
    32, so their bytes share no bit, and the XOR of the swizzle (which only reaches the 16-byte
    chunk bits) applies to each apart; where panels are narrower than 32 columns, the thread's
    column also picks its panel. A window of the columns that is not whole 32-column groups (a
    staged store's chunk of 8 or 16) holds some warps' groups and not others': each thread then
    places its group in the window by its own column, and moves it where that lies inside
    (_band_window_slots)."""
    b = e.b
    eb = element_bytes(ref.element_type)
    height = frag_type.block_rows
    if frag_type.is_vector:
        addr = b.mad("u32", r, eb, base)
        return [(2 * mb + half, addr, (height * mb + 8 * half) * eb, None)
                for mb in range(frag_type.blocks) for half in (0, 1)]
    rows, cols = frag_type.get_shape()
    span = ref.panel_cols * eb
    panel_bytes = ref.get_shape()[0] * span
    row_addr = b.mad("u32", r, span, base)
    window = ref.get_shape()[-1]
    if frag_type.is_band and (window % frag_type.group_stride or col_start % frag_type.group_stride):
        return _band_window_slots(e, frag_type, ref, row_addr, r, col_start)
    if frag_type.is_band:
        thread_col = e.thread_origin(frag_type)[1]
        if ref.panel_cols < frag_type.group_stride:
            # panels narrower than a group: the thread's column also picks its panel
            panel_of = b.shr("u32", thread_col, log2(ref.panel_cols))
            row_addr = b.mad("u32", panel_of, panel_bytes, row_addr)
            thread_col = b.and_("b32", thread_col, ref.panel_cols - 1)
        col = b.shl("b32", thread_col, log2(eb))
    else:
        col = b.shl("b32", quad, log2(2 * eb))
    mask = _SWIZZLE_MASK[ref.swizzle.data]
    swizzle = _swizzle_bits(e, ref, r)
    if swizzle is not None:
        col = b.xor("b32", col, swizzle)
    columns: dict[int, SSAValue] = {}
    slots: list[Slot] = []
    pairs = frag_type.warp_cols(cols) // 4
    for u in range(frag_type.blocks * pairs):
        mb, j = divmod(u, pairs)
        column = frag_type.group_stride * (j >> 1) - col_start
        if not 0 <= column < window:
            continue
        panel, within = divmod(column, ref.panel_cols)
        chunk = within * eb if mask else 0
        if chunk not in columns:
            columns[chunk] = b.add("u32", row_addr, b.xor("b32", col, chunk) if chunk else col)
        offset = panel * panel_bytes + (height * mb + 8 * (j & 1)) * span + (0 if mask else within * eb)
        slots.append((u, columns[chunk], offset, None))
    return slots


def _swizzle_bits(e: Emitter, ref: sm90.SharedRefType, r: SSAValue) -> SSAValue | None:
    """The XOR a row's 16-byte chunks take under the tile's swizzle (None: unswizzled)."""
    mask = _SWIZZLE_MASK[ref.swizzle.data]
    if not mask:
        return None
    b = e.b
    shift = 7 - log2(ref.panel_cols * element_bytes(ref.element_type))
    return b.shl("b32", b.and_("b32", b.shr("u32", r, shift) if shift > 0 else r, mask), 4)


def _band_window_slots(e: Emitter, frag_type: sm90.FragmentType, ref: sm90.SharedRefType, row_addr: SSAValue,
                       r: SSAValue, col_start: int) -> list[Slot]:
    """_shared_slots of a band fragment for a window of columns that is not whole 32-column
    groups: per group of the thread's, its column in the window g = 32k + 8*warp - col_start
    (a register), moved where 0 <= g < window, at panel g / panel columns and, inside it, the
    swizzled bytes of g mod panel columns + 2*quad."""
    b = e.b
    eb = element_bytes(ref.element_type)
    span = ref.panel_cols * eb
    panel_bytes = ref.get_shape()[0] * span
    window = ref.get_shape()[-1]
    thread_col = e.thread_origin(frag_type)[1]
    group = b.and_("b32", thread_col, 3 << 3)  # 8*warp
    pair = b.and_("b32", thread_col, 7)  # 2*quad
    swizzle = _swizzle_bits(e, ref, r)
    places: dict[int, tuple[SSAValue, SSAValue]] = {}
    slots: list[Slot] = []
    pairs = frag_type.warp_cols(frag_type.get_shape()[1]) // 4
    for u in range(frag_type.blocks * pairs):
        mb, j = divmod(u, pairs)
        first = frag_type.group_stride * (j >> 1) - col_start  # warp 0's group
        if first + 3 * 8 < 0 or first >= window:
            continue  # no warp's group of this register reaches the window
        if first not in places:
            g = b.add("u32", group, first) if first else group
            inside = b.setp("lt", "u32", g, window)  # a negative g wraps past it
            panel = b.shr("u32", g, log2(ref.panel_cols))
            within = b.shl("b32", b.add("u32", b.and_("b32", g, ref.panel_cols - 1), pair), log2(eb))
            if swizzle is not None:
                within = b.xor("b32", within, swizzle)
            places[first] = (b.add("u32", b.mad("u32", panel, panel_bytes, row_addr), within), inside)
        addr, inside = places[first]
        slots.append((u, addr, (frag_type.block_rows * mb + 8 * (j & 1)) * span, inside))
    return slots


def _row_and_quad(e: Emitter, t: sm90.FragmentType) -> tuple[SSAValue, SSAValue]:
    """The thread's first row in a block of the fragment (Emitter.thread_origin) and its lane % 4."""
    row, quad = e.thread_row()
    return (e.thread_origin(t)[0] if t.is_band else row), quad


class LowerStoreFragment(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.StoreFragmentOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        t = cast(sm90.FragmentType, op.source.type)
        ref = cast(sm90.SharedRefType, op.dst.type)
        regs = e.frag(op.source)
        _check_dtypes(e, t, ref)
        row, quad = _row_and_quad(e, t)
        r = e.offset(row, op.row_offset)
        wide = isinstance(t.element_type, Float32Type) and not t.is_vector

        def store_one(n: int, addr: SSAValue, offset: int) -> None:
            if wide:
                e.b.st("shared", "f32", addr, regs[2 * n: 2 * n + 2], offset)
            else:
                e.b.st("shared", memory_type(t), addr, regs[n], offset)

        def store(slots: list[Slot]) -> None:
            for n, addr, offset, guard in slots:
                if guard is None:
                    store_one(n, addr, offset)
                    continue
                with e.b.if_(guard):
                    store_one(n, addr, offset)

        if _padded(t, ref):
            # per m-block, only the warps whose rows (r and r + 8: a tile's rows are a multiple
            # of 16) are the tile's write; the padding rows past it are no part of the tile
            rows = _mblock_rows(e, t, r)
            for mb, row in enumerate(rows):
                with e.b.if_(e.b.setp("lt", "u32", row, ref.get_shape()[0])):
                    store(_mblock_slots(e, t, ref, e.reg(op.dst), rows, quad, op.col_start.value.data, mb))
        else:
            store(_shared_slots(e, t, ref, e.reg(op.dst), r, quad, op.col_start.value.data))
        rewriter.erase(op)


class LowerLoadFragment(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.LoadFragmentOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        t = op.result.type
        if t.is_column:
            e.replace(rewriter, _load_column(e, op, t))
            return
        ref = cast(sm90.SharedRefType, op.source.type)
        _check_dtypes(e, t, ref)
        row, quad = _row_and_quad(e, t)
        r = e.offset(row, op.row_offset)
        rows = [r]
        if _padded(t, ref):
            # the padding rows past the tile read its rows again (r mod rows keeps r % 16 < 8,
            # the rows being a multiple of 16), per m-block: in bounds, and no part of any result
            rows = [e.b.rem("u32", row, ref.get_shape()[0]) for row in _mblock_rows(e, t, r)]
        slots = _mblock_slots(e, t, ref, e.reg(op.source), rows, quad)
        wide = isinstance(t.element_type, Float32Type) and not t.is_vector
        regs: list[SSAValue] = []
        for _, addr, offset, guard in slots:
            if guard is not None:  # a load covers every column: no window
                raise error_at(op, f"{t} loads from {ref} in part")
            if wide:
                regs += cast(list[SSAValue], e.b.ld("shared", "f32", addr, offset, vec=2))
            else:
                regs.append(cast(SSAValue, e.b.ld("shared", memory_type(t), addr, offset)))
        e.replace(rewriter, regs)


def _load_column(e: Emitter, op: sm90.LoadFragmentOp, t: sm90.FragmentType) -> list[SSAValue]:
    """Every thread reads its columns 8k + 2*quad + {0, 1} (in the band layout 32k + 8*warp +
    2*quad + {0, 1}) of an unswizzled shared vector from element `row_offset` on: one packed b32 (bf16/f16), b16 (fp8) or one v2.f32 per k,
    or each element alone where the start may be odd (a misaligned pair access stops the kernel)."""
    ref = cast(sm90.SharedRefType, op.source.type)
    if dtype_name(t.element_type) != dtype_name(ref.element_type) or ref.swizzle.data or len(ref.get_shape()) != 1:
        raise error_at(op, f"a column fragment {t} loads from an unswizzled vector of its dtype, not {ref}")
    b = e.b
    eb = element_bytes(ref.element_type)
    _, column = e.thread_origin(t)
    addr = b.mad("u32", column, eb, e.offset(e.reg(op.source), op.row_offset, eb))
    start = e.src(op.row_offset, "u32")
    # a pair is one access where it is pair-aligned: not from a run-time or odd start (a
    # realigned vector's, tile-swizzle-select), which reads its two elements one by one
    paired = isinstance(start, int) and start % 2 == 0
    regs: list[SSAValue] = []
    for k in range(t.warp_cols(t.rows) // 8):
        at = t.group_stride * k * eb
        if eb == 4:
            regs += (cast(list[SSAValue], b.ld("shared", "f32", addr, at, vec=2)) if paired
                     else [cast(SSAValue, b.ld("shared", "f32", addr, at + 4 * half)) for half in (0, 1)])
        elif paired:
            regs.append(cast(SSAValue, b.ld("shared", fragment_register(t), addr, at)))
        elif eb == 2:
            lo, hi = (cast(SSAValue, b.ld("shared", "b16", addr, at + 2 * half)) for half in (0, 1))
            regs.append(b.pack(lo, hi))
        else:
            lo, hi = (b.and_("b16", cast(SSAValue, b.ld("shared", "b8", addr, at + half)), 0xFF) for half in (0, 1))
            regs.append(b.or_("b16", lo, b.shl("b16", hi, 8)))
    return regs


class LowerStoreVectorGlobal(RewritePattern):
    """A row vector: lane 0 of each quad writes its two rows (the quad holds the same values;
    in the band layout only warp 0's, as every warp holds them all).
    A column vector (replicated over the warpgroup): the first quad of warp 0 writes it, each
    lane its column pairs 8*k + 2*(lane % 4) (in the band layout the first quad of every warp,
    its pairs 32*k + 8*warp + 2*(lane % 4)), as one store per pair where the vector starts at an
    even element, else one per element (a pair store needs its pair's alignment); one per
    element too, at any start, where it may start before its tensor (`from`). Only elements
    before the limit are written:
    `left` = limit - the lane's first element, then each store runs where left exceeds its
    element's distance from the first (a column pair past which the limit falls writes its
    first column alone: the low half of a packed pair, an fp8 pair's low byte by st.b8). With
    `reduce add` each f32 value is added instead (`red.global.add.f32`, one per value)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.StoreVectorGlobalOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        t = cast(sm90.FragmentType, op.source.type)
        regs = e.frag(op.source)
        eb = element_bytes(t.element_type)
        row, first = e.thread_origin(t)
        adds = op.reduce is not None
        groups, height = t.group_stride, t.block_rows

        def put(ty: str, addr: SSAValue, values: list[SSAValue], offset: int) -> None:
            if not adds:
                b.st("global", ty, addr, values, offset)
                return
            for k, value in enumerate(values):
                b.red("global", "add", "f32", addr, value, offset=offset + 4 * k)

        def put_one(addr: SSAValue, k: int, half: int, left: SSAValue) -> None:
            """Element `half` of column pair k alone."""
            offset = (groups * k + half) * eb
            if eb == 4:
                put("f32", addr, [regs[2 * k + half]], offset)
            elif eb == 2:
                b.st("global", "b16", addr, b.unpack(regs[k])[half], offset)
            else:
                b.st("global", "b8", addr, regs[k] if half == 0 else b.shr("b16", regs[k], 8), offset)

        def inside(left: SSAValue, low: SSAValue | None, index: int) -> SSAValue:
            """Whether element `index` (of this thread's, counted from its first) lies in
            [low, left): before the tensor's end, and with a start (`from`), not before its first
            element."""
            before_end = b.setp("gt", "s32", left, index)
            return before_end if low is None else b.and_("pred", before_end, b.setp("le", "s32", low, index))

        if t.is_column:
            with b.if_(b.setp("eq", "u32", row, 0)):
                column = b.add("u32", e.reg(op.offset), first)
                addr = b.add("u64", e.reg(op.base), b.mul_wide("s32", column, eb))
                left = b.sub("s32", e.int_src(op.limit, "s32"), first)
                low = None if op.start is None else b.sub("s32", e.int_src(op.start, "s32"), first)

                def one_by_one() -> None:
                    for k in range(t.warp_cols(t.rows) // 8):
                        for half in (0, 1):
                            with b.if_(inside(left, low, groups * k + half)):
                                put_one(addr, k, half, left)

                # a pair is one store where its first element is a pair's width from the
                # (16-byte aligned) base: always, unless an odd row length or column offset
                # puts the vector at an odd element (`Q: gl<f32>[G, T]` at T = 253); a vector
                # that may start before its tensor stores element by element, at any start
                if low is not None:
                    one_by_one()
                else:
                    paired = b.setp("eq", "b32", b.and_("b32", e.reg(op.offset), 1), 0)
                    with b.if_(paired):
                        for k in range(t.warp_cols(t.rows) // 8):
                            pair = regs[2 * k: 2 * k + 2] if eb == 4 else regs[k]
                            with b.if_(b.setp("gt", "s32", left, groups * k + 1)):
                                put(fragment_register(t), addr, pair if isinstance(pair, list) else [pair], groups * k * eb)
                            with b.if_(b.setp("eq", "s32", left, groups * k + 1)):
                                put_one(addr, k, 0, left)
                    with b.if_(paired, negate=True):
                        one_by_one()
        else:
            # a band row vector is the same in every warp: warp 0 writes it
            writer = b.and_("b32", b.sreg("tid.x"), 3 | 3 << 5 if t.is_band else 3)  # lane % 4 (and warp % 4)
            with b.if_(b.setp("eq", "u32", writer, 0)):
                addr = b.add("u64", e.reg(op.base), b.mul_wide("s32", b.add("u32", e.reg(op.offset), row), eb))
                left = b.sub("s32", e.int_src(op.limit, "s32"), row)
                low = None if op.start is None else b.sub("s32", e.int_src(op.start, "s32"), row)
                for n, value in enumerate(regs):
                    mb, half = divmod(n, 2)
                    with b.if_(inside(left, low, height * mb + 8 * half)):
                        put(memory_type(t), addr, [value], (height * mb + 8 * half) * eb)
        rewriter.erase(op)


class LowerZeroRows(RewritePattern):
    """Thread t (tid - 128: the consumers follow the producer warpgroup) zeroes 16-byte chunks
    t, t + threads, ... of the tile, each where its row (chunk / chunks per row, mod rows) is at
    or past `first`: an unrolled loop of predicated st.shared.v4."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sm90.ZeroRowsOp, rewriter: PatternRewriter) -> None:
        e = Emitter(op)
        b = e.b
        ref = cast(sm90.SharedRefType, op.tile.type)
        rows = ref.get_shape()[0]
        row_chunks = ref.panel_cols * element_bytes(ref.element_type) // 16
        threads = op.threads.value.data
        chunks = ref.num_bytes // 16
        t = b.sub("u32", b.sreg("tid.x"), 128)
        first = e.int_src(op.first, "s32")
        zeros = [b.mov_imm("b32", 0)] * 4
        for k in range(-(-chunks // threads)):
            chunk = b.add("u32", t, k * threads)
            row = b.rem("u32", b.div("u32", chunk, row_chunks), rows)
            inside = b.setp("lt", "u32", chunk, chunks)
            with b.if_(b.and_("pred", inside, b.setp("ge", "s32", row, first))):
                b.st("shared", "b32", b.mad("u32", chunk, 16, e.reg(op.tile)), zeros)
        rewriter.erase(op)


PATTERNS: list[RewritePattern] = [LowerStoreFragment(), LowerLoadFragment(), LowerStoreVectorGlobal(), LowerZeroRows()]
