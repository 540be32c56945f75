"""Register tiles whose rows are no multiple of 64 on the GPU: fragments of whole 64-row slices
(plan.fragment_rows), split or replicated, what they cost in the register model, the buffers of
such shared tiles a wgmma reads as A, the fragment moves that stay inside the tile, and the
located errors for the uses the backend refuses."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from test_sm90_to_ptx import F32, kernel, lower, read_tile, simulate, write_tile
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

from tkc.diagnostics import TkError
from tkc.dialects import sm90, tile
from tkc.driver import compile_module, make_context
from tkc.frontend import parse_tk
from tkc.passes.occupancy import register_cost
from tkc.passes.plan import KernelPlan, fragment_rows, smem_plan
from tkc.report import report


def compile_source(source: str, emit: str = "tile") -> tile.KernelOp:
    ctx = make_context()
    module = compile_module(parse_tk(source, "short.tk"), emit, ctx=ctx)
    return next(op for op in module.walk() if isinstance(op, tile.KernelOp))


@pytest.mark.parametrize("rows,consumers,expected", [(16, 1, 64), (32, 2, 64), (48, 1, 64), (64, 2, 64), (128, 2, 64),
                                                     (256, 2, 128)])
def test_fragment_rows_pad_short_heights_to_one_wgmma(rows: int, consumers: int, expected: int) -> None:
    assert fragment_rows(rows, consumers) == expected


GEMM = """
kernel g<BM = 16>(A: gl<bf16>[M, K], B: gl<bf16>[K, 128], C: gl<f32>[M, 128]) {
    grid (M / BM) as (i)
    var acc = zero<f32>[BM, 128]
    for k in 0 .. K / 64 {
        acc = mma_AB(load A[i, k] : st<bf16>[BM, 64], load B[k, 0] : st<bf16>[64, 128], acc)
    }
    store C[i, 0] = acc
}
"""


def test_a_short_tile_costs_the_registers_of_64_rows_and_its_a_buffer_64_rows() -> None:
    kernel = compile_source(GEMM)
    plan = KernelPlan.of(kernel)
    assert plan.consumers == 1 and plan.replicated_rows == 16
    assert "64-row fragments" in plan.reasons["replicated_rows"]
    acc = next(op.result for op in kernel.walk() if isinstance(op, tile.MmaOp))
    assert register_cost(acc, 1, set()) == 64 * 128 // 128
    ring = smem_plan(kernel, plan.stages).rings[0]
    (a, a_offset), (b, b_offset) = ring.loads
    # A (16 x 64 bf16) gets 64 rows: 8192 bytes before B
    assert b_offset - a_offset == 64 * 64 * 2


def test_a_short_shared_tile_read_as_a_and_as_b_is_refused_at_its_load() -> None:
    source = """
kernel k(Q: gl<bf16>[M, 64], S: gl<f32>[M, 16]) {
    grid (M / 16) as (i)
    let q = load Q[i, 0] : st<bf16>[16, 64]
    store S[i, 0] = mma_ABt(q, q)
}
"""
    with pytest.raises(TkError) as error:
        compile_source(source)
    rendered = error.value.render()
    assert "short.tk:4:13: error: this 16-row shared tile is the A of an mma" in rendered
    assert "load the tile again as `rt<bf16>[16, 64]`" in rendered
    fixed = source.replace("mma_ABt(q, q)", "mma_ABt(load Q[i, 0] : rt<bf16>[16, 64], q)")
    compile_source(fixed)  # what the message advises compiles


@pytest.mark.parametrize("rows,consumers,expected", [(80, 1, 128), (96, 2, 64), (80, 2, 64), (96, 3, 128),
                                                     (144, 3, 64), (144, 1, 192), (208, 4, 64), (240, 1, 256)])
def test_fragment_rows_of_heights_above_64_round_them_up_to_whole_wgmmas(rows: int, consumers: int,
                                                                        expected: int) -> None:
    """Split where the padded height is a multiple of 64 per consumer, else replicated whole."""
    assert fragment_rows(rows, consumers) == expected


def test_an_80_row_gemm_computes_128_rows_and_its_a_buffer_has_128() -> None:
    """The padded 128 rows split over two consumers (the second holding 16 of the tile's rows and
    48 padding rows), each paying for its 64."""
    kernel = compile_source(GEMM.replace("BM = 16", "BM = 80"))
    plan = KernelPlan.of(kernel)
    assert plan.consumers == 2 and plan.replicated_rows == 0
    assert "80-row tiles are split as 128 rows, 64 per consumer, the last consumer's last 48 rows padding" in (
        plan.reasons["consumers"])
    acc = next(op.result for op in kernel.walk() if isinstance(op, tile.MmaOp))
    assert register_cost(acc, 2, set()) == 64 * 128 // 128
    (a, a_offset), (b, b_offset) = smem_plan(kernel, plan.stages).rings[0].loads
    assert b_offset - a_offset == 128 * 64 * 2


def test_a_96_row_tile_splits_over_two_consumers_and_the_last_stores_its_32_rows() -> None:
    """The padded 128 rows split 64 per consumer: consumer 1's box is 32 rows (its rows past the
    tile are padding), consumer 0's 64, two tensor maps picked by the consumer index."""
    source = GEMM.replace("BM = 16", "BM = 96").replace("kernel g", "@consumers(2)\nkernel g")
    module = compile_module(parse_tk(source, "short.tk"), "sm90", ctx=make_context())
    text = str(module)
    assert "tensormap C box [8, 64] swizzle 32" in text and "tensormap C box [8, 32] swizzle 32" in text
    assert "sm90.frag<64x128xf32>" in text


