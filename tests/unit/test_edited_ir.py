"""IR edited by hand between passes (a dump changed and compiled again) is refused where it no
longer holds together, never compiled to a kernel that would overwrite shared memory it still
needs or ask for more registers than the SM has: the shared-memory layout tile-pipeline records
(convert-tile-to-sm90 checks it), the producer's wait before it fills a stage
(sm90-verify-barriers), the setmaxnreg counts against the block's registers (sm90.roles)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

import tkc
from tkc.diagnostics import TkError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@cache
def dumped(pass_name: str, example: str = "gemm") -> str:
    return tkc.compile(EXAMPLES / f"{example}.tk").ir(pass_name)


def compile_edited(tmp_path: Path, pass_name: str, pattern: str, replacement: str, example: str = "gemm") -> None:
    text, count = re.subn(pattern, replacement, dumped(pass_name, example), count=1)
    assert count == 1, f"{pattern!r} is not in the dump after {pass_name}"
    edited = tmp_path / "edited.mlir"
    edited.write_text(text)
    tkc.compile(edited).ptx


@pytest.mark.parametrize(("pattern", "replacement", "message"), [
    (r"stage_offset = 16384 : i64", "stage_offset = 0 : i64", r"this load's stage offset 0 overlaps the 16384 bytes"),
    (r"stage_offset = 16384 : i64", "stage_offset = 9999999 : i64", r"at stage offset 9999999 do not fit the ring's"),
    (r"ring_offset = \d+ : i64", "ring_offset = 0 : i64", r"this ring of 4 stages .* at smem\+0 lies outside"),
    (r"stage_bytes = \d+ : i64", "stage_bytes = 1024 : i64", r"do not fit the ring's 1024-byte stages"),
])
def test_an_edited_shared_memory_layout_is_refused(tmp_path: Path, pattern: str, replacement: str, message: str) -> None:
    with pytest.raises(TkError, match=message + r".*does not hold together"):
        compile_edited(tmp_path, "tile-warp-specialize", pattern, replacement)


def test_two_loads_of_one_size_moved_onto_one_offset_are_refused(tmp_path: Path) -> None:
    """Attention's K and V stages are the same size: moved onto one offset, they tie in the
    layout check's order, which must still name the overlap."""
    with pytest.raises(TkError, match=r"this load's stage offset 0 overlaps the 32768 bytes"):
        compile_edited(tmp_path, "tile-warp-specialize", r"stage_offset = 32768 : i64", "stage_offset = 0 : i64",
                       "attention")


def test_setmaxnreg_counts_past_the_register_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TkError, match=r"setmaxnreg gives the producer warpgroup 240 and each of 2 consumer "
                                      r"warpgroup\(s\) 256 registers per thread, 96256 in all, over the 64512"):
        compile_edited(tmp_path, "sm90-verify-barriers", r"registers\(40 : i32, 232 : i32\)",
                       "registers(240 : i32, 256 : i32)")
