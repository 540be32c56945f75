"""Tiles that run past the end of a tensor (docs/language.md, "Tiles past the end of a tensor"):
what the interpreter does with padding. A load reads zeros past the end and marks those indices
padding; element-wise ops, scf.if and scf.for carry the union of what flows in; reductions and
mma skip padding; a store writes only valid elements inside its tensor; bounds_mask sets
elements past signed limits.

Padding never shows in a result, so each test makes it matter: inputs whose reductions would
change if padding (zeros, or what an op made of them) were counted, and destinations larger
than the sources, where a written padding element would replace the NaN poison."""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path
from typing import cast

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from tkc.diagnostics import TkError
from tkc.frontend import parse_tk
from tkc.dialects import tile
from tkc.interpreter import find_kernel, interpret, round_to
from tkc.runner import check, kernel_params, load_reference, make_inputs, write_only

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@cache
def example(stem: str, **params: int | bool) -> ModuleOp:
    path = EXAMPLES / f"{stem}.tk"
    return parse_tk(path.read_text(), str(path), params)


@cache
def program(source: str, kernel: str | None = None) -> ModuleOp:
    return parse_tk(source, "tails.tk", None, kernel)


def assert_matches_reference(
    stem: str, params: dict[str, int | bool], sizes: dict[str, int], shift: float = 0.0
) -> None:
    """The example at `sizes` against its `X_ref.py`, on seeded inputs plus `shift`."""
    module = example(stem, **params)
    kernel = find_kernel(module, None)
    dims = kernel_params(kernel) | sizes
    inputs = make_inputs(kernel, dims, seed=5)
    poisoned = write_only(kernel)
    for name, arg in zip(kernel.arg_names, kernel.body.block.args, strict=True):
        if name not in poisoned:
            inputs[name] = round_to(inputs[name] + np.float32(shift), cast(tile.GlobalType, arg.type).element_type)
    outputs = interpret(module, None, inputs, sizes)
    reference = load_reference(str(EXAMPLES / f"{stem}.tk"))
    expected = reference({k: v for k, v in inputs.items() if k not in poisoned}, dims)
    report = io.StringIO()
    assert check(outputs, expected, report), report.getvalue()


# --------------------------------------------------------------------------- the examples


