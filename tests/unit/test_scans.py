"""Scans and vector ops: the interpreter's semantics (padding included), tile-mask-tails, and the
PTX of sm90.row_scan, sm90.vector_reduce and sm90.transpose run on the fragment simulator."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from test_sm90_column_vectors import OUT_BASE, TILE_BASE, VEC_BASE, Emit, run_column_program
from test_sm90_to_ptx import F32, const, kernel, lower, read_tile, simulate, write_tile
from xdsl.dialects import arith
from xdsl.ir import SSAValue

import tkc
from tkc.backends.ptx_printer import print_ptx
from tkc.backends.ptxas import assemble
from tkc.dialects import sm90
from tkc.dialects.tile import BinaryFn, BinaryFnAttr, ReduceFn, ReduceFnAttr
from tkc.driver import compile_module
from tkc.frontend import parse_tk
from tkc.interpreter import interpret

KERNELS = Path(__file__).resolve().parents[1] / "gpu" / "kernels"

SCANS = """
kernel scans(X: gl<f32>[M, N], V: gl<f32>[M], R: gl<f32>[M, N], C: gl<f32>[M, N], W: gl<f32>[M], S: gl<f32>[M]) {
    grid (ceildiv(M, 64), ceildiv(N, 64)) as (i, j)
    let x = load X[i, j] : rt<f32>[64, 64]
    let v = exp(load V[i] : rv<f32>[64])
    store R[i, j] = row_cumsum(exp(x))
    store C[i, j] = col_cumsum(exp(x))
    if j == 0 {
        store W[i] = cumsum(v)
        store S[i] = zero<f32>[64] + (sum(v) + max(v) - min(v))
    }
}
"""


def test_interpreter_scans_only_valid_elements() -> None:
    """Partial tiles: the sums never include padding (exp(0) = 1 past the end), reductions skip it."""
    module = parse_tk(SCANS, "scans.tk")
    rng = np.random.default_rng(0)
    M, N = 100, 80
    x = rng.standard_normal((M, N)).astype(np.float32)
    v = rng.standard_normal(M).astype(np.float32)
    out = interpret(module, "scans", {"X": x, "V": v}, {})
    for i0 in range(0, M, 64):
        rows = slice(i0, min(i0 + 64, M))
        ev = np.exp(v[rows].astype(np.float64))
        np.testing.assert_allclose(out["W"][rows], np.cumsum(ev), rtol=1e-5)
        np.testing.assert_allclose(out["S"][rows], ev.sum() + ev.max() - ev.min(), rtol=1e-5)
        for j0 in range(0, N, 64):
            cols = slice(j0, min(j0 + 64, N))
            ex = np.exp(x[rows, cols].astype(np.float64))
            np.testing.assert_allclose(out["R"][rows, cols], np.cumsum(ex, 1), rtol=1e-5)
            np.testing.assert_allclose(out["C"][rows, cols], np.cumsum(ex, 0), rtol=1e-5)


def test_masks_go_before_vector_reductions_not_cumsums() -> None:
    """exp's padding is 1: sum(v), max(v) and min(v) each need their identity there; a cumsum
    needs no mask, as padding only ends an axis."""
    kernel_ir = tkc.compile(_write(SCANS)).ir("tile-mask-tails")
    why = [line for line in kernel_ir.splitlines() if "tile.bounds_mask" in line]
    assert sorted(w.split('tails = "')[1].split("(v)")[0] for w in why) == ["max", "min", "sum"]
    assert "cumsum" not in "".join(why)


def _write(source: str) -> str:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "scans.tk"
    path.write_text(source)
    return str(path)


def test_scans_kernel_assembles_without_spills() -> None:
    report = assemble(print_ptx(compile_module(parse_tk(SCANS, "scans.tk"), "ptx"))).report
    (function,) = report.functions.values()
    assert function.spill_stores == function.spill_loads == function.stack_frame == 0


@pytest.mark.parametrize("name", ["tile_cumsum.tk", "vector_scans.tk", "ssd_chunk.tk"])
def test_gpu_kernels_assemble_without_spills(name: str) -> None:
    path = KERNELS / name
    report = assemble(print_ptx(compile_module(parse_tk(path.read_text(), str(path)), "ptx"))).report
    (function,) = report.functions.values()
    assert function.spill_stores == function.spill_loads == function.stack_frame == 0
    assert not report.warnings


def test_row_scan_of_a_tile() -> None:
    x = np.random.default_rng(1).integers(-8, 8, (64, 32)).astype(np.float64)
    out = run_column_program(x, [], lambda emit, tile: emit(sm90.RowScanOp(tile)))
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1))


def test_row_scan_and_reduction_of_a_column_vector() -> None:
    """cumsum of a column fragment, broadcast into every row, plus max of it as a scalar."""
    v = np.random.default_rng(2).integers(-8, 8, 64).astype(np.float64)

    def program(emit: Emit, tile: SSAValue, vec: SSAValue) -> SSAValue:
        scanned = emit(sm90.RowScanOp(vec))
        top = emit(sm90.VectorReduceOp(ReduceFnAttr(ReduceFn.MAX), scanned))
        spread = emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.ADD), tile, scanned))
        return emit(sm90.BinaryOp(BinaryFnAttr(BinaryFn.SUB), spread, top))

    out = run_column_program(np.zeros((64, 64)), [(v, F32)], program)
    scan = np.cumsum(v)
    np.testing.assert_array_equal(out, np.broadcast_to(scan - scan.max(), (64, 64)))


@pytest.mark.parametrize("warpgroups,rows", [(1, 64), (2, 128), (2, 256)])
def test_transpose_there_and_back(warpgroups: int, rows: int) -> None:
    """Each warpgroup's row sums of its rows become one column vector that every warpgroup holds
    (broadcast over columns: out[r, c] = rowsum[c]), and back to rows (added per row)."""
    per = rows // warpgroups
    ref = sm90.SharedRefType([rows, rows], F32, 128)
    x = np.random.default_rng(rows).integers(-4, 4, (rows, rows)).astype(np.float64)

    def body(emit: Emit, base: SSAValue) -> None:
        tile = emit(sm90.SmemViewOp(base, ref))
        warpgroup = emit(arith.ShRUIOp(emit(sm90.BlockIdOp(0)), const(emit, 7)))  # the simulator's sregs read tid
        row0 = emit(arith.MuliOp(warpgroup, const(emit, per)))
        frag = emit(sm90.LoadFragmentOp(tile, row0, sm90.FragmentType([per, rows], F32)))
        sums = emit(sm90.RowReduceOp(ReduceFnAttr(ReduceFn.SUM), frag))
        scratch = emit(arith.AddiOp(base, const(emit, VEC_BASE)))
        bar = const(emit, warpgroups + 1)
        column = emit(sm90.TransposeOp(sums, sm90.FragmentType([rows], F32, column=True), scratch, row0, warpgroups, bar))
        back = emit(sm90.TransposeOp(column, sm90.FragmentType([per], F32), scratch, row0, warpgroups, bar))
        zero = emit(sm90.FillOp(0.0, frag.type))
        spread = emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.ADD), zero, column))
        both = emit(sm90.RowBroadcastOp(BinaryFnAttr(BinaryFn.MUL), spread, back))
        out = emit(sm90.SmemViewOp(emit(arith.AddiOp(base, const(emit, OUT_BASE))), ref))
        emit(sm90.StoreFragmentOp(both, out, row0))

    memory: dict[int, float] = {}
    write_tile(memory, TILE_BASE, ref, x)
    simulate(lower(kernel(body)), memory, threads=128 * warpgroups)
    sums = x.sum(axis=1)
    np.testing.assert_array_equal(read_tile(memory, OUT_BASE, ref, x.shape), sums[None, :] * sums[:, None])


@pytest.mark.parametrize("warpgroups,rows,cols", [(1, 64, 16), (1, 128, 32), (2, 128, 16), (2, 256, 16)])
def test_col_scan_over_warpgroups(warpgroups: int, rows: int, cols: int) -> None:
    """Each warpgroup holds rows / warpgroups rows of the tile; the scan runs down all of them."""
    per = rows // warpgroups
    ref = sm90.SharedRefType([rows, cols], F32, 128 if cols * 4 >= 128 else 64)
    x = np.random.default_rng(rows + cols).integers(-4, 4, (rows, cols)).astype(np.float64)

    def body(emit: Emit, base: SSAValue) -> None:
        tile = emit(sm90.SmemViewOp(base, ref))
        warpgroup = emit(arith.ShRUIOp(emit(sm90.BlockIdOp(0)), const(emit, 7)))  # the simulator's sregs read tid
        row0 = emit(arith.MuliOp(warpgroup, const(emit, per)))
        frag = emit(sm90.LoadFragmentOp(tile, row0, sm90.FragmentType([per, cols], F32)))
        scratch = emit(arith.AddiOp(base, const(emit, VEC_BASE)))
        scanned = emit(sm90.ColScanOp(frag, scratch, warpgroup, warpgroups, const(emit, warpgroups + 1)))
        out = emit(sm90.SmemViewOp(emit(arith.AddiOp(base, const(emit, OUT_BASE))), ref))
        emit(sm90.StoreFragmentOp(scanned, out, row0))

    memory: dict[int, float] = {}
    write_tile(memory, TILE_BASE, ref, x)
    simulate(lower(kernel(body)), memory, threads=128 * warpgroups)
    np.testing.assert_array_equal(read_tile(memory, OUT_BASE, ref, x.shape), np.cumsum(x, axis=0))


def test_ssd_chunk_interpreter_matches_numpy() -> None:
    """The Mamba-2 intra-chunk kernel, at a length whose last chunk is partial, against the SSD
    formula: Y[l] = sum over s <= l in l's chunk of exp(cs[l] - cs[s]) (C[l] . B[s]) X[s]."""
    import ml_dtypes

    path = KERNELS / "ssd_chunk.tk"
    module = parse_tk(path.read_text(), str(path))
    rng = np.random.default_rng(0)
    H, L, Q = 2, 100, 64
    bf16 = ml_dtypes.bfloat16
    x, b, c = (rng.standard_normal((H, L, 64)).astype(bf16) for _ in range(3))
    dt = rng.standard_normal((H, L)).astype(np.float32)
    y = interpret(module, "ssd_chunk", {"X": x, "DT": dt, "B": b, "C": c}, {})["Y"]
    expected = np.zeros((H, L, 64))
    for h in range(H):
        for start in range(0, L, Q):
            chunk = slice(start, min(start + Q, L))
            n = chunk.stop - chunk.start
            cs = np.cumsum(-np.logaddexp(0, dt[h, chunk].astype(np.float64)))
            causal = np.tri(n, dtype=bool)
            decay = np.where(causal, np.exp(np.where(causal, cs[:, None] - cs[None, :], 0)), 0)
            scores = c[h, chunk].astype(np.float64) @ b[h, chunk].astype(np.float64).T
            expected[h, chunk] = (scores * decay) @ x[h, chunk].astype(np.float64)
    assert np.linalg.norm(y - expected) / np.linalg.norm(expected) < 1e-2  # P = scores * decay is rounded to bf16


