"""Every walk-through kernel (tests/gpu/walkthrough: written from the language reference alone)
compiles to PTX with its case's parameters, and where ptxas is installed assembles clean: no
spills, no stack frame, no warnings or performance infos (the occupancy plan's register model
must hold for programs nobody on the compiler wrote, too)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tkc.backends.ptxas import ToolNotFound, assemble, find_tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu" / "walkthrough"))
from cases import Case, cases  # type: ignore[import-not-found]  # noqa: E402

COMPILES = list({(c.file, c.kernel, tuple(sorted(c.params.items()))): c for c in cases()}.values())


@pytest.mark.parametrize("case", COMPILES, ids=[c.name for c in COMPILES])
def test_walkthrough_kernel_compiles_to_ptx(case: Case) -> None:
    import tkc

    ptx = tkc.compile(case.file, kernel=case.kernel, **case.params).ptx
    assert ".entry" in ptx
    try:
        find_tool("ptxas")
    except ToolNotFound:
        return
    report = assemble(ptx).report
    assert report.clean, report.log
