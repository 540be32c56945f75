"""The .tk frontend: what parse_tk builds (ops, attributes, folding, control flow, locations)
and the diagnostics it raises (message, line and column)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tkc.dialects import tile
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FileLineColLoc, FloatAttr, IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Operation

from tkc.diagnostics import TkError
from tkc.frontend import parse_tk, read_source
from tkc.frontend.parser import MAX_DEPTH

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def kernel(body: str, params: str = "<BM = 64, BN = 64, CAUSAL = false, EPS = 1e-5>", extra: str = "") -> str:
    """A kernel around `body`: A, B are f32/bf16 [M, N] tensors, grid (i, j) over 64x64 tiles."""
    return (
        f"{extra}kernel k{params}(A: gl<f32>[M, N], B: gl<bf16>[M, N], V: gl<f32>[M]) {{\n"
        "    grid (M / BM, N / BN) as (i, j)\n"
        f"{body}\n"
        "}\n"
    )


def ops_of(module: Operation, kind: type[Operation]) -> list[Operation]:
    return [op for op in module.walk() if isinstance(op, kind)]


def error_of(source: str, **kwargs: object) -> TkError:
    with pytest.raises(TkError) as info:
        parse_tk(source, "t.tk", **kwargs)  # type: ignore[arg-type]
    return info.value


# ------------------------------------------------------------------------------ building


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.tk")), ids=lambda p: p.stem)
def test_every_example_builds_and_verifies(path: Path) -> None:
    module = parse_tk(read_source(path), str(path))
    module.verify()
    assert ops_of(module, tile.KernelOp)


def test_gemm_structure() -> None:
    module = parse_tk(read_source(EXAMPLES / "gemm.tk"), "gemm.tk")
    (k,) = ops_of(module, tile.KernelOp)
    assert k.sym_name.data == "gemm" and k.arg_names == ["A", "B", "C"]
    assert {n: a.value.data for n, a in k.params.data.items()} == {"BM": 128, "BN": 256, "BK": 64}
    (grid,) = ops_of(module, tile.GridOp)
    assert [n.data for n in grid.names.data] == ["i", "j"]
    (loop,) = ops_of(module, scf.ForOp)
    assert len(loop.iter_args) == 1 and loop.results[0].name_hint == "acc"
    (mma,) = ops_of(module, tile.MmaOp)
    assert mma.acc is not None and mma.result.type == tile.RegisterTileType([128, 256], tile.Float32Type())
    (store,) = ops_of(module, tile.StoreOp)
    assert isinstance(store.value.owner, tile.ConvertOp)


def test_every_op_has_a_source_location() -> None:
    module = parse_tk(read_source(EXAMPLES / "attention.tk"), "attention.tk", {"CAUSAL": True})
    for op in module.walk():
        if op is not module:
            assert isinstance(op.location, FileLineColLoc), op.name
            assert op.location.filename.data == "attention.tk"
    (mask,) = ops_of(module, tile.MaskOp)
    line = read_source(EXAMPLES / "attention.tk").splitlines()[mask.location.line.data - 1]
    assert line[mask.location.column.data - 1 :].startswith("causal_mask")


def test_param_dims_become_integers_and_symbolic_dims_become_tile_dim() -> None:
    module = parse_tk(read_source(EXAMPLES / "attention.tk"), "a.tk", {"D": 64})
    (k,) = ops_of(module, tile.KernelOp)
    assert k.body.block.args[0].type.get_dims() == ("B", "H", "N", 64)
    assert sorted(op.result.name_hint for op in ops_of(module, tile.DimOp)) == ["B", "H", "HKV", "N"]  # HKV: the require


def test_params_overrides_and_attribute_kinds() -> None:
    module = parse_tk(kernel("    store A[i, j] = zero<f32>[BM, BN]"), "t.tk", {"BM": 128, "CAUSAL": 1, "EPS": 1})
    (k,) = ops_of(module, tile.KernelOp)
    params = k.params.data
    assert params["BM"] == IntegerAttr(128, 64)
    assert bool(params["CAUSAL"].value.data) and params["CAUSAL"].type.width.data == 1
    assert isinstance(params["EPS"], FloatAttr) and params["EPS"].value.data == 1.0


def test_compile_time_expressions_fold_to_one_constant() -> None:
    module = parse_tk(kernel("    store A[i, j] = zero<f32>[BM, BN] * (log2e / sqrt(BM) + 2 * BN % 7)"), "t.tk")
    (scale,) = [op for op in ops_of(module, arith.ConstantOp) if isinstance(op.value, FloatAttr)]
    assert scale.value.value.data == pytest.approx(1.4426950408889634 / 8 + 2 * 64 % 7, rel=1e-6)


def test_compile_time_if_builds_only_the_taken_branch() -> None:
    body = """
    var t = zero<f32>[BM, BN]
    if CAUSAL { t = causal_mask(t) } else { t = t + 1.0 }
    store A[i, j] = t"""
    folded = parse_tk(kernel(body), "t.tk")
    assert not ops_of(folded, scf.IfOp) and not ops_of(folded, tile.MaskOp) and ops_of(folded, tile.BinaryOp)
    causal = parse_tk(kernel(body), "t.tk", {"CAUSAL": True})
    assert ops_of(causal, tile.MaskOp) and not ops_of(causal, tile.BinaryOp)


def test_untaken_branches_are_still_checked() -> None:
    err = error_of(kernel("    if CAUSAL { let x = nope }"))
    assert "unknown name 'nope'" in err.message and err.line == 3


def test_discarded_code_leaves_no_uses_behind() -> None:
    body = """
    let t = zero<f32>[BM, BN]
    let u = CAUSAL ? causal_mask(t, i * BM, j * BN) : t
    if CAUSAL and i == j { store A[i, j] = t * 2.0 }
    store A[i, j] = u"""
    module = parse_tk(kernel(body), "t.tk")
    for op in module.walk():
        for result in op.results:
            for use in result.uses:
                assert use.operation.get_toplevel_object() is module


def test_runtime_if_carries_assigned_vars_as_results() -> None:
    body = """
    var t = zero<f32>[BM, BN]
    var n = 0
    if i == j { t = t * 2.0; n = 3 } else { n += 1 }
    store A[i, j] = t"""
    module = parse_tk(kernel(body), "t.tk")
    (if_op,) = ops_of(module, scf.IfOp)
    assert [r.name_hint for r in if_op.results] == ["t", "n"]
    assert isinstance(if_op.cond.owner, arith.CmpiOp)


def test_loop_carries_only_assigned_outer_vars() -> None:
    body = """
    var t = zero<f32>[BM, BN]
    var unused = one<f32>[BM]
    @stages(3) for k in 1 .. N / BN - 1 {
        let x = load A[i, k] : rt<f32>[BM, BN]
        t = max(t, x)
    }
    store A[i, j] = t"""
    module = parse_tk(kernel(body), "t.tk")
    (loop,) = ops_of(module, scf.ForOp)
    assert len(loop.iter_args) == 1 and loop.attributes["stages"] == IntegerAttr(3, 64)
    # -D @stages=2 sets every ring's depth: the kernel's pin replaces the loop's
    module = parse_tk(kernel(body), "t.tk", {"@stages": 2})
    (loop,) = ops_of(module, scf.ForOp)
    assert "stages" not in loop.attributes
    assert next(op for op in module.walk() if hasattr(op, "annotations")).annotations.data["stages"] is not None


def test_select_on_index_uses_arith_select_and_on_tiles_scf_if() -> None:
    body = "    let n = i > 0 ? i - 1 : 0\n    store A[n, j] = i == 0 ? zero<f32>[BM, BN] : one<f32>[BM, BN]"
    module = parse_tk(kernel(body), "t.tk")
    assert len(ops_of(module, arith.SelectOp)) == 1 and len(ops_of(module, scf.IfOp)) == 1


def test_annotations_become_attributes() -> None:
    source = kernel(
        "    @swizzle(64) let b = load B[i, j] : st<bf16>[BM, BN]\n    store B[i, j] = b",
        extra="@consumers(2) @registers(40, 232) @persistent\n",
    )
    module = parse_tk(source, "t.tk")
    (k,) = ops_of(module, tile.KernelOp)
    annotations = k.annotations.data
    assert annotations["consumers"] == IntegerAttr(2, 64) and annotations["persistent"] == UnitAttr()
    assert [a.value.data for a in annotations["registers"].data] == [40, 232]
    (load,) = ops_of(module, tile.LoadOp)
    assert load.attributes["swizzle"] == IntegerAttr(64, 64)


def test_mma_moves_register_operands_to_shared_where_wgmma_needs_them() -> None:
    body = "    let a = load B[i, j] : rt<bf16>[BM, BN]\n    store A[i, j] = mma_AtB(a, a) + mma_AB(a, a)"
    module = parse_tk(kernel(body), "t.tk")
    assert len(ops_of(module, tile.ToSharedOp)) == 3  # b twice, a once (transposed)


def test_several_kernels_and_kernel_selection() -> None:
    source = read_source(EXAMPLES / "gemm.tk") + read_source(EXAMPLES / "gemm_abt.tk")
    assert len(ops_of(parse_tk(source), tile.KernelOp)) == 2
    (only,) = ops_of(parse_tk(source, kernel="gemm_abt", params={"BK": 32}), tile.KernelOp)
    assert only.sym_name.data == "gemm_abt"
    assert "no kernel named 'nope'" in error_of(source, kernel="nope").message


def test_parse_tk_returns_a_module() -> None:
    assert isinstance(parse_tk(read_source(EXAMPLES / "softmax.tk")), ModuleOp)


# ------------------------------------------------------------------------------ diagnostics

DIAGNOSTICS = [
    # (body, message fragment, line, column)
    # what is missing at a line's end is shown there, not under the next line's first token
    ("    let x = ", "expected an expression, found '}' on line 4", 3, 12),
    ("    let e = load X[0, 0]\n    let y = 1", "a load names what it loads", 3, 25),
    ("    let x = 1 $", "unexpected character '$'", 3, 15),
    ("    let x = y", "unknown name 'y'", 3, 13),
    ("    let x = ma(1, 2)", "did you mean 'max'", 3, 13),
    ("    letz = 3", "unknown name 'letz'; did you mean 'let z'?", 3, 5),
    ("    let x = 1\n    x = 2", "cannot assign to 'x': it is a let", 4, 5),
    ("    BM = 2", "cannot assign to 'BM': it is a compile-time parameter", 3, 5),
    ("    let i = 2", "'i' is already defined (line 2)", 3, 9),
    ("    let ln2 = 2", "builtin constant", 3, 9),
    ("    var t = zero<f32>[BM, BN]\n    t = zero<f32>[BM]", "var 't' has type rt<f32>[64, 64], got rv<f32>[64]", 4, 9),
    ("    let t = zero<f32>[BM, 40]", "positive multiples of 16, got 40", 3, 27),
    ("    let t = zero<f32>[BM, 4.0]", "a tile dimension must be an integer", 3, 27),
    ("    let t = load B[i, j] : st<f32>[BM, BN]", "load cannot convert: 'B' holds bf16", 3, 31),
    ("    let t = load A[i] : st<f32>[BM, BN]", "'A' has rank 2, so it takes 2 tile coordinates, got 1", 3, 20),
    ("    let t = load A[i, j] : st<f32>[BM]", "st takes 2 dimensions, got 1", 3, 36),
    (
        "    store B[i, j] = zero<f32>[BM, BN]",
        "'B' holds bf16 but the stored value is rt<f32>[64, 64]; convert it with bf16",
        3,
        21,
    ),
    ("    store A[i, j] = 1.0", "store takes a tile or vector, got the number 1.0", 3, 21),
    (
        "    let a = load B[i, j] : st<bf16>[BM, 32]\n    let c = mma_AB(a, a)",
        "mma_AB inner dimensions differ: a is st<bf16>[64, 32] (K = 32), b is st<bf16>[64, 32] (K = 64)",
        4,
        23,
    ),
    (
        "    let a = load A[i, j] : st<f32>[BM, BN]\n    let c = mma_AB(a, a)",
        "operands must share one of bf16, f16, fp8e4m3",
        4,
        20,
    ),
    (
        "    let a = load B[i, j] : st<bf16>[BM, BN]\n    let c = mma_AB(a, a, zero<f32>[BM])",
        "the accumulator of mma_AB must be rt<f32>[64, 64], got rv<f32>[64]",
        4,
        26,
    ),
    (
        "    let t = sub_row(zero<f32>[BM, BN], zero<f32>[32])",
        "sub_row over rt<f32>[64, 64] needs a vector of length 64 (one per row), got rv<f32>[32]",
        3,
        40,
    ),
    ("    let t = add_col(zero<f32>[BM, BN], zero<bf16>[BN])", "add_col needs one dtype", 3, 40),
    ("    let t = zero<f32>[BM, BN] + zero<f32>[BM]", "broadcast a vector over a tile with add_row", 3, 31),
    ("    let t = zero<f32>[BM, BN] + zero<bf16>[BM, BN]", "'+' needs operands of one shape and dtype", 3, 31),
    ("    let t = row_max(zero<f32>[BM])", "row_max takes a tile, got rv<f32>[64]", 3, 21),
    ("    let t = exp(1, 2)", "exp takes 1 argument, got 2", 3, 13),
    ("    let t = log(0)", "log(0) is undefined", 3, 17),
    ("    let t = BM / (BN - 64)", "division by zero", 3, 16),
    ("    let t = i + 1.5", "'+' cannot mix a runtime index and the number 1.5", 3, 15),
    ("    let t = i == true", "cannot compare a runtime index with the bool true", 3, 15),
    ("    if i { }", "expected a bool, got a runtime index", 3, 8),
    ("    for k in 0 .. 1.5 { }", "expected a loop bound (an integer), got the number 1.5", 3, 19),
    ("    grid (M) as (x)", "the kernel already has a grid (line 2)", 3, 5),
    ("    for k in 0 .. 2 { grid (M) as (x) }", "grid must be a statement of the kernel body", 3, 23),
    ("    @stages(2) let x = 1", "@stages applies to a for loop or a kernel, not to a let of a load", 3, 6),
    ("    @stages(0) for k in 0 .. 2 { }", "@stages takes 1 to 16 pipeline stages, got 0", 3, 13),
    (
        "    @swizzle(48) let x = load A[i, j] : st<f32>[BM, BN]",
        "@swizzle takes 0, 32, 64 or 128 (bytes), got 48",
        3,
        14,
    ),
    ("    @swizzle(64) let x = zero<f32>[BM, BN]", "@swizzle applies to a let whose value is a load", 3, 22),
    ("    @unroll for k in 0 .. 2 { }", "unknown annotation @unroll", 3, 6),
    ("    let x = 99999999999999999999", "does not fit in 64 bits", 3, 13),
    ("    for k in 2147483648 .. 3 { }", "the index 2147483648 does not fit in 32 bits", 3, 14),
    ("    let x = exp(1000.0)", "exp(1000.0) overflows", 3, 17),
    ("    let x = zero<f32>[BM] * 1e39", "the number 1e+39 does not fit in f32", 3, 27),
    ("    let x = zero<f32>[BM] * 1e-50", "the number 1e-50 does not fit in f32 (it would round to 0)", 3, 27),
    ("    let x = zero<f32>[BM] * (1e300 * 1e300)", "compile-time * of 1e+300 and 1e+300 is out of range", 3, 36),
    ("    let x = zero<f32>[BM] * (inf - inf)", "compile-time - of inf and inf is not a number", 3, 34),
    ("    let x = 1.5 % 0.0", "division by zero in a compile-time expression", 3, 17),
    ("    let x = zero<f32>[BM, BN] / 0.0", "division by zero: the divisor is the constant 0.0", 3, 31),
    ("    var x = f32(i)\n    x /= -0.0", "division by zero: the divisor is the constant -0.0", 4, 7),
    ("    let zero = 2", "'zero' is a builtin fill and cannot be redefined", 3, 9),
    ("    for bf16 in 0 .. 2 { }", "'bf16' is a dtype and cannot be redefined", 3, 9),
    ("    let in = 2", "expected a name, found keyword 'in'", 3, 9),
    ("    for k in0 .. 2 { }", "expected 'in', found name 'in0'; did you mean 'in 0'?", 3, 11),
    ("    let x = causal_mask(zero<f32>[BM, BN], -1e39)", "the number -1e+39 does not fit in f32", 3, 44),
    (
        "    let v = zero<f32>[BM]\n    let w = where(row_index(v) == i, 1.0, v)",
        "'==' cannot combine rv<f32>[64] with a runtime index; convert an index to a scalar with f32(...)",
        4,
        32,
    ),
    (
        "    let x = causal_mask(zero<f32>[BM, BN], i)",
        "the fill of causal_mask must be a compile-time number, got a runtime index",
        3,
        44,
    ),
]


@pytest.mark.parametrize("body, message, line, col", DIAGNOSTICS, ids=[d[1][:40] for d in DIAGNOSTICS])
def test_diagnostics(body: str, message: str, line: int, col: int) -> None:
    err = error_of(kernel(body))
    assert message in err.message
    assert (err.filename, err.line, err.col) == ("t.tk", line, col), err.render()
    rendered = err.render().splitlines()
    assert rendered[0] == f"t.tk:{line}:{col}: error: {err.message}"
    assert rendered[2] == " " * (col - 1) + "^"


KERNEL_DIAGNOSTICS = [
    ("@registers(40) kernel k() { grid (1) as (i) }", "@registers takes 2 arguments, got 1", 1, 2),
    ("@registers(40, 230) kernel k() { grid (1) as (i) }", "multiples of 8 in 24..256, got 230", 1, 16),
    ("@persistent(2) kernel k() { grid (1) as (i) }", "@persistent takes 0 (one CTA per tile) or 1, got 2", 1, 13),
    ("@persistent @persistent kernel k() { grid (1) as (i) }", "@persistent is given twice", 1, 14),
    ("kernel k() { }", "kernel 'k' has no grid statement", 1, 8),
    ("kernel k() { grid (1) as (i) }\nkernel k() { grid (1) as (i) }", "kernel 'k' is already defined (line 1)", 2, 8),
    ("kernel k(A: gl<f32>[M], A: gl<f32>[M]) { grid (1) as (i) }", "argument 'A' is already defined", 1, 25),
    ("kernel k(A: gl<f32>[A]) { grid (1) as (i) }", "'A' names both an argument and a dimension", 1, 21),
    ("kernel k(A: gl<f32>[E], B: gl<i32>[E + 1]) { grid (1) as (i) }",
     "a dimension is a new name (bound at launch) or a compile-time expression, and 'E' is bound at launch", 1, 36),
    ("kernel k<P = x>() { grid (1) as (i) }", "unknown name 'x'", 1, 14),
    ("kernel k<P = 1>(A: gl<f32>[P - 1]) { grid (1) as (i) }", "a tensor dimension must be positive, got 0", 1, 28),
    ("kernel k(A: gl<f32>[1, 1, 1, 1, 1, 1]) { grid (1) as (i) }", "rank 1 to 5", 1, 10),
    ("kernel k() { grid (1, 2) as (i) }", "grid has 2 extents but 1 names", 1, 14),
    ("kernel k() { grid (1, 2, 3, 4) as (a, b, c, d) }", "grid takes 1 to 3 axes, got 4", 1, 14),
    ("", "no kernel in the file", 1, 1),
    ("kernel k() {\n  let x = 1 < 2 > 3\n}", "expected an operator, a statement or '}', found '>'", 2, 17),
]


@pytest.mark.parametrize("source, message, line, col", KERNEL_DIAGNOSTICS, ids=[d[1][:40] for d in KERNEL_DIAGNOSTICS])
def test_kernel_diagnostics(source: str, message: str, line: int, col: int) -> None:
    err = error_of(source)
    assert message in err.message
    assert (err.line, err.col) == (line, col), err.render()


@pytest.mark.parametrize(
    "params, message",
    [
        ({"NOPE": 1}, "unknown parameter 'NOPE'"),
        ({"BM": True}, "parameter 'BM' is an integer, but the override BM=true is a bool"),
        ({"BM": 1.5}, "parameter 'BM' is an integer"),
        ({"CAUSAL": 2}, "parameter 'CAUSAL' is a bool"),
        ({"EPS": "x"}, "parameter 'EPS' is a float"),
        ({"EPS": float("nan")}, "the override EPS=nan of parameter 'EPS' is not a number"),
        ({"BMM": 1}, "unknown parameter 'BMM' (kernel k has BM, BN, CAUSAL, EPS); did you mean 'BM'?"),
    ],
)
def test_bad_param_overrides(params: dict[str, object], message: str) -> None:
    assert message in error_of(kernel("    store A[i, j] = zero<f32>[BM, BN]"), params=params).message


def test_deep_nesting_is_a_diagnostic_not_a_recursion_error() -> None:
    err = error_of(kernel("    let x = " + "-" * 5000 + "1"))
    assert f"more than {MAX_DEPTH} levels" in err.message and err.line == 3
    err = error_of(kernel("    if true {" * 400 + "}" * 400))
    assert "nests too deeply" in err.message
    parse_tk(kernel("    let x = " + "(" * 2000 + "1" + ")" * 2000))  # parentheses alone do not nest the tree
    err = error_of(kernel("    let x = " + " + ".join(["1.0"] * 120)))
    assert "operators in a row; split it with `let`s" in err.message  # a flat sum is as deep as it is long


def test_invalid_utf8_points_at_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "bad.tk"
    path.write_bytes(b"kernel k() {\n  let x\xc3\xa9 = \xff\n}\n")
    with pytest.raises(TkError) as info:
        read_source(path)
    err = info.value
    assert (err.line, err.col) == (2, 12) and "invalid UTF-8 byte 0xff" in err.message
    assert err.render().splitlines()[2] == " " * 11 + "^"


def test_vars_changed_only_in_folded_code_are_not_carried() -> None:
    body = """
    var s = zero<f32>[BM, BN]
    var t = one<f32>[BM, BN]
    for k in 0 .. 4 {
        if CAUSAL { s = s * 2.0 }
        if k == 2 { t = t + 1.0 } else { s = s }
    }
    store A[i, j] = s + t"""
    module = parse_tk(kernel(body), "t.tk")
    (loop,) = ops_of(module, scf.ForOp)
    (if_op,) = ops_of(module, scf.IfOp)
    assert [r.name_hint for r in loop.results] == ["t"] and [r.name_hint for r in if_op.results] == ["t"]


def test_a_verifier_error_the_builder_missed_is_located_at_the_op(monkeypatch: pytest.MonkeyPatch) -> None:
    from tkc.frontend import builder

    def unchecked(self, tensor, token, coord_list, tile_type):  # type: ignore[no-untyped-def]
        return [self.index(0, coord_list)], [], {}  # one coordinate, whatever the tensor's rank

    monkeypatch.setattr(builder._Builder, "coords", unchecked)
    err = error_of(kernel("    let x = load A[i, j] : st<f32>[BM, BN]"))
    assert err.message.startswith("invalid tile.load: tile.load of a rank-2 tensor needs 2 tile coordinates")
    assert (err.line, err.col) == (3, 13)


def test_deep_but_legal_nesting_builds() -> None:
    n = 45
    body = "    var v = zero<f32>[16, 16]\n" + "".join(
        f"if i == {k} {{ for q{k} in 0 .. 2 {{ v += 1.0\n" for k in range(n)
    )
    parse_tk(kernel(body + "}}" * n + "\n    store A[i, j] = v", params="<BM = 16, BN = 16>")).verify()


def test_dims_used_only_in_discarded_code_leave_nothing() -> None:
    source = """kernel k<C = false>(A: gl<f32>[M, K]) {
    grid (M / 16) as (i)
    store A[i, C ? K / 16 - 1 : 0] = zero<f32>[16, 16]
}"""
    assert [op.result.name_hint for op in ops_of(parse_tk(source), tile.DimOp)] == ["M"]
    assert sorted(op.result.name_hint for op in ops_of(parse_tk(source, params={"C": True}), tile.DimOp)) == ["K", "M"]


def test_every_expression_form_of_the_grammar_has_a_builder() -> None:
    from tkc.frontend.builder import _Builder
    from tkc.frontend.parser import _parser

    aliases = {rule.alias for rule in _parser().rules if rule.alias}  # every `-> name` is an expression
    assert aliases and all(hasattr(_Builder, f"x_{alias}") for alias in aliases), aliases


def test_f32_of_an_index_converts_it_as_signed() -> None:
    """`f32(d - R)` is negative for d < R: an unsigned conversion (cvt.f32.u64 on the GPU) made it
    about 1.8e19, and a relative-position bias compared against it never matched (the interpreter
    converted it as signed, so only the GPU was wrong)."""
    source = """kernel k<R = 3>(T: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {
        grid (ceildiv(M, 64)) as (i)
        var t = load T[i, 0] : rt<f32>[64, 64]
        for d in 0 .. 2 * R + 1 {
            t = t + f32(d - R)
        }
        store Y[i, 0] = t
    }"""
    module = parse_tk(source)
    assert ops_of(module, arith.SIToFPOp) and not ops_of(module, arith.UIToFPOp)


def test_lone_carriage_returns_end_lines() -> None:
    """Old Mac line ends: a `//` comment ends at a lone CR (it used to swallow the rest of the
    file) and an error names the line an editor shows, with its caret."""
    body = "    let x = 1.0 // one\r    let y = z\r"
    err = error_of(kernel(body).replace("\n", "\r"))
    assert "unknown name 'z'" in err.message and (err.line, err.col) == (4, 13)
    assert err.render().splitlines()[1] == "    let y = z"
    parse_tk(kernel("    let x = 1.0 // one\r    store A[i, j] = zero<f32>[BM, BN]").replace("\n", "\r"))


def test_a_conditional_parameter_default_asks_for_parentheses() -> None:
    err = error_of(kernel("    store A[i, j] = zero<f32>[BM, BN]", params="<BM = true ? 128 : 64, BN = 64>"))
    assert err.message.endswith("write a conditional default in parentheses: `BM = (c ? 128 : 64)`")
    parse_tk(kernel("    store A[i, j] = zero<f32>[BM, BN]", params="<BM = (true ? 64 : 128), BN = 64>"))