BF16_SCANS = """
kernel bf16_scans(X: gl<bf16>[M, 64], V: gl<bf16>[M], R: gl<bf16>[M, 64], C: gl<bf16>[M, 64], W: gl<bf16>[M]) {
    grid (ceildiv(M, 64)) as (i)
    let x = load X[i, 0] : rt<bf16>[64, 64]
    store R[i, 0] = row_cumsum(x)
    store C[i, 0] = col_cumsum(x)
    store W[i] = cumsum(load V[i] : rv<bf16>[64])
}
"""


def test_interpreter_scans_bf16_in_f32_and_rounds_each_sum_once() -> None:
    """A bf16 scan is the f32 prefix sum of the bf16 elements, each sum rounded to bf16 once (not
    a running sum of rounded sums), at a partial last tile."""
    import ml_dtypes

    module = parse_tk(BF16_SCANS, "scans.tk")
    rng = np.random.default_rng(1)
    M = 100
    x = rng.standard_normal((M, 64)).astype(ml_dtypes.bfloat16)
    v = rng.standard_normal(M).astype(ml_dtypes.bfloat16)
    out = interpret(module, "bf16_scans", {"X": x, "V": v}, {})

    def rounded(sums: np.ndarray) -> np.ndarray:
        return sums.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)

    for i0 in range(0, M, 64):
        rows = slice(i0, min(i0 + 64, M))
        xs = x[rows].astype(np.float32)
        np.testing.assert_array_equal(out["R"][rows].astype(np.float64), rounded(np.cumsum(xs, 1, dtype=np.float32)))
        np.testing.assert_array_equal(out["C"][rows].astype(np.float64), rounded(np.cumsum(xs, 0, dtype=np.float32)))
        vs = v[rows].astype(np.float32)
        np.testing.assert_array_equal(out["W"][rows].astype(np.float64), rounded(np.cumsum(vs, dtype=np.float32)))


