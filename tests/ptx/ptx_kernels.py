"""Small but real kernels built with PtxBuilder, shared by the ptx tests."""

from __future__ import annotations

from tkc.dialects.ptx_builder import PtxBuilder

DESC_128B_KMAJOR = 0x4000004000010000
"""wgmma descriptor constant: K-major, 128B swizzle, LBO 16, SBO 1024 (hopper-ptx.md §4)."""


def descriptor(b: PtxBuilder, addr):
    """wgmma shared-memory descriptor of the 128B-swizzled K-major tile at shared address `addr`."""
    enc = b.and_("b32", b.shr("u32", addr, 4), 0x3FFF)
    return b.or_("b64", b.cvt("u64", "u32", enc), DESC_128B_KMAJOR)


def tma_wgmma_gemm() -> PtxBuilder:
    """One warpgroup: C[64x64] = A[64x64] @ B[64x64]^T, bf16 in, f32 out, A and B by TMA into
    128B-swizzled smem, one mbarrier, 4 k16 steps of wgmma m64n64 from descriptors."""
    b = PtxBuilder.kernel("gemm64", [("A", "tensormap"), ("B", "tensormap"), ("C", "u64")],
                          maxntid=128, minnctapersm=1)
    tid = b.sreg("tid.x")
    row0 = b.sreg("ctaid.x")
    tmap_a, tmap_b = b.tmap_addr("A"), b.tmap_addr("B")
    c_ptr = b.global_ptr("C")
    base = b.and_("b32", b.add("u32", b.smem_base(), 1023), 0xFFFFFC00)
    sa, sb = base, b.add("u32", base, 8192)
    mbar = b.add("u32", base, 16384)
    is0 = b.setp("eq", "u32", tid, 0)
    with b.if_(is0):
        b.prefetch_tensormap(tmap_a)
        b.mbar_init(mbar, 1)
        b.fence("mbarrier_init.release.cluster")
        b.fence("proxy.async.shared::cta")
    b.bar_sync(0)
    with b.if_(is0):
        b.mbar_arrive_expect_tx(mbar, 2 * 64 * 64 * 2)
        zero = b.mov("u32", 0)
        m = b.shl("b32", row0, 6)
        b.tma_load(sa, tmap_a, [zero, m], mbar)
        b.tma_load(sb, tmap_b, [zero, zero], mbar)
    b.mbar_wait(mbar, 0)
    acc = b.regs("f32", 32)
    da, db = descriptor(b, sa), descriptor(b, sb)
    b.wgmma_fence()
    for k in range(4):
        a_k = da if k == 0 else b.add("u64", da, 2 * k)
        b_k = db if k == 0 else b.add("u64", db, 2 * k)
        b.wgmma(acc, a_k, b_k, scale_d=0 if k == 0 else 1)
    b.wgmma_commit()
    b.wgmma_wait(0)
    # fragment layout: row = 16w + l/4 + 8*((i>>1)&1), col = 8*(i>>2) + 2*(l%4) + (i&1)
    warp, lane = b.shr("u32", tid, 5), b.and_("b32", tid, 31)
    row = b.add("u32", b.shl("b32", warp, 4), b.shr("u32", lane, 2))
    row = b.add("u32", row, b.shl("b32", row0, 6))
    col = b.shl("b32", b.and_("b32", lane, 3), 1)
    offset = b.mad("u32", row, 64, col)
    ptr = b.mad("u32", offset, 4, 0, mods="wide")
    ptr = b.add("u64", c_ptr, ptr)
    for i in range(0, 32, 2):
        byte = 4 * (8 * (i >> 2) + 64 * 8 * ((i >> 1) & 1))
        b.st("global", "f32", ptr, [acc[i], acc[i + 1]], offset=byte)
    b.ret()
    return b


def warp_specialised() -> PtxBuilder:
    """Producer warpgroup drops to 40 registers, two consumers rise to 232 (§6 skeleton)."""
    b = PtxBuilder.kernel("ws", [("out", "u64")], maxntid=384, minnctapersm=1)
    tid = b.sreg("tid.x")
    wg = b.shr("u32", tid, 7)
    consumer, done = b.fresh_label("CONSUMER"), b.fresh_label("DONE")
    b.bra(consumer, b.setp("ne", "u32", wg, 0))
    b.setmaxnreg("dec", 40)
    b.bra(done, b.setp("ne", "u32", b.shr("u32", tid, 5), 0))
    b.bra(done, b.elect(), negate=True)
    b.st("global", "u32", b.global_ptr("out"), tid)
    b.bra(done)
    b.label(consumer)
    b.setmaxnreg("inc", 232)
    b.bar_sync(1, 256)
    b.label(done)
    b.ret()
    return b


