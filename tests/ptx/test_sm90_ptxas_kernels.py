"""Hand-built sm90 kernels for the convert-sm90-to-ptx tests: what convert-tile-to-sm90 emits
for a warp-specialised GEMM tile and for a flash-attention-like consumer loop.

(No tests here; `test_sm90_ptxas.py` and the unit tests import these builders.)
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import BFloat16Type, Float32Type, FloatAttr, IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from tkc.abi import ArgSpec, DimParam, KernelABI, PointerParam, TensorMapParam
from tkc.dialects import sm90
from tkc.dialects.tile import BinaryFn, BinaryFnAttr, MaskKind, MaskKindAttr, ReduceFn, ReduceFnAttr, UnaryFn, UnaryFnAttr

BF16, F32 = BFloat16Type(), Float32Type()


class Emit:
    """Appends ops to a block; `c(n)` is an index constant, arithmetic helpers return values."""

    def __init__(self, block: Block):
        self.block = block

    def __call__(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def c(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def f(self, value: float) -> SSAValue:
        return self(arith.ConstantOp(FloatAttr(value, F32)))

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.AddiOp(a, self.c(b) if isinstance(b, int) else b))

    def mul(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.MuliOp(a, self.c(b) if isinstance(b, int) else b))

    def barrier(self, group: SSAValue, stage: SSAValue | int) -> SSAValue:
        return self(sm90.MbarrierAtOp([group], self.c(stage) if isinstance(stage, int) else stage))

    def ring(self, groups: list[SSAValue], it: SSAValue, stages: int) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        """(stage, parity, full[stage], empty[stage]) of iteration `it` of the ring whose full and
        empty barrier groups are `groups`."""
        stage = self(arith.RemUIOp(it, self.c(stages)))
        parity = self(arith.AndIOp(self(arith.DivUIOp(it, self.c(stages))), self.c(1)))
        at = sm90.MbarrierAtOp(groups, stage)
        self(at)
        return stage, parity, at.barriers[0], at.barriers[1]


def _for(e: Emit, lb: SSAValue, ub: SSAValue, carried: list[SSAValue],
         body: Callable[[Emit, SSAValue, list[SSAValue]], list[SSAValue]]) -> scf.ForOp:
    block = Block(arg_types=[IndexType(), *(v.type for v in carried)])
    inner = Emit(block)
    inner(scf.YieldOp(*body(inner, block.args[0], list(block.args[1:]))))
    loop = scf.ForOp(lb, ub, e.c(1), carried, block)
    e(loop)
    return loop


def _kernel(name: str, abi: KernelABI, smem: int) -> tuple[ModuleOp, sm90.KernelOp, Emit]:
    kernel = sm90.KernelOp(name, sm90.KernelABIAttr.from_abi(abi), abi.block, smem, 1)
    return ModuleOp([kernel]), kernel, Emit(kernel.body.block)


def _init_barriers(e: Emit, base: SSAValue, bars: int, stages: int, empty_count: int) -> list[SSAValue]:
    """The ring's full and empty barrier groups at `bars`, initialised."""
    groups = [e(sm90.MbarrierGroupOp(base, bars + 8 * stages * k, stages)) for k in range(2)]
    init = sm90.SingleThreadOp("block")
    e(init)
    ie = Emit(init.body.block)
    for s in range(stages):
        ie(sm90.MbarrierInitOp(ie.barrier(groups[0], s), 1))
        ie(sm90.MbarrierInitOp(ie.barrier(groups[1], s), empty_count))
    ie(sm90.FenceBarrierInitOp())
    e(sm90.SyncBlockOp())
    return groups