@pytest.mark.parametrize("m, n", [(100, 17), (64, 100), (17, 200), (1, 1)])
def test_softmax_over_a_ragged_row(m: int, n: int) -> None:
    """Scores far below 0: a row_max that counted the zeros read past N would be 0, and every
    exp2 of a real score would underflow."""
    assert_matches_reference("softmax", {"BM": 64, "BN": 64}, {"M": m, "N": n}, shift=-200.0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n", [17, 100, 200])
def test_attention_at_any_sequence_length(causal: bool, n: int) -> None:
    """Keys past N are padding columns of the scores: row_max and row_sum skip them, and the
    P V contraction counts them as 0 (P there is exp2(0 - m), not 0)."""
    assert_matches_reference("attention", {"BQ": 64, "BKV": 64, "D": 64, "CAUSAL": causal}, {"B": 1, "H": 2, "HKV": 2, "N": n})


@pytest.mark.parametrize("stem", ["gemm", "gemm_abt", "gemm_atb", "gemm_atbt"])
@pytest.mark.parametrize("m, n, k", [(100, 70, 40), (17, 130, 200), (64, 64, 16), (1, 1, 1)])
def test_gemm_at_ragged_sizes(stem: str, m: int, n: int, k: int) -> None:
    assert_matches_reference(stem, {"BM": 64, "BN": 64, "BK": 64}, {"M": m, "N": n, "K": k})


@pytest.mark.parametrize("m, d", [(100, 256), (17, 200), (1, 1000)])
def test_layernorm_at_ragged_rows_and_width(m: int, d: int) -> None:
    """Rows past M are padding, and with D no multiple of BD the columns past D too: the row sums
    skip them, and H and Y are written only inside M x D."""
    assert_matches_reference("layernorm", {"BM": 64, "BD": 128, "D": d}, {"M": m})


@pytest.mark.parametrize("stem", ["linear_attention", "rotary"])
def test_chunked_kernels_at_a_ragged_length(stem: str) -> None:
    """Linear attention's state update contracts over chunk rows, whose padding past N counts 0."""
    assert_matches_reference(stem, {}, {"B": 1, "H": 2, "N": 100})


# --------------------------------------------------------------------------- reductions

REDUCTIONS = """
kernel row<BM = 32, BN = 32>(X: gl<f32>[M, N], Y: gl<f32>[M]) {{
    grid (ceildiv(M, BM)) as (i)
    var acc = {init}<f32>[BM]
    for j in 0 .. ceildiv(N, BN) {{ acc = {update} }}
    store Y[i] = acc
}}
kernel col<BM = 32, BN = 32>(X: gl<f32>[M, N], Y: gl<f32>[N]) {{
    grid (ceildiv(N, BN)) as (j)
    var acc = {init}<f32>[BN]
    for i in 0 .. ceildiv(M, BM) {{ acc = {update} }}
    store Y[j] = acc
}}
"""
FNS = {
    # fn: (fill, how a tile's reduction r joins acc, numpy, inputs): exp(padding) = 1 would win
    # (or add) on these inputs
    "max": ("neg_infty", "max(acc, r)", np.max, (-3.0, -1.0)),
    "min": ("pos_infty", "min(acc, r)", np.min, (1.0, 3.0)),
    "sum": ("zero", "acc + r", np.sum, (-1.0, 1.0)),
}


@pytest.mark.parametrize("axis", ["row", "col"])
@pytest.mark.parametrize("fn", sorted(FNS))
@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 100), n=st.integers(1, 100), seed=st.integers(0, 2**16))
def test_reductions_skip_padding(fn: str, axis: str, m: int, n: int, seed: int) -> None:
    init, update, reference, (low, high) = FNS[fn]
    reduction = f"{axis}_{fn}(exp(load X[i, j] : rt<f32>[BM, BN]))"
    source = REDUCTIONS.format(init=init, update=update.replace("r", reduction))
    x = np.random.default_rng(seed).uniform(low, high, (m, n)).astype(np.float32)
    y = interpret(program(source, axis), None, {"X": x})["Y"]
    np.testing.assert_allclose(y, reference(np.exp(x), axis=1 if axis == "row" else 0), rtol=1e-5)


# --------------------------------------------------------------------------- mma

MMAS = """
kernel k<BM = 32, BN = 32, BK = 32>(A: gl<bf16>[{a}], B: gl<bf16>[{b}], C: gl<f32>[P, Q]) {{
    grid (ceildiv(P, BM), ceildiv(Q, BN)) as (i, j)
    var acc = zero<f32>[BM, BN]
    for k in 0 .. ceildiv(K, BK) {{
        let a = bf16(exp(f32(load A[{a_at}] : rt<bf16>[{a_tile}])))
        let b = bf16(exp(f32(load B[{b_at}] : rt<bf16>[{b_tile}])))
        acc = {mma}(a, b, acc)
    }}
    store C[i, j] = acc
}}
"""
FORMS = {
    # mma: (A's dims, coordinates, tile), (B's ...)
    "mma_AB": (("M, K", "i, k", "BM, BK"), ("K, N", "k, j", "BK, BN")),
    "mma_ABt": (("M, K", "i, k", "BM, BK"), ("N, K", "j, k", "BN, BK")),
    "mma_AtB": (("K, M", "k, i", "BK, BM"), ("K, N", "k, j", "BK, BN")),
    "mma_AtBt": (("K, M", "k, i", "BK, BM"), ("N, K", "j, k", "BN, BK")),
}