def row_reduction() -> PtxBuilder:
    """Row max of an n16 f32 fragment (registers 0, 1, 4, 5 hold row r0), quad shuffles, exp2."""
    b = PtxBuilder.kernel("rowmax", [("inp", "u64"), ("out", "u64")], maxntid=128)
    tid = b.sreg("tid.x")
    inp, out = b.global_ptr("inp"), b.global_ptr("out")
    off = b.mul_wide("u32", tid, 32)
    src = b.add("u64", inp, off)
    d = [*b.ld("global", "f32", src, vec=4), *b.ld("global", "f32", src, offset=16, vec=4)]
    m = b.max("f32", b.max("f32", d[0], d[1]), b.max("f32", d[4], d[5]))
    for mask in (1, 2):
        m2 = b.shfl("bfly", m, mask)
        b.assign(m, b.max("f32", m, m2))
    e = b.ex2("f32", b.sub("f32", d[0], m))
    b.st("global", "f32", b.add("u64", out, b.mul_wide("u32", tid, 4)), e)
    b.ret()
    return b


def every_op() -> PtxBuilder:
    """One of each instruction form the builder can emit, so ptxas checks every printed form."""
    b = PtxBuilder.kernel("every_op", [("T", "tensormap"), ("out", "u64"), ("n", "u32")], maxntid=(128, 1, 1),
                          minnctapersm=1, maxnreg=168, reqnctapercluster=(1, 1, 1))
    tid, lane = b.sreg("tid.x"), b.sreg("laneid")
    cta = [b.sreg(f"ctaid.{d}") for d in "xyz"]
    ncta, rank, clock = b.sreg("nctaid.x"), b.sreg("cluster_ctarank"), b.sreg("clock64")
    tmap, out, n = b.tmap_addr("T"), b.global_ptr("out"), b.ld_param("u32", "n")
    smem = b.smem_base()
    b.prefetch_tensormap(tmap)
    # integer arithmetic
    x = b.add("u32", tid, n)
    x = b.sub("s32", x, 3)
    x = b.mul("u32", x, cta[0])
    wide = b.mul_wide("u32", x, 8)
    hi = b.mul_hi("u32", x, cta[1])
    x = b.mad("u32", x, hi, cta[2])
    wide = b.mad("u32", x, 4, wide, mods="wide")
    x = b.div("u32", x, ncta)
    x = b.rem("u32", x, 7)
    x = b.and_("b32", x, 0xFFFFFC00)
    x = b.or_("b32", x, rank)
    x = b.xor("b32", x, lane)
    x = b.not_("b32", x)
    x = b.shl("b32", x, 2)
    x = b.shr("s32", x, lane)
    x = b.min("u32", x, 100)
    x = b.max("s32", x, n)
    x = b.neg("s32", x)
    x = b.abs("s32", x)
    x = b.popc("b32", x)
    d64 = b.add("u64", b.cvt("u64", "u32", x), clock)
    d64 = b.and_("b64", d64, 0x4000004000010000)
    x = b.cvt("u32", "u64", b.shr("u64", d64, x))
    # float arithmetic and conversions
    f = b.cvt("f32", "u32", x, mods="rn")
    g = b.mov("f32", float("-inf"))
    f = b.fma("f32", f, 0.5, b.add("f32", f, g))
    f = b.mul("f32", b.sub("f32", f, 1.0), f)
    f = b.div("f32", f, 3.0)
    f = b.div("f32", f, 3.0, mods="approx")
    f = b.max("f32", b.min("f32", f, 2.0), -2.0)
    f = b.neg("f32", b.abs("f32", f))
    f = b.add("f32", b.rcp("f32", f), b.sqrt("f32", f))
    f = b.add("f32", b.rsqrt("f32", f), b.ex2("f32", f))
    f = b.add("f32", b.lg2("f32", f), b.tanh("f32", f))
    h = b.cvt("bf16", "f32", f, mods="rn")
    f2 = b.cvt("f32", "bf16", h)
    h16 = b.cvt("f16", "f32", f2, mods="rn")
    f = b.add("f32", f, b.cvt("f32", "f16", h16))
    bf2 = b.cvt_pack("bf16x2", f, f2)
    fp8 = b.cvt_pack("e4m3x2", f, f2, mods="rn.satfinite")
    i = b.cvt("s32", "f32", f, mods="rzi")
    packed = b.pack(h, h16)
    lo, hi16 = b.unpack(packed)
    p64 = b.pack(bf2, x)
    lo32, hi32 = b.unpack(p64)
    # predicates and selection
    p = b.setp("lt", "s32", i, 0)
    q = b.setp("ge", "f32", f, g)
    p = b.and_("pred", p, q)
    p = b.or_("pred", b.not_("pred", p), q)
    x = b.selp("u32", x, 5, p)
    f = b.selp("f32", f, 0.0, q)
    # memory
    addr = b.add("u32", smem, b.shl("b32", tid, 4))
    v = b.ld("shared", "b32", addr, offset=16, vec=4)
    b.st("shared", "b32", addr, v, offset=16)
    s = b.ld("shared", "f32", addr)
    b.st("shared", "f32", addr, b.add("f32", s, f), offset=4)
    b.st("shared", "b16", addr, b.xor("b16", lo, hi16), offset=8)
    b.st("shared", "b16", addr, fp8, offset=10)
    gaddr = b.add("u64", out, b.mul_wide("u32", tid, 16))
    gv = b.ld("global", "f32", gaddr, vec=2)
    gn = b.ld("global", "u32", gaddr, offset=-4, mods="nc")
    b.st("global", "f32", gaddr, gv, offset=8)
    b.st("global", "u32", gaddr, [x, gn, lo32, hi32])
    # warp-level
    r = b.shfl("bfly", f, 1)
    r = b.shfl("idx", r, lane)
    r = b.shfl("down", r, 4)
    r = b.shfl("up", r, 2)
    frag = b.ldmatrix(addr)
    b.stmatrix(addr, frag)
    frag = b.ldmatrix(addr, trans=True)
    b.stmatrix(addr, [*frag[:2]], trans=True)
    b.st("global", "f32", gaddr, r)
    # synchronisation and mbarriers
    mbar = b.add("u32", smem, 65536)
    elected = b.elect()
    with b.if_(elected):
        b.mbar_init(mbar, 1)
        b.fence("mbarrier_init.release.cluster")
        b.fence()
    b.bar_sync(0)
    b.bar_sync(1, 128)
    b.bar_arrive(2, 128)
    b.bar_sync(b.add("u32", b.shr("u32", tid, 7), 1), 128)
    b.bar_arrive(b.add("u32", b.shr("u32", tid, 7), 3), 128)
    b.fence("acq_rel.cta")
    b.mbar_arrive_expect_tx(mbar, 8192)
    b.mbar_expect_tx(mbar, 128)
    b.mbar_arrive(mbar)
    b.mbar_arrive(mbar, 2)
    phase = b.and_("b32", x, 1)
    b.mbar_wait(mbar, phase)
    b.mbar_wait(mbar, 1)
    # TMA in every rank
    coords = [b.mov("u32", c) for c in range(5)]
    for dims in range(1, 6):
        b.tma_load(smem, tmap, coords[:dims], mbar)
    b.fence("proxy.async.shared::cta")
    for dims in (1, 2, 5):
        b.tma_store(tmap, coords[:dims], smem)
    b.tma_store(tmap, coords[:2], smem, reduce="add")
    b.bulk_commit()
    b.bulk_wait(1, read=True)
    b.bulk_wait(0)
    b.mbar_inval(mbar)
    # wgmma: smem/smem bf16 and f16 (trans), register A, fp8
    acc = b.regs("f32", 8)
    desc = b.or_("b64", b.cvt("u64", "u32", b.and_("b32", b.shr("u32", smem, 4), 0x3FFF)), 0x4000004000010000)
    first = b.setp("ne", "u32", tid, tid)
    b.wgmma_fence()
    b.wgmma(acc, desc, desc, scale_d=first)
    b.wgmma(acc, desc, desc, dtype="f16", trans_a=1, trans_b=1, scale_a=-1)
    b.wgmma(acc, [bf2, bf2, bf2, bf2], desc, trans_b=1)
    b.wgmma(acc, desc, desc, dtype="e4m3", scale_b=-1)
    b.wgmma(acc, [bf2, bf2, bf2, bf2], desc, dtype="e5m2")
    b.wgmma_commit()
    b.wgmma_wait(0)
    total = acc[0]
    for a in acc[1:]:
        b.assign(total, b.add("f32", total, a))
    b.st("global", "f32", gaddr, total)
    b.assign(x, 0)
    b.assign(f, 1.0)
    b.assign(p, q)
    b.st("global", "u32", gaddr, b.selp("u32", x, b.mov("b32", f), p))
    b.ret()
    return b