def test_report_says_what_the_plan_did_with_short_tiles() -> None:
    ctx = make_context()
    module = compile_module(parse_tk(GEMM, "short.tk"), "tile", ctx=ctx)
    text = report(module)
    assert "replicated  rows <= 16" in text and "64-row fragments (a wgmma's m64)" in text
    assert "a 64-row buffer: a wgmma reads 64 rows of its A" in text


@pytest.mark.parametrize("rows,swizzle", [(16, 128), (32, 64), (48, 32), (16, 0)])
def test_a_short_tile_moves_through_a_64_row_fragment_without_touching_other_rows(rows: int, swizzle: int) -> None:
    """load_fragment of a tile of fewer than 64 rows reads inside it (its rows again for the
    fragment's padding rows) and store_fragment writes its rows only: nothing past the tile's
    bytes in shared memory, where the next buffer would be."""
    ref = sm90.SharedRefType([rows, 64], F32, swizzle)
    src_base, dst_base = 0, 1 << 17

    def body(emit: Callable[[Operation], SSAValue], base: SSAValue) -> None:
        zero = emit(arith.ConstantOp(IntegerAttr(0, IndexType())))
        src = emit(sm90.SmemViewOp(base, ref))
        dst_addr = emit(arith.AddiOp(base, emit(arith.ConstantOp(IntegerAttr(dst_base, IndexType())))))
        dst = emit(sm90.SmemViewOp(dst_addr, ref))
        frag = emit(sm90.LoadFragmentOp(src, zero, sm90.FragmentType([64, 64], F32)))
        emit(sm90.StoreFragmentOp(frag, dst, zero))

    x = np.arange(rows * 64, dtype=np.float64).reshape(rows, 64) % 251
    memory: dict[int, float] = {}
    write_tile(memory, src_base, ref, x)
    reads = set(memory)
    simulate(lower(kernel(body)), memory)
    np.testing.assert_array_equal(read_tile(memory, dst_base, ref, (rows, 64)), x)
    written = {address for address in memory if address >= dst_base}
    assert all(address < dst_base + ref.num_bytes for address in written)
    assert set(address for address in memory if address < dst_base) == reads


@pytest.mark.parametrize("rows,frag_rows,row0,swizzle", [(96, 128, 0, 128), (80, 128, 0, 64), (96, 64, 64, 32),
                                                         (112, 64, 64, 128), (144, 64, 128, 0), (96, 64, 0, 128)])
def test_a_padded_tile_moves_through_its_fragments_without_touching_other_rows(rows: int, frag_rows: int, row0: int,
                                                                               swizzle: int) -> None:
    """A tile whose rows are no multiple of 64 in fragments of whole 64-row slices, whole or a
    consumer's slice from `row0`: load_fragment reads inside the tile (its rows again for each
    m-block's padding rows) and store_fragment writes the fragment's rows of the tile only."""
    ref = sm90.SharedRefType([rows, 64], F32, swizzle)
    src_base, dst_base = 0, 1 << 17

    def body(emit: Callable[[Operation], SSAValue], base: SSAValue) -> None:
        first = emit(arith.ConstantOp(IntegerAttr(row0, IndexType())))
        src = emit(sm90.SmemViewOp(base, ref))
        dst_addr = emit(arith.AddiOp(base, emit(arith.ConstantOp(IntegerAttr(dst_base, IndexType())))))
        dst = emit(sm90.SmemViewOp(dst_addr, ref))
        frag = emit(sm90.LoadFragmentOp(src, first, sm90.FragmentType([frag_rows, 64], F32)))
        emit(sm90.StoreFragmentOp(frag, dst, first))

    x = np.arange(rows * 64, dtype=np.float64).reshape(rows, 64) % 251
    memory: dict[int, float] = {}
    write_tile(memory, src_base, ref, x)
    reads = set(memory)
    simulate(lower(kernel(body)), memory)
    written = {address for address in memory if address >= dst_base}
    assert all(address < dst_base + ref.num_bytes for address in written)
    assert set(address for address in memory if address < dst_base) == reads
    moved = slice(row0, min(row0 + frag_rows, rows))
    got = read_tile({a: v for a, v in memory.items() if a >= dst_base} | {
        a: np.nan for a in range(dst_base, dst_base + ref.num_bytes, 4) if a not in memory}, dst_base, ref, (rows, 64))
    np.testing.assert_array_equal(got[moved], x[moved])
    assert np.isnan(np.delete(got, np.arange(rows)[moved], axis=0)).all()


def test_report_says_how_padded_heights_are_split_or_replicated() -> None:
    """tkc report: a 96-row tile split over two consumers (the consumers' reason), and one
    replicated beside 192-row tiles in three (replicated_rows' reason)."""
    from pathlib import Path

    kernels = Path(__file__).resolve().parents[1] / "gpu" / "kernels"
    split = report(compile_module(parse_tk((kernels / "heights96_softmax.tk").read_text(), "h.tk"), "tile",
                                  ctx=make_context()))
    assert "96-row tiles are split as 128 rows, 64 per consumer, the last consumer's last 32 rows padding" in split
    mixed = report(compile_module(parse_tk((kernels / "heights_192_96.tk").read_text(), "h.tk"), "tile",
                                  ctx=make_context()))
    assert "replicated  rows <= 96" in mixed and "those of 96 rows as fragments of 64-row slices" in mixed