def bf16(x: np.ndarray) -> np.ndarray:
    return x.astype(ml_dtypes.bfloat16).astype(np.float64)


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("m, n, k", [(40, 50, 20), (33, 70, 90)])
def test_mma_counts_padding_as_zero(form: str, m: int, n: int, k: int) -> None:
    """exp(padding) = 1 in both operands: a contraction that counted it would add 1 per padded k.
    C is larger than M x N: the rows past M (a's padding) and columns past N (b's) stay unwritten."""
    (a_dims, a_at, a_tile), (b_dims, b_at, b_tile) = FORMS[form]
    source = MMAS.format(a=a_dims, a_at=a_at, a_tile=a_tile, b=b_dims, b_at=b_at, b_tile=b_tile, mma=form)
    rng = np.random.default_rng(k)
    a, b = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
    a_in, b_in = (a.T if "At" in form else a), (b.T if form.endswith("Bt") else b)
    c = interpret(program(source), None, {"A": a_in, "B": b_in}, {"P": 64, "Q": 96})["C"]

    expected = bf16(np.exp(bf16(a))) @ bf16(np.exp(bf16(b)))
    np.testing.assert_allclose(c[:m, :n], expected, rtol=1e-4)
    assert np.isnan(c[m:]).all() and np.isnan(c[:, n:]).all()


# --------------------------------------------------------------------------- stores

COPY = """
kernel copy<BM = 32, BN = 32>(X: gl<f32>[M, N], Z: gl<f32>[R, S], Y: gl<f32>[P, Q]) {
    grid (ceildiv(P, BM), ceildiv(Q, BN)) as (i, j)
    store Y[i, j] = load X[i, j] : rt<f32>[BM, BN] + load Z[i, j] : rt<f32>[BM, BN] + 1.0
}
kernel rows<BM = 32, BN = 32>(X: gl<f32>[M, N], V: gl<f32>[R], Y: gl<f32>[P, Q]) {
    grid (ceildiv(P, BM), ceildiv(Q, BN)) as (i, j)
    store Y[i, j] = add_row(load X[i, j] : rt<f32>[BM, BN], load V[i] : rv<f32>[BM])
}
kernel vector<BN = 32>(X: gl<f32>[N], Y: gl<f32>[Q]) {
    grid (ceildiv(Q, BN)) as (j)
    store Y[j] = exp(load X[j] : rv<f32>[BN])
}
"""


def test_a_store_writes_only_the_valid_region_of_its_value() -> None:
    """X + Z + 1 has the padding of both (rows past 40, columns past 30); stored into a 64 x 96 Y,
    only those 40 x 30 elements are written."""
    rng = np.random.default_rng(3)
    x, z = rng.standard_normal((50, 30)).astype(np.float32), rng.standard_normal((40, 70)).astype(np.float32)
    y = interpret(program(COPY, "copy"), None, {"X": x, "Z": z}, {"P": 64, "Q": 96})["Y"]
    np.testing.assert_array_equal(y[:40, :30], x[:40] + z[:, :30] + 1)
    assert np.isnan(y[40:]).all() and np.isnan(y[:, 30:]).all()


def test_a_row_broadcast_adds_the_vectors_padding_to_the_rows() -> None:
    rng = np.random.default_rng(4)
    x, v = rng.standard_normal((60, 40)).astype(np.float32), rng.standard_normal(20).astype(np.float32)
    y = interpret(program(COPY, "rows"), None, {"X": x, "V": v}, {"P": 64, "Q": 64})["Y"]
    np.testing.assert_array_equal(y[:20, :40], x[:20] + v[:, None])
    assert np.isnan(y[20:]).all() and np.isnan(y[:, 40:]).all()


def test_a_vector_store_skips_padding() -> None:
    """exp(0) = 1 past the end of X: not written into the longer Y."""
    x = np.random.default_rng(5).standard_normal(20).astype(np.float32)
    y = interpret(program(COPY, "vector"), None, {"X": x}, {"Q": 64})["Y"]
    np.testing.assert_array_equal(y[:20], np.exp(x))
    assert np.isnan(y[20:]).all()


# --------------------------------------------------------------------------- control flow

CONTROL = """
kernel select<B = 32>(X: gl<f32>[M, N], Y: gl<f32>[P, N]) {
    grid (2) as (i)
    let x = load X[i, 0] : rt<f32>[B, B]
    store Y[i, 0] = (i == 0 ? x : zero<f32>[B, B]) + 1.0
}
kernel uniform<B = 32>(X: gl<f32>[M, N], Y: gl<f32>[P, N]) {
    grid (2) as (i)
    let x = load X[i, 0] : rt<f32>[B, B]
    store Y[i, 0] = (M > 1000 ? x : zero<f32>[B, B]) + 1.0
}
kernel carried<B = 32>(X: gl<f32>[M, N], Y: gl<f32>[P, N]) {
    grid (2) as (i)
    var t = zero<f32>[B, B]
    for k in 0 .. i + 1 {
        t = load X[i - k, 0] : rt<f32>[B, B]
    }
    store Y[i, 0] = t
}
"""


