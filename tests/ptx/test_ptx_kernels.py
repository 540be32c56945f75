"""Kernels built with PtxBuilder assemble for sm_90a with no spills and none of the
performance infos (C7508 setmaxnreg ignored, C7517/C7519 wgmma waits/arrives injected), and
the SASS shows the Hopper units we asked for."""

from __future__ import annotations

from functools import cache

import pytest

import ptx_kernels
from tkc.backends import ptxas
from tkc.backends.ptx_printer import parse_file, print_ptx
from tkc.passes.ptx_flatten_control_flow import flatten_control_flow

try:
    ptxas.find_tool("ptxas")
except ptxas.ToolNotFound:
    pytest.skip("ptxas not installed", allow_module_level=True)


def have_sass_tools() -> bool:
    try:
        ptxas.find_tool("cuobjdump")
        ptxas.find_tool("nvdisasm")
    except ptxas.ToolNotFound:
        return False
    return True


needs_sass = pytest.mark.skipif(not have_sass_tools(), reason="cuobjdump/nvdisasm not installed")

KERNELS = {
    "tma_wgmma_gemm": ptx_kernels.tma_wgmma_gemm,
    "warp_specialised": ptx_kernels.warp_specialised,
    "row_reduction": ptx_kernels.row_reduction,
    "every_op": ptx_kernels.every_op,
}


@cache
def compiled(name: str) -> tuple[str, ptxas.Cubin]:
    module = KERNELS[name]().module
    module.verify()
    flatten_control_flow(module)
    text = print_ptx(module)
    return text, ptxas.assemble(text)


@pytest.mark.parametrize("name", KERNELS)
def test_assembles_clean(name):
    _, cubin = compiled(name)
    report = cubin.report
    assert report.spill_stores == report.spill_loads == report.stack_frame == 0, report.log
    assert report.perf_infos == [], report.log
    assert report.warnings == [], report.log


@pytest.mark.parametrize("name", KERNELS)
def test_round_trip_prints_same_ptx(name):
    module = KERNELS[name]().module
    parsed = parse_file(str(module))
    flatten_control_flow(parsed)
    flatten_control_flow(module)
    assert print_ptx(parsed) == print_ptx(module)


@needs_sass
def test_gemm_uses_tma_and_hgmma():
    sass = ptxas.sass(compiled("tma_wgmma_gemm")[1])
    assert "HGMMA.64x64x16.F32.BF16" in sass
    assert "UTMALDG.2D" in sass
    assert "SYNCS" in sass  # mbarrier


@needs_sass
def test_warp_specialised_gets_168_registers_at_entry():
    text, cubin = compiled("warp_specialised")
    assert ".maxntid 384, 1, 1\n.minnctapersm 1" in text
    assert cubin.report.registers == 168
    sass = ptxas.sass(cubin)
    assert "USETMAXREG.DEALLOC.CTAPOOL 0x28" in sass  # producer: 40
    assert "USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xe8" in sass  # consumers: 232


@needs_sass
def test_every_op_reaches_the_hardware_units():
    sass = ptxas.sass(compiled("every_op")[1])
    for unit in ("HGMMA", "UTMALDG", "UTMASTG", "UTMAREDG", "STSM", "LDSM", "SHFL", "ELECT"):
        assert unit in sass, unit


def test_reading_accumulators_before_the_wait_is_reported():
    b = ptx_kernels.PtxBuilder.kernel("racy", [("out", "u64")], maxntid=128)
    acc = b.regs("f32", 8)
    desc = b.mov("u64", 0)
    b.wgmma_fence()
    b.wgmma(acc, desc, desc, scale_d=0)
    b.wgmma_commit()
    b.st("global", "f32", b.global_ptr("out"), acc[0])  # no wgmma_wait: ptxas must step in
    b.ret()
    assert {"C7517", "C7519"} & set(ptxas.assemble(print_ptx(b.module)).report.perf_infos)
