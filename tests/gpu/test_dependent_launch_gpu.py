"""Programmatic dependent launches on the GPU: kernels launched back to back without a sync, each
reading what the one before wrote (read after write) and writing what it read (write after read),
give the results of plain stream order. The blocks of a dependent launch start while the kernel
before ends, so a kernel that touched global memory before its griddepcontrol.wait would read
stale data or overwrite inputs still being read; ping-pong chains over two buffers catch both.
Also under CUDA-graph capture, where the launches become programmatic graph edges."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).parents[2] / "examples"
SCALE = """
kernel scale<BM = 64, BN = 128>(X: gl<bf16>[M, N], Y: gl<bf16>[M, N]) {
    grid (ceildiv(M, BM), ceildiv(N, BN)) as (i, j)
    store Y[i, j] = bf16(f32(load X[i, j] : rt<bf16>[BM, BN]) * 2.0)
}
"""
LAUNCHES = 16


def _ping_pong(launch, first, second, launches: int) -> None:
    """launch(first, second), launch(second, first), ... `launches` times, no sync between."""
    for i in range(launches):
        launch(*((first, second) if i % 2 == 0 else (second, first)))


@pytest.mark.parametrize("graph", [False, True], ids=["stream", "graph"])
def test_a_chain_of_streamed_kernels_keeps_stream_order(tmp_path: Path, graph: bool) -> None:
    import torch

    import tkc

    source = tmp_path / "scale.tk"
    source.write_text(SCALE)
    kernel = tkc.compile(source, kernel="scale")
    assert kernel.abi.dependent_launch
    torch.manual_seed(0)
    start = torch.rand(8192, 4096, device="cuda", dtype=torch.bfloat16) + 1  # [1, 2): doubling is exact
    x, y = start.clone(), torch.empty_like(start)
    if graph:
        kernel(x, y)  # loaded and warmed outside the capture
        x.copy_(start)
        torch.cuda.synchronize()
        captured = torch.cuda.CUDAGraph()
        with torch.cuda.graph(captured):
            _ping_pong(kernel, x, y, LAUNCHES)
        captured.replay()
    else:
        _ping_pong(kernel, x, y, LAUNCHES)
    torch.cuda.synchronize()
    assert torch.equal(x, start * 2.0**LAUNCHES)


def test_a_chain_of_persistent_gemms_keeps_stream_order() -> None:
    import torch

    import tkc

    kernel = tkc.compile(EXAMPLES / "gemm.tk", kernel="gemm")
    plain = tkc.compile(EXAMPLES / "gemm.tk", kernel="gemm", **{"@dependent_launch": 0})
    assert kernel.abi.dependent_launch and not plain.abi.dependent_launch
    torch.manual_seed(1)
    n = 2048
    b = (torch.randn(n, n, device="cuda") / n**0.5).to(torch.bfloat16)
    start = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    results = []
    for compiled in (kernel, plain):
        p, q = start.clone(), torch.empty_like(start)
        # each GEMM's A is the output of the one before, its output the A of the one before that
        _ping_pong(lambda a, c, compiled=compiled: compiled(a, b, c), p, q, LAUNCHES)
        torch.cuda.synchronize()
        results.append(p)
    assert torch.equal(results[0], results[1]), "dependent launches changed the result"
    ref = start.float()
    for _ in range(LAUNCHES):
        ref = (ref @ b.float()).to(torch.bfloat16).float()
    rel = ((results[0].float() - ref).norm() / ref.norm()).item()
    assert rel < 5e-2, f"relative error {rel:.3g}"
