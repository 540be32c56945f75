"""Tiles past the end of a tensor in convert-sm90-to-ptx, without a GPU: sm90.bounds_mask on tile,
row-vector and column-vector fragments and the limit of sm90.store_vector_global, run on the
one-warpgroup simulator of test_sm90_to_ptx and compared with numpy, for limits inside the
fragment, at and past its extent and <= 0, given as constants and as registers; the compares
each mask emits; and every kernel assembled by ptxas."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from test_sm90_column_vectors import run_column_program
from test_sm90_to_ptx import F32, const, kernel, lower, run_tile_program, simulate, write_tile
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation, SSAValue

from tkc.abi import ArgSpec, DimParam, KernelABI, PointerParam
from tkc.backends.ptx_printer import print_ptx
from tkc.backends.ptxas import ToolNotFound, assemble, find_tool
from tkc.dialects import ptx, sm90
from tkc.dialects.tile import BinaryFn, BinaryFnAttr, ReduceFn, ReduceFnAttr

Emit = Callable[[Operation], SSAValue]
FILL = float("-inf")
GLOBAL = 1 << 24
"""Where the simulator puts the global tensor a vector store writes."""


def limit(emit: Emit, value: int, in_register: bool) -> SSAValue:
    """An index limit: a constant, or (in_register) a value computed at run time."""
    if not in_register:
        return const(emit, value)
    return emit(arith.AddiOp(const(emit, value), const(emit, 0)))


def masked(shape: tuple[int, ...], x: np.ndarray, limits: tuple[int, ...]) -> np.ndarray:
    """x with every element at or past a limit along some axis set to FILL."""
    past = np.zeros(shape, dtype=bool)
    for axis, bound in enumerate(limits):
        index = np.indices(shape)[axis]
        past |= index >= bound
    return np.where(past, FILL, x)


def assembles(entry: ptx.EntryOp) -> None:
    try:
        find_tool("ptxas")
    except ToolNotFound:
        return
    module = entry.parent_op()
    assert module is not None
    assemble(print_ptx(module))


@pytest.mark.parametrize("rows,cols,in_register", [(64, 64, False), (37, 50, True), (0, 10, False), (-3, 64, True),
                                                   (100, 7, False), (10, -1, True), (9, 8, True), (1000, 1000, True)])
def test_tile_mask(rows: int, cols: int, in_register: bool) -> None:
    """A consumer's 64 rows (its slice from row 64 of the tile): (r, c) counted from the slice."""
    ref = sm90.SharedRefType([128, 64], F32, 128)
    x = np.arange(128 * 64, dtype=np.float64).reshape(128, 64) % 251

    def program(emit: Emit, frag: SSAValue) -> SSAValue:
        bounds = [limit(emit, rows, in_register), limit(emit, cols, in_register)]
        return emit(sm90.BoundsMaskOp(frag, bounds, FloatAttr(FILL, F32)))

    out = run_tile_program(ref, ref, 64, 64, x, program)
    np.testing.assert_array_equal(out[64:], masked((64, 64), x[64:], (rows, cols)))


@pytest.mark.parametrize("rows,cols", [(70, 9), (127, 0), (-1, 32)])
def test_tile_mask_of_two_m_blocks(rows: int, cols: int) -> None:
    """A 128-row fragment (two 64-row m-blocks: rows r0 + {0, 8, 64, 72}) of 32 columns."""
    ref = sm90.SharedRefType([128, 32], F32, 128)
    x = np.arange(128 * 32, dtype=np.float64).reshape(128, 32) - 1000

    def program(emit: Emit, frag: SSAValue) -> SSAValue:
        return emit(sm90.BoundsMaskOp(frag, [limit(emit, rows, True), const(emit, cols)], FloatAttr(FILL, F32)))

    out = run_tile_program(ref, ref, 128, 0, x, program)
    np.testing.assert_array_equal(out, masked((128, 32), x, (rows, cols)))


