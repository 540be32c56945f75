"""A kernel compiles to the same PTX in every process: the compile cache, `tkc report` and a bug
report all rely on it. The masks of a tile with several tails take a `min` of their limits, whose
operands once followed the order of a set of SSA values, which changes with their ids from one
process to the next (conv1d_causal's tails by its four shifted windows and its store)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KERNELS = ["tests/gpu/walkthrough/scans/conv1d_causal.tk", "tests/gpu/walkthrough/scans/moving_avg.tk"]


def _ptx_digest(path: str, cache_dir: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "tkc.cli", "compile", str(REPO / path), "--emit=ptx", "-o", "-"],
        capture_output=True, text=True, check=True, env={**os.environ, "TKC_CACHE_DIR": str(cache_dir)},
    )
    return hashlib.sha256(result.stdout.encode()).hexdigest()


def test_same_ptx_in_every_process(tmp_path: Path) -> None:
    for path in KERNELS:
        digests = {_ptx_digest(path, tmp_path / f"cache{i}") for i in range(3)}
        assert len(digests) == 1, path
