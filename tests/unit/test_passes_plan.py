"""Swizzle descriptors, the register split, the shared-memory plan, and infeasible pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from tkc.dialects.tile import (PLAN_DECISIONS, KernelOp, LoadOp, MmaOp, PlanAttr, RegisterTileType, SharedTileType,
                              realignment, vector_box)
from tkc.diagnostics import TkError
from tkc.driver import compile_module, parse_mlir
from tkc.frontend import parse_tk
from tkc.passes.plan import SMEM_BUDGET, KernelPlan, smem_plan
from tkc.passes.occupancy import mma_registers, register_pool, register_split
from tkc.passes.shared_tiles import wgmma_descriptor
from tkc.passes.tile_occupancy_plan import TileOccupancyPlanPass
from tkc.passes.tile_pipeline import TilePipelinePass
from tkc.report import report
from xdsl.context import Context
from xdsl.dialects.builtin import BFloat16Type

REPO = Path(__file__).resolve().parents[2]
INPUTS = REPO / "tests" / "lit" / "passes" / "Inputs"


def kernel_of(module) -> KernelOp:
    return next(op for op in module.walk() if isinstance(op, KernelOp))


def test_descriptor_constants() -> None:
    """The four constants of hopper-ptx.md §4."""
    bf16 = BFloat16Type()
    assert wgmma_descriptor(SharedTileType([64, 64], bf16, 128), "K").constant == 0x4000004000010000
    assert wgmma_descriptor(SharedTileType([64, 32], bf16, 64), "K").constant == 0x8000002000010000
    assert wgmma_descriptor(SharedTileType([64, 16], bf16, 32), "K").constant == 0xC000001000010000
    mn = wgmma_descriptor(SharedTileType([64, 128], bf16, 128), "MN")
    assert (mn.constant, mn.lbo, mn.k_step) == (0x4000004002000000, 8192, 2048)


@pytest.mark.parametrize(("consumers", "split"), [(1, (40, 256)), (2, (40, 232)), (3, (32, 160)), (4, (24, 112))])
def test_register_split(consumers: int, split: tuple[int, int]) -> None:
    """ThunderKittens' budgets, and every split fits the block's entry pool."""
    assert register_split(consumers, 1) == split
    producer, consumer = split
    assert 128 * (producer + consumers * consumer) <= register_pool(consumers, 1)[1] <= 65536


@pytest.mark.parametrize(("demand", "split"), [(160, (40, 232)), (224, (40, 232)), (225, (24, 240)), (228, (24, 240))])
def test_register_split_near_the_budget(demand: int, split: tuple[int, int]) -> None:
    """Demand within SPILL_MARGIN of the consumers' share: the producer drops to 24 (2 consumers)."""
    assert register_split(2, 1, demand) == split


def test_smem_plan_of_gemm() -> None:
    kernel = kernel_of(parse_mlir((INPUTS / "gemm.mlir").read_text(), "gemm.mlir"))
    plan = smem_plan(kernel, 3)
    (ring,) = plan.rings
    assert (ring.stage_bytes, [offset for _, offset in ring.loads]) == (49152, [0, 16384])
    # mbarriers, ring, two 64-column chunks of the 128 output rows (the staged epilogue), slack
    assert plan.total == 1024 + 3 * 49152 + 2 * 128 * 64 * 2 + 1024
    assert smem_plan(kernel, 5).total > SMEM_BUDGET >= smem_plan(kernel, 4).total


def compiled(source: str):
    module = parse_tk(source, "k.tk")
    compile_module(module, emit="tile")
    return module


GEMM = (REPO / "examples" / "gemm.tk").read_text()


def test_examples_plan_and_report() -> None:
    module = compiled(GEMM)
    plan = KernelPlan.of(kernel_of(module))
    assert (plan.consumers, plan.producer_registers, plan.consumer_registers) == (2, 40, 232)
    assert (plan.stages, plan.persistent, plan.group_m, plan.ctas_per_sm) == (4, True, 8, 1)
    text = report(module)
    assert "conflict-free by construction" in text and "st.shared.b32" in text
    attention = compiled((REPO / "examples" / "attention.tk").read_text())
    plan = KernelPlan.of(kernel_of(attention))
    assert (plan.consumers, plan.stages, plan.persistent) == (2, 3, False)


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        ("@registers(256, 256)\nkernel", "98304 registers, over the 64512"),
        ("@registers(176, 160)\nkernel", "the producer's count cannot exceed the consumers'"),  # ptxas: C7406
        ("@consumers(4)\nkernel", "32 rows per warpgroup; wgmma needs multiples of 64"),
        ("@consumers(1)\nkernel", "needs 288 registers, over the 256"),
    ],
)
def test_infeasible_kernel_pins(pin: str, message: str) -> None:
    with pytest.raises(TkError, match=message) as error:
        compiled(GEMM.replace("kernel", pin, 1))
    assert error.value.line is not None