def test_reductions_needing_different_fills_of_one_tile_each_get_their_padding() -> None:
    """col_max needs the rows past M as -inf, col_sum as 0 (what TMA reads): the mask made for
    col_max must not reach col_sum, which reads the unmasked tile again (it was an internal error
    beside a col_cumsum of the same tile), and the kernel lowers to PTX."""
    import tkc

    source = """
kernel cols<BM = 64, BN = 64>(X: gl<f32>[M, N], S: gl<f32>[M, N], A: gl<f32>[N], B: gl<f32>[N]) {
    grid (ceildiv(N, BN)) as (j)
    let x = load X[0, j] : rt<f32>[BM, BN]
    store S[0, j] = col_cumsum(x)
    store A[j] = col_sum(x)
    store B[j] = col_max(x)
}
"""
    kernel = tkc.compile(_write(source))
    masked = kernel.ir("tile-mask-tails")
    assert masked.count("tile.bounds_mask") == 1 and "fill 0xff800000" in masked
    assert "tile.reduce sum col %x :" in masked and kernel.ptx


NARROW_REDUCE = """
kernel narrow(V: gl<bf16>[M], F: gl<fp8e4m3>[M], S: gl<f32>[M]) {
    grid (ceildiv(M, 64)) as (i)
    let v = load V[i] : rv<bf16>[64]
    let f = load F[i] : rv<fp8e4m3>[64]
    store S[i] = zero<f32>[64] + (sum(v) + max(v) - min(v)) * 1000.0 + max(f)
}
"""


