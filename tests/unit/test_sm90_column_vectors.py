"""Column vectors (`!sm90.frag<Cxf32, col>`) without a GPU: the emitted PTX runs on the one-warpgroup
simulator of test_sm90_to_ptx and is compared with numpy, as are the tile-to-sm90 layout
inference and layernorm's compilation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from test_sm90_to_ptx import BF16, F32, _bf16, const, kernel, lower, read_tile, simulate, write_tile
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation, SSAValue

from tkc.backends.ptx_printer import print_ptx
from tkc.backends.ptxas import assemble
from tkc.dialects import sm90
from tkc.dialects.tile import BinaryFn, BinaryFnAttr, ReduceFn, ReduceFnAttr, UnaryFn, UnaryFnAttr
from tkc.driver import compile_module
from tkc.frontend import parse_tk, read_source
from tkc.interpreter import interpret

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Emit = Callable[[Operation], SSAValue]
TILE_BASE, OUT_BASE, VEC_BASE = 0, 1 << 17, 1 << 18


def write_vector(memory: dict[int, float], base: int, x: np.ndarray, element_bytes: int) -> None:
    for n, v in enumerate(x):
        memory[base + element_bytes * n] = float(v)


def run_column_program(x: np.ndarray, vectors: list[tuple[np.ndarray, object]], program: Callable[..., SSAValue]
                       ) -> np.ndarray:
    """Loads the f32 tile x (all rows: one warpgroup) and each (vector, dtype) from shared memory
    into column fragments, applies program(emit, tile, *vectors), stores the f32 result."""
    rows, cols = x.shape
    ref = sm90.SharedRefType([rows, cols], F32, 128)

    def body(emit: Emit, base: SSAValue) -> None:
        zero = const(emit, 0)
        frag = emit(sm90.LoadFragmentOp(emit(sm90.SmemViewOp(base, ref)), zero, sm90.FragmentType([rows, cols], F32)))
        loaded = []
        for n, (_, dtype) in enumerate(vectors):
            addr = emit(arith.AddiOp(base, const(emit, VEC_BASE + n * 4 * cols)))
            view = emit(sm90.SmemViewOp(addr, sm90.SharedRefType([cols], dtype, 0)))
            loaded.append(emit(sm90.LoadFragmentOp(view, zero, sm90.FragmentType([cols], dtype, column=True))))
        out = emit(sm90.SmemViewOp(emit(arith.AddiOp(base, const(emit, OUT_BASE))), ref))
        emit(sm90.StoreFragmentOp(program(emit, frag, *loaded), out, zero))

    memory: dict[int, float] = {}
    write_tile(memory, TILE_BASE, ref, x)
    for n, (v, dtype) in enumerate(vectors):
        write_vector(memory, VEC_BASE + n * 4 * cols, v, 4 if dtype == F32 else 2)
    simulate(lower(kernel(body)), memory)
    return read_tile(memory, OUT_BASE, ref, x.shape)


def f32_column(emit: Emit, v: SSAValue) -> SSAValue:
    t = v.type
    assert isinstance(t, sm90.FragmentType)
    return emit(sm90.ConvertOp(v, sm90.FragmentType([t.rows], F32, column=True)))


@pytest.mark.parametrize("shape", [(64, 16), (64, 128), (128, 64)])
def test_column_load_covers_the_accumulator_columns(shape: tuple[int, int]) -> None:
    """An f32 vector loaded into the column layout and added to a zero tile gives vec[c] in every row."""
    rows, cols = shape
    v = np.arange(cols, dtype=np.float64) * 3 + 1

    def program(emit: Emit, tile: SSAValue, vec: SSAValue) -> SSAValue:
        zeros = emit(sm90.FillOp(0.0, tile.type))
        return emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.ADD), zeros, vec))

    out = run_column_program(np.zeros(shape), [(v, F32)], program)
    np.testing.assert_array_equal(out, np.broadcast_to(v, shape))


def test_layernorm_epilogue_matches_numpy() -> None:
    """bf16 W and Bias loaded as column vectors, converted to f32: x * W + Bias, then / (2 * W)."""
    rng = np.random.default_rng(1)
    rows, cols = 128, 128
    x = rng.standard_normal((rows, cols)).round(3)
    w = np.array([_bf16(float(a)) for a in rng.standard_normal(cols) + 2.0])
    bias = np.array([_bf16(float(a)) for a in rng.standard_normal(cols)])

    def program(emit: Emit, tile: SSAValue, wv: SSAValue, bv: SSAValue) -> SSAValue:
        w32, b32 = f32_column(emit, wv), f32_column(emit, bv)
        y = emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.MUL), tile, w32))
        y = emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.ADD), y, b32))
        two = emit(arith.ConstantOp(FloatAttr(2.0, F32)))
        return emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.DIV), y, emit(sm90.BinaryOp(BinaryFnAttr(BinaryFn.MUL), w32, two))))

    out = run_column_program(x, [(w, BF16), (bias, BF16)], program)
    np.testing.assert_allclose(out, (x * w + bias) / (2 * w), rtol=1e-12)


def test_column_elementwise_and_bf16_round_trip() -> None:
    """Element-wise math on column fragments and f32 -> bf16 -> f32 keep every column in place."""
    cols = 64
    v = np.arange(cols, dtype=np.float64) - 20.5

    def program(emit: Emit, tile: SSAValue, vec: SSAValue) -> SSAValue:
        col_t = vec.type
        doubled = emit(sm90.BinaryOp(BinaryFnAttr(BinaryFn.ADD), vec, vec))
        absolute = emit(sm90.UnaryOp(UnaryFnAttr(UnaryFn.ABS), doubled))
        packed = emit(sm90.ConvertOp(absolute, sm90.FragmentType([cols], BF16, column=True)))
        back = emit(sm90.ConvertOp(packed, col_t))
        return emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.SUB), tile, back))

    x = np.ones((64, cols))
    out = run_column_program(x, [(v, F32)], program)
    np.testing.assert_array_equal(out, np.broadcast_to(1 - np.abs(2 * v), x.shape))


@pytest.mark.parametrize("fn", [ReduceFn.SUM, ReduceFn.MAX])
@pytest.mark.parametrize("warpgroups,rows", [(1, 64), (1, 128), (2, 128), (2, 256)])
def test_column_reduction_over_warpgroups(fn: ReduceFn, warpgroups: int, rows: int) -> None:
    """Each warpgroup holds rows / warpgroups rows of a [rows, 32] tile; col_sum / col_max over
    all of them, broadcast back (x - reduced) into every row."""
    cols, per = 32, rows // warpgroups
    ref = sm90.SharedRefType([rows, cols], F32, 128)
    rng = np.random.default_rng(warpgroups + rows)
    x = rng.standard_normal((rows, cols)).round(3)

    def body(emit: Emit, base: SSAValue) -> None:
        tile = emit(sm90.SmemViewOp(base, ref))
        warpgroup = emit(arith.ShRUIOp(emit(sm90.BlockIdOp(0)), const(emit, 7)))  # the simulator's sregs read tid
        row0 = emit(arith.MuliOp(warpgroup, const(emit, per)))
        frag = emit(sm90.LoadFragmentOp(tile, row0, sm90.FragmentType([per, cols], F32)))
        scratch = emit(arith.AddiOp(base, const(emit, VEC_BASE)))
        reduced = emit(sm90.ColReduceOp(ReduceFnAttr(fn), frag, scratch, warpgroup, warpgroups, const(emit, 3)))
        out = emit(sm90.SmemViewOp(emit(arith.AddiOp(base, const(emit, OUT_BASE))), ref))
        emit(sm90.StoreFragmentOp(emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.SUB), frag, reduced)), out, row0))

    memory: dict[int, float] = {}
    write_tile(memory, TILE_BASE, ref, x)
    simulate(lower(kernel(body)), memory, threads=128 * warpgroups)
    expected = x.sum(axis=0) if fn == ReduceFn.SUM else x.max(axis=0)
    np.testing.assert_allclose(read_tile(memory, OUT_BASE, ref, x.shape), x - expected, rtol=1e-12, atol=1e-12)


def test_column_fragment_type_round_trips() -> None:
    t = sm90.FragmentType([128], F32, column=True)
    assert str(t) == "!sm90.frag<128xf32, col>" and t.registers_per_thread() == 32
    assert sm90.FragmentType([128], BF16, column=True).registers_per_thread() == 16
    assert t != sm90.FragmentType([128], F32)


def sm90_ir(source: str) -> str:
    return str(compile_module(parse_tk(source, "t.tk"), "sm90"))


COLUMN_KERNEL = """
kernel k<BM = 128, BN = 64>(X: gl<f32>[M, N], V: gl<f32>[N], Y: gl<f32>[M, N]) {
    grid (M / BM, N / BN) as (i, j)
    let v = exp(load V[j] : rv<f32>[BN]) * 2.0
    store Y[i, j] = add_col(load X[i, j] : rt<f32>[BM, BN], v)
}
"""


def test_inference_gives_column_vectors_their_own_layout() -> None:
    """Vectors broadcast over columns, and the element-wise values feeding them, are column fragments;
    the tiles keep 128 rows although the vector has 64 values."""
    ir = sm90_ir(COLUMN_KERNEL)
    assert "-> !sm90.frag<64xf32, col>" in ir and "sm90.col_broadcast add" in ir
    assert "!sm90.frag<64xf32>" not in ir


def test_a_vector_used_both_ways_is_transposed() -> None:
    """The row broadcast reads the column vector moved to the row layout through shared memory."""
    source = COLUMN_KERNEL.replace("add_col(load X[i, j] : rt<f32>[BM, BN], v)",
                                   "add_row(add_col(load X[i, j] : rt<f32>[BM, BN], v), v)")
    ir = sm90_ir(source.replace("BM = 128", "BM = 64"))
    assert "sm90.transpose" in ir and "!sm90.frag<64xf32, col> -> !sm90.frag<64xf32>" in ir


def test_two_reductions_making_one_vector_both_ways_transpose_the_second() -> None:
    source = COLUMN_KERNEL.replace("let v = ", "var v = ").replace(
        "store Y[i, j] = add_col(load X[i, j] : rt<f32>[BM, BN], v)",
        "if i == 0 { v = row_sum(load X[i, j] : rt<f32>[BM, BN]) } else { v = col_sum(load X[i, j] : rt<f32>[BM, BN]) }\n"
        "    store Y[i, j] = add_col(load X[i, j] : rt<f32>[BM, BN], v)")
    assert "sm90.transpose" in sm90_ir(source.replace("BM = 128", "BM = 64"))


def test_a_row_and_a_column_reduction_combine_element_wise() -> None:
    """row_max(x) + col_max(x): element i of each, as the docs say vectors of one type combine."""
    source = (
        "kernel mix(X: gl<f32>[64, 64], Y: gl<f32>[64]) {\n"
        "    grid (1) as (i)\n"
        "    let x = load X[0, 0] : rt<f32>[64, 64]\n"
        "    store Y[0] = row_max(x) + col_max(x)\n"
        "}\n"
    )
    x = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float32)
    module = parse_tk(source, "mix.tk")
    compile_module(module, emit="tile")
    y = interpret(module, None, {"X": x, "Y": np.zeros(64, np.float32)})["Y"]
    np.testing.assert_array_equal(y, x.max(1) + x.max(0))
    assert "sm90.transpose" in sm90_ir(source)


def test_layernorm_assembles_without_spills() -> None:
    module = parse_tk(read_source(EXAMPLES / "layernorm.tk"), str(EXAMPLES / "layernorm.tk"))
    report = assemble(print_ptx(compile_module(module, "ptx"))).report
    (function,) = report.functions.values()
    assert function.spill_stores == function.spill_loads == 0
    assert not any(code in report.log for code in ("C7508", "C7517", "C7519"))


def test_column_reductions_compile_for_two_consumers() -> None:
    """col_max / col_sum of a 128-row tile: two consumers meet in the scratch buffer after the
    staging chunks, on named barrier consumers + 1; ptxas takes the result without spills."""
    source = """
kernel colnorm<BM = 128, BN = 64>(X: gl<f32>[M, N], Y: gl<f32>[M, N]) {
    grid (M / BM, N / BN) as (i, j)
    let x = load X[i, j] : rt<f32>[BM, BN]
    store Y[i, j] = sub_col(x, col_max(x) + col_sum(x))
}
"""
    ir = sm90_ir(source)
    assert ir.count("sm90.col_reduce") == 2 and "sm90.roles consumers 2" in ir
    report = assemble(print_ptx(compile_module(parse_tk(source, "t.tk"), "ptx"))).report
    assert all(f.spill_stores == f.spill_loads == 0 for f in report.functions.values())
