"""PTX text: module structure, register declarations, and each instruction's printed form as
hopper-ptx.md spells it."""

from __future__ import annotations

import time

from tkc.backends.ptx_printer import PtxTarget, print_ptx
from tkc.dialects.ptx_builder import PtxBuilder


def body_lines(b: PtxBuilder) -> list[str]:
    text = print_ptx(b.module)
    body = text[text.index("{") + 1: text.rindex("}")]
    return [line.strip() for line in body.splitlines() if line.strip() and not line.strip().startswith(".reg")]


def test_module_header_params_and_directives():
    b = PtxBuilder.kernel("k_skel", [("tmap_a", "tensormap"), ("out_ptr", "u64"), ("n", "u32")],
                          maxntid=384, minnctapersm=1, maxnreg=168, reqnctapercluster=(2, 1, 1))
    b.smem_base()
    b.ret()
    text = print_ptx(b.module)
    assert text.index(".version 8.0") < text.index(".target sm_90a") < text.index(".address_size 64")
    assert ".extern .shared .align 1024 .b8 smem[];" in text
    assert (".visible .entry k_skel(\n    .param .align 64 .b8 tmap_a[128],\n    .param .u64 out_ptr,\n"
            "    .param .u32 n\n)\n.maxntid 384, 1, 1\n.minnctapersm 1\n.maxnreg 168\n"
            ".reqnctapercluster 2, 1, 1\n{") in text


def test_no_smem_declaration_without_smem_use():
    b = PtxBuilder.kernel("k")
    b.ret()
    assert "smem" not in print_ptx(b.module)


def test_register_declarations_and_names():
    b = PtxBuilder.kernel("k")
    b.setp("eq", "u32", b.mov("u32", 1), 2)
    b.mov("u64", 3)
    b.mov("f32", 0.0)
    b.cvt("bf16", "f32", b.mov("f32", 1.0), mods="rn")
    text = print_ptx(b.module)
    for decl in (".reg .pred %p<1>;", ".reg .b16 %rs<1>;", ".reg .b32 %r<1>;", ".reg .b64 %rd<1>;",
                 ".reg .f32 %f<2>;"):
        assert decl in text
    assert body_lines(b) == ["mov.u32 %r0, 1;", "setp.eq.u32 %p0, %r0, 2;", "mov.u64 %rd0, 3;",
                             "mov.f32 %f0, 0f00000000;", "mov.f32 %f1, 0f3F800000;", "cvt.rn.bf16.f32 %rs0, %f1;"]


def test_instruction_forms():
    b = PtxBuilder.kernel("k", [("tmap", "tensormap"), ("out", "u64")])
    tmap = b.tmap_addr("tmap")
    smem = b.smem_base()
    mbar = b.add("u32", smem, 65536)
    par = b.mov("u32", 0)
    b.mbar_init(mbar, 1)
    b.fence("mbarrier_init.release.cluster")
    b.fence("proxy.async.shared::cta")
    b.bar_sync(0)
    b.mbar_arrive_expect_tx(mbar, 32768)
    b.mbar_arrive(mbar)
    b.mbar_arrive(mbar, 2)
    b.mbar_expect_tx(mbar, 128)
    b.label("WAIT")
    p = b.mbar_try_wait(mbar, par)
    b.bra("WAIT", p, negate=True)
    b.tma_load(smem, tmap, [par, par], mbar)
    b.tma_store(tmap, [par, par], smem)
    b.tma_store(tmap, [par, par], smem, reduce="add")
    b.bulk_commit()
    b.bulk_wait(0, read=True)
    b.bulk_wait(0)
    b.prefetch_tensormap(tmap)
    b.setmaxnreg("dec", 40)
    b.elect()
    b.stmatrix(smem, [par] * 4, trans=True)
    b.ldmatrix(smem)
    b.bar_sync(1, 256)
    b.bar_arrive(2, 256)
    b.bar_sync(b.add("u32", par, 1), 128)
    f = b.mov("f32", 1.0)
    b.shfl("bfly", f, 1)
    b.ex2("f32", f)
    b.cvt_pack("bf16x2", f, f)
    b.cvt_pack("e4m3x2", f, f, mods="rn.satfinite")
    b.global_ptr("out")
    b.ret()
    lines = body_lines(b)
    expected = [
        "mov.b64 %rd0, tmap;",
        "cvta.param.u64 %rd1, %rd0;",
        "mov.u32 %r0, smem;",
        "add.u32 %r1, %r0, 65536;",
        "mov.u32 %r2, 0;",
        "mbarrier.init.shared::cta.b64 [%r1], 1;",
        "fence.mbarrier_init.release.cluster;",
        "fence.proxy.async.shared::cta;",
        "bar.sync 0;",
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 32768;",
        "mbarrier.arrive.shared::cta.b64 _, [%r1];",
        "mbarrier.arrive.shared::cta.b64 _, [%r1], 2;",
        "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r1], 128;",
        "WAIT:",
        "mbarrier.try_wait.parity.shared::cta.b64 %p0, [%r1], %r2;",
        "@!%p0 bra WAIT;",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%r0], [%rd1, {%r2, %r2}], [%r1];",
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r2, %r2}], [%r0];",
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.bulk_group [%rd1, {%r2, %r2}], [%r0];",
        "cp.async.bulk.commit_group;",
        "cp.async.bulk.wait_group.read 0;",
        "cp.async.bulk.wait_group 0;",
        "prefetch.tensormap [%rd1];",
        "setmaxnreg.dec.sync.aligned.u32 40;",
        "elect.sync _|%p1, 0xffffffff;",
        "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r0], {%r2, %r2, %r2, %r2};",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r3, %r4, %r5, %r6}, [%r0];",
        "bar.sync 1, 256;",
        "bar.arrive 2, 256;",
        "add.u32 %r7, %r2, 1;",
        "bar.sync %r7, 128;",
        "mov.f32 %f0, 0f3F800000;",
        "shfl.sync.bfly.b32 %f1, %f0, 1, 0x1f, 0xffffffff;",
        "ex2.approx.ftz.f32 %f2, %f0;",
        "cvt.rn.bf16x2.f32 %r8, %f0, %f0;",
        "cvt.rn.satfinite.e4m3x2.f32 %rs0, %f0, %f0;",
        "ld.param.u64 %rd2, [out];",
        "cvta.to.global.u64 %rd3, %rd2;",
        "ret;",
    ]
    assert lines == expected


