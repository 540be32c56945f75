"""The occupancy plan's shared-memory layout is what convert-tile-to-sm90 builds: a stage of the
streamed loads has the room the plan gave a transposed A narrower than 64 columns; the barrier
region holds every ring's mbarriers (two rings of a split loop) and the store fences, and a ring
depth whose barriers do not fit is refused by the plan, not by the lowering; a pinned whole-tile
staging is staged whole. Found by reviewing where a later pass re-derives a plan's decision."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tkc
from tkc.diagnostics import TkError

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "k.tk"
    path.write_text(source)
    return path


def test_a_stream_stage_holds_a_narrow_transposed_a_whole(tmp_path: Path) -> None:
    """At is 64 x 32: its wgmma reads whole 64-column slices, so the plan gives it 8192 bytes
    (beside B's 8192): the stage is 16384 bytes, not the 12288 of the tiles' own columns, or the
    padded read would run into the next stage's B while TMA writes it."""
    path = write(tmp_path, "kernel atb<BM = 32, BN = 64, BK = 64>(At: gl<bf16>[BK, M], B: gl<bf16>[BK, N], C: gl<bf16>[M, N]) {\n"
                           "    grid (ceildiv(M, BM), ceildiv(N, BN)) as (i, j)\n"
                           "    let b = load B[0, j] : st<bf16>[BK, BN]\n"
                           "    let a = load At[0, i] : st<bf16>[BK, BM]\n"
                           "    store C[i, j] = bf16(mma_AtB(a, b))\n"
                           "}\n")
    kernel = tkc.compile(path)
    assert "4 x 16384 B ring of each tile's loads" in kernel.report()
    assert re.search(r"sm90\.ring 0 at %\d+ offset 1024 stages 4 stage_bytes 16384", kernel.ir("convert-tile-to-sm90"))


def test_the_report_counts_the_mbarriers_of_a_split_ring() -> None:
    """Persistent D = 128 attention splits its 2-stage K/V ring in two (K's and V's, each with
    its own barriers): 2 x 2 x 2 beside the kernel-level ring's 2 x 2, 12 mbarriers. The plan
    sizes the barrier region before tile-pipeline decides the split, so it says "up to"."""
    kernel = tkc.compile(REPO / "examples/attention.tk", **{"@persistent": 1})
    assert "1 KB for up to 12 mbarriers" in kernel.report()
    assert kernel.ptx.count("mbarrier.init.shared") == 12


def test_a_ring_depth_whose_barriers_do_not_fit_is_the_plans_error(tmp_path: Path) -> None:
    loops = "".join(f"    for k in 0 .. ceildiv(K, 16) {{\n        s = s + row_sum(f32(load {t}[i, k] : rt<bf16>[64, 16]))\n    }}\n"
                    for t in "XYZWV")
    path = write(tmp_path, "kernel rings(X: gl<bf16>[M, K], Y: gl<bf16>[M, K], Z: gl<bf16>[M, K], W: gl<bf16>[M, K], "
                           "V: gl<bf16>[M, K], O: gl<f32>[M]) {\n    grid (ceildiv(M, 64)) as (i)\n"
                           "    var s = zero<f32>[64]\n" + loops + "    store O[i] = s\n}\n")
    with pytest.raises(TkError, match=r"@stages\(16\) needs 160 mbarriers and 0 store fences, over the 128 slots of "
                                      r"the 1024-byte barrier region; at most 12 stages fit"):
        tkc.compile(path, **{"@stages": 16}).module


def test_a_pinned_whole_staging_is_staged_whole_where_it_could_reuse_the_loaded_tiles(tmp_path: Path) -> None:
    """One CTA per tile, the store after every use of X: the staging could take X's bytes, which
    the lowering writes a chunk at a time; pinned whole, it gets a region of its own and the
    64 x 256 tile's four chunks go out as one bulk group."""
    path = write(tmp_path, "@persistent(0)\n@whole_staging(1)\n"
                           "kernel twice<BM = 64, BN = 256>(X: gl<bf16>[M, N], Y: gl<bf16>[M, N]) {\n"
                           "    grid (ceildiv(M, BM), ceildiv(N, BN)) as (i, j)\n"
                           "    store Y[i, j] = bf16(f32(load X[i, j] : rt<bf16>[BM, BN]) * 2.0)\n"
                           "}\n")
    kernel = tkc.compile(path)
    assert "32768 B epilogue staging" in kernel.report()
    assert kernel.ir("convert-tile-to-sm90").count("sm90.tma_store_commit") == 1


def test_launch_refusal_judges_the_arrays_as_given() -> None:
    """launch_refusal once converted every array to its argument's dtype and dropped unknown
    names first, so it said a launch would run that the launch refuses."""
    np = pytest.importorskip("numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    gemm = tkc.compile(REPO / "examples/gemm.tk")
    a, b, c = (np.zeros(shape, ml_dtypes.bfloat16) for shape in ((256, 128), (128, 512), (256, 512)))
    assert gemm.launch_refusal({"A": a, "B": b, "C": c}) is None
    assert gemm.launch_refusal({"A": a.astype(np.float32), "B": b, "C": c}) == "argument A: expected dtype bf16, got float32"
    assert "unknown argument 'Z'" in (gemm.launch_refusal({"A": a, "B": b, "C": c, "Z": c}) or "")
    assert "is not an array" in (gemm.launch_refusal({"A": None, "B": b, "C": c}) or "")
    assert gemm.launch_refusal({"A": a.astype(np.float32), "B": b, "C": c}, converted=True) is None


def test_the_barrier_bound_counts_a_second_ring_only_where_a_ring_could_split(tmp_path: Path) -> None:
    """17 loops of row sums at 2 stages need 68 mbarriers: none of them could split (no late mma),
    so the plan's bound does not double them (it once refused @stages(2) while 3 compiled)."""
    loops = "".join(f"    for c in 0 .. ceildiv(D, 32) {{\n        s = s + row_sum(f32(load X[i, c] : rt<bf16>[64, 32]))\n    }}\n"
                    for _ in range(17))
    path = write(tmp_path, "kernel many(X: gl<bf16>[M, D], O: gl<f32>[M]) {\n    grid (ceildiv(M, 64)) as (i)\n"
                           "    var s = zero<f32>[64]\n" + loops + "    store O[i] = s\n}\n")
    assert "1 KB for 68 mbarriers" in tkc.compile(path, **{"@stages": 2}).report()
