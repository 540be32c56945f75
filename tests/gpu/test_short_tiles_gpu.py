"""Register tiles of 16 and 32 rows at the parameters the motivating kernels come in (decode
attention with D = 64 and 128, a small-M GEMM with 16 and 32 rows per block and N tiles of 128
and 256, softmax of 16, 32 and 48 rows, 32-row tiles replicated beside 128-row ones), and of 80,
96, 144 and 208 rows (a GEMM, softmax, scans and column reductions, an S beside a 128-row O) run
on the GPU and match the interpreter; so do kernels in the band layout (16, 32 and 48 rows, the
softmax and layernorm examples among them).
test_kernels_vs_interpreter_gpu.py runs each kernel at its defaults."""

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

KERNELS = Path(__file__).parent / "kernels"
EXAMPLES = Path(__file__).parents[2] / "examples"
CASES = [
    ("decode_attention.tk", {"D": 64}, {"B": 2, "N": 1000}),
    ("decode_attention.tk", {"D": 128}, {"B": 3, "N": 300}),
    ("small_m_gemm.tk", {"BM": 16, "BN": 128}, {"M": 16, "N": 512, "K": 1024}),
    ("small_m_gemm.tk", {"BM": 32, "BN": 256}, {"M": 100, "N": 384, "K": 200}),
    ("small_m_gemm.tk", {"BM": 32, "BN": 128}, {"M": 64, "N": 256, "K": 256}),
    ("softmax32.tk", {"BM": 16}, {"M": 200}),
    ("softmax32.tk", {"BM": 48}, {"M": 200}),
    ("short_scans.tk", {"BM": 32}, {"M": 72}),
    # a 32-row S replicated in the two consumers that split the 128-row O
    ("heights_mixed.tk", {"BQ": 32}, {"N": 256, "NQ": 64}),  # NQ = N / BKV blocks of BQ rows
    # heights above 64 that are no multiple of it: computed as the next multiple, split over the
    # consumers where it is 64 per consumer (the last one's last rows padding), else replicated
    ("small_m_gemm.tk", {"BM": 80, "BN": 128}, {"M": 200, "N": 384, "K": 200}),
    ("small_m_gemm.tk", {"BM": 96, "BN": 256}, {"M": 300, "N": 384, "K": 256}),
    ("softmax32.tk", {"BM": 80}, {"M": 200}),
    ("softmax32.tk", {"BM": 208, "N": 64}, {"M": 500}),
    ("short_scans.tk", {"BM": 96}, {"M": 200}),
    ("short_scans.tk", {"BM": 144, "N": 32}, {"M": 300}),
    ("heights_mixed.tk", {"BQ": 80}, {"N": 256, "NQ": 160}),
    ("heights_mixed.tk", {"BQ": 96}, {"N": 256, "NQ": 192}),
    # the band layout (every warp all rows, the warps sharing the columns): 16, 32 and 48 rows,
    # staged stores in chunks of fewer than 32 columns (f32), ragged shapes, the examples
    ("band_rows.tk", {"BM": 32, "BN": 96}, {"M": 77, "N": 200}),
    ("band_rows.tk", {"BM": 48, "BN": 32}, {"M": 100, "N": 72}),
    ("softmax32.tk", {"BM": 16, "N": 96}, {"M": 40}),
    (str(EXAMPLES / "softmax.tk"), {"BM": 16, "BN": 256}, {"M": 100, "N": 1000}),
    (str(EXAMPLES / "softmax.tk"), {"BM": 32, "BN": 128}, {"M": 33, "N": 296}),
    (str(EXAMPLES / "layernorm.tk"), {"BM": 16, "BD": 256, "D": 1024}, {"M": 50}),
    (str(EXAMPLES / "layernorm.tk"), {"BM": 32, "D": 512}, {"M": 70}),
    # tile-retain-sweep's @retain(1): the second sweep reads its first tiles back from shared memory
    # (band_rows: every one of its 64-column tiles; with positions, a column sum and ragged tails)
    ("band_rows.tk", {"@retain": 1}, {"M": 77, "N": 1000}),
    ("band_online_softmax.tk", {"@retain": 1}, {"M": 200, "N": 300}),
    # ... and a tile the first sweep stored, recalled with its elements past the end zeroed
    ("forwarded_sum.tk", {}, {"M": 40, "N": 300}),
    ("forwarded_sum.tk", {"@retain": 1}, {"M": 40, "N": 300}),
    (str(EXAMPLES / "layernorm.tk"), {"BM": 16, "D": 1000, "@retain": 1}, {"M": 77}),
    (str(EXAMPLES / "layernorm.tk"), {"BM": 16, "D": 4096, "@retain": 1, "@ctas_per_sm": 1}, {"M": 50}),
]


@pytest.mark.parametrize("name,params,dims", CASES, ids=lambda v: Path(v).name if isinstance(v, str) else str(v))
def test_short_tiles_match_interpreter(name: str, params: dict[str, int], dims: dict[str, int]) -> None:
    from tkc.driver import load_module
    from tkc.interpreter import find_kernel, interpret
    from tkc.runner import kernel_params, make_inputs, run_on_gpu

    path = str(KERNELS / name)
    module = load_module(path, None, params)
    kernel = find_kernel(module, None)
    inputs = make_inputs(kernel, kernel_params(kernel) | dims, seed=2)
    expected = interpret(module, kernel.sym_name.data, inputs, dims)
    outputs = run_on_gpu(path=path, kernel=kernel.sym_name.data, inputs=inputs, params=params)
    for arg, want in expected.items():
        got, ref = np.asarray(outputs[arg], np.float64), np.asarray(want, np.float64)
        assert not np.isnan(got).any(), f"{arg}: unwritten or NaN outputs"
        rel = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        assert rel < 1e-2, f"{arg}: relative error {rel:.3g} against the interpreter"