@pytest.mark.parametrize("rows", [-3, 0, 8, 9, 72, 128])
def test_row_vector_mask(rows: int) -> None:
    """row_max of a 128-row fragment, masked by rows, broadcast back over the columns."""
    ref = sm90.SharedRefType([128, 32], F32, 128)
    x = np.random.default_rng(0).standard_normal((128, 32)).round(3)

    def program(emit: Emit, frag: SSAValue) -> SSAValue:
        vector = emit(sm90.RowReduceOp(ReduceFnAttr(ReduceFn.MAX), frag))
        vector = emit(sm90.BoundsMaskOp(vector, [limit(emit, rows, True)], FloatAttr(FILL, F32)))
        zeros = emit(sm90.FillOp(0.0, frag.type))
        return emit(sm90.RowBroadcastOp(BinaryFnAttr(BinaryFn.ADD), zeros, vector))

    out = run_tile_program(ref, ref, 128, 0, x, program)
    expected = masked((128,), x.max(axis=1), (rows,))
    np.testing.assert_array_equal(out, np.broadcast_to(expected[:, None], x.shape))


@pytest.mark.parametrize("cols,in_register", [(-3, True), (0, False), (1, True), (9, True), (63, False), (64, True),
                                              (1000, False)])
def test_column_vector_mask(cols: int, in_register: bool) -> None:
    """A column vector (replicated: every thread its columns 8k + 2*quad + {0, 1}), masked, then
    broadcast over a zero tile."""
    v = np.arange(64, dtype=np.float64) * 3 + 1

    def program(emit: Emit, tile: SSAValue, vec: SSAValue) -> SSAValue:
        vec = emit(sm90.BoundsMaskOp(vec, [limit(emit, cols, in_register)], FloatAttr(FILL, F32)))
        return emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.ADD), emit(sm90.FillOp(0.0, tile.type)), vec))

    out = run_column_program(np.zeros((64, 64)), [(v, F32)], program)
    np.testing.assert_array_equal(out, np.broadcast_to(masked((64,), v, (cols,)), (64, 64)))


def _mask_kernel(shape: list[int], column: bool, limits: list[int | None]) -> ptx.EntryOp:
    """A fill masked by `limits` (None: a limit computed at run time)."""
    def body(emit: Emit, base: SSAValue) -> None:
        frag = emit(sm90.FillOp(1.0, sm90.FragmentType(shape, F32, column=column)))
        bounds = [limit(emit, 5, True) if b is None else const(emit, b) for b in limits]
        emit(sm90.BoundsMaskOp(frag, bounds, FloatAttr(0.0, F32)))

    return lower(kernel(body))


@pytest.mark.parametrize(
    "shape,column,limits,setps,selps",
    [
        ([64, 64], False, [None, None], 2 + 16, 2 * 32),  # rows r0 + {0, 8}; 16 column offsets
        ([64, 64], False, [64, None], 16, 32),  # rows at their extent: no row compare
        ([64, 64], False, [None, 64], 2, 32),
        ([64, 64], False, [None, 1000], 2, 32),  # past the extent: as at it
        ([64, 64], False, [64, 64], 0, 0),  # nothing to mask: copies
        ([128, 32], False, [None, 7], 4 + 8, 2 * 32),  # a constant inside the tile is compared
        ([128], False, [None], 4, 4),
        ([128], False, [128], 0, 0),
        ([64], True, [None], 16, 16),
        ([64], True, [64], 0, 0),
    ],
)
def test_one_compare_per_distinct_offset(shape: list[int], column: bool, limits: list[int | None], setps: int,
                                         selps: int) -> None:
    entry = _mask_kernel(shape, column, limits)
    ops = list(entry.body.block.ops)
    assert sum(isinstance(op, ptx.SetpOp) for op in ops) == setps
    assert sum(isinstance(op, ptx.SelpOp) for op in ops) == selps
    assembles(entry)


def test_mask_with_nothing_to_mask_gives_fresh_registers() -> None:
    """A wgmma may write its accumulator's registers in place: the result must not be the source's."""
    entry = _mask_kernel([64, 64], False, [64, 64])
    movs = [op for op in entry.body.block.ops if isinstance(op, ptx.MovOp) and op.ty.data == "f32"]
    assert len(movs) == 2 * 32 and all(op.operands for op in movs[32:])


# --------------------------------------------------------------------------- vector stores

STORE_ABI = KernelABI("k", (ArgSpec("L", "f32", ("N",)),), (PointerParam("ptr_L", "L"), DimParam("dim_N", "N")),
                      (1, 1, 1), 128, 0, written=("L",))


