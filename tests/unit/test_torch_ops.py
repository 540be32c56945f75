"""How a kernel's arguments become a torch operator's (no torch needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tkc
from tkc.torch_ops import OperatorError, signature

REPO = Path(__file__).resolve().parents[2]


def test_inputs_are_read_outputs_only_written() -> None:
    sig = signature(tkc.compile(REPO / "examples/gemm.tk", kernel="gemm"))
    assert [a.name for a in sig.inputs] == ["A", "B"] and sig.mutated == () and [a.name for a in sig.outputs] == ["C"]


def test_read_and_written_is_mutated() -> None:
    sig = signature(tkc.compile(REPO / "tests/gpu/kernels/raw_same_tile.tk", kernel="raw_same_tile"))
    assert [a.name for a in sig.inputs] == ["X"] and sig.mutated == ("X",) and [a.name for a in sig.outputs] == ["Y"]


def test_an_output_no_input_sizes_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "fill.tk"
    source.write_text("kernel fill(Y: gl<f32>[M, 64]) {\n    grid (M / 64) as (i)\n"
                      "    store Y[i, 0] = zero<f32>[64, 64]\n}\n")
    with pytest.raises(OperatorError, match="the output Y has the dim M, which no input of fill has"):
        signature(tkc.compile(source, kernel="fill"))
