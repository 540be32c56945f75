"""The ptx dialect: builder, verifiers and the MLIR round trip."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.utils.exceptions import VerifyException

from tkc.backends.ptx_printer import parse_file, print_ptx
from tkc.dialects import ptx
from tkc.dialects.ptx_builder import PtxBuilder
from tkc.passes.ptx_flatten_control_flow import flatten_control_flow


def small_kernel() -> PtxBuilder:
    b = PtxBuilder.kernel("k", [("A", "tensormap"), ("out", "u64"), ("n", "u32")], maxntid=384, minnctapersm=1)
    tid = b.sreg("tid.x")
    tmap = b.tmap_addr("A")
    mbar = b.add("u32", b.smem_base(), 64)
    with b.if_(b.setp("eq", "u32", tid, 0)):
        b.mbar_init(mbar, 1)
        b.mbar_arrive_expect_tx(mbar, 128)
        b.tma_load(b.smem_base(), tmap, [tid, tid], mbar)
    b.mbar_wait(mbar, 0)
    acc = b.regs("f32", 8)
    desc = b.cvt("u64", "u32", tid)
    b.wgmma_fence()
    b.wgmma(acc, desc, desc, scale_d=0)
    b.wgmma_commit()
    b.wgmma_wait(0)
    f = b.mov("f32", float("-inf"))
    b.assign(f, b.max("f32", f, acc[0]))
    b.st("global", "f32", b.global_ptr("out"), [acc[0], f], offset=8)
    b.ret()
    return b


def test_builder_returns_typed_registers():
    b = PtxBuilder.kernel("k")
    x = b.mov("u32", 1)
    assert x.type == ptx.RegType("b32")
    assert b.mul_wide("u32", x, x).type == ptx.RegType("b64")
    assert b.setp("lt", "u32", x, 3).type == ptx.RegType("pred")
    assert b.cvt("bf16", "f32", b.mov("f32", 1.0), mods="rn").type == ptx.RegType("b16")
    assert b.cvt_pack("bf16x2", b.mov("f32", 1.0), b.mov("f32", 2.0)).type == ptx.RegType("b32")
    assert len(b.ld("shared", "b32", x, vec=4)) == 4
    b.module.verify()


def test_float_immediates_are_exact_bits():
    b = PtxBuilder.kernel("k")
    b.mov("f32", float("-inf"))
    b.add("f32", b.mov("f32", 1.0), 0.5)
    text = print_ptx(b.module)
    assert "mov.f32 %f0, 0fFF800000;" in text
    assert "add.f32 %f2, %f1, 0f3F000000;" in text


def test_fresh_labels_are_unique():
    b = PtxBuilder.kernel("k")
    names = {b.fresh_label("L") for _ in range(5)} | {b.fresh_label("M")}
    assert len(names) == 6


def test_round_trip_is_exact():
    module = small_kernel().module
    module.verify()
    text = str(module)
    parsed = parse_file(text)
    parsed.verify()
    assert str(parsed.body.block.first_op) == text
    flatten_control_flow(parsed)
    flatten_control_flow(module)
    assert print_ptx(parsed) == print_ptx(module)


def test_generic_form_round_trips():
    from io import StringIO

    from xdsl.printer import Printer

    module = small_kernel().module
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    parsed = parse_file(out.getvalue())
    parsed.verify()
    flatten_control_flow(parsed)
    flatten_control_flow(module)
    assert print_ptx(parsed) == print_ptx(module)


def expect_invalid(build, match: str):
    b = PtxBuilder.kernel("k")
    build(b)
    with pytest.raises(VerifyException, match=match):
        b.module.verify()


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda b: b.wgmma(b.regs("f32", 7), b.mov("u64", 0), b.mov("u64", 0)), "multiple of 8"),
        (lambda b: b.wgmma(b.regs("f32", 8), b.mov("u64", 0), b.mov("u32", 0)), "B descriptor must be b64"),
        (lambda b: b.wgmma(b.regs("b32", 8), b.mov("u64", 0), b.mov("u64", 0)), "accumulators must be f32"),
        (lambda b: b.wgmma(b.regs("f32", 8), b.mov("u64", 0), b.mov("u64", 0), dtype="e4m3", trans_b=1),
         "K-major"),
        (lambda b: b.setmaxnreg("inc", 244), "multiple of 8 in 24..256"),
        (lambda b: b.setmaxnreg("dec", 16), "multiple of 8 in 24..256"),
        (lambda b: b.bar_sync(16), "barrier id"),
        (lambda b: b.bar_arrive(1, 100), "multiple of 32"),
        (lambda b: b.bra("NOWHERE"), "undefined label"),
        (lambda b: (b.label("X"), b.label("X")), "defined twice"),
        (lambda b: b.add("b64", b.mov("u64", 1), 2), "does not take .b64"),
        (lambda b: b.add("u32", b.mov("u64", 1), 2), "32-bit register"),
        (lambda b: b.mov("u32", b.mov("f32", 1.0)), "f32 register"),
        (lambda b: b.mul("u32", b.mov("u32", 1), 2, mods="rn"), "lo, hi or wide"),
        (lambda b: b._arith(ptx.DivOp, "f32", (b.mov("f32", 1.0), 2.0)), "needs mods"),
        (lambda b: b.sub("u32", b.mov("u32", 1), 2, mods="lo"), "sub.u32 does not take the modifiers 'lo'; it takes none"),
        (lambda b: b._arith(ptx.NegOp, "f32", (b.mov("f32", 1.0),), mods="approx"), "it takes none or ftz"),
        (lambda b: b.cvt("f32", "u32", b.mov("u32", 1), mods="approx"), "cvt does not take the modifiers 'approx'"),
        (lambda b: b.ld("shared", "f32", b.mov("u32", 0), mods="nc"), "ld.shared does not take the modifiers 'nc'"),
        (lambda b: b.ld("shared", "f32", b.mov("u64", 0)), "b32 for shared"),
        (lambda b: b.ld("global", "f32", b.mov("u64", 0), vec=3), "vector width"),
        (lambda b: b.sreg("tid.x") and b._val(ptx.SregOp, (), "b32", {"reg": StringAttr("bogus")}), "special register"),
        (lambda b: b.ld_param("u32", "missing"), "no kernel parameter"),
        (lambda b: b.fence("everything"), "unknown fence"),
        (lambda b: b.mbar_init(b.mov("u64", 0), 1), "b32 shared address"),
        (lambda b: b.tma_load(b.mov("u32", 0), b.mov("u64", 0), [b.mov("u32", 0)] * 6, b.mov("u32", 0)),
         "1..5 coordinates"),
    ],
)
def test_verifier_rejects(build, match):
    expect_invalid(build, match)


def test_modifiers_and_types_are_typed():
    """Properties are typed attributes: a modifier or type PTX lacks cannot even be built."""
    b = PtxBuilder.kernel("k")
    with pytest.raises(VerifyException, match="'round' is not a PTX modifier"):
        b.cvt("f32", "u32", b.mov("u32", 1), mods="round")
    with pytest.raises(VerifyException, match="unknown PTX type 'u33'"):
        b.mov("u33", 1)


def test_use_before_definition_is_rejected():
    b = PtxBuilder.kernel("k")
    x = b.mov("u32", 1)
    b.add("u32", x, 1)
    x.owner.detach()
    b.entry.body.block.add_op(x.owner)
    with pytest.raises(VerifyException, match="before the instruction that defines it"):
        b.module.verify()


def test_module_version_is_bounded():
    module = ptx.ModuleOp([], version="9.1")
    with pytest.raises(VerifyException, match="8.0..9.0"):
        module.verify()
    ptx.ModuleOp([], version="9.0").verify()


def test_register_type_rejects_unknown_class():
    with pytest.raises(VerifyException):
        ptx.RegType("b128")
