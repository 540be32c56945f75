"""`gl<i32>` tensors and scalar loads (`load T[i] : i32`): what the frontend accepts and refuses,
and what the interpreter reads (the GPU lowering: tests/lit/frontend/scalar-load.tk, tests/gpu/test_scalar_loads_gpu.py)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type

from tkc.diagnostics import TkError
from tkc.frontend import parse_tk
from tkc.interpreter import interpret, round_to

GATHER = """
kernel gather(X: gl<f32>[M, 64], Table: gl<i32>[T], Y: gl<f32>[R, 64]) {
    grid (ceildiv(R, 64)) as (i)
    let row = load Table[i] : i32
    store Y[i, 0] = load X[row, 0] : rt<f32>[64, 64] * 2.0
}
"""


def run_gather(table: np.ndarray, tiles: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(0).standard_normal((256, 64)).astype(np.float32)
    module = parse_tk(GATHER, "gather.tk")
    y = np.zeros((64 * (tiles or len(table)), 64), np.float32)
    return x, interpret(module, "gather", {"X": x, "Table": table, "Y": y})["Y"]


def test_a_scalar_load_gives_the_tile_coordinate_a_block_reads() -> None:
    table = np.array([3, 0, 2, 2], np.int32)
    x, y = run_gather(table)
    for i, row in enumerate(table):
        np.testing.assert_array_equal(y[64 * i : 64 * (i + 1)], 2 * x[64 * row : 64 * (row + 1)])


def test_a_tile_wholly_past_the_end_is_an_error_at_the_access() -> None:
    """The GPU takes M as whole tiles here (the store needs it), which is exact only for tiles
    that reach into X: a table row past the end must be reported, not read as zeros."""
    with pytest.raises(TkError, match=r"load of X: tile coordinate \(64-element tiles\) 4 along dim 0 lies wholly past "
                                      r"its end \(256 elements: 4 whole tiles"):
        run_gather(np.array([4, 0], np.int32))


def test_element_coordinates_start_a_tile_anywhere_and_read_zeros_past_the_end() -> None:
    source = """