def run_vector_store(make_vector: Callable[[Emit, SSAValue], SSAValue], offset: int, bound: int,
                     memory: dict[int, float], in_register: bool = True) -> dict[int, float]:
    """Stores the vector `make_vector(emit, smem base)` builds at element `offset` of L with
    limit `bound`; the elements written, by index into L."""
    def body(emit: Emit, base: SSAValue) -> None:
        vector = make_vector(emit, base)
        pointer = emit(sm90.PointerParamOp("ptr_L"))
        emit(sm90.StoreVectorGlobalOp(vector, pointer, const(emit, offset), limit(emit, bound, in_register)))

    simulate(lower(kernel(body, STORE_ABI)), memory, params={"ptr_L": GLOBAL, "dim_N": 0})
    return {(addr - GLOBAL) // 4: value for addr, value in memory.items() if addr >= GLOBAL}


@pytest.mark.parametrize("rows,in_register", [(-5, True), (0, False), (1, True), (8, True), (9, False), (64, True),
                                              (127, True), (128, False), (500, True)])
def test_row_vector_store_stops_at_the_limit(rows: int, in_register: bool) -> None:
    """Row i of a 128-row vector (row_max of row i of a tile) lands at L[offset + i] for i < limit only."""
    ref = sm90.SharedRefType([128, 32], F32, 128)
    x = np.arange(128 * 32, dtype=np.float64).reshape(128, 32)
    memory: dict[int, float] = {}
    write_tile(memory, 0, ref, x)

    def row_max(emit: Emit, base: SSAValue) -> SSAValue:
        frag = emit(sm90.LoadFragmentOp(emit(sm90.SmemViewOp(base, ref)), const(emit, 0),
                                        sm90.FragmentType([128, 32], F32)))
        return emit(sm90.RowReduceOp(ReduceFnAttr(ReduceFn.MAX), frag))

    written = run_vector_store(row_max, 1000, rows, memory, in_register)
    maxima = x.max(axis=1)
    assert written == {1000 + i: maxima[i] for i in range(min(max(rows, 0), 128))}


@pytest.mark.parametrize("cols,in_register", [(-1, True), (0, False), (1, True), (2, True), (9, False), (17, True),
                                              (63, True), (64, False), (200, True)])
def test_column_vector_store_stops_at_the_limit(cols: int, in_register: bool) -> None:
    """Column j of a 64-column vector lands at L[offset + j] for j < limit only (an odd limit
    splits a thread's column pair)."""
    v = np.arange(64, dtype=np.float64) + 0.5
    memory: dict[int, float] = {}
    for n, value in enumerate(v):
        memory[(1 << 18) + 4 * n] = float(value)

    def column(emit: Emit, base: SSAValue) -> SSAValue:
        view = emit(sm90.SmemViewOp(emit(arith.AddiOp(base, const(emit, 1 << 18))), sm90.SharedRefType([64], F32, 0)))
        return emit(sm90.LoadFragmentOp(view, const(emit, 0), sm90.FragmentType([64], F32, column=True)))

    written = run_vector_store(column, 256, cols, memory, in_register)
    assert written == {256 + j: v[j] for j in range(min(max(cols, 0), 64))}


def test_vector_stores_assemble() -> None:
    """A row and a column vector stored with a limit computed at run time (the tensor's dim)."""
    def body(emit: Emit, base: SSAValue) -> None:
        pointer = emit(sm90.PointerParamOp("ptr_L"))
        bound = emit(arith.SubiOp(emit(sm90.DimParamOp("dim_N")), const(emit, 64)))
        for vector_type in (sm90.FragmentType([128], F32), sm90.FragmentType([64], F32, column=True)):
            vector = emit(sm90.FillOp(1.0, vector_type))
            emit(sm90.StoreVectorGlobalOp(vector, pointer, const(emit, 64), bound))

    entry = lower(kernel(body, STORE_ABI))
    # a row vector: one store per register; a column vector: where it starts at an even element,
    # a pair or its first column alone per column pair, else each of the pair's columns alone
    assert sum(isinstance(op, ptx.StOp) for op in entry.body.block.ops) == 4 + 2 * 8 + 2 * 8
    assembles(entry)
