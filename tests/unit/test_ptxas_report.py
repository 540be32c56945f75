"""The ptxas backend: `-v` report parsing, errors carrying ptxas's message, tool lookup."""

from __future__ import annotations

import pytest

from tkc.backends import ptxas

LOG = """\
ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_90a'
ptxas info    : Function properties for k
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 2 barriers, 1024 bytes smem
ptxas info    : Compile time = 1.643 ms
ptxas warning : Value of threads per SM for entry k is out of range. .minnctapersm will be ignored
"""


def test_parse_report():
    report = ptxas.parse_report(LOG)
    k = report.functions["k"]
    assert (k.registers, k.barriers, k.shared_bytes) == (255, 2, 1024)
    assert (k.stack_frame, k.spill_stores, k.spill_loads) == (8, 4, 12)
    assert report.registers == 255 and report.spill_loads == 12
    assert report.infos == ["C7508"] and report.perf_infos == ["C7508"]
    assert len(report.warnings) == 1 and "minnctapersm" in report.warnings[0]
    assert not report.clean


def test_clean_report():
    report = ptxas.parse_report(
        "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
        "ptxas info    : Function properties for k\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 8 registers, used 0 barriers\n"
    )
    assert report.clean and report.registers == 8


def have_ptxas() -> bool:
    try:
        ptxas.find_tool("ptxas")
    except ptxas.ToolNotFound:
        return False
    return True


needs_ptxas = pytest.mark.skipif(not have_ptxas(), reason="ptxas not installed")

BAD = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{
    wgmma.fence.sync.aligned 1;
    ret;
}
"""


@needs_ptxas
def test_error_carries_ptxas_message_and_line():
    with pytest.raises(ptxas.PtxasError) as err:
        ptxas.assemble(BAD)
    assert "wgmma.fence" in str(err.value)
    assert "6: wgmma.fence.sync.aligned 1;" in str(err.value)
    assert "error" in err.value.log


@needs_ptxas
def test_setmaxnreg_without_entry_count_reports_c7508():
    text = BAD.replace("wgmma.fence.sync.aligned 1;", "setmaxnreg.inc.sync.aligned.u32 232;").replace(
        "{", ".maxntid 384, 1, 1\n{")
    cubin = ptxas.assemble(text)
    assert cubin.report.perf_infos == ["C7508"]
    assert cubin.data[:4] == b"\x7fELF"


def test_missing_tool_is_a_clear_error(monkeypatch):
    ptxas.find_tool.cache_clear()
    monkeypatch.setattr(ptxas.shutil, "which", lambda name: None)
    try:
        with pytest.raises(ptxas.ToolNotFound, match="pip install"):
            ptxas.find_tool("no-such-tool")
    finally:
        ptxas.find_tool.cache_clear()