@pytest.mark.parametrize("kernel", ["select", "uniform"])
def test_an_if_result_has_the_padding_of_both_branches(kernel: str) -> None:
    """Block 1 takes the zero tile, yet its rows past M = 40 (padding of the other branch's load)
    stay unwritten; block 0 takes the load where it has no padding. The condition per block or
    uniform makes no difference."""
    x = np.random.default_rng(6).standard_normal((40, 32)).astype(np.float32)
    y = interpret(program(CONTROL, kernel), None, {"X": x}, {"P": 64})["Y"]
    np.testing.assert_array_equal(y[:32], (x[:32] if kernel == "select" else 0) + 1)
    np.testing.assert_array_equal(y[32:40], np.ones((8, 32)))
    assert np.isnan(y[40:]).all()


def test_a_carried_value_has_the_padding_of_every_iteration_it_ran() -> None:
    """Block 0 runs one iteration: X[0:32], no padding. Block 1 runs two: X[32:64], whose rows past
    M = 40 are padding, then X[0:32], which keeps that padding (rows 8.. of the tile)."""
    x = np.random.default_rng(7).standard_normal((40, 32)).astype(np.float32)
    y = interpret(program(CONTROL, "carried"), None, {"X": x}, {"P": 64})["Y"]
    np.testing.assert_array_equal(y[:32], x[:32])
    np.testing.assert_array_equal(y[32:40], x[:8])
    assert np.isnan(y[40:]).all()


OUTSIDE = """
kernel previous<BM = 32>(X: gl<f32>[M, N], Y: gl<f32>[M, N]) {
    grid (ceildiv(M, BM)) as (i)
    var y = load X[i, 0] : rt<f32>[BM, 32]
    if i > 0 {
        y += load X[i - 1, 0] : rt<f32>[BM, 32]
    }
    store Y[i, 0] = y
}
kernel next_head<BM = 32>(X: gl<f32>[H, M, N], Y: gl<f32>[H, M, N]) {
    grid (H) as (h)
    store Y[h, 0, 0] = h + 1 < H ? load X[h + 1, 0, 0] : rt<f32>[BM, 32] : zero<f32>[BM, 32]
}
kernel shifted<BM = 32>(X: gl<f32>[M, N], Y: gl<f32>[M, N], S: gl<f32>[M]) {
    grid (ceildiv(M, BM)) as (i)
    let x = load X[elem(i * BM - 1), 0] : rt<f32>[BM, 32]
    store Y[i, 0] = x
    store S[i] = row_sum(x + 1.0)
}
"""


def test_a_branch_no_block_takes_adds_no_padding_along_whole_tiles() -> None:
    """Block 0 does not run its load of tile -1 (wholly before the start), the last head not
    its load of head H: along a leading dim or one of whole tiles such a box would be an error
    where it ran, and where it does not it leaves the joined value every row, as on the GPU (no
    masks along whole tiles)."""
    x = np.random.default_rng(8).standard_normal((96, 32)).astype(np.float32)
    y = interpret(program(OUTSIDE, "previous"), None, {"X": x}, {})["Y"]
    np.testing.assert_array_equal(y[:32], x[:32])
    np.testing.assert_array_equal(y[32:], x[32:] + x[:-32])
    heads = np.random.default_rng(9).standard_normal((3, 32, 32)).astype(np.float32)
    y = interpret(program(OUTSIDE, "next_head"), None, {"X": heads}, {})["Y"]
    np.testing.assert_array_equal(y[:2], heads[1:])
    np.testing.assert_array_equal(y[2], np.zeros((32, 32)))


