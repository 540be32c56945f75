"""store_add (tile.store reduce add): the interpreter's sums (f32, bf16 rounded per add), its race
rules, padding that is never added, store_add targets as inputs (interpreter, runner, torch
operators), the frontend's and the GPU backend's diagnostics, and the op's verifier and effects."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.traits import EffectInstance, MemoryEffectKind, get_effects
from xdsl.utils.exceptions import VerifyException

import tkc
from tkc.backends.ptx_printer import print_ptx
from tkc.diagnostics import TkError
from tkc.dialects import tile
from tkc.driver import compile_module, make_context
from tkc.frontend import parse_tk
from tkc.interpreter import interpret
from tkc.runner import make_inputs, write_only
from tkc.torch_ops import signature

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "gpu" / "kernels"


def build(source: str) -> tile.KernelOp:
    module = parse_tk(source, "t.tk")
    return next(op for op in module.walk() if isinstance(op, tile.KernelOp))


def run(source: str, **inputs: np.ndarray) -> dict[str, np.ndarray]:
    return interpret(parse_tk(source, "t.tk"), None, inputs)


def normal(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_split_k_adds_every_slice_to_what_c_held() -> None:
    a, b, c = normal(1, 256, 512), normal(2, 512, 256), normal(3, 256, 256)
    module = parse_tk((KERNELS / "store_add_splitk.tk").read_text(), "splitk.tk")
    out = interpret(module, None, {"A": a, "B": b, "C": c})["C"]
    bf = lambda x: x.astype("bfloat16").astype(np.float64)  # noqa: E731
    want = c + bf(a) @ bf(b)
    assert np.abs(out - want).max() < 1e-3 * np.abs(want).max()


ADD_TWICE = """
kernel twice(X: gl<{t}>[64, 64], O: gl<{t}>[64, 64]) {{
    grid (2) as (h)
    store_add O[0, 0] = load X[0, 0] : rt<{t}>[64, 64]
}}
"""


def test_bf16_sums_are_rounded_at_each_add() -> None:
    """1 + 2^-8 is a tie between 1 and the next bf16 (1 + 2^-7) and rounds to 1, twice: one
    rounding of the whole sum would give 1 + 2^-7."""
    out = run(ADD_TWICE.format(t="bf16"), X=np.full((64, 64), 2.0**-8, np.float32), O=np.ones((64, 64), np.float32))
    assert (out["O"].astype(np.float32) == 1.0).all()


def test_f32_sums_add_every_block() -> None:
    out = run(ADD_TWICE.format(t="f32"), X=np.full((64, 64), 0.25, np.float32), O=np.ones((64, 64), np.float32))
    assert (out["O"] == 1.5).all()


def test_a_store_add_target_is_an_input() -> None:
    with pytest.raises(TkError, match="no array for O, an input of twice"):
        run(ADD_TWICE.format(t="f32"), X=np.ones((64, 64), np.float32))
    kernel = build(ADD_TWICE.format(t="f32"))
    assert write_only(kernel) == set()
    assert not np.isnan(make_inputs(kernel, {}, seed=0)["O"]).any()


MIXED = """
kernel mixed(X: gl<f32>[64, 64], O: gl<f32>[64, 64]) {{
    grid (2) as (h)
    let x = load X[0, 0] : rt<f32>[64, 64]
    if h == 0 {{
        {first} O[0, 0] = x
    }} else {{
        {second} O[0, 0] = x
    }}
}}
"""


@pytest.mark.parametrize("first, second, message", [
    ("store_add", "store", r"t.tk:8:9: .*block \(h=0\) adds to and block \(h=1\) stores O\[0, 0\]: a race"),
    ("store", "store_add", r"t.tk:8:9: .*block \(h=0\) stores and block \(h=1\) adds to O\[0, 0\]: a race"),
])
def test_store_add_and_a_store_of_another_block_race(first: str, second: str, message: str) -> None:
    with pytest.raises(TkError, match=message):
        run(MIXED.format(first=first, second=second), X=np.ones((64, 64), np.float32), O=np.ones((64, 64), np.float32))


def test_loading_what_another_block_added_to_is_a_race() -> None:
    source = """
