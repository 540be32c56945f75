"""Small but real kernels built with PtxBuilder, shared by the ptx tests."""

from __future__ import annotations

from tkc.dialects.ptx import PtxBuilder

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