@pytest.mark.parametrize("m", [64, 50])
def test_elements_before_the_start_read_zero_and_are_no_padding(m: int) -> None:
    """A tile at elem(i * BM - 1) starts a row before X: that row reads 0 and counts (its row_sum
    of x + 1 is 32), as TMA's zeros do on the GPU, whose masks only cut the end; rows past M are
    padding and a store never writes them."""
    x = np.random.default_rng(10).standard_normal((m, 32)).astype(np.float32)
    out = interpret(program(OUTSIDE, "shifted"), None, {"X": x}, {})
    shifted = np.concatenate([np.zeros((1, 32), np.float32), x[:-1]])
    np.testing.assert_array_equal(out["Y"], shifted)
    np.testing.assert_allclose(out["S"], (shifted + 1).sum(axis=1), rtol=1e-5)


GATHER = """
kernel gather<BT = 16, BD = 32>(Ids: gl<i32>[T], E: gl<f32>[V, D], Y: gl<f32>[T, D]) {
    grid (ceildiv(T, BT), ceildiv(D, BD)) as (i, j)
    for r in i * BT .. min(i * BT + BT, T) {
        let id = load Ids[r] : i32
        store Y[elem(r, r + 1), j] = load E[elem(id, id + 1), j] : rt<f32>[16, BD] * 2.0
    }
}
"""


@pytest.mark.parametrize("row", ["elem(r, r + 1)", "elem(r)"])
def test_a_gather_store_ends_where_its_value_does(row: str) -> None:
    """Each store writes the one row its value has, before the passes and after: Y = 2 E[Ids] at
    any shape. Stored at `elem(r, r + 1)`, a range as long as the value's, the store needs
    nothing; at `elem(r)` tile-mask-tails ends its range at the value's (`clipped`)."""
    from tkc.driver import compile_module

    e = np.random.default_rng(11).standard_normal((37, 40)).astype(np.float32)
    ids = np.random.default_rng(12).integers(0, 37, 50).astype(np.int32)
    source = GATHER.replace("Y[elem(r, r + 1), j]", f"Y[{row}, j]")
    compiled = parse_tk(source, "gather.tk")
    compile_module(compiled, "tile")
    assert ("clipped = #tile.decision<0" in str(compiled)) == (row == "elem(r)")
    for module in (program(source), compiled):
        y = interpret(module, None, {"Ids": ids, "E": e}, {})["Y"]
        np.testing.assert_array_equal(y, 2 * e[ids])


# --------------------------------------------------------------------------- bounds_mask

BOUNDS = """
kernel tile_limits<BM = 32, BN = 32>(X: gl<f32>[M, N], Y: gl<f32>[M, N]) {
    grid (ceildiv(M, BM), ceildiv(N, BN)) as (i, j)
    store Y[i, j] = bounds_mask(load X[i, j] : rt<f32>[BM, BN], 40 - i * BM, 10 - j * BN, 7.0)
}
kernel default_fill<BM = 32, BN = 32>(X: gl<f32>[M, N], Y: gl<f32>[M, N]) {
    grid (ceildiv(M, BM), ceildiv(N, BN)) as (i, j)
    store Y[i, j] = bounds_mask(load X[i, j] : rt<f32>[BM, BN], 5, 100)
}
kernel vector_limit<BN = 32>(X: gl<f32>[N], Y: gl<f32>[N]) {
    grid (ceildiv(N, BN)) as (j)
    store Y[j] = bounds_mask(load X[j] : rv<f32>[BN], 50 - j * BN, 0.0)
}
kernel padding_stays<BM = 32, BN = 32>(X: gl<f32>[M, N], Y: gl<f32>[P, Q]) {
    grid (ceildiv(P, BM), ceildiv(Q, BN)) as (i, j)
    store Y[i, j] = bounds_mask(load X[i, j] : rt<f32>[BM, BN], 1000, 1000, 7.0)
}
"""


def test_bounds_mask_on_a_tile_with_signed_limits() -> None:
    """Global rows >= 40 and columns >= 10 become 7: in block row 1 the row limit is 8, in
    block column 1 the column limit is 10 - 32 < 0 (every column)."""
    x = np.random.default_rng(8).standard_normal((64, 64)).astype(np.float32)
    y = interpret(program(BOUNDS, "tile_limits"), None, {"X": x})["Y"]
    rows, cols = np.indices(x.shape)
    np.testing.assert_array_equal(y, np.where((rows >= 40) | (cols >= 10), np.float32(7), x))


