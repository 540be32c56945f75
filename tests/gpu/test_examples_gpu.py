"""The row-wise examples (layernorm, softmax, rotary), the attention variants (ALiBi, sliding
window, softcapping), chunk-parallel linear attention (plain, SSD, Based, Hedgehog), Based's recurrent form and
attention's backward kernels on the GPU, against their `_ref.py`.

Each case is `tkc run FILE --check` in its own process under a timeout: a TMA mistake hangs
rather than fails, and a fault leaves the CUDA context unusable for the cases after it. The
processes of the selected cases run PARALLEL at a time (compiling and the numpy references are
most of their time), started from the main thread as slots free up; each case waits for its own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import cast

import pytest
from processes import Processes

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).parents[2] / "examples"
TIMEOUT_S = 180
PARALLEL = min(8, os.cpu_count() or 1)
CASES = [
    ("layernorm", "M=128", []),
    ("layernorm", "M=4096", []),
    ("layernorm", "M=256", ["-D", "D=512"]),
    ("softmax", "M=128,N=256", []),
    ("softmax", "M=2048,N=4096", []),
    ("rotary", "B=1,H=2,N=128", []),
    ("rotary", "B=2,H=8,N=1024", []),
    # attention variants built from positions, conditions and tanh, ragged and whole
    ("attention_alibi", "B=2,H=4,N=1000", []),
    ("attention_alibi", "B=1,H=2,N=4096", []),
    ("attention_window", "B=2,H=4,N=1000", ["-D", "W=300"]),
    ("attention_window", "B=1,H=2,N=4096", []),
    ("attention_softcap", "B=2,H=4,N=1000", ["-D", "CAP=5.0"]),
    ("attention_softcap", "B=1,H=2,N=4096", []),
    # chunk-parallel linear attention, ragged and whole, and attention's backward kernels
    ("linear_attention_chunked", "B=1,H=2,N=200,NC=4", ["-k", "la_states"]),
    ("linear_attention_chunked", "B=2,H=2,N=1024,NC=16", ["-k", "la_states", "-D", "D=128"]),
    ("linear_attention_chunked", "B=1,H=2,N=200,NC=4", ["-k", "la_output"]),
    ("linear_attention_chunked", "B=2,H=2,N=1024,NC=16", ["-k", "la_output", "-D", "D=128"]),
    ("based", "B=1,H=2,N=300", []),
    ("based", "B=2,H=2,N=1024", []),
    ("based_chunked", "B=1,H=2,N=300", []),
    ("based_chunked", "B=2,H=2,N=1024", []),
    ("based_chunked", "B=1,H=1,N=4096", []),
    ("ssd", "B=1,H=2,N=200,NC=4", ["-k", "ssd_states"]),
    ("ssd", "B=2,H=2,N=1024,NC=16", ["-k", "ssd_states", "-D", "D=128"]),
    ("ssd", "B=1,H=2,N=200,NC=4", ["-k", "ssd_chunk_states"]),
    ("ssd", "B=2,H=2,N=1024,NC=16", ["-k", "ssd_chunk_states", "-D", "D=128"]),
    ("ssd", "B=1,H=2,N=200,NC=4", ["-k", "ssd_passing"]),
    ("ssd", "B=2,H=2,N=1024,NC=16", ["-k", "ssd_passing", "-D", "D=128"]),
    ("ssd", "B=1,H=2,N=200,NC=4", ["-k", "ssd_output"]),
    ("ssd", "B=2,H=2,N=1024,NC=16", ["-k", "ssd_output", "-D", "D=128"]),
    ("hedgehog", "B=1,H=2,N=200,NC=4", ["-k", "hh_states"]),
    ("hedgehog", "B=2,H=2,N=1024,NC=16", ["-k", "hh_states", "-D", "BV=32"]),
    ("hedgehog", "B=1,H=2,N=200,NC=4", ["-k", "hh_output", "-D", "ALPHA=0.5"]),
    ("hedgehog", "B=2,H=2,N=1024,NC=16", ["-k", "hh_output", "-D", "BV=128", "-D", "CPB=1"]),
    ("attention_bwd", "B=1,H=2,N=1000", ["-k", "attn_bwd_delta"]),
    ("attention_bwd", "B=1,H=4,HKV=2,N=1000", ["-k", "attn_bwd_dkdv", "-D", "D=64", "-D", "BQ=64", "-D", "G=2",
                                              "-D", "CAUSAL=true"]),
    ("attention_bwd", "B=1,H=2,HKV=2,N=1000", ["-k", "attn_bwd_dkdv"]),
    ("attention_bwd", "B=1,H=2,HKV=2,N=1000", ["-k", "attn_bwd_dq", "-D", "CAUSAL=true"]),
]


def _command(example: str, sizes: str, params: list[str]) -> list[str]:
    return [sys.executable, "-c", "import sys; from tkc.cli import main; sys.exit(main())",
            "run", str(EXAMPLES / f"{example}.tk"), "--check", "--size", sizes, *params]


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Processes:
    """The `tkc run` of every case this session selected, by command line; each test waits for its own."""
    commands = [_command(str(item.callspec.params["example"]), str(item.callspec.params["sizes"]),
                         cast(list[str], item.callspec.params["params"]))
                for item in request.session.items
                if isinstance(item, pytest.Function) and item.function is test_example_matches_reference]
    return Processes({" ".join(c): c for c in commands}, PARALLEL, TIMEOUT_S, tmp_path_factory.mktemp("examples"))


@pytest.mark.parametrize("example,sizes,params", CASES, ids=lambda c: c if isinstance(c, str) else " ".join(c))
def test_example_matches_reference(example: str, sizes: str, params: list[str], runs: Processes) -> None:
    command = _command(example, sizes, params)
    result = runs.result(" ".join(command), command)
    assert result.returncode == 0, f"{' '.join(command[3:])} failed:\n{result.stdout}\n{result.stderr}"
    assert "FAIL" not in result.stdout