kernel shift(X: gl<f32>[M, 64], Table: gl<i32>[T], S: gl<f32>[R]) {
    grid (ceildiv(R, 64)) as (i)
    let row = load Table[i] : i32
    store S[i] = row_sum(load X[elem(row), 0] : rt<f32>[64, 64])
}
"""
    x = np.random.default_rng(1).standard_normal((100, 64)).astype(np.float32)
    table = np.array([5, 60, 300], np.int32)  # the second tile runs past row 99, the third lies wholly past it
    out = interpret(parse_tk(source, "shift.tk"), "shift", {"X": x, "Table": table, "S": np.zeros(192, np.float32)})["S"]
    padded = np.concatenate([x, np.zeros((400, 64), np.float32)])
    for i, row in enumerate(table):
        np.testing.assert_allclose(out[64 * i: 64 * (i + 1)], padded[row: row + 64].sum(axis=1), rtol=1e-6)


def test_an_element_start_along_the_innermost_dim_off_16_bytes_is_an_error_where_it_runs() -> None:
    """TMA starts a box on a 16-byte boundary of a tensor's innermost dim (the GPU stops with an
    illegal instruction elsewhere): a tile loaded at a table's start 4 (16 bytes of f32) runs, one
    at 6 is an error naming the block and the element. A vector starts anywhere (the GPU backend
    loads it from the boundary below its start, tile-swizzle-select's `realigned`)."""
    source = """
kernel rows(X: gl<f32>[R, T], Start: gl<i32>[S], Y: gl<f32>[R, T], V: gl<f32>[R, T]) {
    grid (S) as (s)
    let x0 = load Start[s] : i32
    store Y[0, elem(x0)] = load X[0, elem(x0)] : rt<f32>[16, 64] * 2.0
    store V[s, elem(x0 + 2)] = load X[s, elem(x0 + 1)] : rv<f32>[64] * 2.0
}
"""
    module = parse_tk(source, "rows.tk")
    x = np.arange(16 * 200, dtype=np.float32).reshape(16, 200)

    def run(starts: list[int]) -> dict[str, np.ndarray]:
        outputs = {"Y": np.zeros((16, 200), np.float32), "V": np.zeros((16, 200), np.float32)}
        return interpret(module, "rows", {"X": x, "Start": np.array(starts, np.int32), **outputs})

    v = run([4, 128])["V"]
    np.testing.assert_array_equal(v[1, 130:194], 2 * x[1, 129:193])
    with pytest.raises(TkError, match=r"rows.tk:5:28: error: load of X: block \(s=1\) starts at element 6 of X's innermost "
                                      r"dim .* a multiple of 4 elements"):
        run([4, 6])


@pytest.mark.parametrize(("table", "message"), [
    (np.array([1, -1], np.int32), "load Table.* : i32 read -1: a value an i32 load reads must not be negative"),
    (np.array([1.0, 2.0]), "argument Table is an i32 tensor: give it integers, not float64"),
])
def test_the_interpreter_refuses_what_the_gpu_could_not_read(table: np.ndarray, message: str) -> None:
    with pytest.raises(TkError, match=message):
        run_gather(table)


def test_an_index_outside_the_i32_tensor_is_an_error_at_the_load() -> None:
    with pytest.raises(TkError, match=r"gather.tk:4:15: error: load Table\[2\] : i32 reads outside Table, of shape \[2\]"):
        run_gather(np.array([3, 0], np.int32), tiles=3)


@pytest.mark.parametrize(("source", "message"), [
    (GATHER.replace("load Table[i] : i32", "load X[i, 0] : i32"),
     r"a load without a tile type reads one element of an i32 or f32 tensor, of its own dtype .*; 'X' holds f32: "
     r"read it with load X\[\.\.\.\] : f32"),
    (GATHER.replace("load Table[i] : i32", "load Table[i] : f32"), "'Table' holds i32: read it with load Table"),
    (GATHER.replace("load Table[i] : i32", "load Table[i, 0] : i32"), "'Table' has rank 1, so a scalar load takes 1 indices, got 2"),
    (GATHER.replace("load X[row, 0] : rt<f32>[64, 64]", "load X[row, 0] : rt<i32>[64, 64]"),
     "tiles and vectors hold bf16, f16, f32, fp8e4m3, fp8e5m2, not i32"),
    (GATHER.replace("* 2.0", "* f32(i32(row))"), r"i32\(\.\.\.\) converts nothing"),
    (GATHER.replace("load X[row, 0] : rt<f32>[64, 64] * 2.0", "load Table[i] : rv<i32>[64]").replace("Y: gl<f32>", "Y: gl<i32>"),
     "tiles and vectors hold"),
])
def test_the_frontend_refuses_i32_where_it_cannot_be(source: str, message: str) -> None:
    with pytest.raises(TkError, match=message):
        parse_tk(source, "gather.tk")


SCALED = """
kernel scaled(X: gl<bf16>[M, 64], S: gl<f32>[2], Y: gl<f32>[M, 64]) {
    grid (ceildiv(M, 64)) as (i)
    store Y[i, 0] = f32(load X[i, 0] : rt<bf16>[64, 64]) * (load S[0] : f32) + load S[1] : f32
}
"""


def test_an_f32_scalar_load_reads_a_scale() -> None:
    """`load S[k] : f32`: one element of an f32 tensor the kernel only reads, an f32 scalar."""
    module = parse_tk(SCALED, "scaled.tk")
    x = np.random.default_rng(0).standard_normal((100, 64)).astype(np.float32)
    s = np.array([0.5, -2.0], np.float32)
    y = interpret(module, "scaled", {"X": x, "S": s, "Y": np.full((100, 64), np.nan, np.float32)}, {})["Y"]
    np.testing.assert_allclose(y, round_to(x, BFloat16Type()) * 0.5 - 2.0, rtol=1e-6)


def test_an_f32_scalar_of_a_tensor_the_kernel_writes_is_an_error() -> None:
    source = SCALED.replace("Y: gl<f32>[M, 64]", "Y: gl<f32>[M, 64], T: gl<f32>[M]").replace(
        "load S[1] : f32\n", "load S[1] : f32\n    store S[0] = zero<f32>[16]\n")
    with pytest.raises(TkError, match="scaled.tk:4:.*the kernel stores to S, so it cannot read scalars of it"):
        parse_tk(source, "scaled.tk")


BIASED = """kernel biased(Off: gl<i32>[G], KB: gl<DTYPE>[T], Y: gl<f32>[M, N]) {
    grid (ceildiv(M, 64), ceildiv(N, 64)) as (i, j)
    let at = load Off[i] : i32
    store Y[i, j] = add_col(zero<f32>[64, 64], f32(load KB[START] : rv<DTYPE>[64]))
}"""


@pytest.mark.parametrize("dtype,pair", [("f32", "ld.shared.v2.f32"), ("bf16", "ld.shared.b32"), ("fp8e4m3", "ld.shared.b16")])
def test_a_realigned_column_vector_reads_its_pairs_element_by_element(dtype: str, pair: str) -> None:
    """A column vector whose start comes from launch-time data is read from its realigned box at
    an offset that may be odd: no pair access (ld.shared.v2.f32, or one b32 / b16 of two narrow
    elements), which needs the pair's alignment and stopped a kernel on the H100 with a
    misaligned address; the same vector at a tile coordinate keeps its pair loads."""
    from tkc.backends.ptx_printer import print_ptx
    from tkc.driver import compile_module

    def ptx(start: str) -> str:
        source = BIASED.replace("DTYPE", dtype).replace("START", start)
        return print_ptx(compile_module(parse_tk(source, "biased.tk"), "ptx"))

    assert pair not in ptx("elem(at + j * 64, at + j * 64 + 64)")
    assert pair in ptx("j")
