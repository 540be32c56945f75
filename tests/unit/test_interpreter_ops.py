"""Property tests of the interpreter's tile ops against plain numpy, special values included.

Each kernel gives every block one tile (`per_block_kernel`), so the grid axis is exercised too.
Max/min follow PTX `max.f32`/`min.f32` (a NaN operand loses, and -0 < +0: measured on an H100);
everything else is IEEE f32.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from interpreter_support import bf16, f32, idx, per_block_kernel, scalar
from xdsl.dialects import arith
from xdsl.dialects.builtin import Float8E4M3FNType, Float16Type, IntegerAttr, IntegerType

from tkc.dialects import tile
from tkc.interpreter import interpret

FEW = settings(max_examples=15, deadline=None)
"""Per test, not a global profile: other suites keep their own hypothesis settings."""

SPECIAL = st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 3.0e38, 1.0e-40])
FLOATS = st.floats(width=32) | SPECIAL


@st.composite
def tiles(draw: st.DrawFn, count: int = 1) -> tuple[np.ndarray, ...]:
    blocks, rows, cols = draw(st.integers(1, 3)), draw(st.sampled_from([16, 32])), draw(st.sampled_from([16, 48]))
    return tuple(draw(arrays(np.float32, (blocks, rows, cols), elements=FLOATS)) for _ in range(count))


def run(module, **inputs: np.ndarray) -> np.ndarray:
    return interpret(module, None, inputs)["Y"]


def rounded(x: np.ndarray, dtype) -> np.ndarray:
    return np.asarray(x, np.float32) if dtype is f32 else np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


UNARY = {
    tile.UnaryFn.EXP: np.exp,
    tile.UnaryFn.EXP2: np.exp2,
    tile.UnaryFn.LOG: np.log,
    tile.UnaryFn.LOG2: np.log2,
    tile.UnaryFn.SQRT: np.sqrt,
    tile.UnaryFn.RSQRT: lambda x: np.float32(1) / np.sqrt(x),
    tile.UnaryFn.ABS: np.abs,
    tile.UnaryFn.NEG: np.negative,
    tile.UnaryFn.RELU: lambda x: np.where(x > 0, x, np.float32(0)),
}
BINARY = {
    tile.BinaryFn.ADD: np.add,
    tile.BinaryFn.SUB: np.subtract,
    tile.BinaryFn.MUL: np.multiply,
    tile.BinaryFn.DIV: np.divide,
    tile.BinaryFn.MAX: np.fmax,
    tile.BinaryFn.MIN: np.fmin,
}
REDUCE = {tile.ReduceFn.MAX: np.fmax.reduce, tile.ReduceFn.MIN: np.fmin.reduce, tile.ReduceFn.SUM: np.add.reduce}


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_array_equal(np.asarray(actual, np.float32), np.asarray(expected, np.float32))


@pytest.mark.parametrize("fn", list(UNARY))
@FEW
@given(data=tiles(), dtype=st.sampled_from([f32, bf16]))
def test_unary(fn: tile.UnaryFn, data: tuple[np.ndarray], dtype) -> None:
    (x,) = data
    t = tile.RegisterTileType(x.shape[1:], dtype)
    module = per_block_kernel({"X": t}, t, lambda i, a: tile.UnaryOp(fn, a).result)
    with np.errstate(all="ignore"):
        expected = rounded(UNARY[fn](rounded(x, dtype)), dtype)
    assert_same(run(module, X=x), expected)


@pytest.mark.parametrize("fn", list(BINARY))
@FEW
@given(data=tiles(2), dtype=st.sampled_from([f32, bf16]))
def test_binary(fn: tile.BinaryFn, data: tuple[np.ndarray, np.ndarray], dtype) -> None:
    x, y = data
    t = tile.RegisterTileType(x.shape[1:], dtype)
    module = per_block_kernel({"X": t, "W": t}, t, lambda i, a, b: tile.BinaryOp(fn, a, b).result)
    with np.errstate(all="ignore"):
        expected = rounded(BINARY[fn](rounded(x, dtype), rounded(y, dtype)), dtype)
    assert_same(run(module, X=x, W=y), expected)


@pytest.mark.parametrize("fn", [tile.BinaryFn.SUB, tile.BinaryFn.DIV, tile.BinaryFn.MAX])
@FEW
@given(data=tiles(), c=FLOATS, scalar_left=st.booleans())
def test_binary_with_scalar(fn: tile.BinaryFn, data: tuple[np.ndarray], c: float, scalar_left: bool) -> None:
    (x,) = data
    t = tile.RegisterTileType(x.shape[1:], f32)

    def compute(i, a):
        s = scalar(c)
        return tile.BinaryOp(fn, s, a).result if scalar_left else tile.BinaryOp(fn, a, s).result

    c32 = np.float32(c)
    with np.errstate(all="ignore"):
        expected = BINARY[fn](c32, x) if scalar_left else BINARY[fn](x, c32)
    assert_same(run(per_block_kernel({"X": t}, t, compute), X=x), expected)


@pytest.mark.parametrize("dtype", [f32, bf16])
def test_max_and_min_order_signed_zeros_as_the_gpu(dtype) -> None:
    """max(-0, +0) is +0 and min(-0, +0) is -0 in either order, as max.f32 and max.bf16x2 give on
    the GPU (numpy's fmax/fmin return one of the two zeros by position); row_max/row_min alike."""
    x = np.array([[[-0.0, 0.0, -0.0, math.nan, -0.0] + [1.0] * 11] * 16], np.float32)
    y = np.array([[[0.0, -0.0, -0.0, 0.0, math.nan] + [2.0] * 11] * 16], np.float32)
    t = tile.RegisterTileType(x.shape[1:], dtype)
    signs = {}
    for fn in (tile.BinaryFn.MAX, tile.BinaryFn.MIN):
        module = per_block_kernel({"X": t, "W": t}, t, lambda i, a, b, fn=fn: tile.BinaryOp(fn, a, b).result)
        signs[fn] = np.signbit(np.asarray(run(module, X=x, W=y), np.float32))[0, 0, :5].tolist()
    assert signs[tile.BinaryFn.MAX] == [False, False, True, False, True]
    assert signs[tile.BinaryFn.MIN] == [True, True, True, False, True]
    row = tile.RegisterTileType((16, 16), f32)
    zeros = np.array([[[-0.0, 0.0] + [-0.0] * 14] * 16], np.float32)
    for fn, negative in ((tile.ReduceFn.MAX, False), (tile.ReduceFn.MIN, True)):
        module = per_block_kernel({"X": row}, tile.RegisterVectorType(16, f32),
                                  lambda i, a, fn=fn: tile.ReduceOp(fn, tile.Axis.ROW, a).result)
        assert np.signbit(np.asarray(run(module, X=zeros), np.float32)).tolist() == [[negative] * 16]


@pytest.mark.parametrize("fn", list(REDUCE))
@pytest.mark.parametrize("axis", [tile.Axis.ROW, tile.Axis.COL])
@FEW
@given(data=tiles())
def test_reduce(fn: tile.ReduceFn, axis: tile.Axis, data: tuple[np.ndarray]) -> None:
    (x,) = data
    t = tile.RegisterTileType(x.shape[1:], f32)
    length = t.rows if axis == tile.Axis.ROW else t.cols
    module = per_block_kernel(
        {"X": t}, tile.RegisterVectorType(length, f32), lambda i, a: tile.ReduceOp(fn, axis, a).result
    )
    with np.errstate(all="ignore"):
        expected = REDUCE[fn](x, axis=-1 if axis == tile.Axis.ROW else -2)
    if fn == tile.ReduceFn.SUM:  # summation order is free; compare as f32 sums of the same terms
        np.testing.assert_allclose(run(module, X=x), expected, rtol=1e-5, atol=1e-30)
    else:
        assert_same(run(module, X=x), expected)


@pytest.mark.parametrize("fn", list(BINARY))
@pytest.mark.parametrize("axis", [tile.Axis.ROW, tile.Axis.COL])
@FEW
@given(data=tiles(2))
def test_broadcast(fn: tile.BinaryFn, axis: tile.Axis, data: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = data
    t = tile.RegisterTileType(x.shape[1:], f32)
    # the vector is the first row (col broadcast) or first column (row broadcast) of the second input
    vector = y[:, :, 0] if axis == tile.Axis.ROW else y[:, 0, :]

    def compute(i, a, b):
        v = tile.ReduceOp(tile.ReduceFn.MAX, axis, b).result
        return tile.BroadcastOp(fn, axis, a, v).result

    y_uniform = np.repeat(vector[:, :, None], t.cols, 2) if axis == tile.Axis.ROW else np.repeat(vector[:, None, :], t.rows, 1)
    spread = vector[:, :, None] if axis == tile.Axis.ROW else vector[:, None, :]
    with np.errstate(all="ignore"):
        # a division by a vector multiplies by its reciprocal rounded to f32, as the GPU does
        expected = x * (np.float32(1) / spread) if fn == tile.BinaryFn.DIV else BINARY[fn](x, spread)
    assert_same(run(per_block_kernel({"X": t, "W": t}, t, compute), X=x, W=y_uniform), expected)


@FEW
@given(data=tiles(), row=st.integers(-40, 40), col=st.integers(-40, 40), fill=SPECIAL)
def test_causal_mask(data: tuple[np.ndarray], row: int, col: int, fill: float) -> None:
    (x,) = data
    t = tile.RegisterTileType(x.shape[1:], f32)

    def compute(i, a):
        # the row offset differs per block: block i sits i * rows further down
        r = arith.AddiOp(arith.MuliOp(i, idx(t.rows)).result, idx(row + 100)).result
        return tile.MaskOp(tile.MaskKind.CAUSAL, a, arith.SubiOp(r, idx(100)).result, idx(col), fill).result

    g = np.arange(x.shape[0])[:, None, None]
    r = np.arange(t.rows)[None, :, None]
    c = np.arange(t.cols)[None, None, :]
    expected = np.where(col + c > row + g * t.rows + r, np.float32(fill), x)
    assert_same(run(per_block_kernel({"X": t}, t, compute), X=x), expected)


@pytest.mark.parametrize(
    "target, numpy_type",
    [(bf16, ml_dtypes.bfloat16), (Float16Type(), np.float16), (Float8E4M3FNType(), ml_dtypes.float8_e4m3fn)],
)
@FEW
@given(data=tiles())
def test_convert_rounds_to_nearest_even(target, numpy_type, data: tuple[np.ndarray]) -> None:
    (x,) = data
    t = tile.RegisterTileType(x.shape[1:], f32)
    module = per_block_kernel(
        {"X": t}, tile.RegisterTileType(t.get_shape(), target), lambda i, a: tile.ConvertOp(a, target).result
    )
    source = np.clip(x, -448, 448) if numpy_type is ml_dtypes.float8_e4m3fn else x  # satfinite
    out = run(module, X=x)
    assert out.dtype == numpy_type
    with np.errstate(over="ignore"):
        assert_same(out.astype(np.float32), source.astype(numpy_type).astype(np.float32))


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@FEW
@given(seed=st.integers(0, 2**16), with_acc=st.booleans())
def test_mma(transpose_a: bool, transpose_b: bool, seed: int, with_acc: bool) -> None:
    rng = np.random.default_rng(seed)
    m, n, k = 32, 48, 16
    a = rng.standard_normal((2, k, m) if transpose_a else (2, m, k)).astype(np.float32)
    b = rng.standard_normal((2, n, k) if transpose_b else (2, k, n)).astype(np.float32)
    acc = rng.standard_normal((2, m, n)).astype(np.float32)
    out_t = tile.RegisterTileType([m, n], f32)

    def compute(i, ra, rb, racc):
        sa = tile.ToSharedOp(ra).result if transpose_a else ra  # A may come from registers unless transposed
        sb = tile.ToSharedOp(rb).result
        return tile.MmaOp(sa, sb, racc if with_acc else None, out_t, transpose_a, transpose_b).result

    inputs = {"X": tile.RegisterTileType(a.shape[1:], bf16), "W": tile.RegisterTileType(b.shape[1:], bf16), "Z": out_t}
    ra, rb = rounded(a, bf16), rounded(b, bf16)
    op_a = np.swapaxes(ra, 1, 2) if transpose_a else ra
    op_b = np.swapaxes(rb, 1, 2) if transpose_b else rb
    expected = op_a.astype(np.float64) @ op_b + (acc if with_acc else 0)
    np.testing.assert_allclose(run(per_block_kernel(inputs, out_t, compute), X=a, W=b, Z=acc), expected, rtol=1e-4, atol=1e-4)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


INDEX_OPS = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivSIOp: _trunc_div,
    arith.RemSIOp: lambda a, b: a - _trunc_div(a, b) * b,
    arith.FloorDivSIOp: lambda a, b: a // b,
    arith.CeilDivSIOp: lambda a, b: -(-a // b),
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
}


@pytest.mark.parametrize("op_class", list(INDEX_OPS), ids=lambda c: c.name)
@FEW
@given(a=st.integers(-1000, 1000), b=st.integers(-50, 50).filter(bool))
def test_index_math_per_block(op_class, a: int, b: int) -> None:
    """Index math on per-block values (a + block id), observed through an f32 scalar operand."""
    vec = tile.RegisterVectorType(16, f32)

    def compute(i, x):
        value = op_class(arith.AddiOp(i, idx(a)).result, idx(b)).result
        as_float = arith.SIToFPOp(arith.IndexCastOp(value, IntegerType(64)).result, f32).result
        return tile.BinaryOp(tile.BinaryFn.ADD, tile.FillOp(0.0, vec).result, as_float).result

    module = per_block_kernel({"X": tile.RegisterTileType([16, 16], f32)}, vec, compute)
    expected = [[float(INDEX_OPS[op_class](a + g, b))] * 16 for g in range(3)]
    assert_same(run(module, X=np.zeros((3, 16, 16), np.float32)), np.array(expected, np.float32))


def test_i1_casts() -> None:
    """extsi of true is -1, extui 1; trunci to i1 keeps the low bit."""
    vec = tile.RegisterVectorType(16, f32)
    i1, i64 = IntegerType(1), IntegerType(64)

    def compute(i, x):
        true = arith.CmpiOp(i, i, "eq").result
        odd = arith.TruncIOp(arith.IndexCastOp(i, i64).result, i1).result
        ten = arith.MuliOp(arith.ExtUIOp(odd, i64).result, arith.ConstantOp(IntegerAttr(10, i64)).result).result
        total = arith.AddiOp(arith.ExtSIOp(true, i64).result, ten).result
        return tile.BinaryOp(tile.BinaryFn.ADD, tile.FillOp(0.0, vec).result, arith.SIToFPOp(total, f32).result).result

    module = per_block_kernel({"X": tile.RegisterTileType([16, 16], f32)}, vec, compute)
    out = run(module, X=np.zeros((3, 16, 16), np.float32))
    assert_same(out[:, 0], np.array([-1, 9, -1], np.float32))


TEXTBOOK = {
    tile.UnaryFn.TANH: np.tanh,
    tile.UnaryFn.SIGMOID: lambda x: 1 / (1 + np.exp(-x)),
    tile.UnaryFn.SILU: lambda x: x / (1 + np.exp(-x)),
    tile.UnaryFn.GELU_TANH: lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    tile.UnaryFn.SOFTPLUS: lambda x: np.log1p(np.exp(x)),
    tile.UnaryFn.SIN: np.sin,
    tile.UnaryFn.COS: np.cos,
}


@pytest.mark.parametrize("fn", list(TEXTBOOK))
def test_activation_functions_follow_their_definitions(fn: tile.UnaryFn) -> None:
    x = np.linspace(-30, 30, 2 * 16 * 48, dtype=np.float32).reshape(2, 16, 48)
    t = tile.RegisterTileType(x.shape[1:], f32)
    module = per_block_kernel({"X": t}, t, lambda i, a: tile.UnaryOp(fn, a).result)
    with np.errstate(over="ignore"):
        expected = TEXTBOOK[fn](x.astype(np.float64))
    np.testing.assert_allclose(run(module, X=x), expected, rtol=1e-5, atol=1e-6)