def test_infeasible_stages() -> None:
    message = r"@stages\(9\) needs 477184 bytes of shared memory .* over the 232448-byte budget"
    with pytest.raises(TkError, match=message):
        compiled(GEMM.replace("    for k", "    @stages(9) for k"))


def test_register_tile_rows_that_no_consumer_split_takes() -> None:
    """144 rows are computed as 192: three consumers split them (the third's last 48 rows padding);
    two cannot (96 each is no whole wgmma), which a pin of two says at the kernel."""
    plan = KernelPlan.of(kernel_of(compiled(GEMM.replace("BM = 128", "BM = 144").replace("BN = 256", "BN = 128"))))
    assert plan.consumers == 3 and "144-row tiles are split as 192 rows, 64 per consumer" in plan.reasons["consumers"]
    with pytest.raises(TkError, match=r"@consumers\(2\) splits the 144-row register tiles \(computed as 192\) into "
                                      "96 rows per warpgroup; wgmma needs multiples of 64") as error:
        compiled(GEMM.replace("BM = 128", "BM = 144").replace("kernel", "@consumers(2)\nkernel", 1))
    assert error.value.line is not None


ATTENTION = (REPO / "examples" / "attention.tk").read_text()


def test_two_ctas_need_room_for_the_widest_wgmma() -> None:
    """D = 256 with one 64-row consumer: the registers would fit two CTAs, but ptxas compiles the
    m64n256 P.V (128 accumulators + 30) within the entry count, 128 with two CTAs (C7602)."""
    # (one CTA per tile: a persistent grid, which the plan picks here, runs one CTA per SM anyway)
    source = ATTENTION.replace("D = 128, BQ = 128, BKV = 128", "D = 256, BQ = 64, BKV = 16")
    module = compiled(source.replace("kernel attn_fwd", "@persistent(0)\nkernel attn_fwd", 1))
    kernel = kernel_of(module)
    (mma,) = [op for op in kernel.walk() if isinstance(op, MmaOp) and isinstance(op.a.type, RegisterTileType)]
    assert mma_registers(mma) == 256 // 2 + 30 > register_pool(1, 2)[0] == 128
    assert KernelPlan.of(kernel).ctas_per_sm == 1
    assert "too few for one wgmma" in KernelPlan.of(kernel).reasons["ctas_per_sm"]


def test_widest_wgmma_bounds_the_consumers() -> None:
    """4 consumers start with 96 registers a thread: an m64n144 (72 + 26) takes 2 consumers."""
    module = compiled(GEMM.replace("BM = 128, BN = 256", "BM = 256, BN = 144"))
    assert KernelPlan.of(kernel_of(module)).consumers == 2


def test_shared_tiles_over_the_budget_without_a_ring() -> None:
    source = """kernel big(A: gl<bf16>[M, N], B: gl<bf16>[N, 1024], C: gl<f32>[M, 1024]) {
    grid (M / 64) as (i)
    let a = load A[i, 0] : st<bf16>[64, 1024]
    let b = load B[0, 0] : st<bf16>[1024, 64]
    store C[i, 0] = mma_AB(a, b)
}"""
    with pytest.raises(TkError, match=r"the shared tiles need 264192 bytes .* over the 232448-byte budget"):
        compiled(source)


def test_tma_boxes_span_at_most_256_rows() -> None:
    """The runtime's tensor-map encoder takes boxes of at most 256 per dimension: a 320-row tile
    is a compile error at its load, and at its store when only one consumer can hold its rows."""
    with pytest.raises(TkError, match="a TMA box spans at most 256 rows, and this tile has 320") as error:
        compiled(GEMM.replace("BM = 128, BN = 256", "BM = 320, BN = 64"))
    assert error.value.line == 6  # let a = load A[i, k]
    source = """kernel fill(C: gl<f32>[M, 64]) {
    grid (M / 320) as (i)
    store C[i, 0] = one<f32>[320, 64]
}"""
    with pytest.raises(TkError, match="stores its 320 rows of this 320x64 tile as TMA boxes") as error:
        compiled(source)
    assert error.value.line == 3