def test_bounds_mask_fills_minus_infinity_by_default_per_tile() -> None:
    """Limits count from each tile's first row: rows 5.. of every tile; columns >= 100 of none."""
    x = np.random.default_rng(9).standard_normal((64, 64)).astype(np.float32)
    y = interpret(program(BOUNDS, "default_fill"), None, {"X": x})["Y"]
    np.testing.assert_array_equal(y, np.where(np.indices(x.shape)[0] % 32 >= 5, -np.inf, x))


def test_bounds_mask_on_a_vector() -> None:
    x = np.random.default_rng(10).standard_normal(96).astype(np.float32)
    y = interpret(program(BOUNDS, "vector_limit"), None, {"X": x})["Y"]
    np.testing.assert_array_equal(y, np.where(np.arange(96) >= 50, np.float32(0), x))


def test_bounds_mask_keeps_the_padding() -> None:
    """Limits past the tile change nothing, and the padding past X's 40 x 30 still is not stored."""
    x = np.random.default_rng(11).standard_normal((40, 30)).astype(np.float32)
    y = interpret(program(BOUNDS, "padding_stays"), None, {"X": x}, {"P": 64, "Q": 64})["Y"]
    np.testing.assert_array_equal(y[:40, :30], x)
    assert np.isnan(y[40:]).all() and np.isnan(y[:, 30:]).all()


# --------------------------------------------------------------------------- launch checks

ROUNDED_DOWN = """
kernel k<BM = 32>(X: gl<f32>[M, N], Y: gl<f32>[M, N]) {
    grid (M / BM) as (i)
    store Y[i, 0] = load X[i, 0] : rt<f32>[BM, 32]
}
"""


def test_a_rounded_down_tile_count_needs_whole_tiles() -> None:
    """`M / BM` would drop a partial last tile: refused in the runtime's words. N, which the
    program never divides, may be anything (the tile runs past it)."""
    message = r"error: M = 40 \(from X \(dim 0\)\) is not a multiple of 32: .* the last 8; count them with ceildiv\(M, 32\)"
    with pytest.raises(TkError, match=message):
        interpret(program(ROUNDED_DOWN), None, {"X": np.zeros((40, 20), np.float32)})
    x = np.random.default_rng(12).standard_normal((64, 20)).astype(np.float32)
    np.testing.assert_array_equal(interpret(program(ROUNDED_DOWN), None, {"X": x})["Y"], x)


def test_the_launch_contract_keeps_rounded_down_counts_a_pass_removes(tmp_path: Path) -> None:
    """The interpreter refuses L = 130 for `L / 64` in a loop bound; the canonicalizer removes the
    loop (its result is unused), and the runtime must still refuse what the interpreter does
    (found by tests/fuzz/gpu_diff.py): the frontend records the dims in `floor_divided`."""
    import tkc

    source = tmp_path / "dead_loop.tk"
    source.write_text(
        "kernel dead_loop(A: gl<f32>[M, L], O: gl<f32>[M, 64]) {\n"
        "    grid (ceildiv(M, 64)) as (i)\n"
        "    var v = load A[i, 0] : rt<f32>[64, 64]\n"
        "    for c in 0 .. min(L / 64, 1) {\n"
        "        v = v + 1.0\n"
        "    }\n"
        "    store O[i, 0] = load A[i, 0] : rt<f32>[64, 64]\n"
        "}\n"
    )
    module = parse_tk(source.read_text(), str(source))
    assert tile.floor_divided_dims(find_kernel(module, None)) == {"L": 64}
    assert dict(tkc.compile(str(source)).abi.divisibility) == {"L": 64}
    with pytest.raises(TkError, match=r"L = 130 .* is not a multiple of 64"):
        interpret(module, None, {"A": np.zeros((100, 130), np.float32)})


