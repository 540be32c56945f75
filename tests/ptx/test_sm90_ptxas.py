"""convert-sm90-to-ptx output assembles for sm_90a: no errors, no spills, no setmaxnreg or
wgmma-serialisation infos (C7508/C7517/C7519), and the SASS uses the tensor cores and TMA."""

from __future__ import annotations

import pytest
from test_sm90_ptxas_kernels import attention, ws_gemm
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from tkc.backends.ptx_printer import print_ptx
from tkc.backends.ptxas import ToolNotFound, assemble, find_tool, sass
from tkc.passes.convert_sm90_to_ptx import ConvertSm90ToPtxPass
from tkc.passes.ptx_flatten_control_flow import PtxFlattenControlFlowPass

try:
    find_tool("ptxas")
    find_tool("cuobjdump")
except ToolNotFound:
    pytest.skip("ptxas/cuobjdump not installed", allow_module_level=True)


def _lower(module: ModuleOp) -> str:
    ConvertSm90ToPtxPass().apply(Context(), module)
    PtxFlattenControlFlowPass().apply(Context(), module)
    module.verify()
    return print_ptx(module)


@pytest.mark.parametrize("build", [ws_gemm, attention], ids=["ws_gemm", "attention"])
def test_assembles_clean(build) -> None:
    ptx = _lower(build())
    cubin = assemble(ptx)
    report = cubin.report
    assert report.clean, report.log
    assert report.spill_stores == report.spill_loads == 0
    assert not report.perf_infos, report.log
    listing = sass(cubin)
    for instruction in ("HGMMA", "UTMALDG", "UTMASTG", "SYNCS"):
        assert instruction in listing, f"{instruction} missing from the SASS"


def test_register_budgets_apply() -> None:
    """setmaxnreg needs the entry register count: .maxntid plus .minnctapersm give 168."""
    ptx = _lower(ws_gemm())
    assert ".maxntid 384, 1, 1" in ptx and ".minnctapersm 1" in ptx
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in ptx and "setmaxnreg.inc.sync.aligned.u32 232;" in ptx
    assert assemble(ptx).report.registers == 168