def test_long_vectors_load_in_boxes_on_128_byte_lines() -> None:
    """A vector longer than one TMA box loads as equal boxes end to end in shared memory, each
    starting on a 128-byte line (an unaligned box destination stopped the kernel with a
    misaligned address on the H200: 400 f32 as five boxes of 80): 480 f32 loads as three boxes
    of 160; 400 f32 has no such boxes and is refused at its load."""
    source = """kernel wide<L = 480>(U: gl<f32>[L], V: gl<f32>[L]) {
    grid (1) as (i)
    store V[0] = load U[0] : rv<f32>[L] * 2.0
}"""
    assert vector_box(480, 4) == 160 and vector_box(512, 2) == 256 and vector_box(200, 4) == 200
    compiled(source)
    with pytest.raises(TkError, match="a vector of 400 elements is loaded as several TMA boxes .* a multiple of 32 "
                                      "elements; none divide 400") as error:
        compiled(source.replace("L = 480", "L = 400"))
    assert error.value.line == 3


SPLIT_K_ELEMENTS = """kernel splitk<BM = 64, BN = 128, BK = 64, KS = 100>(A: gl<bf16>[M, K], B: gl<bf16>[K, N],
        C: gl<f32>[M, N]) {
    grid (ceildiv(M, BM), ceildiv(N, BN), ceildiv(K, KS)) as (i, j, s)
    let k0 = s * KS
    let kend = min(k0 + KS, K)
    var acc = zero<f32>[BM, BN]
    for k in 0 .. ceildiv(kend - k0, BK) {
        acc = mma_AB(load A[i, elem(k0 + k * BK, kend)] : rt<bf16>[BM, BK],
                     load B[elem(k0 + k * BK, kend), j] : st<bf16>[BK, BN], acc)
    }
    store_add C[i, j] = acc
}"""


def test_elem_starts_along_the_innermost_dim_are_16_byte_aligned() -> None:
    """TMA starts a box on a 16-byte boundary of a tensor's innermost dim (another start stopped
    the kernel with an illegal instruction on the H200): split-K slices of 100 K columns start
    A's boxes at multiples of only 4 bf16 elements, a compile error at the load; 104 (a multiple
    of 8) compiles, and so does a start a table entry gives (the run time's to check)."""
    with pytest.raises(TkError, match=r"this load of A starts at elem\(...\) along A's innermost dim, and the start "
                                      r"is a multiple of only 4 element\(s\); TMA .* a multiple of 8 bf16 elements") as error:
        compiled(SPLIT_K_ELEMENTS)
    assert error.value.line == 8
    compiled(SPLIT_K_ELEMENTS.replace("KS = 100", "KS = 104"))
    table = """kernel rows(X: gl<f32>[H, T], Start: gl<i32>[S], Y: gl<f32>[H, T]) {
    grid (S, H) as (s, h)
    let x0 = load Start[s] : i32
    store Y[0, elem(x0)] = load X[0, elem(x0)] : rt<f32>[16, 64]
}"""
    compiled(table)


def test_a_vector_at_any_start_along_the_innermost_dim_loads_from_the_boundary_below() -> None:
    """A vector whose elem start along the innermost dim is not provably 16-byte aligned (a
    sequence offset from a table, or s * 100) loads one box 16 bytes longer from the boundary at
    or below it (tile-swizzle-select's `realigned`: x & -4 for f32), and the consumers read it
    from x & 3 on; one longer than 256 - 4 elements has no such box and is refused."""
    source = """kernel rows<L = 64>(X: gl<f32>[H, T], Start: gl<i32>[S], Y: gl<f32>[H, T]) {
    grid (S, H) as (s, h)
    let x0 = load Start[s] : i32
    store Y[h, elem(x0)] = load X[h, elem(x0)] : rv<f32>[L] * 2.0
}"""
    (load,) = [op for op in kernel_of(compiled(source)).walk() if isinstance(op, LoadOp) and op.tensor.name_hint == "X"]
    assert realignment(load) == 4 and "comes from launch-time data" in load.attributes["realigned"].reason.data
    with pytest.raises(TkError, match=r"this load of X starts at elem\(...\) .* from launch-time data; .* a vector's "
                                      r"load starts its box below the start where it fits one box 4 elements longer"):
        compiled(source.replace("L = 64", "L = 256"))


