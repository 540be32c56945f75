"""What only the run time can check stops the kernel on the GPU (sm90.trap) where the interpreter
reports an error, instead of reading the wrong memory silently: a scalar load outside its
tensor, a tile load wholly past the end of a dim of whole tiles, a tile stored from a column before
its tensor's first or at a leading index below 0 (a TMA store box there would fault). A trap leaves the CUDA context
unusable, so each case runs in a process of its own; the error names the rule broken."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

SOURCE = """
kernel gather<BM = 64>(T: gl<i32>[NT], X: gl<f32>[M, 64], Y: gl<f32>[BM, 64]) {
    grid (1) as (i)
    let row = load T[4] : i32
    store Y[0, 0] = load X[row, 0] : rt<f32>[BM, 64]
}

kernel copy_rows<BM = 64>(X: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {
    grid (ceildiv(M, BM) + 1) as (i)
    store Y[i, 0] = load X[i, 0] : rt<f32>[BM, 64]
}

kernel previous_batch<BM = 64>(X: gl<f32>[B, M, 64], Y: gl<f32>[B, M, 64]) {
    grid (B, ceildiv(M, BM)) as (b, i)
    store Y[b - 1, i, 0] = load X[b, i, 0] : rt<f32>[BM, 64]
}

kernel shift_columns<BM = 64>(X: gl<f32>[M, 128], Y: gl<f32>[M, 128]) {
    grid (ceildiv(M, BM), 2) as (i, j)
    store Y[i, elem(j * 64 - 16)] = load X[i, j] : rt<f32>[BM, 64]
}
"""

RUN = """
import sys
import numpy as np
from tkc.runner import run_on_gpu
inputs = dict(np.load(sys.argv[3]))
try:
    out = run_on_gpu(sys.argv[1], sys.argv[2], inputs, {}, out=sys.stderr)
except Exception as e:
    print(e)
    sys.exit(3)
np.save(sys.argv[4], out["Y"])
"""


def _run(tmp_path: Path, kernel: str, inputs: dict[str, np.ndarray]) -> subprocess.CompletedProcess[str]:
    source, arrays, result = tmp_path / "traps.tk", tmp_path / "inputs.npz", tmp_path / "y.npy"
    source.write_text(SOURCE)
    np.savez(arrays, **inputs)
    return subprocess.run([sys.executable, "-c", RUN, str(source), kernel, str(arrays), str(result)],
                          capture_output=True, text=True, timeout=300)


STOPS = {
    # kernel: (inputs, the rule the error names)
    "gather": ({"T": np.array([0, 1], np.int32), "X": np.ones((128, 64), np.float32),
                "Y": np.zeros((64, 64), np.float32)}, "scalar load"),
    "copy_rows": ({"X": np.ones((128, 64), np.float32), "Y": np.zeros((128, 64), np.float32)},
                  "wholly past the end"),
    "shift_columns": ({"X": np.ones((128, 128), np.float32), "Y": np.zeros((128, 128), np.float32)},
                      "a column before"),
    "previous_batch": ({"X": np.ones((2, 128, 64), np.float32), "Y": np.zeros((2, 128, 64), np.float32)},
                       "a leading index below 0"),
}


@pytest.mark.parametrize("kernel", list(STOPS))
def test_a_broken_rule_stops_the_kernel_and_the_error_names_it(tmp_path: Path, kernel: str) -> None:
    """gather: a scalar load outside its tensor; copy_rows: a tile wholly past a dim of whole
    tiles (M = 128, one block past it); shift_columns: a tile stored from column -16;
    previous_batch: a tile stored at batch index -1."""
    inputs, rule = STOPS[kernel]
    run = _run(tmp_path, kernel, inputs)
    assert run.returncode == 3, run.stdout + run.stderr
    assert rule in run.stdout and "CUDA_ERROR_" in run.stdout, run.stdout


def test_a_tile_wholly_past_a_partial_dim_is_padding(tmp_path: Path) -> None:
    x = np.random.default_rng(1).standard_normal((100, 64)).astype(np.float32)
    run = _run(tmp_path, "copy_rows", {"X": x, "Y": np.zeros((100, 64), np.float32)})
    assert run.returncode == 0, run.stdout + run.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), x)
