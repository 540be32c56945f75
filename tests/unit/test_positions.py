"""Positions (`row_index`, `col_index`), element-wise conditions (comparisons, `and`, `or`, `not`
on tiles) and `where`: the interpreter against numpy (NaN and infinities included, tiles past the
end of a tensor), the padding tile-mask-tails gives them, the register model's streaming, and the
attention variants against their references at ragged sizes."""

from __future__ import annotations

import io
import math
from functools import cache
from pathlib import Path
from typing import cast

import ml_dtypes
import numpy as np
import pytest
from test_sm90_column_vectors import Emit, run_column_program
from test_sm90_to_ptx import F32, const
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tkc.diagnostics import TkError
from tkc.dialects import sm90, tile
from tkc.dialects.tile import Axis, AxisAttr, BinaryFn, BinaryFnAttr
from tkc.frontend import parse_tk
from tkc.interpreter import find_kernel, interpret
from tkc.passes.occupancy import streamed
from tkc.passes.tile_mask_tails import TailAnalysis
from tkc.runner import check, kernel_params, load_reference, make_inputs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CONDITIONS = """
kernel conditions<BM = 64, BN = 32, W = 5>(X: gl<f32>[M, N], Y: gl<f32>[M, N], Z: gl<bf16>[M, N]) {
    grid (ceildiv(M, BM), ceildiv(N, BN)) as (i, j)
    let x = load X[i, j] : rt<f32>[BM, BN]
    let gap = row_index(x, i * BM) - col_index(x, j * BN)
    let band = gap >= 0.0 and gap < W
    store Y[i, j] = where(band or not (x == x), x - 0.5 * abs(gap), x != 1.0)
    store Z[i, j] = where(x > 0.0, bf16(x), -1.0)
}
"""


@cache
def program(source: str) -> ModuleOp:
    return parse_tk(source, "positions.tk", None, None)