LATENT_V = """kernel latent_v<DK = 320, BV = 256>(Q: gl<bf16>[B, 64, DK], KV: gl<bf16>[B, NK, DK],
        O: gl<bf16>[B, 64, BV]) {
    grid (1, B) as (vj, b)
    let q = load Q[b, 0, 0] : st<bf16>[64, DK]
    var o = zero<f32>[64, BV]
    for kv in 0 .. ceildiv(NK, 64) {
        let k = load KV[b, kv, 0] : st<bf16>[64, DK]
        o = mma_AB(bf16(mma_ABt(q, k)), load KV[b, kv, vj] : st<bf16>[64, BV], o)
    }
    store O[b, 0, vj] = bf16(o)
}"""


def test_a_tile_wholly_inside_a_constant_dim_has_no_padding() -> None:
    """MLA's values are the first 256 columns of a 320-wide latent row: at a block index whose
    grid extent is 1 the tile never reaches column 320, so it has no padding though 320 is no
    multiple of 256 (this was refused at the kernel's header); with 2 column blocks it would,
    and the refusal points at the store."""
    compiled(LATENT_V)
    with pytest.raises(TkError, match="the store of O at line 10 must not write padding.*dim 320 is not a whole "
                                      "number of 256-element tiles") as error:
        compiled(LATENT_V.replace("grid (1, B)", "grid (2, B)"))
    assert error.value.line == 10


def test_column_vectors_count_in_every_consumer_thread() -> None:
    """A 256-column f32 vector is 64 registers in each thread (replicated), not 8 (split by rows):
    two, their product and the 64x256 tile need 128 + 3 x 64 + 32 (ptxas spilled at 216)."""
    source = (REPO / "tests" / "ptx" / "kernels" / "column_vectors.tk").read_text()
    with pytest.raises(TkError, match="need 352 registers per thread even split over 1 consumer") as error:
        compiled(source)
    # 64 rows is the smallest padded height: fewer columns or the band layout is what helps
    assert "use fewer columns per tile" in error.value.message
    assert "16- or 32-row tiles in the band layout" in error.value.message


ROPE_IN_F32 = """kernel attn_rope<D = 128, BQ = 128, BKV = 64>(
        Q: gl<bf16>[B, H, N, D], K: gl<bf16>[B, H, N, D], V: gl<bf16>[B, H, N, D],
        COS: gl<bf16>[N, D / 2], SIN: gl<bf16>[N, D / 2], O: gl<bf16>[B, H, N, D]) {
    grid (ceildiv(N, BQ), H, B) as (qi, h, b)
    let q1 = f32(load Q[b, h, qi, 0] : rt<bf16>[BQ, D / 2])
    let q2 = f32(load Q[b, h, qi, 1] : rt<bf16>[BQ, D / 2])
    let cq = f32(load COS[qi, 0] : rt<bf16>[BQ, D / 2])
    let sq = f32(load SIN[qi, 0] : rt<bf16>[BQ, D / 2])
    let scale = log2e / sqrt(D)
    let qa = bf16((q1 * cq - q2 * sq) * scale)
    let qb = bf16((q2 * cq + q1 * sq) * scale)
    var o = zero<f32>[BQ, D]
    var m = neg_infty<f32>[BQ]
    var l = zero<f32>[BQ]
    for kv in 0 .. ceildiv(N, BKV) {
        let k1 = f32(load K[b, h, kv, 0] : rt<bf16>[BKV, D / 2])
        let k2 = f32(load K[b, h, kv, 1] : rt<bf16>[BKV, D / 2])
        let ck = f32(load COS[kv, 0] : rt<bf16>[BKV, D / 2])
        let sk = f32(load SIN[kv, 0] : rt<bf16>[BKV, D / 2])
        let v = load V[b, h, kv, 0] : st<bf16>[BKV, D]
        let s = mma_ABt(qb, bf16(k2 * ck + k1 * sk), mma_ABt(qa, bf16(k1 * ck - k2 * sk)))
        let m_new = max(m, row_max(s))
        let p = exp2(sub_row(s, m_new))
        let alpha = exp2(m - m_new)
        l = l * alpha + row_sum(p)
        o = mma_AB(bf16(p), v, mul_row(o, alpha))
        m = m_new
    }
    store O[b, h, qi, 0] = bf16(div_row(o, l))
}
"""


