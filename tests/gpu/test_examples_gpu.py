"""The row-wise examples (layernorm, softmax, rotary) and the attention variants (ALiBi, sliding
window, softcapping) on the GPU, against their `_ref.py`.

Each case is `tkc run FILE --check` in its own process under a timeout: a TMA mistake hangs
rather than fails, and a fault leaves the CUDA context unusable for the cases after it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).parents[2] / "examples"
TIMEOUT_S = 180
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
]


@pytest.mark.parametrize("example,sizes,params", CASES, ids=lambda c: c if isinstance(c, str) else " ".join(c))
def test_example_matches_reference(example: str, sizes: str, params: list[str]) -> None:
    command = [sys.executable, "-c", "import sys; from tkc.cli import main; sys.exit(main())",
               "run", str(EXAMPLES / f"{example}.tk"), "--check", "--size", sizes, *params]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, f"{' '.join(command[3:])} failed:\n{result.stdout}\n{result.stderr}"
    assert "FAIL" not in result.stdout
