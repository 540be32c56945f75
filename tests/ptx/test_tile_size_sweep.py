"""Every tile-size variant tkc accepts assembles: ptxas takes the PTX without C7602 (too few
registers for an instruction) and without spills, or tkc refuses the variant at compile time with
a located diagnostic. The sweep crosses the register model's boundaries: one wgmma's accumulators
against the entry register count (one or two CTAs per SM, 1-4 consumer warpgroups), A from
registers (attention's P.V), fp8 operands, column vectors (replicated in every consumer thread),
element-wise chains (streamed by the estimate, positions and selects included), a fused MLP's two accumulators across a nested loop, tiles over the register and row-split limits, and
register tiles of different heights in one kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from tkc.backends.ptx_printer import print_ptx
from tkc.backends.ptxas import ToolNotFound, assemble, find_tool
from tkc.diagnostics import TkError
from tkc.driver import compile_module, load_module, make_context

try:
    find_tool("ptxas")
except ToolNotFound:
    pytest.skip("ptxas not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
ATTENTION = ROOT / "examples" / "attention.tk"
FP8_1D = Path(__file__).parent / "kernels" / "gemm_fp8_1d.tk"
FP8_2D = ROOT / "tests" / "gpu" / "kernels" / "fp8.tk"
COLUMNS = Path(__file__).parent / "kernels" / "column_vectors.tk"
RMS = Path(__file__).parent / "kernels" / "rms_row_block.tk"
HEIGHTS = ROOT / "tests" / "gpu" / "kernels"

VARIANTS = [
    *[(ATTENTION, {"D": d, "BQ": bq, "BKV": bkv}) for d in (64, 128, 256) for bq in (64, 128) for bkv in (16, 64, 128)],
    (ATTENTION, {"D": 256, "BQ": 64, "BKV": 32, "CAUSAL": True}),
    (ATTENTION, {"BQ": 32}),
    (ATTENTION, {"BQ": 96}),
    *[(ROOT / "examples" / f"{name}.tk", {"BM": bm, "BN": bn, "BK": bk}) for name, bm, bn, bk in [
        ("gemm", 64, 64, 32), ("gemm", 64, 256, 64), ("gemm", 128, 128, 128), ("gemm", 192, 128, 64),
        ("gemm", 256, 144, 64), ("gemm", 256, 160, 64), ("gemm", 256, 256, 64), ("gemm", 96, 256, 64),
        ("gemm_abt", 128, 208, 64), ("gemm_abt", 256, 128, 32), ("gemm_atb", 64, 160, 64),
        ("gemm_atb", 128, 256, 16), ("gemm_atbt", 256, 96, 128), ("gemm_atbt", 64, 224, 32),
    ]],
    *[(FP8_1D, {"BM": bm, "BN": bn, "BK": bk}) for bm in (64, 128) for bn in (128, 256) for bk in (64, 128)],
    (FP8_1D, {"BM": 256, "BN": 128, "BK": 128}),
    (FP8_2D, {"BM": 64, "BN": 256, "BK": 64}),
    (FP8_2D, {"BM": 128, "BN": 128, "BK": 64}),
    *[(COLUMNS, {"BM": bm, "BN": bn}) for bm in (64, 128, 256) for bn in (128, 256)],
    # element-wise chains, which the register estimate streams register by register
    *[(RMS, {"BM": bm, "D": d}) for bm in (64, 128) for d in (128, 256, 512)],
    *[(ROOT / "examples" / "rotary.tk", {"BN": bn, "D": d}) for bn in (64, 128, 192) for d in (64, 128, 256)],
    *[(ROOT / "examples" / "layernorm.tk", {"BM": bm, "BD": bd}) for bm in (64, 128) for bd in (128, 256)],
    # positions, conditions and selects in attention's element-wise chain
    *[(ROOT / "examples" / f"attention_{variant}.tk", {"D": d, "BKV": bkv})
      for variant in ("alibi", "window", "softcap") for d in (64, 128) for bkv in (64, 128)],
    # two accumulators live across a nested loop, the hidden tile an A operand from registers
    *[(ROOT / "examples" / "mlp.tk", {"BM": bm, "BH": bh, "BN": bn})
      for bm in (64, 128) for bh in (64, 128, 256) for bn in (128, 256)],
    # register tiles of different heights (the shorter ones replicated in every consumer)
    *[(ROOT / "examples" / "linear_attention.tk", {"BC": bc, "D": d}) for bc in (64, 128) for d in (64, 128, 256)],
    *[(HEIGHTS / "heights_dkdv.tk", {"BQ": bq, "BKV": bkv, "D": d}) for bq, bkv in ((64, 128), (64, 256), (128, 256))
      for d in (64, 128)],
    (HEIGHTS / "heights_mixed.tk", {"BQ": 64, "BKV": 128, "D": 64}),
]


def variant_id(variant: tuple[Path, dict[str, int]]) -> str:
    path, params = variant
    return f"{path.stem}-" + "-".join(f"{k}{int(v)}" for k, v in params.items())


@pytest.mark.parametrize("variant", VARIANTS, ids=map(variant_id, VARIANTS))
def test_assembles_or_is_refused(variant: tuple[Path, dict[str, int]]) -> None:
    path, params = variant
    ctx = make_context()
    try:
        module = compile_module(load_module(path, None, params, ctx), "ptx", ctx=ctx)
    except TkError as e:
        assert e.filename == str(path) and e.line is not None, e.render()
        return
    report = assemble(print_ptx(module)).report  # PtxasError (C7602 ...) fails the test
    assert report.spill_stores == report.spill_loads == report.stack_frame == 0, report.log