def test_a_register_refusal_names_the_tiles_live_together() -> None:
    """Over the budget, the message says where the most tile registers are live at once and which
    tiles those are, so the user knows what to shrink (K's four f32 copies of a rotary attention):
    the values the estimate counts at its peak, whose registers add up to the need it states."""
    with pytest.raises(TkError, match=r"the register tiles need 276 registers .* \(at line 21 these are live together: "
                                      r"o 128x128xf32 \(64\), k1 64x64xf32 \(32\), k2 64x64xf32 \(32\), "
                                      r"ck 64x64xf32 \(32\) and 6 more: 244 registers per thread, and 32 for "
                                      r"addresses and indices\)"):
        compiled(ROPE_IN_F32)



def test_a_register_refusal_adds_up_to_its_need() -> None:
    """A norm epilogue of a 64x256 f32 accumulator at a ragged N (its tail mask adds a copy): the
    values named are those the estimate counts at its peak, 256 + 32 = the 288 it needs."""
    source = (
        "kernel k(A: gl<bf16>[M, K], B: gl<bf16>[K, N], C: gl<bf16>[M, N]) {\n"
        "    grid (ceildiv(M, 64)) as (i)\n"
        "    var acc = zero<f32>[64, 256]\n"
        "    for k in 0 .. ceildiv(K, 64) {\n"
        "        acc = mma_AB(load A[i, k] : st<bf16>[64, 64], load B[k, 0] : st<bf16>[64, 256], acc)\n"
        "    }\n"
        "    let r = rsqrt(row_sum(acc * acc) * (1.0 / 256.0) + 1e-6)\n"
        "    store C[i, 0] = bf16(mul_row(acc, r))\n"
        "}\n"
    )
    with pytest.raises(TkError, match=r"need 288 registers .* \(at line 7 these are live together: acc 64x256xf32 "
                                      r"\(128\), a temporary \(an element-wise result at line 7\) 64x256xf32 \(128\): 256 "
                                      r"registers per thread, and 32 for addresses and indices\)"):
        compiled(source)

def test_a_register_refusal_points_at_its_line_and_names_a_tail_masks_copy() -> None:
    """The refusal's caret is at the crowded point (not the kernel's name); an unnamed product
    that tile-mask-tails copies for the ragged N is named as that product, masked past the end
    (not the compiler's scf.if); 16-row tiles beside an mma are told they cost 64 rows."""
    source = (
        "kernel k(Q: gl<bf16>[M, 64], K: gl<bf16>[N, 64], O: gl<f32>[M, 256], L: gl<f32>[M]) {\n"
        "    grid (ceildiv(M, 64)) as (i)\n"
        "    let q = load Q[i, 0] : st<bf16>[64, 64]\n"
        "    var o = zero<f32>[64, 256]\n"
        "    var m = neg_infty<f32>[64]\n"
        "    for j in 0 .. ceildiv(N, 256) {\n"
        "        let s = mma_ABt(q, load K[j, 0] : st<bf16>[256, 64]) * 2.0\n"
        "        m = max(m, row_max(s))\n"
        "        o = o + s * s\n"
        "    }\n"
        "    store O[i, 0] = o\n"
        "    store L[i] = m\n"
        "}\n"
    )
    with pytest.raises(TkError, match=r"a temporary \(an mma product at line 7\), masked past the end 64x256xf32 "
                                      r"\(128\), s 64x256xf32") as error:
        compiled(source)
    assert error.value.line == 7 and "scf.if" not in error.value.message
    assert "band layout" not in error.value.message  # 64-row tiles with an mma: only fewer columns help
    short = source.replace("[M, 64]", "[M, 16]").replace("64, 64]", "16, 64]").replace("zero<f32>[64, 256]", "zero<f32>[16, 256]")
    short = short.replace("neg_infty<f32>[64]", "neg_infty<f32>[16]").replace("ceildiv(M, 64)", "ceildiv(M, 16)")
    with pytest.raises(TkError, match="a tile of fewer than 64 rows costs the registers of its 64-row padding"):
        compiled(short)