def test_narrow_vectors_reduce_in_f32_to_an_f32_scalar() -> None:
    """sum/max/min of bf16 and fp8 vectors: each element widened (exactly), reduced in f32, the
    padding left out in f32, so a block of fp8e4m3 padding has max -inf (fp8e4m3 has no infinity:
    masked in fp8 it would be -448)."""
    module = parse_tk(NARROW_REDUCE, "narrow.tk")
    assert "tile.convert" in str(compile_module(parse_tk(NARROW_REDUCE, "narrow.tk"), "tile"))
    rng = np.random.default_rng(3)
    m = 100
    v = rng.standard_normal(m).astype(ml_dtypes.bfloat16).astype(np.float32)
    out = interpret(module, "narrow", {"V": v, "F": v * 0}, {})["S"]
    for i0 in range(0, m, 64):
        rows = slice(i0, min(i0 + 64, m))
        w = np.asarray(v[rows], np.float64)
        np.testing.assert_allclose(out[rows], (w.sum() + w.max() - w.min()) * 1000.0, rtol=1e-5)
    f_empty = parse_tk(NARROW_REDUCE.replace("load F[i]", "load F[i + 1]"), "narrow.tk")
    past = interpret(f_empty, "narrow", {"V": v[:10], "F": v[:10] * 0}, {})["S"]
    assert np.isneginf(past).all()
