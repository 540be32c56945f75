"""`require` at the edges: long and shared conditions, 64-bit wrap-around, comments in the text,
and index math the lowering must not recurse over (found by an audit of the feature)."""

from __future__ import annotations

import numpy as np
import pytest

from tkc.abi import ArgSpec, KernelABI, PointerParam, evaluate, requirement_refusal
from tkc.diagnostics import TkError
from tkc.dialects import sm90, tile
from tkc.driver import compile_module
from tkc.frontend import parse_tk
from tkc.interpreter import interpret

STORE = "    grid (ceildiv(M, 64)) as (i)\n    store Y[i, 0] = load X[i, 0] : rv<f32>[64]\n"


def source(body: str) -> str:
    return f"kernel k(X: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {{\n{body}{STORE}}}\n"


def contract(module) -> tuple:  # noqa: ANN001 - an sm90 module
    (kernel,) = [op for op in module.walk() if isinstance(op, sm90.KernelOp)]
    return kernel.abi.data.requires


def test_index_math_a_long_chain_deep_compiles_and_only_its_requirement_reads_is_left_out() -> None:
    """The lowering leaves out what only a requirement reads; it once recursed over every index op's
    uses, which overflowed Python's stack at a chain of 400 lets (with or without a require)."""
    chain = "".join(f"    let a{k} = a{k - 1} + 1\n" for k in range(1, 400))
    short = "".join(f"    let a{k} = a{k - 1} + 1\n" for k in range(1, 250))
    compile_module(parse_tk(source("    let a0 = M\n" + short + "    require a249 > M\n"), "k.tk"), "sm90")
    stored = source("    let a0 = 0\n" + chain + "    require M > 0\n").replace("load X[i, 0]", "load X[i, 0 * a399]")
    compile_module(parse_tk(stored, "k.tk"), "sm90")


def test_a_condition_written_out_into_too_many_terms_is_an_error_at_it() -> None:
    doubled = "".join(f"    let a{k} = a{k - 1} + a{k - 1}\n" for k in range(1, 12))
    with pytest.raises(TkError, match=f"has 2049 terms written out .* at most {tile.REQUIRE_TERMS}"):
        parse_tk(source("    let a0 = M\n" + doubled + "    require a11 > 0\n"), "k.tk")


def test_runtime_and_interpreter_wrap_index_arithmetic_at_64_bits_alike() -> None:
    body = "    require M * 2147483647 * 2147483647 * 4 > 0\n"
    module = compile_module(parse_tk(source(body), "k.tk"), "sm90")
    ((condition, text),) = contract(module)
    assert evaluate(condition, {"M": 1}) == 0  # 2**64 - ... wraps negative, as int64 does
    abi = KernelABI("k", (ArgSpec("X", "f32", ("M", 64)),), (PointerParam("x", "X"),), (1, 1, 1), 128, 0,
                    requires=((condition, text),))
    assert requirement_refusal(abi, {"M": 1}, {"M": "X (dim 0)"}) is not None
    arrays = {"X": np.zeros((1, 64), np.float32), "Y": np.zeros((1, 64), np.float32)}
    with pytest.raises(TkError, match="requires M \\* 2147483647"):
        interpret(parse_tk(source(body), "k.tk"), None, arrays)


def test_comments_inside_a_condition_are_not_part_of_its_text() -> None:
    body = "    require M > 0 and // rows \"quoted\"\n        M < 4096 // and not too many\n"
    module = compile_module(parse_tk(source(body), "k.tk"), "sm90")
    assert [text for _, text in contract(module)] == ["M > 0 and M < 4096 (line 2)"]


def test_tkc_run_moves_the_sizes_it_chooses_to_meet_the_requirements() -> None:
    """`tkc run examples/attention.tk -D G=2` with no --size: H and HKV both default to 2, which
    `require H == HKV * G` rejects; the nearest sizes that meet it are taken. Sizes the user gave
    stay, and where nothing fits the defaults stay for the refusal to explain."""
    from pathlib import Path

    from tkc.interpreter import find_kernel
    from tkc.runner import default_sizes, meet_requirements

    source = (Path(__file__).parents[2] / "examples" / "attention.tk").read_text()
    kernel = find_kernel(parse_tk(source, "attention.tk", {"G": 2, "D": 64}), None)
    sizes = default_sizes(kernel)
    assert (sizes["H"], sizes["HKV"]) == (2, 2)
    moved = meet_requirements(kernel, sizes, given=())
    assert moved["H"] == 2 * moved["HKV"] and {k: v for k, v in moved.items() if k not in ("H", "HKV")} == {
        k: v for k, v in sizes.items() if k not in ("H", "HKV")}
    assert meet_requirements(kernel, sizes | {"H": 3}, given=("H",)) == sizes | {"H": 3}
    assert meet_requirements(kernel, sizes | {"H": 8}, given=("H",))["HKV"] == 4