def test_a_zero_merged_with_a_loops_initial_accumulator_is_not_held_across_the_loop() -> None:
    """CSE merges `var s = zero<f32>[64, 128]` (a loop's initial accumulator) with the equal
    `zero<f32>[64, 128]` read after the loop; tile-rematerialize fills that use again, so the
    estimate no longer holds 64 registers of zeros across the K loop beside s and dh (a fused
    cross-entropy backward was refused at 290 registers; ptxas fits it without spills)."""
    source = (
        "kernel k(H: gl<bf16>[M, 256], W: gl<bf16>[V, 256], Lab: gl<f32>[M], dH: gl<bf16>[M, 256]) {\n"
        "    grid (ceildiv(M, 64)) as (i)\n"
        "    let lab = load Lab[i] : rv<f32>[64]\n"
        "    var dh = zero<f32>[64, 256]\n"
        "    for j in 0 .. ceildiv(V, 128) {\n"
        "        var s = zero<f32>[64, 128]\n"
        "        for k in 0 .. 4 {\n"
        "            s = mma_ABt(load H[i, k] : st<bf16>[64, 64], load W[j, k] : st<bf16>[128, 64], s)\n"
        "        }\n"
        "        let hit = col_index(s, j * 128) == add_row(zero<f32>[64, 128], lab)\n"
        "        dh = mma_AB(bf16(exp(s) - hit), load W[j, 0] : st<bf16>[128, 256], dh)\n"
        "    }\n"
        "    store dH[i, 0] = bf16(dh)\n"
        "}\n"
    )
    module = compiled(source)
    assert "used after the scf.for at line 7" in str(module)
    assert KernelPlan.of(kernel_of(module)).consumers == 1


SKIPPED_TILES = """
kernel bsgemm<BM = 64, BN = 256, BK = 64>(A: gl<bf16>[M, K], B: gl<bf16>[K, N], Mask: gl<i32>[MB, KB],
        C: gl<bf16>[M, N]) {
    grid (ceildiv(M, BM), ceildiv(N, BN)) as (i, j)
    var acc = zero<f32>[BM, BN]
    for k in 0 .. ceildiv(K, BK) {
        if load Mask[i, k] : i32 != 0 {
            acc = mma_AB(load A[i, k] : st<bf16>[BM, BK], load B[k, j] : st<bf16>[BK, BN], acc)
        }
    }
    store C[i, j] = bf16(acc)
}
"""


def test_an_accumulation_under_an_if_reuses_the_accumulators_registers() -> None:
    """acc = mma(a, b, acc) in an if's branch costs acc once, as it does outside one (it was
    counted twice, 288 registers, and the block-sparse GEMM refused); the same GEMM without the
    if needs 160."""
    plan = KernelPlan.of(kernel_of(compiled(SKIPPED_TILES)))
    assert "the demand of 160 registers per thread fits" in plan.reasons["consumers"]


def test_a_kernel_of_vectors_only_is_described_so() -> None:
    """A 1-D scan holds its 512-element vectors in the column layout, a quarter in every thread:
    the refusal and the plan's reason speak of vectors, not of (0-row) register tiles."""
    source = """
kernel scan<BV = 512>(X: gl<f32>[B, L], Y: gl<f32>[B, L]) {
    grid (B) as (b)
    var carry = 0.0
    for t in 0 .. ceildiv(L, BV) {
        let x = load X[b, t] : rv<f32>[BV]
        store Y[b, t] = cumsum(x) + carry
        carry += sum(x)
    }
}
"""
    with pytest.raises(TkError, match="the register vectors need .* use shorter vectors"):
        compiled(source)
    plan = KernelPlan.of(kernel_of(compiled(source.replace("BV = 512", "BV = 256"))))
    assert plan.reasons["consumers"].startswith("no register tiles, only vectors: 1 consumer warpgroup(s)")


def test_an_mma_wider_than_one_wgmma_is_refused() -> None:
    path = Path(__file__).resolve().parents[2] / "examples" / "gemm.tk"
    module = parse_tk(path.read_text(), str(path), {"BN": 272, "BM": 64})
    with pytest.raises(TkError, match="this mma produces 272 columns, and the GPU backend computes an mma as one wgmma"):
        compile_module(module, "ptx")


