"""`.tk` functions (inlined at each call), pow by a compile-time integer and gelu: what the
frontend builds, what the interpreter computes, and the located diagnostics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_frontend import error_of, kernel, ops_of
from xdsl.dialects import arith

from tkc.dialects import tile
from tkc.frontend import parse_tk
from tkc.interpreter import interpret


def test_a_function_is_inlined_at_each_call_on_tiles_vectors_and_numbers() -> None:
    source = kernel(
        "    let x = load A[i, j] : rt<f32>[64, 64]\n"
        "    store A[i, j] = softcap(x, 30.0) + softcap(x, 2 * 5.0)\n"
        "    store V[i] = softcap(row_max(x), softcap(60.0, 30.0))",
        extra="fn softcap(s, cap) {\n    let scaled = s / cap\n    return cap * tanh(scaled)\n}\n",
    )
    module = parse_tk(source, "t.tk")
    tanhs = [op for op in ops_of(module, tile.UnaryOp) if op.fn.data == tile.UnaryFn.TANH]
    assert [t.source.type for t in tanhs] == [tile.RegisterTileType([64, 64], tile.Float32Type())] * 2 + [
        tile.RegisterVectorType(64, tile.Float32Type())
    ]
    # the cap of the last call folded: 30 tanh(2)
    constants = {op.value.value.data for op in ops_of(module, arith.ConstantOp) if isinstance(op.value, arith.FloatAttr)}
    assert any(math.isclose(c, 30 * math.tanh(2.0), rel_tol=1e-6) for c in constants)
    # ops made by the function's body carry the function's lines
    assert {t.location.line.data for t in tanhs} == {3}  # type: ignore[attr-defined]


def test_a_function_sees_only_its_parameters_and_the_builtin_constants() -> None:
    err = error_of(kernel("    store V[i] = f(1.0)", extra="fn f(x) { return x * BM }\n"))
    assert "unknown name 'BM'" in err.message and "(in function 'f', called at line 4:18)" in err.message
    assert (err.line, err.col) == (1, 22)
    source = kernel("    store V[i] = f(1.0) * one<f32>[64]", extra="fn f(x) { return x * log2e }\n")
    parse_tk(source)


FUNCTION_DIAGNOSTICS = [
    ("fn f(x) { return f(x) }\n", "    store V[i] = f(one<f32>[64])",
     "function 'f' calls itself (f -> f); functions are inlined at each call, so they cannot recurse", 1, 18),
    ("fn f(x) { return g(x) }\nfn g(x) { return f(x) }\n", "    store V[i] = f(one<f32>[64])",
     "function 'f' calls itself (f -> g -> f)", 2, 18),
    ("fn exp(x) { return x }\n", "", "'exp' is a builtin function and cannot be redefined", 1, 4),
    ("fn k(x) { return x }\n", "", "'k' names both a kernel (line 2) and a function", 1, 4),
    ("fn f(x) { return x }\nfn f(y) { return y }\n", "", "function 'f' is already defined (line 1)", 2, 4),
    ("fn f(x, x) { return x }\n", "", "parameter 'x' of function 'f' is given twice", 1, 9),
    ("fn f(x, y) { return x }\n", "    store V[i] = f(one<f32>[64])", "function 'f' takes 2 arguments (x, y), got 1", 4, 18),
    ("fn f(x) { store V[0] = x\n return x }\n", "    store V[i] = f(one<f32>[64])",
     "a function body holds let statements and one return, not a store statement", 1, 11),
    ("fn f(x) { return x % 2.0 }\n", "    store V[i] = f(one<f32>[64])", "'%' applies to integers, not tiles", 1, 20),
    ("fn f(x) { return x }\n", "    let f = 1", "'f' is a function (line 1) and cannot be redefined", 4, 9),
    ("fn zero(x) { return x }\n", "", "'zero' is a builtin name and cannot be redefined", 1, 4),
]


@pytest.mark.parametrize("functions, body, message, line, col", FUNCTION_DIAGNOSTICS, ids=[d[2][:40] for d in FUNCTION_DIAGNOSTICS])
def test_function_diagnostics(functions: str, body: str, message: str, line: int, col: int) -> None:
    err = error_of(kernel(body, extra=functions))
    assert message in err.message and (err.line, err.col) == (line, col), (err.message, err.line, err.col)


def test_an_error_in_a_nested_call_names_every_call() -> None:
    err = error_of(kernel("    store V[i] = outer(one<f32>[64])",
                          extra="fn inner(x) { return x % 2.0 }\nfn outer(y) { return inner(y) }\n"))
    assert err.message.endswith("(in function 'inner', called at line 2:22) (in function 'outer', called at line 5:18)")
    assert (err.line, err.col) == (1, 24)


def test_pow_multiplies_by_repeated_squaring() -> None:
    module = parse_tk(kernel("    let x = load A[i, j] : rt<f32>[64, 64]\n    store A[i, j] = pow(x, 13)"))
    binaries = [op.fn.data for op in ops_of(module, tile.BinaryOp)]
    # x^13 = x * x^4 * x^8: three squarings and two products
    assert binaries == [tile.BinaryFn.MUL] * 5
    module = parse_tk(kernel("    let x = load A[i, j] : rt<f32>[64, 64]\n    store A[i, j] = pow(x, -2) + pow(x, 0)"))
    assert [op.fn.data for op in ops_of(module, tile.BinaryOp)] == [tile.BinaryFn.MUL, tile.BinaryFn.DIV, tile.BinaryFn.ADD]
    assert [op.value.value.data for op in ops_of(module, tile.FillOp)] == [1.0]


@pytest.mark.parametrize("expression, value", [("pow(2, 10)", 1024), ("pow(2.0, -2)", 0.25), ("pow(-3, 3)", -27),
                                               ("pow(5, 0)", 1)])
def test_pow_of_numbers_folds(expression: str, value: float) -> None:
    module = parse_tk(kernel(f"    store A[i, j] = zero<f32>[64, 64] + {expression}"))
    assert value in {op.value.value.data for op in ops_of(module, arith.ConstantOp)}


@pytest.mark.parametrize("expression, message", [
    ("pow(2, 64)", "pow(2, 64) overflows 64 bits"),
    ("pow(0, -1)", "pow(0, -1) divides by zero"),
    ("pow(one<f32>[64, 64], 1.5)", "pow takes a compile-time integer exponent, got the number 1.5"),
    ("pow(one<f32>[64, 64], BM * f32(i))", "pow takes a compile-time integer exponent"),
    ("pow(i, -1)", "pow of an index takes an exponent >= 0, got -1"),
    ("pow(true, 2)", "pow takes a tile, vector or number, got the bool true"),
])
def test_pow_diagnostics(expression: str, message: str) -> None:
    err = error_of(kernel(f"    let p = {expression}"))
    assert message in err.message and err.line == 3


def test_the_interpreter_runs_inlined_functions_pow_and_exact_gelu() -> None:
    source = """fn cube_plus(x, c) { return pow(x, 3) + c }
