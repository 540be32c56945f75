"""The late-mma overlap, heavy-first launch order, epilogue staging in Q's bytes, PtxBuilder's
power-of-two div/rem, and the 2-CTA cluster launch contract.

Pinned down:
  - plan.late_tail finds attention's [mul_row, P.V mma] tail and nothing in GEMM's K loop, in a
    loop with tile.to_shared, or where the carried accumulator has another reader; tile-pipeline
    records it as `overlap` = #tile.decision<1>, `@overlap(0)` turns it off (no
    `softmax_overlap` loop in sm90 IR) and `@overlap(1)` where it cannot apply is an error;
  - tile-pipeline's `turns` on attention's overlapped loop (2 consumers): each consumer waits on
    its named barrier before issuing and arrives on the next one's after, the last hands the first
    turn over once; `@turns(0)` turns it off, `@turns(1)` without an overlapped loop is an error,
    a loop with more mmas than the two a turn covers (the backward's dK/dV loop) and a single
    consumer take none;
  - plan.staging_reuses_single_tiles holds for attention (3 stages, 231424 bytes at D=128, the
    O epilogue staged at Q's offset) and not for the persistent GEMM;
  - tile-occupancy-plan's heavy_first decision (axis 0, qi) on causal attention only, unless
    `@heavy_first(0)`, and the reversed block index (`sm90.grid_dim 0`) it lowers to; with
    `@persistent` the same decision orders the walk (qi slowest, reversed; group_m 1);
  - varlen attention (trip counts read from a table at its grid axis t) walks persistent with t
    slowest in grid order (table_first) where the walk keeps the ring's depth (D 64), one CTA
    per tile where it would not (D 128), with `@persistent(0)`, or where the table is read at
    two grid axes;
  - PtxBuilder.div/rem by an unsigned power of two are a shr/and, other cases still div/rem;
  - with @cluster(2) GEMM's ABI asks no multiple of M (it counts tile rows with ceildiv), not
    even with a vector store (limited to the end of its tensor), and its grid rounds an odd
    number of tile rows up to whole pairs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tkc.abi import evaluate
from tkc.backends.ptx_printer import print_ptx
from tkc.diagnostics import TkError
from tkc.dialects.ptx import DivOp
from tkc.dialects import sm90
from tkc.dialects.ptx_builder import PtxBuilder
from tkc.dialects.tile import BroadcastOp, KernelOp, LoadOp, MmaOp, StoreOp, ToSharedOp
from tkc.driver import compile_module, ir_text
from tkc.frontend import parse_tk
from tkc.passes.plan import WHOLE_AXIS, KernelPlan, late_tail, loop_loads, staging_reuses_single_tiles

REPO = Path(__file__).resolve().parents[2]
ATTENTION = (REPO / "examples" / "attention.tk").read_text()
GEMM = (REPO / "examples" / "gemm.tk").read_text()
LINEAR_ATTENTION = (REPO / "examples" / "linear_attention.tk").read_text()
VARLEN = (REPO / "examples" / "attention_varlen.tk").read_text()


def compiled(source: str, emit: str = "tile", params: dict[str, int | bool | float] | None = None) -> ModuleOp:
    module = parse_tk(source, "k.tk", params)
    compile_module(module, emit=emit)
    return module


def kernel_of(module: ModuleOp) -> KernelOp:
    return next(op for op in module.walk() if isinstance(op, KernelOp))


def first_loop(module: ModuleOp) -> scf.ForOp:
    return next(op for op in module.walk() if isinstance(op, scf.ForOp))


def annotated(source: str, anchor: str, annotation: str) -> str:
    """`source` with `annotation` on its own line before the (only) line starting with `anchor`."""
    assert source.count(anchor) == 1
    indent = anchor[: len(anchor) - len(anchor.lstrip())]
    return source.replace(anchor, f"{indent}{annotation}\n{anchor}")


# ----------------------------------------------------------------- late-mma overlap


def test_late_tail_of_attention_is_mul_row_then_pv_mma() -> None:
    loop = first_loop(compiled(ATTENTION))
    tail = late_tail(loop)
    assert tail is not None
    last_mma = [op for op in loop.body.block.ops if isinstance(op, MmaOp)][-1]
    assert [type(op) for op in tail] == [BroadcastOp, MmaOp] and tail[-1] is last_mma
    overlap = loop.attributes["overlap"]
    assert overlap.int_value == 1 and KernelPlan.overlaps(loop)


def test_late_tail_is_none_for_gemm_and_linear_attention() -> None:
    gemm_loop = first_loop(compiled(GEMM))
    assert late_tail(gemm_loop) is None and "overlap" not in gemm_loop.attributes
    linear_loop = first_loop(compiled(LINEAR_ATTENTION))
    assert any(isinstance(op, ToSharedOp) for op in linear_loop.walk())
    assert late_tail(linear_loop) is None and "overlap" not in linear_loop.attributes


def test_late_tail_is_none_when_the_carried_accumulator_has_another_reader() -> None:
    line = "l = l * alpha + row_sum(p)"
    assert line in ATTENTION
    loop = first_loop(compiled(ATTENTION.replace(line, f"{line} + row_sum(o)")))
    assert late_tail(loop) is None and "overlap" not in loop.attributes


def test_overlap_0_pins_the_decision_off_and_the_lowering_follows() -> None:
    assert "softmax_overlap" in ir_text(compiled(ATTENTION, "sm90"))
    source = annotated(ATTENTION, "    for kv in", "@overlap(0)")
    loop = first_loop(compiled(source))
    assert loop.attributes["overlap"].int_value == 0 and not KernelPlan.overlaps(loop)
    assert "softmax_overlap" not in ir_text(compiled(source, "sm90"))


def test_overlap_1_on_gemm_is_an_error() -> None:
    with pytest.raises(TkError, match=r"@overlap\(1\) needs a loop whose last mma") as error:
        compiled(annotated(GEMM, "    for k in", "@overlap(1)"))
    assert error.value.line is not None


def test_attention_consumers_take_turns_issuing_their_mmas() -> None:
    loop = first_loop(compiled(ATTENTION))
    assert KernelPlan.takes_turns(loop) and "2 consumer warpgroups take turns" in loop.attributes["turns"].reason.data
    sm90_ir = ir_text(compiled(ATTENTION, "sm90"))
    # once at the start (the last consumer hands the first turn over), then once per iteration
    assert sm90_ir.count("sm90.named_barrier_arrive") == 2
    ptx = print_ptx(compiled(ATTENTION, "ptx"))
    assert ptx.count("bar.arrive 4, 256;") == 1 and ptx.count("bar.arrive %r") == 1


def test_turns_0_pins_them_off_and_turns_1_needs_an_overlapped_loop() -> None:
    source = annotated(ATTENTION, "    for kv in", "@turns(0)")
    loop = first_loop(compiled(source))
    assert loop.attributes["turns"].int_value == 0 and not KernelPlan.takes_turns(loop)
    assert "named_barrier_arrive" not in ir_text(compiled(source, "sm90"))
    with pytest.raises(TkError, match=r"@turns\(1\) needs an overlapped loop") as error:
        compiled(annotated(ATTENTION, "    for kv in", "@overlap(0)\n    @turns(1)"))
    assert error.value.line is not None


def test_a_loop_of_more_mmas_than_a_turn_covers_takes_none() -> None:
    source = (REPO / "examples" / "attention_bwd.tk").read_text()
    module = parse_tk(source, "attention_bwd.tk", None, kernel="attn_bwd_dkdv")
    compile_module(module, emit="tile")
    inner = [op for op in module.walk() if isinstance(op, scf.ForOp) and KernelPlan.overlaps(op)]
    assert inner and all(not KernelPlan.takes_turns(loop) for loop in inner)
    assert "issues 4 mmas and a turn covers two" in inner[0].attributes["turns"].reason.data


def test_one_consumer_takes_no_turns() -> None:
    loop = first_loop(compiled(ATTENTION, params={"BQ": 64}))
    assert KernelPlan.overlaps(loop) and "turns" not in loop.attributes


# ----------------------------------------------------------------- epilogue staging in the single tiles


def test_attention_stages_its_epilogue_in_q() -> None:
    kernel = kernel_of(compiled(ATTENTION))
    single = [op for op in kernel.body.block.ops if isinstance(op, LoadOp)]
    assert len(single) == 1 and staging_reuses_single_tiles(kernel, single)
    plan = KernelPlan.of(kernel)
    assert (plan.persistent, plan.stages, plan.smem_bytes) == (False, 3, 231424)
    (q,) = single
    o_store = next(op for op in kernel.walk() if isinstance(op, StoreOp) and op.tensor.name_hint == "O")
    assert o_store.attributes["smem_offset"] == q.attributes["smem_offset"]


def test_persistent_gemm_does_not_reuse_its_loads() -> None:
    kernel = kernel_of(compiled(GEMM))
    assert KernelPlan.of(kernel).persistent
    # GEMM has no kernel-level load; its ring loads stand in, so that persistence alone refuses
    ring_loads = loop_loads(first_loop(kernel))[1]
    assert ring_loads and not staging_reuses_single_tiles(kernel, ring_loads)


# ----------------------------------------------------------------- heavy-first launch order


def test_causal_attention_launches_qi_heavy_first() -> None:
    causal = compiled(ATTENTION, params={"CAUSAL": 1})
    plan = KernelPlan.of(kernel_of(causal))
    assert plan.heavy_first == 0 and "grows with qi" in plan.reasons["heavy_first"]
    assert "sm90.grid_dim 0" in ir_text(compiled(ATTENTION, "sm90", {"CAUSAL": 1}))


def test_no_heavy_first_without_causal_or_with_the_pin() -> None:
    assert "heavy_first" not in KernelPlan.of(kernel_of(compiled(ATTENTION, params={"CAUSAL": 0}))).reasons
    assert "sm90.grid_dim" not in ir_text(compiled(ATTENTION, "sm90", {"CAUSAL": 0}))
    pinned = annotated(ATTENTION, "kernel attn_fwd", "@heavy_first(0)")
    kernel = kernel_of(compiled(pinned, params={"CAUSAL": 1}))
    # the pin is credited: the trip count grows with qi, and the tiles keep grid order
    plan = KernelPlan.of(kernel)
    assert plan.heavy_first == -1 and plan.reasons["heavy_first"].startswith("pinned off by @heavy_first(0)")
    assert not plan.persistent and "kept in grid order by @heavy_first(0)" in plan.reasons["persistent"]


def test_persistent_causal_attention_walks_qi_slowest_from_the_last() -> None:
    pinned = annotated(ATTENTION, "kernel attn_fwd", "@persistent")
    plan = KernelPlan.of(kernel_of(compiled(pinned, params={"CAUSAL": 1})))
    assert plan.persistent and plan.heavy_first == 0 and plan.group_m == 1
    assert "qi slowest" in plan.reasons["heavy_first"] and "heavy-first" in plan.reasons["group_m"]
    grouped = annotated(ATTENTION, "kernel attn_fwd", "@persistent @heavy_first(0)")
    plan = KernelPlan.of(kernel_of(compiled(grouped, params={"CAUSAL": 1})))
    # its loops load K and V, the same for every qi of a head: the walk takes qi whole, fastest
    assert plan.heavy_first == -1 and plan.group_m == WHOLE_AXIS and "qi fastest" in plan.reasons["group_m"]


def test_varlen_attention_walks_its_tile_table_in_order_where_the_ring_keeps_its_depth() -> None:
    # D 64: a persistent CTA keeps 4 stages, so it walks the tiles, t (the table's row) slowest
    plan = KernelPlan.of(kernel_of(compiled(VARLEN, params={"D": 64})))
    assert plan.persistent and plan.table_first == 0 and plan.group_m == 1 and plan.heavy_first == -1
    assert "table's order" in plan.reasons["persistent"] and "t slowest" in plan.reasons["table_first"]
    # D 128: the walk would leave the ring 2 stages instead of 3, so one CTA per tile
    plan = KernelPlan.of(kernel_of(compiled(VARLEN, params={"D": 128})))
    assert not plan.persistent and plan.table_first == -1 and "2 stages instead of 3" in plan.reasons["persistent"]
    pinned = annotated(VARLEN, "kernel attn_varlen", "@persistent(0)")
    plan = KernelPlan.of(kernel_of(compiled(pinned, params={"D": 64})))
    assert not plan.persistent and plan.table_first == -1


def test_a_table_read_at_two_grid_axes_gives_no_order() -> None:
    # the heads' tables differ (Tiles[h, t]): no one axis orders the work, one CTA per tile
    two_axes = VARLEN.replace("Tiles: gl<i32>[NT, 2]", "Tiles: gl<i32>[H, NT, 2]").replace(
        "load Tiles[t, 0]", "load Tiles[h, t, 0]").replace("load Tiles[t, 1]", "load Tiles[h, t, 1]")
    plan = KernelPlan.of(kernel_of(compiled(two_axes, params={"D": 64})))
    assert not plan.persistent and "read from memory" in plan.reasons["persistent"]


# ----------------------------------------------------------------- PtxBuilder div/rem by a constant


def builder_with_param() -> tuple[PtxBuilder, SSAValue]:
    b = PtxBuilder.kernel("k", params=[("n", "u32")])
    return b, b.ld_param("u32", "n")


def div_ops(b: PtxBuilder) -> list[DivOp]:
    return [op for op in b.entry.body.block.ops if isinstance(op, DivOp)]


def test_unsigned_power_of_two_div_and_rem_become_shift_and_mask() -> None:
    b, n = builder_with_param()
    assert b.div("u32", n, 1) is n
    b.div("u32", n, 4)
    b.rem("u32", n, 8)
    b.ret()
    text = print_ptx(b.module)
    assert "shr.u32 %r1, %r0, 2;" in text and "and.b32 %r2, %r0, 7;" in text
    assert not div_ops(b) and "div." not in text and "rem." not in text


def test_unsigned_division_by_another_constant_is_a_multiply_high() -> None:
    """ptxas would expand div.u32 by an immediate into its reciprocal sequence (I2F, MUFU.RCP, F2I)."""
    b, n = builder_with_param()
    b.div("u32", n, 3)
    b.rem("u32", n, 6)
    b.ret()
    text = print_ptx(b.module)
    assert not div_ops(b) and "div." not in text and "rem." not in text
    assert "mul.hi.u32 %r1, %r0, 1431655766;" in text


@pytest.mark.parametrize(("ty", "divisor"), [("s32", 4), ("s32", 3)])
def test_other_divisions_keep_div(ty: str, divisor: int) -> None:
    b, n = builder_with_param()
    b.div(ty, n, divisor)
    b.ret()
    assert len(div_ops(b)) == 1 and f"div.{ty} %r1, %r0, {divisor};" in print_ptx(b.module)


# ----------------------------------------------------------------- 2-CTA clusters


def test_cluster_gemm_abi_allows_an_odd_number_of_tile_rows() -> None:
    kernel = next(op for op in compiled(annotated(GEMM, "kernel gemm", "@cluster(2)"), "sm90").walk()
                  if isinstance(op, sm90.KernelOp))
    abi = kernel.kernel_abi()
    assert "M" not in dict(abi.divisibility)  # ceildiv(M, 128): a partial last tile row is fine too
    # grid[0] = 2 * min(ceildiv(ceildiv(M, 128), 2) * ceildiv(N, 256), num_sms / 2): M = 384 is 3 tile rows, so
    # 2 pairs (the last one half out of bounds), times 2 column tiles = 4 clusters (under 66) = 8 CTAs
    assert evaluate(abi.grid[0], {"M": 384, "N": 512, "K": 256, "num_sms": 132}) == 8
    assert abi.grid[1:] == (1, 1)


def test_cluster_of_four_grid_holds_the_clusters_the_device_runs_at_once() -> None:
    kernel = next(op for op in compiled(annotated(GEMM, "kernel gemm", "@cluster(4)"), "sm90").walk()
                  if isinstance(op, sm90.KernelOp))
    abi = kernel.kernel_abi()
    # 4 * min(ceildiv(ceildiv(M, 128), 4) * ceildiv(N, 256), num_sms / 4, max_clusters): 32 groups of 4 tile rows
    # by 2 column tiles are 64 clusters, num_sms / 4 is 33, and the device runs 30 at once
    assert evaluate(abi.grid[0], {"M": 16384, "N": 512, "K": 256, "num_sms": 132, "max_clusters": 30}) == 120
    assert evaluate(abi.grid[0], {"M": 384, "N": 512, "K": 256, "num_sms": 132, "max_clusters": 30}) == 8
    assert abi.grid[1:] == (1, 1)


def test_cluster_with_a_vector_store_allows_an_odd_number_of_tile_rows() -> None:
    """A pointer store stops at the end of its tensor (its limit), so the half out-of-bounds last
    pair of a cluster writes nothing there either: M need not hold whole pairs of tile rows."""
    source = annotated(GEMM, "kernel gemm", "@cluster(2)")
    source = source.replace("C: gl<bf16>[M, N])", "C: gl<bf16>[M, N], R: gl<f32>[M])")
    source = source.replace("store C[i, j] = bf16(acc)", "store C[i, j] = bf16(acc)\n    store R[i] = row_sum(acc)")
    module = compiled(source, "sm90", {"BN": 128})  # the row sum's tail mask needs registers too
    kernel = next(op for op in module.walk() if isinstance(op, sm90.KernelOp))
    assert kernel.cluster is not None and kernel.cluster.value.data == 2
    assert "M" not in dict(kernel.kernel_abi().divisibility)
    stores = [op for op in module.walk() if isinstance(op, sm90.StoreVectorGlobalOp)]
    assert len(stores) == 1 and isinstance(stores[0].limit.owner, arith.SubiOp)


@pytest.mark.parametrize("n, one_cta", [(1024, False), (2048, False), (4096, True), (4000, True), (16384, True)])
def test_a_heavy_first_walk_launches_one_cta_per_tile_on_long_grids(n: int, one_cta: bool) -> None:
    """Causal attention at D 64 is planned as a persistent heavy-first walk; a launch with 32 or
    more query tiles (ONE_CTA_FROM_TILES) takes the @persistent(0) variant, whose running CTAs
    share one head's keys in L2 (H100: 1.06-1.26x faster from N 2048 on), shorter grids the walk
    (and either one its whole-tiles variant where N is a multiple of the tile)."""
    import ml_dtypes
    import numpy as np

    import tkc
    from tkc.abi import ONE_CTA_FROM_TILES

    kernel = tkc.compile(str(REPO / "examples" / "attention.tk"), D=64, CAUSAL=True)
    one = kernel.one_cta_per_tile
    assert one is not None and not KernelPlan.of(next(o for o in one.module.walk() if isinstance(o, KernelOp))).persistent
    assert "one CTA per tile from 32 qi" in kernel.report()
    b, h = max(1, 8192 // n), 2
    q = np.zeros((b, h, n, 64), ml_dtypes.bfloat16)
    chosen = kernel._variant_for((q, q, q, q, np.zeros((b, h, n), np.float32)))
    assert (chosen in (one, one.whole_tiles)) == one_cta
    assert (-(-n // 128) >= ONE_CTA_FROM_TILES) == one_cta
    assert (chosen in (kernel.whole_tiles, one.whole_tiles)) == (n % 128 == 0)
    pinned = tkc.compile(str(REPO / "examples" / "attention.tk"), D=64, CAUSAL=True, **{"@persistent": 1})
    assert pinned.one_cta_per_tile is None and "variant     one CTA" not in pinned.report()
