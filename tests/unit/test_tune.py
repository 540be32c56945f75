"""The autotuner on the CPU: its search space, its pruning (nothing infeasible is ever timed, each
pruned configuration says why), its cache keying and its table, with the GPU timing stubbed."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tkc
from tkc import cli, tune
from tkc.backends.ptxas import Cubin, parse_report
from tkc.pipeline import StageUnavailable

REPO = Path(__file__).resolve().parents[2]
GEMM = str(REPO / "examples/gemm.tk")
ATTENTION = str(REPO / "examples/attention.tk")
SIZES = {"M": 256, "N": 384, "K": 128}
SPACE = {"BM": [128], "BN": [128, 256, 512], "BK": [64]}


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch) -> list[tkc.CompiledKernel]:
    """A GPU named "Fake H200" on which a kernel takes BN / 100 ms; the list holds what was timed."""
    timed: list[tkc.CompiledKernel] = []

    def measure(compiled: tkc.CompiledKernel, sizes: dict[str, int]) -> float:
        timed.append(compiled)
        return compiled.params["BN"] / 100

    monkeypatch.setattr(tune, "gpu_name", lambda: "Fake H200")
    monkeypatch.setattr(tune, "measure", measure)
    return timed


def test_the_default_space_tunes_tiles_ring_depth_and_stream_k_never_the_interface() -> None:
    rings = {"@stages": [None, 2, 3, 6, 8]}  # the plan's ring, shallower and deeper ones, where loads are pipelined
    gemm_tiles = {"BM": [64, 128, 256], "BN": [128, 160, 192, 256, 512], "BK": [32, 64, 128]}
    # a persistent GEMM grid is also tried split along K; attention's loop bounds differ per tile
    assert tune.search_space(GEMM) == {**gemm_tiles, **rings, "@stream_k": [None, 1]}
    assert tune.search_space(ATTENTION) == {"BQ": [64, 128, 256], "BKV": [64, 128, 256], **rings}  # not D, not CAUSAL
    assert tune.search_space(ATTENTION, fixed={"BQ": 64}) == {"BKV": [64, 128, 256], **rings}
    # a wide tile is also trimmed to fill the last wave: 5/8 and 3/4 where whole multiples of 32, >= 128
    assert tune.tile_values(512) == [256, 320, 384, 512, 1024] and tune.tile_values(64) == [32, 64, 128]


def test_a_space_naming_an_unknown_parameter_is_a_user_error() -> None:
    with pytest.raises(tkc.TkError, match="has no parameter of; it has BM, BN, BK; did you mean 'BM'"):
        tune.search_space(GEMM, given={"bm": [64]})
    with pytest.raises(tkc.TkError, match="no annotation a configuration pins; those are @consumers.*did you mean '@stages'"):
        tune.search_space(GEMM, given={"@stage": [8]})


@pytest.mark.parametrize("given, message", [
    ({"@stages": [None, 0]}, "the space gives @stages 0: @stages takes 1 to 16"),
    ({"@consumers": [9]}, "the space gives @consumers 9: @consumers takes 1 to 7"),
    ({"@stream_k": [True]}, "the space gives @stream_k true: @stream_k takes an integer"),
    ({"BM": [64.0]}, "the space gives BM 64.0: BM is an integer parameter"),
    ({"BM": [True]}, "the space gives BM true: BM is an integer parameter"),
    ({"BN": 128}, "the space gives BN 128: a list of the values to try"),
    ({"BN": "128"}, "the space gives BN '128': a list of the values to try"),
])
def test_a_bad_value_in_a_space_is_a_user_error_as_with_minus_d(given: dict, message: str) -> None:
    with pytest.raises(tkc.TkError, match=message):
        tune.search_space(GEMM, given=given)


def test_a_space_keeps_what_the_kernel_computes_and_its_arguments() -> None:
    with pytest.raises(tkc.TkError, match="CAUSAL is a flag: it selects what the kernel computes, which tuning keeps"):
        tune.search_space(ATTENTION, given={"CAUSAL": [True, False]})
    with pytest.raises(tkc.TkError, match="the space gives D 64, which changes the kernel.s arguments"):
        tune.search_space(ATTENTION, given={"D": [64, 128]})
    assert tune.search_space(GEMM, given={"BM": [64, 64, 128]}) == {"BM": [64, 128]}  # each value once


def test_tuning_tile_ir_pins_its_annotations_and_refuses_ir_past_the_plan(tmp_path: Path) -> None:
    compiled = tkc.compile(GEMM)
    (tile := tmp_path / "gemm.mlir").write_text(compiled.ir("input"))
    result = tkc.autotune(tile, sizes=SIZES, space={"@stages": [None, 2]}, prune_only=True)
    assert [t.reason is None or "ring" in t.reason for t in result.trials] == [True, True]
    (planned := tmp_path / "planned.mlir").write_text(compiled.ir("tile-occupancy-plan"))
    with pytest.raises(tkc.TkError, match="holds gemm's plan, decided by tile-occupancy-plan: pin its input"):
        tkc.compile(planned, **{"@stages": 2})
    (sm90 := tmp_path / "sm90.mlir").write_text(compiled.ir("sm90-build-rings"))
    with pytest.raises(tkc.TkError, match="tuning compiles configurations of a .tk source or tile IR; this is sm90 IR"):
        tkc.autotune(sm90, sizes=SIZES, prune_only=True)


def test_shallow_rings_are_timed_only_where_they_let_a_second_cta_share_the_sm() -> None:
    softmax, sizes = str(REPO / "examples/softmax.tk"), {"M": 4096, "N": 4096}
    # 64x128 tiles: 2 stages fit two CTAs on an SM (4 stages, the plan's, fit one); 3 stages do not
    two, _ = tune.prune(softmax, None, {"BM": 64, "BN": 128, "@stages": 2}, sizes)
    three, _ = tune.prune(softmax, None, {"BM": 64, "BN": 128, "@stages": 3}, sizes)
    assert two.reason is None
    assert three.reason == ("@stages(3) keeps one CTA per SM, as the plan's 4-stage ring does: fewer loads in flight "
                            "for no CTA more")
    big, _ = tune.prune(GEMM, None, {"BM": 128, "BN": 256, "BK": 64, "@stages": 2}, SIZES)
    assert "keeps one CTA per SM, as the plan's 4-stage ring does" in (big.reason or "")
    # a pin at the plan's own depth is the unpinned configuration, not timed twice
    same, _ = tune.prune(softmax, None, {"BM": 64, "BN": 128, "@stages": 4}, sizes)
    assert same.reason == "@stages(4) is the plan's own ring: the configuration without the pin"
    # ... where the space holds that configuration: a space of pinned depths alone times it
    kept, _ = tune.prune(softmax, None, {"BM": 64, "BN": 128, "@stages": 4}, sizes, plan_ring_tried=False)
    assert kept.reason is None


def test_a_shallow_ring_that_alone_lets_the_pinned_blocks_fit_is_timed() -> None:
    """The 64 x 64 FFTConv with two blocks per SM fits only with one ring stage in one staging
    region: without the @stages pin the configuration does not compile, which says nothing
    against the pinned one (it ran 1.28x the plan's own on an H100)."""
    fftconv = str(REPO / "examples/fftconv.tk")
    config = {"ROWS": 64, "COLS": 64, "@persistent": 0, "@ctas_per_sm": 2, "@stages": 1, "@shared_staging": 1}
    trial, _ = tune.prune(fftconv, None, config, {"P": 8, "H": 1024, "R": 32})
    assert trial.reason is None


def test_ring_depth_configurations_pin_the_plan_and_deep_rings_of_big_tiles_are_pruned(fake_gpu: list) -> None:
    result = tune.autotune(GEMM, sizes=SIZES, space={"BM": [64], "BN": [128, 256], "@stages": [None, 8]})
    reasons = {(t.config["BN"], t.config["@stages"]): t.reason for t in result.trials}
    assert reasons[(128, None)] is None and reasons[(128, 8)] is None and reasons[(256, None)] is None
    assert "@stages(8) needs" in (reasons[(256, 8)] or "") and "over the 232448-byte budget" in (reasons[(256, 8)] or "")
    assert [k.report().count("pinned by @stages(8)") for k in fake_gpu] == [0, 1, 0]
    assert "plan" in result.table().splitlines()[1] + result.table().splitlines()[2]
    assert tune.spell({"BN": 128, "@stages": None}) == "BN=128"
    assert tune.spell({"BN": 128, "@stages": 8}) == "BN=128 @stages=8"


@pytest.fixture
def floor_gemm(tmp_path: Path) -> str:
    """examples/gemm.tk counting its tiles with `/`, which rounds down: N must be whole tiles."""
    path = tmp_path / "floor_gemm.tk"
    source = Path(GEMM).read_text()
    for dim, tile in (("M", "BM"), ("N", "BN"), ("K", "BK")):
        source = source.replace(f"ceildiv({dim}, {tile})", f"{dim} / {tile}")
    path.write_text(source)
    return str(path)


def test_infeasible_configurations_are_pruned_with_their_reason_and_never_timed(fake_gpu: list, floor_gemm: str) -> None:
    result = tune.autotune(floor_gemm, sizes=SIZES, space=SPACE)
    reasons = {t.config["BN"]: t.reason for t in result.trials}
    assert reasons[128] is None
    assert reasons[256] == "N=384 is not a multiple of 256 (the kernel counts tiles with N / 256)"
    assert reasons[512] is not None and "at most 256" in reasons[512]
    assert [k.params["BN"] for k in fake_gpu] == [128]
    assert result.best is not None and result.best.config == {"BM": 128, "BN": 128, "BK": 64}


def test_ptxas_spills_prune(fake_gpu: list, monkeypatch: pytest.MonkeyPatch) -> None:
    log = "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n" \
          "ptxas info    : Function properties for gemm\n" \
          "    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n" \
          "ptxas info    : Used 255 registers\n"
    monkeypatch.setattr(tkc.CompiledKernel, "assemble", lambda self: Cubin(b"", parse_report(log), "sm_90a"))
    result = tune.autotune(GEMM, sizes=SIZES, space={"BN": [128]})
    assert result.trials[0].reason == "ptxas: spills 8 B / reloads 8 B of registers"
    assert fake_gpu == [] and result.best is None


def test_results_are_cached_by_gpu_and_shape_bucket(fake_gpu: list, monkeypatch: pytest.MonkeyPatch) -> None:
    first = tune.autotune(GEMM, sizes=SIZES, space=SPACE)
    timed = len(fake_gpu)
    again = tune.autotune(GEMM, sizes=SIZES, space=SPACE)
    assert again.from_cache and len(fake_gpu) == timed and again.best == first.best
    tune.autotune(GEMM, sizes={**SIZES, "M": 512}, space=SPACE)  # another bucket: tuned again
    assert len(fake_gpu) == 2 * timed
    tune.autotune(GEMM, sizes=SIZES, space={"BN": [128]})  # another space: tuned again
    assert len(fake_gpu) == 2 * timed + 1
    monkeypatch.setattr(tune, "gpu_name", lambda: "Fake H100")
    assert not tune.autotune(GEMM, sizes=SIZES, space=SPACE).from_cache
    assert set(tune.cached_results(GEMM, "gemm", SIZES)) == {"Fake H200", "Fake H100"}


def test_shape_buckets_keep_what_decides_whole_tiles() -> None:
    assert tune.shape_bucket({"M": 1000, "N": 3072, "K": 4096}) == {"K": [4096, 256], "M": [1024, 8], "N": [4096, 256]}
    assert tune.shape_bucket({"M": 4000}) != tune.shape_bucket({"M": 4096})


def test_the_table_lists_every_trial_fastest_first(fake_gpu: list) -> None:
    result = tune.autotune(GEMM, sizes={"M": 256, "N": 512, "K": 128}, space=SPACE)
    lines = result.table().splitlines()
    assert lines[0].split() == ["BM", "BN", "BK", "tiles", "regs", "smem", "KiB", "time", "ms", "result"]
    assert lines[1].split()[:4] == ["128", "128", "64", "8"] and lines[1].endswith("  best")  # 2 x 4 tiles of C
    assert lines[2].split()[1] == "256" and lines[2].split()[3] == "4" and lines[2].endswith("2.00x best")
    assert "pruned: " in lines[3] and lines[3].split()[1] == "512"


def test_tkc_tune_prints_the_table_and_tkc_compile_reuses_its_choice(
    fake_gpu: list, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tune", GEMM, "--size", "M=256,N=384,K=128", "--space", "BN=128,512", "--space", "BK=32"]
    assert cli.main(argv) == 0
    assert "[2/2]" not in capsys.readouterr().err  # stderr is no terminal: progress only when asked
    assert cli.main([*argv, "--progress", "--force"]) == 0
    out, err = capsys.readouterr()
    assert "[2/2] BN=512 BK=32: pruned" in err
    assert out.splitlines()[-1] == "best (on Fake H200): -D BN=128 -D BK=32"
    assert cli.main(["compile", GEMM, "--emit=tile", "--tuned", "M=256,N=384,K=128"]) == 0
    assert "params = {BM = 128 : i64, BN = 128 : i64, BK = 32 : i64}" in capsys.readouterr().out
    assert cli.main(["compile", GEMM, "--emit=tile", "--tuned", "M=256,N=384,K=128", "-D", "BK=64"]) == 0
    assert "BK = 64 : i64" in capsys.readouterr().out


def test_compile_tuned_without_a_result_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compile", GEMM, "--tuned", "M=256,N=384,K=128"]) == 1
    assert "no tuning result for gemm at M=256,N=384,K=128: run tkc tune" in capsys.readouterr().err


def test_print_autotuning(fake_gpu: list, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TKC_PRINT_AUTOTUNING", "1")
    tune.autotune(GEMM, sizes=SIZES, space={"BN": [128]})
    tune.autotune(GEMM, sizes=SIZES, space={"BN": [128]})
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "tkc autotune: gemm at M=256,N=384,K=128 on Fake H200: BN=128 1.2800 ms (1 tried)",
        "tkc autotune: gemm at M=256,N=384,K=128 on Fake H200: BN=128 1.2800 ms (cached)",
    ]


def test_without_a_gpu_tuning_refuses_before_compiling(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tune, "gpu_name", lambda: (_ for _ in ()).throw(StageUnavailable("no CUDA GPU here")))
    monkeypatch.setattr(tune, "prune", lambda *a: pytest.fail("compiled a configuration"))
    with pytest.raises(StageUnavailable):
        tkc.autotune(GEMM, sizes=SIZES)
    assert cli.main(["tune", GEMM, "--size", "M=256,N=384,K=128"]) == 2
    assert capsys.readouterr().err == "tkc: error: no CUDA GPU here\n"


def test_prune_only_works_without_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tune, "gpu_name", lambda: pytest.fail("asked for the GPU"))
    result = tkc.autotune(GEMM, sizes=SIZES, space={"BN": [128, 512]}, prune_only=True)
    assert [t.reason is None for t in result.trials] == [True, False] and result.best is None


def test_sizes_must_name_every_dim_and_only_those() -> None:
    with pytest.raises(tkc.TkError, match="give K with --size"):
        tkc.autotune(GEMM, sizes={"M": 256, "N": 256}, prune_only=True)
    with pytest.raises(tkc.TkError, match="--size names Q"):
        tkc.autotune(GEMM, sizes={**SIZES, "Q": 1}, prune_only=True)
    with pytest.raises(tkc.TkError, match="the size of M, 4294967296, does not fit in 31 bits") as info:
        tkc.autotune(GEMM, sizes={**SIZES, "M": 1 << 32}, prune_only=True)
    assert str(info.value).startswith(f"{GEMM}: error:")  # an API call's error names the kernel's file


def test_an_autotuned_kernel_tunes_each_shape_bucket_once_and_launches_the_choice(
    fake_gpu: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tkc.autotuned: sizes from the arguments' shapes, one tuning per shape bucket (cached on
    disk), the chosen configuration launched; the launch itself is stubbed (no GPU)."""
    launched: list[dict] = []
    monkeypatch.setattr(tkc.CompiledKernel, "__call__", lambda self, *a, stream=None: launched.append(self.params))
    gemm = tkc.autotuned(GEMM, space=SPACE)

    def arrays(m: int, n: int, k: int) -> tuple[np.ndarray, ...]:
        return np.zeros((m, k), np.float32), np.zeros((k, n), np.float32), np.zeros((m, n), np.float32)

    a, b, c = arrays(256, 384, 128)
    gemm(a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16), c.astype(ml_dtypes.bfloat16))
    timed = len(fake_gpu)
    assert timed > 0 and launched == [{"BM": 128, "BN": 128, "BK": 64}]  # BN / 100 ms: the narrowest wins
    assert gemm.sizes(*arrays(250, 384, 128)) == {"M": 250, "K": 128, "N": 384}
    gemm(*(x.astype(ml_dtypes.bfloat16) for x in arrays(250, 384, 128)))  # another bucket: 250 is no multiple of 4
    gemm(*(x.astype(ml_dtypes.bfloat16) for x in arrays(256, 384, 128)))
    assert len(gemm.choices) == 2 and len(launched) == 3
    again = tkc.autotuned(GEMM, space=SPACE)  # a new object reads the disk cache: nothing is timed
    before = len(fake_gpu)
    again(*(x.astype(ml_dtypes.bfloat16) for x in arrays(256, 384, 128)))
    assert len(fake_gpu) == before
    with pytest.raises(tkc.TkError, match="argument B: K = 64, but an earlier argument has K = 128"):
        gemm.sizes(*arrays(256, 384, 128)[:1], np.zeros((64, 384)), np.zeros((256, 384)))
    with pytest.raises(tkc.TkError, match="expected 3 arguments"):
        gemm.sizes(np.zeros((4, 4)))


def test_workers_prune_as_this_process_does(fake_gpu: list) -> None:
    """Pruning in spawned workers (PARALLEL_FROM configurations or more) gives the trials, in order,
    that pruning here gives; what they found feasible is timed here from the disk cache."""
    space = {"BM": [64, 128], "BN": [128, 160, 192, 256, 512], "BK": [64], "@stages": [None, 8]}
    assert len(tune.candidates(space)) >= tune.PARALLEL_FROM
    apart = tune.autotune(GEMM, sizes=SIZES, space=space, jobs=2)
    here = tune.autotune(GEMM, sizes=SIZES, space=space, jobs=1, force=True)
    assert [(t.config, t.reason, t.ms) for t in apart.trials] == [(t.config, t.reason, t.ms) for t in here.trials]
    assert sum(t.ms is not None for t in apart.trials) >= 3


def test_the_best_is_compared_with_the_declared_defaults(fake_gpu: list) -> None:
    result = tune.autotune(GEMM, sizes=SIZES, space={"BM": [128], "BN": [128, 256], "BK": [64], "@stages": [None]})
    declared = tune.declared_defaults(GEMM, None, {})  # BN = 256 by default: 2.56 against 1.28 ms
    assert result.over_defaults(declared) == pytest.approx(2.0)
    assert tune.autotune(GEMM, sizes=SIZES, space={"BN": [128]}).over_defaults(declared) is None  # defaults untried


def test_work_tiles_count_the_grid_a_persistent_or_stream_k_launch_folds() -> None:
    """The tiles column: a persistent GEMM's grid is min(tiles, CTAs), its tiles the C tiles;
    a stream-K grid is every SM's CTAs whatever the tiles, so it has no count."""
    sizes = {"M": 3072, "N": 3072, "K": 3072}
    assert tune.work_tiles(tkc.compile(GEMM, kernel="gemm").abi, sizes) == 24 * 12
    assert tune.work_tiles(tkc.compile(GEMM, kernel="gemm", BN=192).abi, sizes) == 24 * 16
    assert tune.work_tiles(tkc.compile(GEMM, kernel="gemm", **{"@stream_k": 1}).abi, sizes) is None
    assert tune.work_tiles(tkc.compile(GEMM, kernel="gemm").abi, {"M": 3072}) is None  # N unknown