kernel reread(X: gl<f32>[64, 64], O: gl<f32>[64, 64], Y: gl<f32>[64, 64]) {
    grid (2) as (h)
    store_add O[0, 0] = load X[0, 0] : rt<f32>[64, 64]
    store Y[0, 0] = load O[0, 0] : rt<f32>[64, 64]
}
"""
    with pytest.raises(TkError, match=r"reads O\[0, 0\], which block \(h=\d\) added to: a race"):
        run(source, X=np.ones((64, 64), np.float32), O=np.ones((64, 64), np.float32))


def test_a_block_sees_its_own_adds() -> None:
    source = """
kernel own(X: gl<f32>[M, 64], O: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {
    grid (ceildiv(M, 64)) as (i)
    for k in 0 .. 3 {
        store_add O[i, 0] = load X[i, 0] : rt<f32>[64, 64]
    }
    store Y[i, 0] = load O[i, 0] : rt<f32>[64, 64]
}
"""
    x, o = normal(4, 128, 64), normal(5, 128, 64)
    out = run(source, X=x, O=o)
    assert np.allclose(out["O"], o + 3 * x, atol=1e-5) and np.array_equal(out["Y"], out["O"])


def test_padding_is_never_added() -> None:
    """Rows past the tensor's end do not exist; rows past an element range's end keep their values."""
    source = """
kernel ends(X: gl<f32>[M, 64], O: gl<f32>[M, 64], P: gl<f32>[M, 64]) {
    grid (ceildiv(M, 64)) as (i)
    let x = load X[i, 0] : rt<f32>[64, 64]
    store_add O[i, 0] = x
    store_add P[elem(i * 64, M - 30), 0] = x
}
"""
    x, o, p = normal(6, 100, 64), normal(7, 100, 64), normal(8, 100, 64)
    out = run(source, X=x, O=o, P=p)
    assert np.allclose(out["O"], o + x, atol=1e-6)
    assert np.allclose(out["P"][:70], p[:70] + x[:70], atol=1e-6) and np.array_equal(out["P"][70:], p[70:])


def test_a_store_add_target_is_a_mutated_input_of_the_torch_operator() -> None:
    sig = signature(tkc.compile(KERNELS / "store_add_splitk.tk"))
    assert [a.name for a in sig.inputs] == ["A", "B", "C"] and sig.mutated == ("C",) and sig.outputs == ()


@pytest.mark.parametrize("body, message, column", [
    ("store_add H[i, 0] = load H[i, 0] : rt<f16>[64, 64]", "store_add adds into tensors of bf16 or f32, and 'H' holds f16", 15),
    ("store_add B[i, 0] = zero<f32>[64, 64]", "'B' holds bf16 but the added value is rt<f32>[64, 64]; convert it with bf16(...)", 25),
])
def test_frontend_errors_are_located(body: str, message: str, column: int) -> None:
    source = f"kernel k(B: gl<bf16>[M, 64], H: gl<f16>[M, 64]) {{\n    grid (ceildiv(M, 64)) as (i)\n    {body}\n}}\n"
    with pytest.raises(TkError) as info:
        parse_tk(source, "t.tk")
    err = info.value
    assert (err.line, err.col) == (3, column) and message in str(err), err.render()
    assert err.render().splitlines()[2] == " " * (column - 1) + "^"


def test_the_gpu_backend_adds_f32_vectors_and_refuses_others_at_the_statement() -> None:
    source = ("kernel rows(X: gl<f32>[M, 64], V: gl<{t}>[M]) {{\n    grid (ceildiv(M, 64)) as (i)\n"
              "    store_add V[i] = {t}(row_sum(load X[i, 0] : rt<f32>[64, 64]))\n}}\n")
    assert run(source.format(t="f32"), X=np.ones((64, 64), np.float32), V=np.ones(64, np.float32))["V"].tolist() == [65.0] * 64
    ptx = compile_module(parse_tk(source.format(t="f32"), "t.tk"), "ptx", ctx=make_context())
    assert "red.global.add.f32" in print_ptx(ptx)
    with pytest.raises(TkError) as info:
        compile_module(parse_tk(source.format(t="bf16"), "t.tk"), "sm90", ctx=make_context())
    assert (info.value.line, info.value.col) == (3, 5)
    assert "the GPU backend adds f32 vectors only (red.global.add.f32), not bf16" in str(info.value)


def test_the_op_reads_and_writes_its_tensor_and_checks_the_dtype() -> None:
    kernel = build(ADD_TWICE.format(t="f32"))
    store = next(op for op in kernel.walk() if isinstance(op, tile.StoreOp))
    assert store.statement == "store_add"
    assert get_effects(store) == {EffectInstance(MemoryEffectKind.READ, store.tensor),
                                  EffectInstance(MemoryEffectKind.WRITE, store.tensor)}
    f16 = build(ADD_TWICE.format(t="f16").replace("store_add", "store"))
    plain = next(op for op in f16.walk() if isinstance(op, tile.StoreOp))
    plain.properties["reduce"] = tile.StoreReductionAttr(tile.StoreReduction.ADD)
    with pytest.raises(VerifyException, match="tile.store reduce add takes tensors of bf16 or f32, not f16"):
        plain.verify()


@pytest.mark.parametrize("statement", ["store_add B[i, 0] = bf16(x)", "store_add F[elem(i * 64, M - 30), 0] = x",
                                       "store_add B[elem(i * 64, M - 30), 0] = bf16(x)"])
def test_the_gpu_backend_adds_bf16_tiles_and_tiles_at_an_element_range_end(statement: str) -> None:
    """TMA reduce-adds bf16 as it does f32 (the tensor map's type), and the rows before an element
    range's end go as one-row boxes, as a store's do."""
    source = ("kernel k(X: gl<f32>[M, 64], B: gl<bf16>[M, 64], F: gl<f32>[M, 64]) {\n"
              "    grid (ceildiv(M, 64)) as (i)\n    let x = load X[i, 0] : rt<f32>[64, 64]\n"
              f"    {statement}\n}}\n")
    sm90 = str(compile_module(parse_tk(source, "t.tk"), "sm90", ctx=make_context()))
    assert "sm90.tma_store reduce add" in sm90
    assert ("box [64, 1]" in sm90 or "box [32, 1]" in sm90) == ("elem(" in statement)


@pytest.mark.parametrize("statement, message", [
    ("store_add F[i, elem(0, 60)] = x", "the GPU backend ends a stored tile's rows at an element range's end, not its columns"),
    ("store_add N[elem(i * 64, M - 30), 0] = n", "which starts on a 128-byte line of shared memory, and its rows are 64 bytes"),
])
def test_the_gpu_backend_refuses_adds_it_cannot_stop_at_an_end(statement: str, message: str) -> None:
    """TMA clips a box only at the tensor's end: a column end cannot stop it, and one-row boxes need
    rows of whole 128-byte lines (the interpreter runs both)."""
    source = ("kernel k(X: gl<f32>[M, 64], F: gl<f32>[M, 64], N: gl<f32>[M, 16]) {\n"
              "    grid (ceildiv(M, 64)) as (i)\n    let x = load X[i, 0] : rt<f32>[64, 64]\n"
              "    let n = load N[i, 0] : rt<f32>[64, 16]\n"
              f"    {statement}\n}}\n")
    with pytest.raises(TkError) as info:
        compile_module(parse_tk(source, "t.tk"), "sm90", ctx=make_context())
    assert (info.value.line, info.value.col) == (5, 5) and message in str(info.value)