def special_inputs(m: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((m, n)).astype(np.float32)
    x.flat[::7] = np.nan
    x.flat[3::11] = np.inf
    x.flat[5::13] = 1.0
    return x


@pytest.mark.parametrize("m,n", [(64, 32), (100, 70), (130, 33)])
def test_conditions_and_positions_follow_numpy(m: int, n: int) -> None:
    x = special_inputs(m, n)
    poison = np.full((m, n), np.nan, np.float32)
    out = interpret(program(CONDITIONS), None, {"X": x, "Y": poison.copy(), "Z": poison.astype(ml_dtypes.bfloat16)},
                    {"M": m, "N": n})
    gap = (np.arange(m)[:, None] - np.arange(n)[None, :]).astype(np.float32)
    band = (gap >= 0) & (gap < 5)
    with np.errstate(invalid="ignore"):
        want_y = np.where(band | np.isnan(x), x - np.float32(0.5) * np.abs(gap), (x != 1.0).astype(np.float32))
    want_z = np.where(x > 0, x.astype(ml_dtypes.bfloat16).astype(np.float32), -1.0)
    np.testing.assert_array_equal(np.asarray(out["Y"], np.float32), want_y)
    np.testing.assert_array_equal(np.asarray(out["Z"], np.float32), want_z)


def test_a_runtime_offset_counts_from_the_tile_and_positions_are_f32() -> None:
    source = """
    kernel k(X: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {
        grid (ceildiv(M, 64)) as (i)
        for t in 0 .. 2 {
            let x = load X[i, 0] : rt<f32>[64, 64]
            store Y[i, 0] = row_index(x, (i + t) * 64) * 1000.0 + col_index(x, 7)
        }
    }
    """
    m = 192
    out = interpret(program(source), None, {"X": np.zeros((m, 64), np.float32), "Y": np.zeros((m, 64), np.float32)},
                    {"M": m})
    rows = np.arange(m)[:, None] // 64 * 64 + 64 + np.arange(m)[:, None] % 64  # the second iteration wins
    np.testing.assert_array_equal(out["Y"], (rows * 1000.0 + 7 + np.arange(64)[None, :]).astype(np.float32))


def test_positions_have_no_padding_and_selects_union_their_operands() -> None:
    module = program(CONDITIONS)
    kernel = find_kernel(module, None)
    tails = TailAnalysis(kernel)
    ops = list(kernel.walk())
    for op in ops:
        if isinstance(op, tile.PositionOp):
            assert all(not axis.tails for axis in tails.of(op.result))
    selects = [op for op in ops if isinstance(op, tile.SelectOp)]
    assert selects and all(all(axis.tails for axis in tails.of(op.result)) for op in selects)
    # where(x > 0, bf16(x), -1): x > 0 holds 0 past the end, so the padding holds the -1 branch
    z = selects[-1]
    assert all(axis.fill == -1.0 for axis in tails.of(z.result))


def test_positions_and_selects_stream_through_the_register_model() -> None:
    kernel = find_kernel(program(CONDITIONS), None)
    values = streamed(kernel)
    positions = [op.result for op in kernel.walk() if isinstance(op, tile.PositionOp)]
    assert positions and all(p in values for p in positions)


DOCUMENT_MASK = """
kernel masked(S: gl<f32>[M, N], DOC: gl<f32>[N], Y: gl<f32>[M, N]) {
    grid (ceildiv(M, 64), ceildiv(N, 64)) as (i, j)
    let s = load S[i, j] : rt<f32>[64, 64]
    store Y[i, j] = where(add_row(zero<f32>[64, 64], load DOC[i] : rv<f32>[64])
                          == add_col(zero<f32>[64, 64], load DOC[j] : rv<f32>[64]), s, neg_infty)
}
"""


def test_fills_broadcast_around_a_vector_load_stream_through_the_register_model() -> None:
    """The fills and their broadcasts of a document mask are members of the element-wise run, and
    the load of the second vector between them does not end it: none is a whole tile."""
    kernel = find_kernel(program(DOCUMENT_MASK), None)
    values = streamed(kernel)
    made = [op.result for op in kernel.walk() if isinstance(op, tile.FillOp | tile.BroadcastOp)]
    assert len(made) == 4 and all(v in values for v in made)


@cache
def example(stem: str, **params: int | bool | float) -> ModuleOp:
    path = EXAMPLES / f"{stem}.tk"
    return parse_tk(path.read_text(), str(path), params)


@pytest.mark.parametrize("stem,params,sizes", [
    ("attention_alibi", {"D": 64, "BQ": 64, "BKV": 64}, {"B": 1, "H": 3, "N": 200}),
    ("attention_window", {"D": 64, "BQ": 64, "BKV": 64, "W": 100}, {"B": 1, "H": 2, "N": 300}),
    ("attention_window", {"D": 64, "BQ": 128, "BKV": 64, "W": 64}, {"B": 1, "H": 1, "N": 256}),
    ("attention_softcap", {"D": 64, "BQ": 64, "BKV": 64, "CAP": 2.0}, {"B": 1, "H": 2, "N": 130}),
])
def test_attention_variants_match_their_references(stem: str, params: dict[str, int | float],
                                                   sizes: dict[str, int]) -> None:
    module = example(stem, **params)
    kernel = find_kernel(module, None)
    dims = kernel_params(kernel) | sizes
    inputs = make_inputs(kernel, dims, seed=2)
    inputs = {k: v for k, v in inputs.items() if k in ("Q", "K", "V")}
    poisoned = {name: np.full(np.shape(make_inputs(kernel, dims, seed=2)[name]), np.nan, np.float32)
                for name in ("O", "LSE")}
    poisoned["O"] = poisoned["O"].astype(ml_dtypes.bfloat16)
    outputs = interpret(module, None, {**inputs, **poisoned}, sizes)
    expected = load_reference(str(EXAMPLES / f"{stem}.tk"))(inputs, dims)
    report = io.StringIO()
    assert check(outputs, expected, report), report.getvalue()
    assert not math.isnan(float(np.asarray(outputs["LSE"], np.float32).sum()))


def test_window_sees_only_its_keys() -> None:
    """A key outside every query's window changes nothing: V is huge there."""
    module = example("attention_window", D=64, BQ=64, BKV=64, W=64)
    n = 192
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 1, n, 64)).astype(ml_dtypes.bfloat16) for _ in range(3))
    outputs = interpret(module, None, {"Q": q, "K": k, "V": v, "O": np.zeros_like(q),
                                       "LSE": np.zeros((1, 1, n), np.float32)}, {"B": 1, "H": 1, "N": n})
    far = v.copy()
    far[..., :64, :] = ml_dtypes.bfloat16(1e4)  # keys 0..63: outside the window of queries >= 127
    moved = interpret(module, None, {"Q": q, "K": k, "V": far, "O": np.zeros_like(q),
                                     "LSE": np.zeros((1, 1, n), np.float32)}, {"B": 1, "H": 1, "N": n})
    late = cast(np.ndarray, outputs["O"])[..., 127:, :]
    np.testing.assert_array_equal(late, cast(np.ndarray, moved["O"])[..., 127:, :])


def test_positions_past_two_to_the_24_are_refused_at_the_op() -> None:
    source = """
    kernel k(X: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {
        grid (ceildiv(M, 64)) as (i)
        let x = load X[i, 0] : rt<f32>[64, 64]
        store Y[i, 0] = col_index(x, 16777200)
    }
    """
    with pytest.raises(TkError) as caught:
        interpret(program(source), None, {"X": np.zeros((64, 64), np.float32), "Y": np.zeros((64, 64), np.float32)},
                  {"M": 64})
    rendered = caught.value.render()
    assert "positions.tk:5:25: error: a position reaches 16777263: positions are f32, exact only below 2^24" in rendered


def test_vector_positions_in_both_layouts_on_the_fragment_simulator() -> None:
    """sm90.position of a column fragment holds first + its columns in every thread, of a row
    fragment first + the thread's rows: broadcast over a tile, (x + 3 + c) * (5 + r)."""
    x = np.arange(64 * 32, dtype=np.float64).reshape(64, 32) % 17

    def program(emit: Emit, frag: SSAValue) -> SSAValue:
        columns = emit(sm90.PositionOp(AxisAttr(Axis.COL), const(emit, 3), sm90.FragmentType([32], F32, column=True)))
        rows = emit(sm90.PositionOp(AxisAttr(Axis.ROW), const(emit, 5), sm90.FragmentType([64], F32)))
        spread = emit(sm90.ColBroadcastOp(BinaryFnAttr(BinaryFn.ADD), frag, columns))
        return emit(sm90.RowBroadcastOp(BinaryFnAttr(BinaryFn.MUL), spread, rows))

    out = run_column_program(x, [], program)
    r, c = np.meshgrid(np.arange(64), np.arange(32), indexing="ij")
    np.testing.assert_array_equal(out, (x + 3 + c) * (5 + r))
