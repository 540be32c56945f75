"""The reference interpreter on whole kernels (GEMM, attention) built with the tile dialect's
constructors, its launch checks, and its speed."""

from __future__ import annotations

import time

import ml_dtypes
import numpy as np
import pytest
from interpreter_support import (
    attention,
    attention_reference,
    bf16,
    bf16_round,
    f32,
    for_loop,
    gemm,
    idx,
    if_else,
    kernel,
    rel_error,
)
from xdsl.dialects import arith, test
from xdsl.dialects.builtin import Float16Type, IndexType, ModuleOp

from tkc.diagnostics import TkError
from tkc.dialects import tile
from tkc.driver import compile_module
from tkc.frontend import parse_tk
from tkc.interpreter import interpret


def normal(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("m, n, k", [(128, 128, 64), (256, 384, 192), (384, 128, 512)])
@pytest.mark.parametrize("dtype", [bf16, Float16Type()])
def test_gemm_matches_numpy(m: int, n: int, k: int, dtype) -> None:
    a, b = normal(1, m, k), normal(2, k, n)
    out = interpret(gemm(128, 128, 64, dtype), "gemm", {"A": a, "B": b})
    assert set(out) == {"C"}
    assert out["C"].dtype == (ml_dtypes.bfloat16 if dtype == bf16 else np.float16)
    dt = ml_dtypes.bfloat16 if dtype == bf16 else np.float16
    ref = a.astype(dt).astype(np.float64) @ b.astype(dt).astype(np.float64)
    assert rel_error(out["C"], ref) < (4e-3 if dtype == bf16 else 1e-3)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d, n", [(64, 256), (128, 384)])
def test_attention_matches_numpy(causal: bool, d: int, n: int) -> None:
    q, k, v = (normal(seed, 2, 2, n, d) for seed in (3, 4, 5))
    out = interpret(attention(d, causal=causal), None, {"Q": q, "K": k, "V": v})
    o, lse = attention_reference(q, k, v, causal)
    assert rel_error(out["O"], o) < 1e-2
    assert rel_error(out["LSE"], lse) < 1e-5


def test_attention_with_small_kv_tiles_runs_more_iterations() -> None:
    q, k, v = (normal(seed, 1, 2, 256, 64) for seed in (6, 7, 8))
    out = interpret(attention(64, bq=128, bkv=64), None, {"Q": q, "K": k, "V": v})
    assert rel_error(out["O"], attention_reference(q, k, v, False)[0]) < 1e-2


def test_results_survive_the_tile_pipeline() -> None:
    module = attention(64, causal=True)
    q, k, v = (normal(seed, 1, 2, 256, 64) for seed in (9, 10, 11))
    before = interpret(module, None, {"Q": q, "K": k, "V": v})
    after = interpret(compile_module(module.clone(), "tile"), None, {"Q": q, "K": k, "V": v})
    for name in before:
        np.testing.assert_array_equal(before[name], after[name])


def masked_store_kernel():
    """Y[i] = X[i] + 1 only in blocks with i == 1 (a per-block scf.if around a store), and a
    loop to i + 1 that counts its own iterations into Z."""
    vec = tile.RegisterVectorType(16, f32)

    def body(x_arg, y_arg, z_arg):
        tile.GridOp([tile.DimOp(x_arg, 0).result], ["i"])
        i = tile.BlockIdOp(0).result
        x = tile.ToRegOp(tile.LoadOp(x_arg, [i, idx(0)], tile.SharedVectorType(16, f32)).result).result

        def then():
            plus = tile.BinaryOp(tile.BinaryFn.ADD, x, tile.FillOp(1.0, vec).result).result
            tile.StoreOp(plus, y_arg, [i, idx(0)])
            return []

        if_else(arith.CmpiOp(i, idx(1), "eq").result, [], then, lambda: [])
        (count,) = for_loop(
            idx(0),
            arith.AddiOp(i, idx(1)).result,
            [tile.FillOp(0.0, vec).result],
            lambda kk, c: [tile.BinaryOp(tile.BinaryFn.ADD, c, tile.FillOp(1.0, vec).result).result],
        )
        tile.StoreOp(count, z_arg, [i, idx(0)])

    g = tile.GlobalType(["B", 16], f32)
    return kernel("k", {"X": g, "Y": g, "Z": g}, body)


def test_per_block_if_and_loop_bounds() -> None:
    x = normal(12, 3, 16)
    out = interpret(masked_store_kernel(), None, {"X": x})
    assert np.isnan(out["Y"][[0, 2]]).all()  # never written: still the poison
    np.testing.assert_array_equal(out["Y"][1], x[1] + 1)
    np.testing.assert_array_equal(out["Z"], np.repeat([[1.0], [2.0], [3.0]], 16, 1))


def test_a_box_wholly_outside_the_tensor_is_an_error() -> None:
    """Block 1 loads row 2 of a 2-row X: a box wholly past the end, which the GPU would read as
    zeros and store (a leading dim is whole tiles of 1), so the interpreter reports it."""

    def body(x_arg, y_arg):
        tile.GridOp([tile.DimOp(x_arg, 0).result], ["i"])
        i1 = arith.AddiOp(tile.BlockIdOp(0).result, idx(1)).result
        x = tile.LoadOp(x_arg, [i1, idx(0)], tile.SharedVectorType(16, f32)).result
        tile.StoreOp(tile.ToRegOp(x).result, y_arg, [tile.BlockIdOp(0).result, idx(0)])

    g = tile.GlobalType(["B", 16], f32)
    with pytest.raises(TkError, match="load of X: index 2 along dim 0 lies wholly past its end"):
        interpret(kernel("k", {"X": g, "Y": g}, body), None, {"X": normal(13, 2, 16)})


def test_inputs_are_rounded_to_their_dtype() -> None:
    a = np.full((128, 64), 1 + 2**-10, np.float32)  # not a bf16 value: rounds to 1
    b = np.eye(64, 128, dtype=np.float32)
    out = interpret(gemm(128, 128, 64), None, {"A": a, "B": b})
    np.testing.assert_array_equal(out["C"].astype(np.float32), bf16_round(a) @ b)


@pytest.mark.parametrize(
    "shapes, message",
    [
        ({"A": (128, 64), "B": (128, 128)}, "K is 64 in A axis 1 but 128 in B axis 0"),
        ({"A": (100, 64), "B": (64, 128)}, r"M = 100 \(from A \(dim 0\)\) is not a multiple of 128: .* count them with ceildiv\(M, 128\)"),
        ({"A": (128, 64, 1), "B": (64, 128)}, "A has rank 2"),
        ({"A": (128, 64)}, "no array for B"),
        ({"A": (128, 64), "B": (64, 128), "Q": (1,)}, "has no argument Q"),
    ],
)
def test_launch_checks(shapes: dict[str, tuple[int, ...]], message: str) -> None:
    with pytest.raises(TkError, match=message):
        interpret(gemm(), None, {name: np.zeros(shape, np.float32) for name, shape in shapes.items()})


def test_params_bind_dims_too() -> None:
    with pytest.raises(TkError, match="M is 256 in the parameters but 128 in A axis 0"):
        interpret(gemm(), None, {"A": np.zeros((128, 64)), "B": np.zeros((64, 128))}, {"M": 256})


def test_unknown_kernel_and_unknown_op() -> None:
    with pytest.raises(TkError, match="no kernel 'nope' in the module \\(it has gemm\\)"):
        interpret(gemm(), "nope", {})
    with pytest.raises(TkError, match="the interpreter runs tile-dialect IR"):
        interpret(ModuleOp([]), None, {})

    def body(x_arg):
        tile.GridOp([test.TestOp(result_types=[IndexType()]).results[0]], ["i"])

    module = kernel("k", {"X": tile.GlobalType(["B", 16], f32)}, body)
    with pytest.raises(TkError, match="cannot execute 'test.op'"):
        interpret(module, None, {"X": np.zeros((1, 16))})


def test_speed_gemm_512() -> None:
    a, b = normal(14, 512, 512), normal(15, 512, 512)
    start = time.perf_counter()
    out = interpret(gemm(128, 256, 64), None, {"A": a, "B": b})
    assert time.perf_counter() - start < 10
    assert rel_error(out["C"], bf16_round(a).astype(np.float64) @ bf16_round(b)) < 1e-2


def test_speed_attention_b1_h4_n512_d64() -> None:
    q, k, v = (normal(seed, 1, 4, 512, 64) for seed in (16, 17, 18))
    start = time.perf_counter()
    out = interpret(attention(64, causal=True), None, {"Q": q, "K": k, "V": v})
    assert time.perf_counter() - start < 10
    assert rel_error(out["O"], attention_reference(q, k, v, True)[0]) < 1e-2


def test_two_blocks_writing_one_element_is_a_race() -> None:
    """grid (B, 2) whose j blocks both store the i-th tile: undefined on the GPU, an error here."""

    def body(x_arg, y_arg):
        tile.GridOp([tile.DimOp(x_arg, 0).result, idx(2)], ["i", "j"])
        i = tile.BlockIdOp(0).result
        x = tile.ToRegOp(tile.LoadOp(x_arg, [i, idx(0)], tile.SharedVectorType(16, f32)).result).result
        tile.StoreOp(x, y_arg, [i, idx(0)])

    g = tile.GlobalType(["B", 16], f32)
    with pytest.raises(TkError, match=r"blocks \(i=0, j=1\) and \(i=0, j=0\) both write Y\[0, 0\]: a race"):
        interpret(kernel("k", {"X": g, "Y": g}, body), None, {"X": normal(19, 2, 16)})


def test_reading_what_another_block_wrote_is_a_race() -> None:
    """Block i stores row i of Y, then loads row i + 1 (block i + 1's): no order between them.
    The grid leaves out the last row, so that every load reaches into Y."""

    def body(x_arg, y_arg, z_arg):
        tile.GridOp([arith.SubiOp(tile.DimOp(x_arg, 0).result, idx(1)).result], ["i"])
        i = tile.BlockIdOp(0).result
        x = tile.ToRegOp(tile.LoadOp(x_arg, [i, idx(0)], tile.SharedVectorType(16, f32)).result).result
        tile.StoreOp(x, y_arg, [i, idx(0)])
        after = tile.LoadOp(y_arg, [arith.AddiOp(i, idx(1)).result, idx(0)], tile.SharedVectorType(16, f32)).result
        tile.StoreOp(tile.ToRegOp(after).result, z_arg, [i, idx(0)])

    g = tile.GlobalType(["B", 16], f32)
    with pytest.raises(TkError, match=r"block \(i=0\) reads Y\[1, 0\], which block \(i=1\) wrote: a race"):
        interpret(kernel("k", {"X": g, "Y": g, "Z": g}, body), None, {"X": normal(21, 3, 16)})


def test_storing_what_another_block_read_is_a_race() -> None:
    """Block i loads row i + 1 of X, then stores row i: block i + 1's store of its row may land
    before block i's load on the GPU, so the interpreter's lockstep order proves nothing."""

    def body(x_arg):
        tile.GridOp([arith.SubiOp(tile.DimOp(x_arg, 0).result, idx(1)).result], ["i"])
        i = tile.BlockIdOp(0).result
        ahead = tile.LoadOp(x_arg, [arith.AddiOp(i, idx(1)).result, idx(0)], tile.SharedVectorType(16, f32)).result
        tile.StoreOp(tile.ToRegOp(ahead).result, x_arg, [i, idx(0)])

    g = tile.GlobalType(["B", 16], f32)
    with pytest.raises(TkError, match=r"block \(i=0\) reads X\[1, 0\], which block \(i=1\) stores: a race"):
        interpret(kernel("k", {"X": g}, body), None, {"X": normal(22, 3, 16)})


def test_one_block_may_rewrite_its_own_elements() -> None:
    """Storing the same tile on every iteration of a loop is no race."""

    def body(x_arg, y_arg):
        tile.GridOp([tile.DimOp(x_arg, 0).result], ["i"])
        i = tile.BlockIdOp(0).result
        x = tile.ToRegOp(tile.LoadOp(x_arg, [i, idx(0)], tile.SharedVectorType(16, f32)).result).result

        def step(kk):
            tile.StoreOp(x, y_arg, [i, idx(0)])
            return []

        for_loop(idx(0), idx(3), [], step)

    g = tile.GlobalType(["B", 16], f32)
    x = normal(20, 2, 16)
    np.testing.assert_array_equal(interpret(kernel("k", {"X": g, "Y": g}, body), None, {"X": x})["Y"], x)


def test_a_scalar_load_under_an_if_on_the_loop_counter() -> None:
    """The loop counter is the same in every block, the if's mask is per block: the load's
    coordinates broadcast to the blocks (this was an internal error)."""
    source = (
        "kernel k(F: gl<i32>[N], Y: gl<f32>[G, 64]) {\n"
        "    grid (G) as (g)\n"
        "    var y = zero<f32>[64]\n"
        "    for t in 0 .. N {\n"
        "        if t > g { y = y + f32(load F[t] : i32) }\n"
        "    }\n"
        "    store Y[g, 0] = y\n"
        "}\n"
    )
    table = np.array([1, 2, 4, 8], np.int32)
    y = interpret(parse_tk(source, "k.tk"), None, {"F": table, "Y": np.zeros((3, 64), np.float32)})["Y"]
    np.testing.assert_array_equal(y[:, 0], [14, 12, 8])


def test_an_i32_table_refuses_values_past_32_bits() -> None:
    source = (
        "kernel k(F: gl<i32>[N], Y: gl<f32>[64]) {\n"
        "    grid (1) as (g)\n"
        "    store Y[0] = zero<f32>[64] + f32(load F[1] : i32)\n"
        "}\n"
    )
    with pytest.raises(TkError, match=r"argument F is an i32 tensor: 4294967299 does not fit in 32 bits"):
        interpret(parse_tk(source, "k.tk"), None, {"F": np.array([0, 2**32 + 3], np.int64), "Y": np.zeros(64, np.float32)})
    y = interpret(parse_tk(source, "k.tk"), None, {"F": np.array([0, 3], np.int64), "Y": np.zeros(64, np.float32)})["Y"]
    assert y[0] == 3


def test_max_min_and_relu_of_f32_scalars_drop_a_nan_as_the_gpu_does() -> None:
    """Scalar max/min are maxnumf/minnumf (the GPU's max.f32 gives the other operand where one
    is NaN, as the tile ops do); they were maximumf/minimumf, which the interpreter ran with
    NaN propagating."""
    source = (
        "kernel k(S: gl<f32>[2], Y: gl<f32>[3, 64]) {\n"
        "    grid (1) as (g)\n"
        "    let s = load S[0] : f32\n"
        "    store Y[0, 0] = zero<f32>[64] + max(s, 2.0)\n"
        "    store Y[1, 0] = zero<f32>[64] + min(s, 3.0)\n"
        "    store Y[2, 0] = zero<f32>[64] + relu(s)\n"
        "}\n"
    )
    inputs = {"S": np.array([np.nan, 0.0], np.float32), "Y": np.zeros((3, 64), np.float32)}
    y = interpret(parse_tk(source, "k.tk"), None, inputs)["Y"]
    np.testing.assert_array_equal(y[:, 0], [2, 3, 0])


def test_division_by_a_run_time_scalar_or_a_vector_multiplies_by_its_reciprocal() -> None:
    """As the GPU computes it (rcp.rn then a multiply): a subnormal divisor's reciprocal
    overflows, so the quotient is inf where an IEEE division would give a finite value; a tile
    divided by a tile is an IEEE division."""
    source = (
        "kernel k(X: gl<f32>[64, 64], S: gl<f32>[1], R: gl<f32>[64], Y: gl<f32>[3, 64, 64]) {\n"
        "    grid (1) as (g)\n"
        "    let x = load X[0, 0] : rt<f32>[64, 64]\n"
        "    let r = load R[0] : rv<f32>[64]\n"
        "    store Y[0, 0, 0] = x / load S[0] : f32\n"
        "    store Y[1, 0, 0] = div_row(x, r)\n"
        "    store Y[2, 0, 0] = x / add_row(zero<f32>[64, 64], r)\n"
        "}\n"
    )
    tiny = np.float32(1e-44)  # subnormal: 1 / tiny overflows f32
    inputs = {"X": np.full((64, 64), 1e-38, np.float32), "S": np.array([tiny], np.float32),
              "R": np.full(64, tiny, np.float32), "Y": np.zeros((3, 64, 64), np.float32)}
    y = interpret(parse_tk(source, "k.tk"), None, inputs)["Y"]
    assert np.isinf(y[0]).all() and np.isinf(y[1]).all()
    np.testing.assert_allclose(y[2], np.float32(1e-38) / tiny, rtol=1e-6)


REQUIRING = (
    "kernel k<G = 2>(Q: gl<f32>[H, 64], K: gl<f32>[HKV, 64], Y: gl<f32>[H, 64]) {\n"
    "    grid (H) as (h)\n"
    "    store Y[h, 0] = load Q[h, 0] : rv<f32>[64]\n"
    "    require H == HKV * G and 64 / (H - 6) >= -64\n"
    "}\n"
)


def test_dims_that_break_a_requirement_are_refused_before_the_kernel_runs() -> None:
    """As the runtime refuses the launch: at the `require` (which may follow other statements),
    naming the dims it read and the argument each is bound from; a division by zero in the
    condition breaks it too."""
    def run(h: int, hkv: int) -> dict[str, np.ndarray]:
        arrays = {"Q": np.ones((h, 64), np.float32), "K": np.ones((hkv, 64), np.float32),
                  "Y": np.zeros((h, 64), np.float32)}
        return interpret(parse_tk(REQUIRING, "k.tk"), None, arrays)

    assert run(4, 2)["Y"].sum() == 4 * 64
    with pytest.raises(TkError) as refused:
        run(4, 4)
    assert (refused.value.line, refused.value.message) == (
        4, "kernel k requires H == HKV * G and 64 / (H - 6) >= -64, and the arguments give H = 4 (from Q (dim 0)), "
           "HKV = 4 (from K (dim 0))")
    with pytest.raises(TkError, match=r"and the arguments give H = 6 \(from Q \(dim 0\)\), HKV = 3"):
        run(6, 3)


def test_a_require_reads_only_dims_and_constants() -> None:
    """The verifier refuses a tile.require computed from anything else (the frontend says so at
    the condition): the runtime could not evaluate it from the shapes."""
    module = parse_tk(REQUIRING, "k.tk")
    require = next(op for op in module.walk() if isinstance(op, tile.RequireOp))
    block_id = next(op for op in module.walk() if isinstance(op, tile.BlockIdOp))
    cond = arith.CmpiOp(block_id.result, block_id.result, "eq")
    require.parent_block().insert_op_before(cond, require)
    require.operands[0] = cond.result
    with pytest.raises(Exception, match="computed from tile.dim values and constants"):
        require.verify()