def test_the_plan_is_one_attribute_read_through_kernel_plan() -> None:
    """tile-occupancy-plan leaves one #tile.plan, which KernelPlan.of reads with its reasons; a
    kernel no pass planned gets the defaults; planning again starts afresh (no stale field stays)."""
    unplanned = kernel_of(parse_tk(GEMM, "gemm.tk"))
    assert KernelPlan.of(unplanned) == KernelPlan() and not KernelPlan.of(unplanned).reasons
    module = compiled(GEMM)
    kernel = kernel_of(module)
    planned = kernel.attributes["plan"]
    assert isinstance(planned, PlanAttr) and not set(PLAN_DECISIONS) & set(kernel.attributes)
    assert KernelPlan.of(kernel).reasons["threads"] == "1 producer + 2 consumer warpgroup(s) of 128 threads"
    KernelPlan.decide(kernel, "heavy_first", 1, "stale")
    assert KernelPlan.of(kernel).heavy_first == 1
    TileOccupancyPlanPass().apply(Context(), module)
    assert kernel.attributes["plan"] == planned


def test_tile_pipeline_records_its_layout_in_the_plan_within_the_budget() -> None:
    """Without a plan's smem_bytes, tile-pipeline writes its layout's total into the plan; a layout
    over the budget, which no plan may hold, is an error at the kernel."""
    module = parse_mlir((INPUTS / "gemm.mlir").read_text(), "gemm.mlir")
    kernel = kernel_of(module)
    KernelPlan.decide(kernel, "stages", 2, "the test's")
    TilePipelinePass().apply(Context(), module)
    plan = KernelPlan.of(kernel)
    assert (plan.stages, plan.smem_bytes) == (2, smem_plan(kernel, 2).total)
    assert plan.reasons["smem_bytes"] == "tile-pipeline's layout of 2 stage(s)"
    module = parse_mlir((INPUTS / "gemm.mlir").read_text(), "gemm.mlir")
    KernelPlan.decide(kernel_of(module), "stages", 9, "the test's")
    with pytest.raises(TkError, match=r"shared memory overflows: the layout of 9 stage\(s\) needs 477184 bytes"):
        TilePipelinePass().apply(Context(), module)


LINEAR_ATTENTION = (REPO / "examples" / "linear_attention.tk").read_text()


def test_register_tiles_of_two_heights_replicate_the_shorter() -> None:
    """Linear attention at D = 128 with 64-row chunks: the 128-row state splits over two
    consumers, the chunk's 64-row tiles are replicated in both, and the plan and the report say so."""
    module = compiled(LINEAR_ATTENTION.replace("D = 64", "D = 128"))
    kernel = kernel_of(module)
    plan = KernelPlan.of(kernel)
    assert (plan.consumers, plan.replicated_rows) == (2, 64)
    assert (plan.consumer_rows(128), plan.consumer_rows(64)) == (64, 64)
    assert "64 rows are replicated: each of the 2 consumers computes them whole" in plan.reasons["replicated_rows"]
    assert "replicated  rows <= 64" in report(module)


def test_a_replicated_row_vector_comes_from_a_column_vector() -> None:
    """SSD's state update at D = 128: a 64-row chunk (replicated in the two consumers of the
    128-row state) scaled per row by a vector its cumsum computes in the column layout. Each
    consumer moves the whole vector to the row layout (it was an internal error: the transpose's
    verifier wanted a row fragment split over the consumers)."""
    import tkc

    kernel = tkc.compile(REPO / "examples" / "ssd.tk", kernel="ssd_states", D=128)
    assert "sm90.transpose" in kernel.ir("convert-tile-to-sm90") and kernel.ptx


def test_one_height_replicates_nothing() -> None:
    plan = KernelPlan.of(kernel_of(compiled(GEMM)))
    assert plan.replicated_rows == 0 and "replicated_rows" not in plan.reasons
    assert plan.consumer_rows(128) == 64


def test_replicated_tiles_cost_their_whole_rows() -> None:
    """The register estimate counts a replicated tile whole in every consumer, a split one by its share."""
    from xdsl.dialects.builtin import Float32Type
    from xdsl.ir import Block

    from tkc.passes.occupancy import register_cost

    short, tall = Block(arg_types=[RegisterTileType([64, 128], Float32Type()), RegisterTileType([128, 128], Float32Type())]).args
    assert register_cost(short, 2, set()) == register_cost(short, 1, set()) == 64
    assert register_cost(tall, 2, set()) == 64 and register_cost(tall, 1, set()) == 128


def test_consumer_pins_split_the_tallest_tiles() -> None:
    """A pin that would replicate even the tallest tiles (every consumer computing all of it) is refused."""
    with pytest.raises(TkError, match=r"@consumers\(2\) splits the 64-row register tiles into 32 rows per warpgroup"):
        compiled(LINEAR_ATTENTION.replace("kernel", "@consumers(2)\nkernel", 1))