def test_a_carried_sum_of_partial_tiles_is_refused_as_on_the_gpu(tmp_path: Path) -> None:
    """tile-mask-tails cannot mask a tile sum carried over tiles of T, so the GPU kernel takes T in
    whole tiles; the interpreter refuses T = 100 too (its sum would leave out rows 36-63 of the
    first tile, padding in the last iteration), in the runtime's words."""
    import tkc

    source = tmp_path / "carried.tk"
    source.write_text(
        "kernel carried(X: gl<f32>[T, D], Y: gl<f32>[D]) {\n"
        "    grid (ceildiv(D, 64)) as (c)\n"
        "    var acc = zero<f32>[64, 64]\n"
        "    for t in 0 .. ceildiv(T, 64) { acc += load X[t, c] : rt<f32>[64, 64] }\n"
        "    store Y[c] = col_sum(acc)\n"
        "}\n"
    )
    kernel = tkc.compile(str(source))
    with pytest.raises(TkError, match=r"T = 100 \(from X \(dim 0\)\) is not a multiple of 64: col_sum at line 5"):
        kernel.interpret(X=np.ones((100, 64), np.float32), Y=np.zeros(64, np.float32))
    x = np.random.default_rng(3).standard_normal((128, 64)).astype(np.float32)
    np.testing.assert_allclose(kernel.interpret(X=x, Y=np.zeros(64, np.float32))["Y"], x.sum(0), rtol=1e-4, atol=1e-4)



