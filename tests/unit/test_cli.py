"""`tkc` and `tkc-opt`: subcommands, exit statuses, error rendering, delegation, and the plugin
that lets stock `xdsl-opt` read tile IR."""

from __future__ import annotations

import argparse
import importlib.util
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tkc import cli, command_line, driver, opt

REPO = Path(__file__).resolve().parents[2]
GEMM = str(REPO / "tests/lit/driver/Inputs/gemm.mlir")


def test_compile_prints_tile_ir(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compile", GEMM, "--emit=tile"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("builtin.module {\n  tile.kernel @gemm") and err == ""


def test_compile_writes_the_output_file(tmp_path: Path) -> None:
    target = tmp_path / "gemm.tile.mlir"
    assert cli.main(["compile", GEMM, "--emit=tile", "-o", str(target)]) == 0
    assert "tile.mma" in target.read_text()


def test_output_dash_is_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["compile", GEMM, "--emit=tile", "-o", "-"]) == 0
    assert "tile.mma" in capsys.readouterr().out
    assert opt.main([GEMM, "-o", "-"]) == 0
    assert "tile.mma" in capsys.readouterr().out
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["compile"],
        ["compile", GEMM, "--emit=bogus"],
        ["compile", GEMM, "-D", "BM"],
        ["compile", GEMM, "-D", "BM=wide"],
        ["run", GEMM, "--size", "M=0"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 1
    assert "usage: tkc" in capsys.readouterr().err


def test_user_errors_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compile", str(tmp_path / "nope.tk")]) == 1
    assert capsys.readouterr().err == f"{tmp_path / 'nope.tk'}: error: cannot read the file: No such file or directory\n"
    assert cli.main(["compile", GEMM, "--emit=tile", "--print-ir-after=bogus"]) == 1
    assert "the passes that run: canonicalize, tile-hoist-invariants, cse" in capsys.readouterr().err
    bad = tmp_path / "bad.mlir"
    bad.write_text('builtin.module {\n  "tile.nope"() : () -> ()\n}\n')
    assert cli.main(["compile", str(bad), "--emit=tile"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith(f"{bad}:2:") and "tile.nope" in lines[1] and lines[2].strip() == "^"


def test_an_error_at_the_source_names_the_defines(capsys: pytest.CaptureFixture[str]) -> None:
    """The quoted source line shows the declared defaults, so the -D values in force are noted."""
    gemm = str(Path(__file__).parents[2] / "examples" / "gemm.tk")
    assert cli.main(["compile", gemm, "--emit=ptx", "-D", "BM=320", "-D", "BN=64"]) == 1
    err = capsys.readouterr().err
    assert "a TMA box spans at most 256 rows" in err and err.rstrip().endswith("note: compiled with -D BM=320 -D BN=64")


def test_internal_errors_exit_2_without_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the lowering fell over")

    monkeypatch.setattr(driver, "compile_file", explode)
    monkeypatch.delenv("TKC_TRACEBACK", raising=False)
    assert cli.main(["compile", GEMM, "--emit=tile"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tkc: internal compiler error: RuntimeError: the lowering fell over\n")
    assert f"tkc compile {GEMM} --emit=tile" in err and "Traceback" not in err

    monkeypatch.setenv("TKC_TRACEBACK", "1")
    assert cli.main(["compile", GEMM, "--emit=tile"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_missing_stage_exits_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(driver, "is_available", lambda name: name != "convert-sm90-to-ptx")
    assert cli.main(["compile", GEMM, "--emit=ptx"]) == 2
    assert capsys.readouterr().err == (
        "tkc: error: --emit=ptx needs the pass convert-sm90-to-ptx, which is not available in this build of tkc\n"
    )


def test_run_delegates_to_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    import tkc.runner

    seen: list[argparse.Namespace] = []

    def run_command(args: argparse.Namespace) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(tkc.runner, "run_command", run_command)
    argv = ["run", "x.tk", "-k", "gemm", "-D", "BM=64", "-D", "CAUSAL=true", "--size", "M=256,N=128"]
    assert cli.main([*argv, "--interpret", "--check", "--seed", "7"]) == 0
    args = seen[0]
    assert (args.file, args.kernel, args.params, args.size) == ("x.tk", "gemm", {"BM": 64, "CAUSAL": True}, {"M": 256, "N": 128})
    assert (args.interpret, args.check, args.bisect, args.seed) == (True, True, False, 7)


def test_report_delegates_after_the_tile_passes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(driver, "load_stage", lambda *a: lambda module, ctx: f"kernels: {len(module.body.block.ops)}")
    assert cli.main(["report", GEMM, "-k", "gemm"]) == 0
    assert capsys.readouterr().out == "kernels: 1\n"


def test_tkc_opt_round_trips_and_reports_unknown_passes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    generic = tmp_path / "gemm.generic"
    assert opt.main([GEMM, "--print-op-generic", "-o", str(generic)]) == 0
    assert opt.main([str(generic)]) == 0
    custom = capsys.readouterr().out
    assert opt.main([GEMM]) == 0
    assert capsys.readouterr().out == custom
    assert opt.main([GEMM, "-p", "no-such-pass"]) == 1
    assert "Unrecognized passes: ['no-such-pass']" in capsys.readouterr().err


def test_tkc_opt_internal_errors_exit_2_and_user_errors_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def explode(*args: object) -> None:
        raise RuntimeError("the pass fell over")

    monkeypatch.setattr(opt.TkcOptMain, "apply_passes", explode)
    monkeypatch.delenv("TKC_TRACEBACK", raising=False)
    assert opt.main([GEMM]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tkc-opt: internal compiler error: RuntimeError: the pass fell over\n")
    assert f"tkc-opt {GEMM}" in err and "Traceback" not in err
    monkeypatch.undo()
    latin1 = tmp_path / "latin1.tk"
    latin1.write_bytes(b"// caf\xe9\n")
    assert opt.main([str(latin1)]) == 1
    assert capsys.readouterr().err.startswith(f"{latin1}:1:7: error: invalid UTF-8 byte 0xe9")


@pytest.mark.parametrize(
    "text, value",
    [("BM=64", 64), ("BM=0x40", 64), ("CAUSAL=True", True), ("EPS=1e-6", 1e-6), ("FILL=-inf", float("-inf"))],
)
def test_defines_take_bools_integers_and_numbers(text: str, value: object) -> None:
    assert command_line.define_argument(text) == (text.partition("=")[0], value)


@pytest.mark.parametrize("text", ["BM", "=1", "B M=1", "BM=wide", "BM=", "EPS=1e999"])
def test_malformed_defines_are_usage_errors(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        command_line.define_argument(text)


def test_tkc_opt_knows_the_tkc_passes() -> None:
    tool = opt.TkcOptMain(args=[GEMM])
    assert {"canonicalize", "cse"} <= set(tool.available_passes)
    assert {name for name in driver.PIPELINE if driver.is_available(name)} <= set(tool.available_passes)
    assert "tk" in tool.available_frontends and "ptx" in tool.available_targets


@pytest.mark.skipif(shutil.which("xdsl-opt") is None, reason="xdsl-opt not on PATH")
def test_stock_xdsl_opt_finds_tkc_through_the_plugin() -> None:
    passes = ["canonicalize", *(n for n in driver.TILE_PASSES[2:] if driver.is_available(n))]
    result = subprocess.run(
        ["xdsl-opt", GEMM, "-p", ",".join(passes)], capture_output=True, text=True, check=True
    )
    assert "!tile.gl<[M, K], bf16>" in result.stdout and "tile.store" in result.stdout


def test_a_define_given_twice_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    gemm_tk = str(REPO / "examples/gemm.tk")
    assert cli.main(["compile", gemm_tk, "--emit=tile", "-D", "BM=64", "-D", "BM=128"]) == 1
    assert capsys.readouterr().err == f"{gemm_tk}: error: -D BM is given twice (64 and 128); give it once\n"
    assert opt.main([gemm_tk, "-D", "BM=64", "-D", "BM=128"]) == 1
    assert "-D BM is given twice" in capsys.readouterr().err


def test_a_dump_of_a_pass_that_does_not_run_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compile", GEMM, "--emit=tile", "--print-ir-after=convert-sm90-to-ptx"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{GEMM}: error: --print-ir-after=convert-sm90-to-ptx: convert-sm90-to-ptx does not run")
    assert "(the passes that run: canonicalize, tile-hoist-invariants, cse," in err
    assert cli.main(["compile", GEMM, "--emit=tile", "--print-ir-before=canonicalize"]) == 0


def test_run_without_a_gpu_exits_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import tkc.runner
    import tkc.runtime

    def no_device(**kwargs: object) -> None:
        raise tkc.runtime.DeviceError("no CUDA driver")

    monkeypatch.setattr(tkc.runner, "run_on_gpu", no_device)
    assert cli.main(["run", str(REPO / "examples/gemm.tk"), "--size", "M=128,N=256,K=64"]) == 2
    assert "tkc: error: cannot run on the GPU: no CUDA driver" in capsys.readouterr().err


def test_frontend_printer_into_a_closed_pipe_is_quiet() -> None:
    command = f"'{sys.executable}' -m tkc.frontend '{REPO / 'examples/attention.tk'}' | head -1"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, "builtin.module {\n", "")


@pytest.mark.parametrize("tool", ["tkc.cli", "tkc.opt"])
def test_console_scripts_flush_everything_before_ending_without_teardown(tool: str) -> None:
    """The console scripts end with os._exit (no interpreter teardown): what they print through a
    pipe still arrives whole, with main()'s status, and a reader that leaves early is no error."""
    argv = ["compile", GEMM, "--emit=tile"] if tool == "tkc.cli" else [GEMM]
    whole = subprocess.run([sys.executable, "-m", tool, *argv], capture_output=True, text=True)
    assert whole.returncode == 0 and whole.stdout.rstrip().endswith("}") and whole.stderr == ""
    expected = cli.main(argv) if tool == "tkc.cli" else opt.main(argv)
    assert expected == 0
    missing = [a if a != GEMM else "/nonexistent.tk" for a in argv]
    bad = subprocess.run([sys.executable, "-m", tool, *missing], capture_output=True, text=True)
    assert bad.returncode == 1 and "cannot read" in bad.stderr
    head = f"'{sys.executable}' -m {tool} {' '.join(argv)} | head -1"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", head], capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (0, "")


def test_float_defines_reach_float_parameters_and_not_integer_ones(capsys: pytest.CaptureFixture[str]) -> None:
    """-D EPS=1e-6 sets a float parameter, -D EPS=0 is 0.0 there, and a float for an integer
    parameter is refused at the parameter."""
    layernorm = str(REPO / "examples/layernorm.tk")
    assert cli.main(["compile", layernorm, "--emit=tile", "-D", "EPS=1e-6"]) == 0
    assert "EPS = 1.000000e-06 : f64" in capsys.readouterr().out
    assert cli.main(["compile", layernorm, "--emit=tile", "-D", "EPS=0"]) == 0
    assert "EPS = 0.000000e+00 : f64" in capsys.readouterr().out
    assert cli.main(["compile", str(REPO / "examples/gemm.tk"), "--emit=tile", "-D", "BM=1.5"]) == 1
    assert "error: parameter 'BM' is an integer, but the override BM=1.5 is a float" in capsys.readouterr().err


def test_report_defaults_to_the_only_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["report", str(REPO / "examples/gemm.tk")]) == 0
    assert capsys.readouterr().out.startswith("kernel gemm\n")
    assert cli.main(["report", str(REPO / "tests/lit/driver/Inputs/two-kernels.mlir")]) == 1
    assert "choose one with -k NAME" in capsys.readouterr().err


def test_a_size_for_a_dim_the_kernel_lacks_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(REPO / "examples/gemm.tk"), "--interpret", "--size", "M=128,N=256,KK=64"]
    assert cli.main(argv) == 1
    assert capsys.readouterr().err == (
        f"{argv[1]}: error: --size names KK, which gemm has no symbolic dim of; its dims are M, K, N; did you mean 'K'?\n"
    )


def test_repeated_sizes_merge_and_a_dim_given_twice_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    gemm = str(REPO / "examples/gemm.tk")
    assert cli.main(["run", gemm, "--interpret", "-q", "--size", "M=64", "--size", "N=128,K=64"]) == 0
    assert capsys.readouterr().out.startswith("gemm: M=64 K=64 N=128")
    assert cli.main(["run", gemm, "--interpret", "--size", "M=64", "--size", "M=128"]) == 1
    assert "--size M is given twice (64 and 128); give it once" in capsys.readouterr().err


def test_empty_sizes_seeds_jobs_and_repeated_spaces_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    gemm = str(REPO / "examples/gemm.tk")
    for argv, message in [
        (["compile", gemm, "--tuned", ""], "argument --tuned: expected NAME=SIZE,... with at least one dim, got ''"),
        (["run", gemm, "--interpret", "--size", ","], "argument --size: expected NAME=SIZE,... with at least one dim"),
        (["run", gemm, "--interpret", "--size", "M=64,N=64,K=64", "--seed", "-1"],
         "argument --seed: expected a non-negative integer, got '-1'"),
        (["tune", gemm, "--size", "M=64,N=64,K=64", "--prune-only", "-j", "0"],
         "argument -j/--jobs: expected a positive integer, got '0'"),
        (["tune", gemm, "--size", "M=64,N=64,K=64", "--prune-only", "--space", "BM=64", "--space", "BM=128"],
         "--space BM is given twice; give its values once"),
        (["compile", gemm, "-D", "BM=1e-400"], "the value of BM, 1e-400, is too small: it rounds to 0"),
        (["compile", gemm, "-D", "BM=\uff16\uff14"], "the value of BM must be true, false or a number in ASCII digits"),
        (["compile", gemm, "-k", "gemm", "-k", "other"], "-k is given twice (gemm and other); give it once"),
        (["compile", gemm, "--dump-dir", ""], "argument --dump-dir: give a directory (an empty name would write into"),
        (["compile", gemm, "-D", "@stage=4"], "did you mean '@stages'?"),
        (["compile", gemm, "-D", "@stages=true"], "@stages takes an integer, got true"),
    ]:
        assert cli.main(argv) == 1, argv
        assert message in capsys.readouterr().err, argv


def test_the_output_may_not_replace_the_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "gemm.tk"
    source.write_text((REPO / "examples/gemm.tk").read_text())
    assert cli.main(["compile", str(source), "-o", str(source)]) == 1
    assert "is the input file: writing the result there would replace the source" in capsys.readouterr().err
    assert source.read_text() == (REPO / "examples/gemm.tk").read_text()


def test_an_output_that_cannot_be_written_is_the_users_error(capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(sys, "stdout", Full())
    assert cli.main(["report", str(REPO / "examples/gemm.tk")]) == 1
    assert "tkc: error: cannot write the output: No space left on device" in capsys.readouterr().err


def test_a_literal_past_a_double_and_a_missing_target_package_are_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "tiny.tk"
    source.write_text("kernel k(X: gl<f32>[64, 64]) {\n    grid (1) as (i)\n"
                      "    store X[0, 0] = load X[0, 0] : rt<f32>[64, 64] * 1e-400\n}\n")
    assert cli.main(["compile", str(source)]) == 1
    assert "tiny.tk:3:54: error: number 1e-400 is too small: it rounds to 0" in capsys.readouterr().err
    if importlib.util.find_spec("llvmlite") is None:
        assert opt.main([str(REPO / "examples/gemm.tk"), "-t", "llvm"]) == 2
        assert "this needs the Python package llvmlite, which is not installed" in capsys.readouterr().err


def test_a_byte_order_mark_is_read_past_and_api_sizes_are_checked(tmp_path: Path) -> None:
    import tkc

    source = tmp_path / "bom.tk"
    source.write_bytes(b"\xef\xbb\xbf" + (REPO / "examples/gemm.tk").read_bytes())
    assert "wgmma" in tkc.compile(source).ptx
    for size in ("1024", 0, True):
        with pytest.raises(tkc.TkError, match=f"the size of M must be a positive integer, got {size!r}"):
            tkc.autotune(REPO / "examples/gemm.tk", sizes={"M": size, "N": 256, "K": 256}, prune_only=True)
    if importlib.util.find_spec("torch") is None:
        from tkc.torch_ops import OperatorError, custom_op

        with pytest.raises(OperatorError, match=r"need PyTorch \(pip install 'tkc\[torch\]'\)"):
            custom_op(tkc.compile(REPO / "examples/gemm.tk"))


def test_interpreter_progress_only_when_asked_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(REPO / "examples/gemm.tk"), "--interpret", "--size", "M=128,N=256,K=128"]
    assert cli.main(argv) == 0
    assert capsys.readouterr().err == ""
    assert cli.main([*argv, "--quiet"]) == 0 and capsys.readouterr().err == ""
    assert cli.main([*argv, "--progress", "--quiet"]) == 1  # one or the other


def test_stock_xdsl_opt_cannot_read_tk_files_so_tkc_opt_does() -> None:
    """xDSL's plugins add dialects, passes and targets but no frontends (README, CLI): stock
    xdsl-opt refuses the `.tk` extension, which tkc-opt reads."""
    gemm_tk = str(REPO / "examples/gemm.tk")
    stock = subprocess.run(["xdsl-opt", gemm_tk], capture_output=True, text=True)
    assert stock.returncode != 0 and "Unrecognized file extension 'tk'" in stock.stderr
    assert opt.main([gemm_tk, "-o", "/dev/null"]) == 0


def test_define_pins_a_kernel_annotation(capsys: pytest.CaptureFixture[str]) -> None:
    """`-D @stages=8` compiles as if the kernel said @stages(8) (what a tuned configuration holds);
    a bad pin is a user error naming the option."""
    example = str(REPO / "examples/gemm.tk")
    assert cli.main(["report", example, "-D", "BM=64", "-D", "BN=128", "-D", "@stages=8"]) == 0
    assert "pinned by @stages(8)" in capsys.readouterr().out
    for pin, message in [("@stages=17", "-D @stages=17: @stages takes 1 to 16 pipeline stages, got 17"),
                         ("@stage=8", "-D @stage: not an annotation -D sets"),
                         ("@stages=1.5", "@stages takes an integer, got 1.5"),
                         ("@ctas_per_sm=5", "-D @ctas_per_sm=5: @ctas_per_sm takes 1 to 4 blocks per SM, got 5"),
                         ("@band=2", "-D @band=2: @band takes 0 (the wgmma layout) or 1")]:
        assert cli.main(["compile", example, "-D", pin]) == 1
        assert message in capsys.readouterr().err


def test_tune_space_takes_annotations_with_plan_for_no_pin() -> None:
    assert cli._space_item("@stages=plan,8") == ("@stages", [None, 8])
    assert cli._space_item("BM=64,128") == ("BM", [64, 128])


def test_report_ends_with_what_ptxas_makes_of_the_kernel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """attention backward's dQ kernel with its loop overlapped against the plan's advice
    (tile-pipeline: the registers in flight exceed a consumer's): ptxas serialises the wgmmas."""
    from tkc.backends import ptxas

    try:
        ptxas.find_tool("ptxas")
    except ptxas.ToolNotFound:
        pytest.skip("ptxas is not installed")
    source = (REPO / "examples/attention_bwd.tk").read_text()
    loop = "    for kv in 0 .. (CAUSAL ? min("
    assert source.count(loop) == 1
    (tmp_path / "dq.tk").write_text(source.replace(loop, "    @overlap(1)\n" + loop))
    assert cli.main(["report", str(tmp_path / "dq.tk"), "-k", "attn_bwd_dq"]) == 0
    out = capsys.readouterr().out
    assert "\nptxas\n  registers   168 per thread at entry" in out
    assert out.endswith("  spills      none\n  losses      C7512: wgmmas serialised for want of registers\n")

    def missing(name: str) -> None:
        raise ptxas.ToolNotFound(name)

    monkeypatch.setattr(ptxas, "find_tool", missing)
    assert cli.main(["report", str(REPO / "examples/gemm.tk")]) == 0
    assert capsys.readouterr().out.endswith("ptxas\n  not installed (the `cuda` extra brings it): registers and spills unknown\n")


def test_a_check_of_the_compilers_own_output_is_a_defect_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A staging stride the planner did not reserve (as before plan.staging_chunk_bytes) is caught by
    the layout check: from .tk source, the compiler's defect (exit 2, a request to report it)."""
    from tkc.passes.plan import align
    from tkc.passes.tile_to_sm90 import shared_memory

    chunk_bytes = shared_memory.staging_chunk_bytes
    monkeypatch.setattr(shared_memory, "staging_chunk_bytes", lambda store, rows: align(chunk_bytes(store, rows), 1024))
    source = str(REPO / "tests/gpu/kernels/band_staging_chunks.tk")
    assert cli.main(["compile", source, "--emit=ptx", "-o", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert "the planner and the lowering disagree on a buffer's size" in err
    assert "this is a compiler defect, not a mistake in the program" in err


def test_report_reads_tile_ir_and_says_so_for_a_later_stage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import tkc

    (sm90 := tmp_path / "sm90.mlir").write_text(tkc.compile(REPO / "examples/gemm.tk").ir("sm90-build-rings"))
    assert cli.main(["report", str(sm90)]) == 1
    assert "tkc report explains the tile passes' decisions, so it reads a .tk source or tile IR; this is sm90 IR" in (
        capsys.readouterr().err)
