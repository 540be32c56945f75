"""tile-retain-sweep computes what reloading does: `tkc run --bisect` interprets softmax after every
pass under @retain(1), with 4 of a row's 5 column tiles retained (N = 1100: a ragged last tile,
loaded) and with every tile retained (N = 1000, one block per SM), and layernorm, whose second
sweep recalls the tiles of H the first stored (ragged rows; D 1000: a ragged last column tile),
and no pass changes the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tkc import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("example, size, pins", [
    ("softmax", "M=40,N=1100", []),
    ("softmax", "M=33,N=1000", ["-D", "@ctas_per_sm=1"]),
    ("layernorm", "M=77", ["-D", "BM=16"]),
    ("layernorm", "M=33", ["-D", "BM=16", "-D", "D=1000", "-D", "@ctas_per_sm=1"]),
])
def test_retained_tiles_read_back_what_was_loaded(example: str, size: str, pins: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / f"{example}.tk")
    assert cli.main(["run", path, "--bisect", "-q", "--size", size, "-D", "@retain=1", *pins]) == 0
    out = capsys.readouterr().out
    assert "tile-retain-sweep        rel change 0.000e+00  same" in out, out
    assert "no pass changes the outputs" in out, out