def test_labels_at_column_zero():
    b = PtxBuilder.kernel("k")
    b.label("TOP")
    b.bra("TOP")
    text = print_ptx(b.module)
    assert "\nTOP:\n    bra.uni TOP;\n" in text


def test_wgmma_forms():
    b = PtxBuilder.kernel("k")
    acc = b.regs("f32", 8)
    da, db = b.mov("u64", 0), b.mov("u64", 0)
    a = [b.mov("b32", 0) for _ in range(4)]
    p = b.setp("ne", "u32", a[0], 0)
    b.wgmma_fence()
    b.wgmma(acc, da, db, scale_d=p)
    b.wgmma(acc, da, db, trans_b=1)
    b.wgmma(acc, a, db)
    b.wgmma(acc, da, db, dtype="e4m3")
    b.wgmma_commit()
    b.wgmma_wait(1)
    d = "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}"
    assert body_lines(b)[-7:] == [
        "wgmma.fence.sync.aligned;",
        f"wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {d}, %rd0, %rd1, %p0, 1, 1, 0, 0;",
        f"wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {d}, %rd0, %rd1, 1, 1, 1, 0, 1;",
        f"wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {d}, {{%r0, %r1, %r2, %r3}}, %rd1, 1, 1, 1, 0;",
        f"wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 {d}, %rd0, %rd1, 1, 1, 1;",
        "wgmma.commit_group.sync.aligned;",
        "wgmma.wait_group.sync.aligned 1;",
    ]


def test_memory_forms_and_assign():
    b = PtxBuilder.kernel("k")
    g, s = b.mov("u64", 0), b.mov("u32", 0)
    v = b.ld("global", "f32", g, offset=16, vec=4)
    b.st("shared", "f32", s, v[:2], offset=-8)
    b.assign(v[0], v[1])
    b.assign(s, 7)
    masked = b.and_("b32", s, 0xFFFFFC00)
    b.shl("b32", masked, b.mov("u32", 1))
    assert body_lines(b)[2:] == [
        "ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd0+16];",
        "st.shared.v2.f32 [%r0+-8], {%f0, %f1};",
        "mov.f32 %f0, %f1;",
        "mov.b32 %r0, 7;",
        "and.b32 %r1, %r0, 0xfffffc00;",
        "mov.u32 %r2, 1;",
        "shl.b32 %r3, %r1, %r2;",
    ]


def test_printing_20k_ops_is_fast():
    b = PtxBuilder.kernel("big")
    acc = b.regs("f32", 64)
    x = b.mov("f32", 1.0)
    for i in range(10_000):
        b.assign(acc[i % 64], b.fma("f32", acc[i % 64], x, acc[(i + 1) % 64]))
    start = time.perf_counter()
    text = print_ptx(b.module)
    assert time.perf_counter() - start < 2.0
    assert text.count("fma.rn.f32") == 10_000


def test_target_emits_ptx():
    from io import StringIO

    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp

    b = PtxBuilder.kernel("k")
    b.ret()
    out = StringIO()
    PtxTarget().emit(Context(), ModuleOp([b.module]), out)
    assert out.getvalue() == print_ptx(b.module)