def ws_gemm(stages: int = 4) -> ModuleOp:
    """C[128x256 tile] = A @ B: producer warpgroup + 2 consumers of 64 rows, an S-stage ring of
    A [128x64] and B [64x256] (4 boxes of 64 columns), 128B swizzle, bf16 TMA-store epilogue."""
    a_bytes, b_bytes = 128 * 64 * 2, 64 * 256 * 2
    stage_bytes = a_bytes + b_bytes
    staging = stages * stage_bytes
    bars = staging + 128 * 256 * 2
    abi = KernelABI(
        entry="gemm",
        args=(ArgSpec("A", "bf16", ("M", "K")), ArgSpec("B", "bf16", ("K", "N")), ArgSpec("C", "bf16", ("M", "N"))),
        params=(TensorMapParam("tmap_A", "A", (64, 128), 128), TensorMapParam("tmap_B", "B", (64, 64), 128),
                TensorMapParam("tmap_C", "C", (64, 64), 128), DimParam("dim_K", "K")),
        grid=(("div", "M", 128), ("div", "N", 256), 1),
        block=384,
        smem_bytes=bars + 16 * stages + 1024,
    )
    module, _, e = _kernel("gemm", abi, abi.smem_bytes)
    base = e(sm90.SmemBaseOp())
    groups = _init_barriers(e, base, bars, stages, 256)
    k_tiles = e(arith.DivUIOp(e(sm90.DimParamOp("dim_K")), e.c(64)))
    bm, bn = e(sm90.BlockIdOp(0)), e(sm90.BlockIdOp(1))
    roles = sm90.RolesOp(2, 40, 232)
    e(roles)

    issue = sm90.SingleThreadOp("warpgroup")
    Emit(roles.producer.block)(issue)
    pe = Emit(issue.body.block)
    tmap_a, tmap_b = pe(sm90.TensorMapParamOp("tmap_A")), pe(sm90.TensorMapParamOp("tmap_B"))

    def produce(le: Emit, it: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        stage, parity, full, empty = le.ring(groups, it, stages)
        le(sm90.MbarrierWaitOp(empty, le(arith.XOrIOp(parity, le.c(1)))))
        le(sm90.MbarrierArriveOp(full, stage_bytes))
        dst = le.add(base, le.mul(stage, stage_bytes))
        k0 = le.mul(it, 64)
        le(sm90.TmaLoadOp(tmap_a, dst, full, [k0, le.mul(bm, 128)], a_bytes))
        for p in range(4):
            col = le.add(le.mul(bn, 256), 64 * p)
            le(sm90.TmaLoadOp(tmap_b, le.add(dst, a_bytes + 8192 * p), full, [col, k0], 8192))
        return []

    _for(pe, pe.c(0), k_tiles, [], produce)

    ce = Emit(roles.consumer.block)
    consumer = roles.consumer.block.args[0]
    row0 = ce.mul(consumer, 64)
    acc0 = ce(sm90.FillOp(0.0, sm90.FragmentType([64, 256], F32)))

    def consume(le: Emit, it: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
        stage, parity, full, empty = le.ring(groups, it, stages)
        le(sm90.MbarrierWaitOp(full, parity))
        a_addr = le.add(base, le.mul(stage, stage_bytes))
        a = le(sm90.SmemViewOp(a_addr, sm90.SharedRefType([128, 64], BF16, 128)))
        b = le(sm90.SmemViewOp(le.add(a_addr, a_bytes), sm90.SharedRefType([64, 256], BF16, 128)))
        mma = le(sm90.WgmmaOp(a, b, carried[0], sm90.FragmentType([64, 256], F32), False, False, row0))
        done = le(sm90.WgmmaWaitOp(mma, 0))
        le(sm90.MbarrierArriveOp(empty))
        return [done]

    acc = _for(ce, ce.c(0), k_tiles, [acc0], consume).results[0]
    packed = ce(sm90.ConvertOp(acc, sm90.FragmentType([64, 256], BF16)))
    stage_addr = ce.add(base, staging)
    tile = ce(sm90.SmemViewOp(stage_addr, sm90.SharedRefType([128, 256], BF16, 128)))
    barrier = ce.add(consumer, 1)
    ce(sm90.NamedBarrierOp(barrier, 128))
    ce(sm90.StoreFragmentOp(packed, tile, row0))
    ce(sm90.FenceProxyAsyncOp())
    ce(sm90.NamedBarrierOp(barrier, 128))
    store = sm90.SingleThreadOp("warpgroup")
    ce(store)
    se = Emit(store.body.block)
    tmap_c = se(sm90.TensorMapParamOp("tmap_C"))
    first = se.add(stage_addr, se.mul(row0, 128))
    rows = se.add(se.mul(bm, 128), row0)
    for p in range(4):
        se(sm90.TmaStoreOp(tmap_c, se.add(first, 16384 * p), [se.add(se.mul(bn, 256), 64 * p), rows]))
    se(sm90.TmaStoreCommitOp())
    se(sm90.TmaStoreWaitOp(0, read=True))
    module.verify()
    return module


def attention(stages: int = 2) -> ModuleOp:
    """One 128-row query tile per CTA (Q [128x128] loaded once), K/V [128x128] through a ring;
    each consumer: S = Q K^T (K-major K), causal mask on the diagonal block, online softmax
    (row max, exp2, row sum), O = O * alpha + bf16(P) @ V with P from registers, then O / l
    stored through shared memory and the log-sum-exp stored to global memory."""
    kv_bytes = 128 * 128 * 2
    q_addr = 0
    ring = 2 * kv_bytes
    bars = ring + stages * 2 * kv_bytes
    abi = KernelABI(
        entry="attn",
        args=(ArgSpec("Q", "bf16", ("N", 128)), ArgSpec("K", "bf16", ("N", 128)), ArgSpec("V", "bf16", ("N", 128)),
              ArgSpec("O", "bf16", ("N", 128)), ArgSpec("L", "f32", ("N",))),
        params=(TensorMapParam("tmap_Q", "Q", (64, 128), 128), TensorMapParam("tmap_K", "K", (64, 128), 128),
                TensorMapParam("tmap_V", "V", (64, 128), 128), TensorMapParam("tmap_O", "O", (64, 64), 128),
                PointerParam("ptr_L", "L"), DimParam("dim_N", "N")),
        grid=(("div", "N", 128), 1, 1),
        block=384,
        smem_bytes=bars + 8 * (2 * stages + 1) + 1024,
    )
    module, _, e = _kernel("attn", abi, abi.smem_bytes)
    base = e(sm90.SmemBaseOp())
    q_bar = bars + 16 * stages
    groups = _init_barriers(e, base, bars, stages, 256)
    q_full = e(sm90.MbarrierGroupOp(base, q_bar, 1))
    kv_tiles = e(arith.DivUIOp(e(sm90.DimParamOp("dim_N")), e.c(128)))
    qi = e(sm90.BlockIdOp(0))
    roles = sm90.RolesOp(2, 40, 232)
    e(roles)

    issue = sm90.SingleThreadOp("warpgroup")
    Emit(roles.producer.block)(issue)
    pe = Emit(issue.body.block)
    tmaps = {n: pe(sm90.TensorMapParamOp(f"tmap_{n}")) for n in "QKV"}
    q_loaded = pe.barrier(q_full, 0)
    pe(sm90.MbarrierArriveOp(q_loaded, 2 * kv_bytes // 2))
    for p in range(2):
        pe(sm90.TmaLoadOp(tmaps["Q"], pe.add(base, q_addr + p * 16384), q_loaded,
                          [pe.c(64 * p), pe.mul(qi, 128)], 16384))

    def produce(le: Emit, it: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        stage, parity, full, empty = le.ring(groups, it, stages)
        le(sm90.MbarrierWaitOp(empty, le(arith.XOrIOp(parity, le.c(1)))))
        le(sm90.MbarrierArriveOp(full, 2 * kv_bytes))
        dst = le.add(base, le.add(le.mul(stage, 2 * kv_bytes), ring))
        for t, name in enumerate("KV"):
            for p in range(2):
                le(sm90.TmaLoadOp(tmaps[name], le.add(dst, t * kv_bytes + p * 16384), full,
                                  [le.c(64 * p), le.mul(it, 128)], 16384))
        return []

    _for(pe, pe.c(0), kv_tiles, [], produce)

    ce = Emit(roles.consumer.block)
    consumer = roles.consumer.block.args[0]
    row0 = ce.mul(consumer, 64)
    ce(sm90.MbarrierWaitOp(ce.barrier(q_full, 0), ce.c(0)))
    q = ce(sm90.SmemViewOp(ce.add(base, q_addr), sm90.SharedRefType([128, 128], BF16, 128)))
    frag, vec = sm90.FragmentType([64, 128], F32), sm90.FragmentType([64], F32)
    o0 = ce(sm90.FillOp(0.0, frag))
    m0 = ce(sm90.FillOp(float("-inf"), vec))
    l0 = ce(sm90.FillOp(0.0, vec))
    scale = ce.f(1.4426950408889634 / 128**0.5)
    q_row = ce.add(ce.mul(qi, 128), row0)

    def consume(le: Emit, it: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
        o, m, l = carried
        stage, parity, full, empty = le.ring(groups, it, stages)
        le(sm90.MbarrierWaitOp(full, parity))
        kv = le.add(base, le.add(le.mul(stage, 2 * kv_bytes), ring))
        k = le(sm90.SmemViewOp(kv, sm90.SharedRefType([128, 128], BF16, 128)))
        v = le(sm90.SmemViewOp(le.add(kv, kv_bytes), sm90.SharedRefType([128, 128], BF16, 128)))
        s = le(sm90.WgmmaWaitOp(le(sm90.WgmmaOp(q, k, None, frag, False, True, row0)), 0))
        s = le(sm90.BinaryOp(BinaryFnAttr(BinaryFn.MUL), s, scale))
        diagonal = le(arith.CmpiOp(it, qi, "eq"))
        masked = scf.IfOp(diagonal, [frag], [Block()], [Block()])
        le(masked)
        te = Emit(masked.true_region.block)
        te(scf.YieldOp(te(sm90.MaskOp(MaskKindAttr(MaskKind.CAUSAL), s, q_row, te.mul(it, 128),
                                      FloatAttr(float("-inf"), F32)))))
        Emit(masked.false_region.block)(scf.YieldOp(s))
        s = masked.results[0]
        m_new = le(sm90.BinaryOp(BinaryFnAttr(BinaryFn.MAX), m,
                                 le(sm90.RowReduceOp(ReduceFnAttr(ReduceFn.MAX), s))))
        p = le(sm90.UnaryOp(UnaryFnAttr(UnaryFn.EXP2), le(sm90.RowBroadcastOp(BinaryFnAttr(BinaryFn.SUB), s, m_new))))
        alpha = le(sm90.UnaryOp(UnaryFnAttr(UnaryFn.EXP2), le(sm90.BinaryOp(BinaryFnAttr(BinaryFn.SUB), m, m_new))))
        l_new = le(sm90.BinaryOp(BinaryFnAttr(BinaryFn.ADD), le(sm90.BinaryOp(BinaryFnAttr(BinaryFn.MUL), l, alpha)),
                                 le(sm90.RowReduceOp(ReduceFnAttr(ReduceFn.SUM), p))))
        scaled = le(sm90.RowBroadcastOp(BinaryFnAttr(BinaryFn.MUL), o, alpha))
        pb = le(sm90.ConvertOp(p, sm90.FragmentType([64, 128], BF16)))
        o_new = le(sm90.WgmmaWaitOp(le(sm90.WgmmaOp(pb, v, scaled, frag, False, False)), 0))
        le(sm90.MbarrierArriveOp(empty))
        return [o_new, m_new, l_new]

    o, m, l = _for(ce, ce.c(0), kv_tiles, [o0, m0, l0], consume).results
    o = ce(sm90.RowBroadcastOp(BinaryFnAttr(BinaryFn.DIV), o, l))
    lse = ce(sm90.BinaryOp(BinaryFnAttr(BinaryFn.MUL), ce(sm90.BinaryOp(
        BinaryFnAttr(BinaryFn.ADD), m, ce(sm90.UnaryOp(UnaryFnAttr(UnaryFn.LOG2), l)))), ce.f(0.6931471805599453)))
    rows_left = ce(arith.SubiOp(ce(sm90.DimParamOp("dim_N")), q_row))
    ce(sm90.StoreVectorGlobalOp(lse, ce(sm90.PointerParamOp("ptr_L")), q_row, rows_left))
    staging = ce(sm90.SmemViewOp(ce.add(base, q_addr), sm90.SharedRefType([128, 128], BF16, 128)))  # own Q rows
    barrier = ce.add(consumer, 1)
    ce(sm90.NamedBarrierOp(barrier, 128))
    ce(sm90.StoreFragmentOp(ce(sm90.ConvertOp(o, sm90.FragmentType([64, 128], BF16))), staging, row0))
    ce(sm90.FenceProxyAsyncOp())
    ce(sm90.NamedBarrierOp(barrier, 128))
    store = sm90.SingleThreadOp("warpgroup")
    ce(store)
    se = Emit(store.body.block)
    tmap_o = se(sm90.TensorMapParamOp("tmap_O"))
    first = se.add(se.add(base, q_addr), se.mul(row0, 128))
    for p in range(2):
        se(sm90.TmaStoreOp(tmap_o, se.add(first, 16384 * p), [se.c(64 * p), q_row]))
    se(sm90.TmaStoreCommitOp())
    se(sm90.TmaStoreWaitOp(0, read=True))
    module.verify()
    return module