kernel k(X: gl<f32>[M, 64], Y: gl<f32>[M, 64], Z: gl<f32>[M, 64]) {
    grid (M / 64) as (i)
    let x = load X[i, 0] : rt<f32>[64, 64]
    store Y[i, 0] = cube_plus(x, 1.0) - pow(x, -1)
    store Z[i, 0] = gelu(x)
}
"""
    x = np.random.default_rng(0).standard_normal((128, 64)).astype(np.float32) * 4
    out = interpret(parse_tk(source), "k", {"X": x, "Y": np.zeros_like(x), "Z": np.zeros_like(x)}, {"M": 128})
    np.testing.assert_array_equal(out["Y"], x * x * x + np.float32(1) - np.float32(1) / x)
    exact = np.vectorize(lambda v: 0.5 * v * math.erfc(-v / math.sqrt(2.0)))(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out["Z"], exact)


def test_the_erfc_fit_the_gpu_uses_is_accurate() -> None:
    """The fit of erfc (tile.GELU_ERFC_COEFFICIENTS) has a relative error below 1.2e-7 for z >= 0."""
    z = np.linspace(0, 9, 200_001)
    t = 1 / (1 + z / 2)
    poly = np.zeros_like(t)
    for c in reversed(tile.GELU_ERFC_COEFFICIENTS):
        poly = poly * t + c
    fit = t * np.exp(-z * z + poly)
    exact = np.vectorize(math.erfc)(z)
    assert (np.abs(fit - exact) / exact).max() < 1.2e-7
