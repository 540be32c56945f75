"""The walk-through kernels (tests/gpu/walkthrough: written from the language reference alone)
on the GPU, each against its numpy reference: `tkc run FILE ... --check` in a process of its own
under a timeout, PARALLEL at a time, as test_examples_gpu runs the examples (a kernel that stops
leaves its CUDA context unusable, and it must not take the cases after it along)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from processes import Processes

pytestmark = pytest.mark.gpu

sys.path.insert(0, str(Path(__file__).resolve().parent / "walkthrough"))
from cases import Case, cases  # type: ignore[import-not-found]  # noqa: E402

CASES = cases()
KNOWN_WRONG: dict[str, str] = {}
"""Cases the GPU gets wrong today, each with the defect's reason: xfailed strictly, so a fix shows."""
TIMEOUT_S = 180
PARALLEL = min(8, os.cpu_count() or 1)


def _command(case: Case) -> list[str]:
    return [sys.executable, "-c", "import sys; from tkc.cli import main; sys.exit(main())",
            "run", *case.argv, "--check", "-q"]


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Processes:
    """The `tkc run` of every case this session selected, by name; each test waits for its own."""
    selected = [item.callspec.params["case"] for item in request.session.items
                if isinstance(item, pytest.Function) and item.function is test_walkthrough_kernel_matches_its_reference_on_the_gpu]
    return Processes({c.name: _command(c) for c in selected}, PARALLEL, TIMEOUT_S, tmp_path_factory.mktemp("walkthrough"))


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[c.name]))
                                  if c.name in KNOWN_WRONG else c for c in CASES], ids=[c.name for c in CASES])
def test_walkthrough_kernel_matches_its_reference_on_the_gpu(case: Case, runs: Processes) -> None:
    result = runs.result(case.name, _command(case))
    assert result.returncode == 0, f"{case.name} failed:\n{result.stdout}\n{result.stderr}"
    assert "FAIL" not in result.stdout
