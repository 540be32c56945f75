"""The walk-through kernels (tests/gpu/walkthrough: written from the language reference alone)
on the GPU, each against its numpy reference, as `tkc run FILE ... --check` runs them."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

sys.path.insert(0, str(Path(__file__).resolve().parent / "walkthrough"))
from cases import Case, cases  # type: ignore[import-not-found]  # noqa: E402

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_walkthrough_kernel_matches_its_reference_on_the_gpu(case: Case) -> None:
    from tkc.runner import run_command

    args = argparse.Namespace(file=str(case.file), kernel=case.kernel, params=dict(case.params), size=dict(case.size),
                              interpret=False, check=True, bisect=False, seed=0, quiet=True, progress=False)
    out = io.StringIO()
    status = run_command(args, out)
    assert status == 0, out.getvalue()
