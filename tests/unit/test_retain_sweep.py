"""tile-retain-sweep computes what reloading does: `tkc run --bisect` interprets softmax after every
pass under @retain(1), with 4 of a row's 5 column tiles retained (N = 1100: a ragged last tile,
loaded) and with every tile retained (N = 1000, one block per SM), and no pass changes the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tkc import cli

SOFTMAX = str(Path(__file__).resolve().parents[2] / "examples" / "softmax.tk")


@pytest.mark.parametrize("size, pins", [("M=40,N=1100", []), ("M=33,N=1000", ["-D", "@ctas_per_sm=1"])])
def test_retained_tiles_read_back_what_was_loaded(size: str, pins: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", SOFTMAX, "--bisect", "-q", "--size", size, "-D", "@retain=1", *pins]) == 0
    out = capsys.readouterr().out
    assert "tile-retain-sweep        rel change 0.000e+00  same" in out, out
    assert "no pass changes the outputs" in out, out
