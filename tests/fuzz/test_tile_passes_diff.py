"""The tile passes must not change what a program computes: generated programs and the shipped
kernels at random sizes with partial last tiles, interpreted before and after each tile pass
(gpu_diff.py --tile-passes, `tkc run --bisect`). Seeded and bounded like test_fuzz_tk.py
(TKC_FUZZ_SEED, TKC_FUZZ_SCALE); the GPU half is gpu_diff.py on a machine with a GPU."""

from __future__ import annotations

import os

import pytest

from gpu_diff import tile_passes_one

pytestmark = pytest.mark.fuzz

SEED = int(os.environ.get("TKC_FUZZ_SEED", "0"))
SCALE = float(os.environ.get("TKC_FUZZ_SCALE", "1"))
COUNTS = {"shipped": round(12 * SCALE), "generated": round(8 * SCALE)}
"""Most generated programs are refused somewhere (that is run_campaign's business); the shipped
kernels at ragged sizes are what reaches the comparison."""
SPECS = [f"{kind}:{SEED}:{i}" for kind, count in COUNTS.items() for i in range(count)]


@pytest.mark.parametrize("spec", SPECS)
def test_tile_passes_keep_the_outputs(spec: str) -> None:
    record = tile_passes_one(spec)
    assert record["outcome"] in ("match", "skip"), f"{spec}: {record['why']}\n{record.get('source', '')}"
