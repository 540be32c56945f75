"""The variants `tkc.compile` launches by shape: `@whole_tiles` at whole-tile shapes, `@cluster(2)`
where a shared tile's rows are not whole cache lines.

Masks for tiles past the end cost full tiles too, so a kernel with tail masks is also compiled
without them; a launch takes that variant exactly when its ABI accepts the shapes."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_runtime import fake_torch

import tkc
from tkc.abi import ScratchParam
from tkc.diagnostics import TkError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def attention_shapes(n: int, d: int = 128) -> tuple[tuple[int, ...], ...]:
    return ((1, 2, n, d),) * 4 + ((1, 2, n),)


def test_attention_gets_a_whole_tiles_variant_without_masks() -> None:
    kernel = tkc.compile(EXAMPLES / "attention.tk", "attn_fwd")
    whole = kernel.whole_tiles
    assert whole is not None and whole.whole_tiles is None
    assert "tile.bounds_mask" in str(kernel.module) and "tile.bounds_mask" not in str(whole.module)
    assert dict(whole.abi.divisibility) == {"N": 128} and not kernel.abi.divisibility
    assert "compiled for whole tiles (@whole_tiles)" in whole.report()
    assert "also builds this kernel with @whole_tiles" in kernel.report()
    assert whole.cache_key != kernel.cache_key


@pytest.mark.parametrize(("n", "whole"), [(128, True), (4096, True), (4099, False), (17, False)])
def test_a_launch_takes_the_variant_exactly_at_whole_tiles(n: int, whole: bool) -> None:
    kernel = tkc.compile(EXAMPLES / "attention.tk", "attn_fwd")
    chosen = kernel._variant_for(tuple(type("T", (), {"shape": s})() for s in attention_shapes(n)))
    assert (chosen is kernel.whole_tiles) == whole and (chosen is kernel) != whole


def test_a_gemm_needs_no_variant() -> None:
    assert tkc.compile(EXAMPLES / "gemm.tk", "gemm").whole_tiles is None


def test_the_annotation_pins_whole_tiles(tmp_path: Path) -> None:
    source = (EXAMPLES / "attention.tk").read_text()
    pinned = tmp_path / "attention.tk"
    pinned.write_text(source.replace("kernel attn_fwd", "@whole_tiles\nkernel attn_fwd", 1))
    kernel = tkc.compile(pinned, "attn_fwd")
    assert kernel.whole_tiles is None and "tile.bounds_mask" not in str(kernel.module)
    assert dict(kernel.abi.divisibility) == {"N": 128}


def test_the_annotation_takes_no_argument(tmp_path: Path) -> None:
    source = (EXAMPLES / "attention.tk").read_text()
    pinned = tmp_path / "attention.tk"
    pinned.write_text(source.replace("kernel attn_fwd", "@whole_tiles(1)\nkernel attn_fwd", 1))
    with pytest.raises(TkError, match="@whole_tiles takes 0 arguments, got 1"):
        tkc.compile(pinned, "attn_fwd")


def gemm_shapes(m: int, n: int, k: int) -> tuple[tuple[int, ...], ...]:
    return ((m, k), (k, n), (m, n))


def test_a_gemm_gets_a_clustered_variant_that_multicasts_b() -> None:
    kernel = tkc.compile(EXAMPLES / "gemm.tk", "gemm")
    clustered = kernel.clustered
    assert clustered is not None and clustered.clustered is None
    assert clustered.abi.multicast == ("B",) and not kernel.abi.multicast


def test_a_linear_layer_shares_its_weight_by_rows() -> None:
    """gemm_abt's Bt tile (N x K, 64 columns) is one swizzle panel: the pair splits its rows, and
    a launch takes that variant where Bt's rows (K elements) are not whole lines."""
    kernel = tkc.compile(EXAMPLES / "gemm_abt.tk", "gemm_abt")
    clustered = kernel.clustered
    assert clustered is not None and clustered.abi.multicast == ("Bt",)
    m, n, k = 4000, 4000, 4000
    ragged = kernel._variant_for(tuple(type("T", (), {"shape": s})() for s in ((m, k), (n, k), (m, n))))
    aligned = kernel._variant_for(tuple(type("T", (), {"shape": s})() for s in ((m, 4096), (n, 4096), (m, n))))
    assert ragged is clustered and aligned is kernel


@pytest.mark.parametrize(("shape", "clustered"), [((8191, 8184, 8184), True), ((3000, 5000, 2000), True),
                                                  ((8192, 8192, 8192), False), ((8192, 8192, 8184), False)])
def test_a_launch_takes_the_clustered_variant_where_b_rows_are_not_whole_lines(
    shape: tuple[int, int, int], clustered: bool
) -> None:
    kernel = tkc.compile(EXAMPLES / "gemm.tk", "gemm")
    chosen = kernel._variant_for(tuple(type("T", (), {"shape": s})() for s in gemm_shapes(*shape)))
    assert (chosen is kernel.clustered) == clustered and (chosen is kernel) != clustered


def test_a_stream_k_gemm_launches_its_multicast_variant_without_the_split() -> None:
    """Stream-K walks no CTA pairs: where B's rows are not whole lines, the launch takes the
    @cluster(2) variant, built with @stream_k(0) (0.72x cuBLAS split, 1.01x multicast at
    8191x8184x8184 on the H200); at aligned shapes the kernel splits."""
    kernel = tkc.compile(EXAMPLES / "gemm.tk", "gemm", **{"@stream_k": 1})
    clustered = kernel.clustered
    assert clustered is not None and clustered.abi.multicast == ("B",)
    assert kernel._splits_k and not clustered._splits_k
    assert any(isinstance(p, ScratchParam) for p in kernel.abi.params)
    assert not any(isinstance(p, ScratchParam) for p in clustered.abi.params)
    ragged = kernel._variant_for(tuple(type("T", (), {"shape": s})() for s in gemm_shapes(8191, 8184, 8184)))
    aligned = kernel._variant_for(tuple(type("T", (), {"shape": s})() for s in gemm_shapes(8192, 8192, 8184)))
    assert ragged is clustered and aligned is kernel


def test_the_variant_follows_the_strides_of_views() -> None:
    """B = big[:, :8184] of a [K, 8192] tensor has rows on whole lines: no multicast, unlike a
    contiguous B of the same shape; the choice is remembered per shapes and strides."""
    kernel = tkc.compile(EXAMPLES / "gemm.tk", "gemm")
    m, n, k = 8191, 8184, 8184
    contiguous = tuple(fake_torch(s) for s in gemm_shapes(m, n, k))
    sliced = (contiguous[0], fake_torch((k, n), strides=(8192, 1)), contiguous[2])
    assert kernel._variant_for(contiguous) is kernel.clustered
    assert kernel._variant_for(sliced) is kernel


def test_a_pinned_cluster_and_a_kernel_without_shared_tiles_get_no_clustered_variant(tmp_path: Path) -> None:
    pinned = tmp_path / "gemm.tk"
    pinned.write_text((EXAMPLES / "gemm.tk").read_text().replace("kernel gemm", "@cluster(1)\nkernel gemm", 1))
    assert tkc.compile(pinned, "gemm").clustered is None
    assert tkc.compile(EXAMPLES / "softmax.tk").clustered is None
