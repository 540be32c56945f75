"""The progress line (tkc.progress) and what the interpreter reports through it."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from tkc.driver import load_module
from tkc.interpreter import interpret
from tkc.progress import ProgressLine

REPO = Path(__file__).resolve().parents[2]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_line_is_rewritten_in_place_and_ended() -> None:
    out = Terminal()
    line = ProgressLine(out)
    for done in (1, 2, 3):
        line.show(done, 3, "work")
    assert out.getvalue() == "\r\x1b[K[1/3] work\r\x1b[K[2/3] work\r\x1b[K[3/3] work\n"


def test_elsewhere_only_when_forced_one_line_per_update() -> None:
    quiet, forced = io.StringIO(), io.StringIO()
    ProgressLine(quiet).show(1, 2, "work")
    ProgressLine(forced, force=True).show(1, 2, "work")
    assert (quiet.getvalue(), forced.getvalue()) == ("", "[1/2] work\n")


def test_quiet_delay_and_interval() -> None:
    out = Terminal()
    ProgressLine(out, quiet=True).show(1, 2, "work")
    ProgressLine(out, delay=60).show(1, 2, "work")  # quick work shows nothing
    assert out.getvalue() == ""
    line = ProgressLine(out, interval=60)
    line.show(1, 3, "work")
    line.show(2, 3, "work")  # throttled
    line.show(3, 3, "work")  # the last is always shown
    assert out.getvalue() == "\r\x1b[K[1/3] work\r\x1b[K[3/3] work\n"


def test_a_line_left_open_is_ended_by_close() -> None:
    out = Terminal()
    line = ProgressLine(out)
    line.show(1, 2, "work")
    line.close()
    assert out.getvalue().endswith("[1/2] work\n")


def test_the_interpreter_reports_each_iteration_of_the_kernels_loops() -> None:
    module = load_module(REPO / "examples/gemm.tk")
    seen: list[tuple[int, int, str]] = []
    a, b = np.ones((128, 192), np.float32), np.ones((192, 256), np.float32)
    interpret(module, "gemm", {"A": a, "B": b}, progress=lambda *update: seen.append(update))
    assert [(done, total) for done, total, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert seen[0][2] == "interpreting @gemm: iterations of the loop at line 5"