def test_interpret_warns_where_the_gpu_launch_would_stop_and_names_the_file(tmp_path: Path) -> None:
    """`interpret()` runs bf16 rows of 300 elements (600 bytes), which TMA cannot address: the
    outputs come with a GpuLaunchWarning saying so; an argument error names the kernel's file."""
    import warnings

    import tkc
    from tkc.api import GpuLaunchWarning

    source = tmp_path / "scale.tk"
    source.write_text(
        "kernel scale(X: gl<bf16>[M, N], Y: gl<bf16>[M, N]) {\n"
        "    grid (ceildiv(M, 64), ceildiv(N, 64)) as (i, j)\n"
        "    store Y[i, j] = load X[i, j] : rt<bf16>[64, 64] * 2.0\n"
        "}\n"
    )
    kernel = tkc.compile(str(source))
    with pytest.warns(GpuLaunchWarning, match=r"N = 300 .* N must be a multiple of 8"):
        out = kernel.interpret(X=np.ones((17, 300), ml_dtypes.bfloat16))
    assert (out["Y"].astype(np.float32) == 2.0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernel.interpret(X=np.ones((17, 304), ml_dtypes.bfloat16))
    with pytest.raises(TkError) as info:
        kernel.interpret(X=np.ones((17, 304), ml_dtypes.bfloat16), Z=np.ones(3))
    assert str(info.value).startswith(f"{source}: error: scale has no argument Z")


def test_an_element_range_ending_provably_past_its_dim_is_refused() -> None:
    """`elem(i * 64 + 1, H + 1)` ends at H at run time, while the tails analysis compares ends as
    written and took it for as long as the store's `elem(i * 64, H)`: the store wrote its last row
    from padding (left unwritten by the interpreter). An end is at most the dim: refused."""
    from tkc.driver import compile_module

    source = (
        "kernel shift_up(X: gl<f32>[H, W], Y: gl<f32>[H, W]) {\n"
        "    grid (ceildiv(H, 64), ceildiv(W, 64)) as (i, j)\n"
        "    let down = load X[elem(i * 64 + 1, H + 1), j] : rt<f32>[64, 64]\n"
        "    store Y[elem(i * 64, H), j] = down\n"
        "}\n"
    )
    with pytest.raises(TkError, match="the end of this element range lies 1 past dim H: an end is at most the dim") as info:
        compile_module(parse_tk(source, "k.tk"), "tile")
    assert info.value.line == 3
    compile_module(parse_tk(source.replace("H + 1), j]", "H), j]"), "k.tk"), "tile")


def test_a_store_refusal_names_the_range_its_destination_does_not_cover() -> None:
    """max(a, b) of two column ranges: a's (ending at C) ends where Y's tiles do, b's (ending at C2)
    need not; the refusal named the first range, C, which alone compiles."""
    from tkc.driver import compile_module

    source = (
        "kernel second_half(X: gl<bf16>[R, C2], Y: gl<bf16>[R, C]) {\n"
        "    grid (ceildiv(R, 64), ceildiv(C, 64)) as (r, c)\n"
        "    let a = load X[r, elem(c * 64, C)] : rt<bf16>[64, 64]\n"
        "    let b = load X[r, elem(C + c * 64, C2)] : rt<bf16>[64, 64]\n"
        "    store Y[r, c] = max(a, b)\n"
        "}\n"
    )
    with pytest.raises(TkError, match="of the range that ends at 'C2' may end anywhere"):
        compile_module(parse_tk(source, "k.tk"), "tile")
    compile_module(parse_tk(source.replace("max(a, b)", "a"), "k.tk"), "tile")


def test_a_shifted_store_of_a_ragged_tile_ends_where_its_rows_do(tmp_path: Path) -> None:
    """`store Y[elem(i * BM + 8), 0] = load X[i, 0]`: the loaded rows end at M, so the store's range
    ends 8 past M, where TMA clips it. It compiles (tile-mask-tails once checked the end it derived
    as if the user had written it past the dim) and writes rows 8 .. M of Y, leaving rows 0 .. 7."""
    source = tmp_path / "shift.tk"
    source.write_text("kernel shift<BM = 64, C = 64>(X: gl<f32>[M, C], Y: gl<f32>[M, C]) {\n"
                      "    grid (ceildiv(M, BM)) as (i)\n"
                      "    store Y[elem(i * BM + 8), 0] = load X[i, 0] : rt<f32>[BM, C]\n"
                      "}\n")
    import tkc

    x = np.random.default_rng(7).standard_normal((200, 64)).astype(np.float32)
    y = tkc.compile(source).interpret(X=x, Y=np.full_like(x, -7.0))["Y"]
    np.testing.assert_array_equal(y[8:], x[:-8])
    assert (y[:8] == -7.0).all()


SHIFTED_BACK = """
kernel rows_back(X: gl<f32>[M, 128], Y: gl<f32>[M, 128]) {
    grid (ceildiv(M, 64)) as (i)
    store Y[elem(i * 64 - 5), 0] = load X[i, 0] : rt<f32>[64, 128]
}

kernel columns_back(X: gl<f32>[M, 128], Y: gl<f32>[M, 128]) {
    grid (ceildiv(M, 64), 2) as (i, j)
    store Y[i, elem(j * 64 - 16)] = load X[i, j] : rt<f32>[64, 64]
}
"""


def test_a_tile_stored_from_before_row_0_writes_its_rows_from_row_0_on() -> None:
    x = np.random.default_rng(3).standard_normal((100, 128)).astype(np.float32)
    y = interpret(program(SHIFTED_BACK, "rows_back"), "rows_back", {"X": x, "Y": np.full_like(x, -7.0)})["Y"]
    np.testing.assert_array_equal(y[:95], x[5:])
    assert (y[95:] == -7.0).all()


def test_a_tile_stored_from_before_column_0_is_an_error() -> None:
    """The GPU stores a tile's rows whole with TMA, whose store box faults at a negative
    coordinate: the GPU stops the kernel, and the interpreter names the block."""
    x = np.ones((64, 128), np.float32)
    with pytest.raises(TkError, match=r"block \(i=0, j=0\) stores a tile from element -16 of Y's innermost dim, "
                                      r"before its first"):
        interpret(program(SHIFTED_BACK, "columns_back"), "columns_back", {"X": x, "Y": np.zeros_like(x)})


def test_a_negative_index_along_a_dim_of_whole_tiles_lies_before_its_start() -> None:
    source = """
kernel previous(X: gl<f32>[B, 64], Y: gl<f32>[B, 64]) {
    grid (B) as (b)
    store Y[b - 1, 0] = load X[b, 0] : rv<f32>[64]
}
"""
    x = np.ones((3, 64), np.float32)
    with pytest.raises(TkError, match="store of Y: index -1 along dim 0 lies wholly before its start"):
        interpret(program(source), "previous", {"X": x, "Y": np.zeros_like(x)})