STREAMED = """
kernel k<BM = 64, BN = 128>(X: gl<bf16>[M, N], Y: gl<bf16>[M, N]) {
    grid (ceildiv(M, BM), ceildiv(N, BN)) as (i, j)
    let x = f32(load X[i, j] : rt<bf16>[BM, BN])
    store Y[i, j] = bf16(x * 2.0)
}
"""


@pytest.mark.parametrize(("change", "persistent", "tile_stages"), [
    ("", True, 4),  # every load a tile's own: streamed, a ring as deep as a loop's
    ("@stages(2)\nkernel k", True, 2),
    ("@persistent(0)\nkernel k", False, 1),
    # a register tile as an mma's B goes through a tile.to_shared buffer, which lives across the
    # tile: not streamed, one stage
    ("store Y[i, j] = bf16(x * 2.0)|store Y[i, j] = bf16(mma_AB(load X[i, 0] : st<bf16>[BM, 64], bf16(x)))",
     False, 1),
])
def test_streamed_tiles(change: str, persistent: bool, tile_stages: int) -> None:
    """plan.streams_tiles and tile_ring_stages: which kernels walk their tiles with the next
    tiles' loads in flight, and how deep that ring is."""
    from tkc.passes.plan import streaming_candidate, streams_tiles, tile_ring_stages

    old, new = change.split("|") if "|" in change else ("kernel k", change or "kernel k")
    kernel = kernel_of(compiled(STREAMED.replace(old, new, 1)))
    plan = KernelPlan.of(kernel)
    assert plan.persistent == persistent == streams_tiles(kernel)
    assert streaming_candidate(kernel) == (persistent or "@persistent(0)" in change)
    assert tile_ring_stages(kernel, plan.stages) == tile_stages


SHIFTED = """kernel shifted<BT = 64, BC = 64>(X: gl<bf16>[T, C], Y: gl<bf16>[T, C]) {
    grid (ceildiv(T, BT), ceildiv(C, BC)) as (t, c)
    store Y[t, c] = load X[elem(t * BT SHIFT), c] : rt<bf16>[BT, BC]
}"""
CARRIED_TAPS = """kernel taps<BT = 64, BC = 64>(X: gl<bf16>[T, C], Y: gl<bf16>[T, C]) {
    grid (ceildiv(T, BT), ceildiv(C, BC)) as (t, c)
    var acc = zero<f32>[BT, BC]
    for k in 0 .. 4 {
        acc += f32(load X[elem(t * BT - 3 + k, END), c] : rt<bf16>[BT, BC])
    }
    store Y[elem(t * BT, T), c] = bf16(acc)
}"""


def test_a_shifted_window_stores_where_its_padding_begins_past_the_destination_end() -> None:
    """A value whose valid extent is provably no shorter than the destination's writes none of its
    padding (it lies past the end, where TMA clips): X shifted back by 3 rows, and taps summed in
    a loop whose ranges all hold T - t * BT elements. Shifted forward (3 rows fewer valid), or
    with a range whose length changes with k, the store is refused."""
    compiled(SHIFTED.replace("SHIFT", "- 3"))
    compiled(CARRIED_TAPS.replace("END", "T - 3 + k"))
    with pytest.raises(TkError, match="the store of Y at line 3 must not write padding"):
        compiled(SHIFTED.replace("SHIFT", "+ 3"))
    with pytest.raises(TkError, match="the store of Y at line 7 must not write padding"):
        compiled(CARRIED_TAPS.replace("END", "T - 3 + 2 * k"))


def test_an_elem_start_of_a_multiple_past_the_alignment_says_what_it_lacks() -> None:
    """A start at multiples of 100 bf16 elements is a multiple of only 4 of the 8 TMA needs (the
    message said "a multiple of only 100", which reads as more than 8)."""
    with pytest.raises(TkError, match=r"is a multiple of 100 element\(s\), which puts it on a multiple of only 4, not of the 8 TMA needs"):
        compiled("""kernel k<KS = 100>(X: gl<bf16>[M, N], V: gl<f32>[M]) {
    grid (ceildiv(M, 64), 2) as (i, s)
    let x = load X[i, elem(s * KS)] : rt<bf16>[64, 64]
    store V[i] = row_sum(f32(x))
}
""")
