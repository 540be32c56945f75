"""The driver: pass registry, pipeline slicing, verification between passes, dumps, snapshots,
the public API with its cache, and the round trip of every example's tile IR."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.printer import Printer

import tkc
import tkc.api
import tkc.cache
from tkc import driver
from tkc.diagnostics import TkError
from tkc.dialects import tile
from tkc.passes import ALL_PASSES, is_available

REPO = Path(__file__).resolve().parents[2]
GEMM = REPO / "tests/lit/driver/Inputs/gemm.mlir"
EXAMPLES = sorted((REPO / "examples").glob("*.tk"))


def gemm() -> ModuleOp:
    return driver.load_module(GEMM)


def test_registry_names_every_pipeline_pass() -> None:
    assert set(driver.PIPELINE) <= set(ALL_PASSES)
    assert is_available("canonicalize") and is_available("cse")
    assert not is_available("tile-no-such-pass")


def test_registered_passes_load_and_carry_their_name() -> None:
    for name in ALL_PASSES:
        if is_available(name):
            assert ALL_PASSES[name]().name == name


def test_tile_stage_stops_before_the_lowering() -> None:
    names = driver.pipeline_for("tile")
    assert names[:3] == ["canonicalize", "tile-hoist-invariants", "cse"]
    assert set(names) <= set(driver.TILE_PASSES)


def test_missing_lowering_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "is_available", lambda name: name != "convert-tile-to-sm90")
    with pytest.raises(driver.StageUnavailable, match="convert-tile-to-sm90"):
        driver.pipeline_for("ptx")


@pytest.mark.parametrize("missing", ["tile-bank-conflicts", "tile-pipeline"])
def test_a_missing_tile_pass_is_an_error_not_skipped(monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    monkeypatch.setattr(driver, "is_available", lambda name: name != missing)
    for emit in ("tile", "ptx"):
        with pytest.raises(driver.StageUnavailable, match=f"--emit={emit} needs the pass {missing}"):
            driver.pipeline_for(emit)


def test_canonicalize_and_cse_keep_side_effects() -> None:
    module = driver.compile_module(gemm(), "tile")
    names = [op.name for op in module.walk()]
    assert names.count("tile.store") == 1
    assert "tile.grid" in names and "tile.return" in names and "tile.mma" in names


@dataclass(frozen=True)
class BreakIR(ModulePass):
    """Leaves a kernel without its grid: invalid IR."""

    name = "test-break-ir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for grid in list(op.walk()):
            if isinstance(grid, tile.GridOp):
                grid.detach()
                grid.erase()


@dataclass(frozen=True)
class Crash(ModulePass):
    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise KeyError("boom")


def _with_pass(monkeypatch: pytest.MonkeyPatch, cls: type[ModulePass]) -> None:
    monkeypatch.setitem(driver.ALL_PASSES, cls.name, lambda: cls)
    monkeypatch.setattr(driver, "pipeline_for", lambda emit: ["canonicalize", cls.name, "cse"])


def test_invalid_ir_after_a_pass_names_the_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_pass(monkeypatch, BreakIR)
    with pytest.raises(driver.PassVerifyError, match="after pass test-break-ir"):
        driver.compile_module(gemm(), "tile")


def test_a_crashing_pass_is_named_in_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_pass(monkeypatch, Crash)
    with pytest.raises(KeyError) as info:
        driver.compile_module(gemm(), "tile")
    assert "while running pass test-crash" in info.value.__notes__


def test_ir_after_each_pass_returns_clones() -> None:
    module = gemm()
    before = str(module)
    snapshots = driver.ir_after_each_pass(module)
    assert [name for name, _ in snapshots] == ["input", *driver.pipeline_for("tile")]
    assert str(module) == before
    assert len({id(m) for _, m in snapshots}) == len(snapshots)
    for _, snapshot in snapshots:
        snapshot.verify()


def test_dumps_to_stream_and_directory(tmp_path: Path) -> None:
    stream = StringIO()
    dumps = driver.DumpOptions(stream, after_passes=frozenset({"cse"}), dump_dir=tmp_path)
    driver.compile_file(GEMM, emit="tile", observer=dumps)
    assert stream.getvalue().startswith("// -----// IR Dump After cse //----- //\nbuiltin.module {")
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files[:5] == [driver.DUMP_MANIFEST, "00-input.mlir", "01-canonicalize.mlir", "02-tile-hoist-invariants.mlir",
                         "03-cse.mlir"]
    assert len(files) == 2 + len(driver.pipeline_for("tile"))
    assert (tmp_path / driver.DUMP_MANIFEST).read_text().split() == files[1:]


def test_unknown_dump_pass_is_a_user_error() -> None:
    dumps = driver.DumpOptions(StringIO(), before_passes=frozenset({"cse2"}))
    with pytest.raises(TkError, match="cse2 does not run .*the passes that run: canonicalize, tile-hoist-invariants, cse,.*did you mean 'cse'"):
        driver.compile_file(GEMM, emit="tile", observer=dumps)


def test_unreadable_and_invalid_inputs_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(TkError, match="cannot read"):
        driver.load_module(tmp_path / "missing.mlir")
    bad = tmp_path / "bad.mlir"
    bad.write_text("builtin.module {\n  %0 = tile.block_id\n}\n")
    with pytest.raises(TkError) as info:
        driver.load_module(bad)
    assert info.value.line == 3 and info.value.filename == str(bad)


def test_import_tkc_is_cheap() -> None:
    code = "import sys, tkc; print(sorted(m for m in sys.modules if m.split('.')[0] in ('xdsl', 'torch', 'cuda')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_compile_api_keeps_the_ir_after_each_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKC_CACHE_DIR", str(tmp_path))
    kernel = tkc.compile(GEMM)
    assert isinstance(kernel, tkc.CompiledKernel)
    assert "tile.kernel @gemm" in kernel.ir("input")
    assert kernel.ir("cse").startswith("builtin.module")
    with pytest.raises(KeyError, match="no IR after 'nope'"):
        kernel.ir("nope")
    with pytest.raises(KeyError, match="the names are input, canonicalize, .*, ptx-flatten-control-flow; did you mean "
                                       "'tile-pipeline'"):
        kernel.ir("tile-pipline")


def test_interpret_takes_a_module_a_compiled_kernel_or_a_path() -> None:
    source = str(REPO / "examples/gemm.tk")
    a, b = np.ones((128, 64), np.float32), np.ones((64, 256), np.float32)
    for program in (tkc.compile(source).module, tkc.compile(source), source):
        assert tkc.interpret(program, "gemm", {"A": a, "B": b})["C"].shape == (128, 256)
    with pytest.raises(TkError, match="tkc.interpret runs a module, a compiled kernel or a source's path, not int"):
        tkc.interpret(3, "gemm", {})


def test_compile_api_names_the_kernels_and_parameters_it_could_take(tmp_path: Path) -> None:
    two = REPO / "tests/lit/driver/Inputs/two-kernels.mlir"
    with pytest.raises(TkError, match=r"defines 2 kernels \(a, b\); choose one with kernel='NAME'"):
        tkc.compile(two)
    assert tkc.compile(two, kernel="b").module.body.block.first_op.sym_name.data == "b"
    with pytest.raises(TkError, match=r"no kernel named 'B' \(the file defines a, b\); did you mean 'b'\?"):
        tkc.compile(two, kernel="B")
    with pytest.raises(TkError, match=r"unknown parameter 'bk' \(kernel gemm has BM, BN, BK\); did you mean 'BK'\?"):
        tkc.compile(REPO / "examples/gemm.tk", bk=32)
    with pytest.raises(TkError, match="parameter 'BK' is an integer") as info:
        tkc.compile(REPO / "examples/gemm.tk", BK="32")
    assert info.value.line == 2 and info.value.render().split("\n")[2].endswith("^")


def test_ptx_comes_from_the_cache_when_present(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKC_CACHE_DIR", str(tmp_path))
    kernel = tkc.compile(GEMM)
    abi = '{"entry": "gemm", "args": [], "params": [], "grid": [1, 1, 1], "block": 384, "smem_bytes": 0, "divisibility": []}'
    tkc.cache.write(f"{kernel._key}.ptx", "// cached ptx\n")
    tkc.cache.write(f"{kernel._key}.abi.json", abi)
    assert tkc.compile(GEMM).ptx == "// cached ptx\n"
    assert tkc.compile(GEMM).abi.entry == "gemm"


def test_cache_key_depends_on_source_kernel_and_params() -> None:
    def cache_key(source: str, kernel: str | None, params: dict[str, int]) -> str:
        return tkc.cache.spelling_key("k.tk", source, kernel, dict(params))

    keys = {
        cache_key("src", "k", {"BM": 128}),
        cache_key("src", "k", {"BM": 64}),
        cache_key("src", "other", {"BM": 128}),
        cache_key("src2", "k", {"BM": 128}),
    }
    assert len(keys) == 4
    assert cache_key("s", None, {"A": 1, "B": 2}) == cache_key("s", None, {"B": 2, "A": 1})


def _print(module: ModuleOp, generic: bool) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def _roundtrip(module: ModuleOp) -> None:
    for generic in (False, True):
        text = _print(module, generic)
        again = Parser(driver.make_context(), text).parse_module()
        again.verify()
        assert _print(again, generic) == text
        assert _print(again, not generic) == _print(module, not generic)


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_round_trips_after_every_tile_pass(example: Path) -> None:
    from tkc.frontend import parse_tk

    module = parse_tk(example.read_text(), str(example), {}, None)
    for _, snapshot in driver.ir_after_each_pass(module):
        _roundtrip(snapshot)


def test_hand_written_gemm_round_trips() -> None:
    _roundtrip(gemm())


def test_compile_api_lowers_once_then_serves_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKC_CACHE_DIR", str(tmp_path))
    gemm_tk = REPO / "examples/gemm.tk"
    first = tkc.compile(gemm_tk, kernel="gemm", BN=128)
    assert ".target sm_90a" in first.ptx and first.abi.entry == "gemm"
    assert "sm90.kernel @gemm" in first.ir("convert-tile-to-sm90")

    def no_lowering(*args: object, **kwargs: object) -> None:
        raise AssertionError("lowered again instead of reading the cache")

    second = tkc.compile(gemm_tk, kernel="gemm", BN=128)
    monkeypatch.setattr(tkc.api, "emit_output", no_lowering)
    assert second.ptx == first.ptx and second.abi == first.abi


def test_interpret_on_a_path_takes_compile_time_parameters_and_refuses_unknown_names(tmp_path: Path) -> None:
    """tkc.interpret(path, kernel, inputs, params) once bound `params` as dims only, so a
    compile-time parameter given there was silently ignored (the kernel ran at its default)."""
    source = tmp_path / "flip.tk"
    source.write_text("kernel flip<BM = 64, FLIP = false>(X: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {\n"
                      "    grid (ceildiv(M, BM)) as (i)\n"
                      "    let x = load X[i, 0] : rt<f32>[BM, 64]\n"
                      "    store Y[i, 0] = FLIP ? -x : x\n"
                      "}\n")
    x = np.ones((64, 64), np.float32)
    assert tkc.interpret(source, "flip", {"X": x}, {"FLIP": True})["Y"][0, 0] == -1.0
    assert tkc.interpret(source, "flip", {"X": x}, {"FLIP": True, "M": 64})["Y"][0, 0] == -1.0
    with pytest.raises(TkError, match=r"BOGUS is neither a parameter nor a dim of the kernel \(parameters: BM, FLIP; "
                                      r"dims: M\)"):
        tkc.interpret(source, "flip", {"X": x}, {"BOGUS": 3})
    module = tkc.compile(source).module
    with pytest.raises(TkError, match=r"BOGUS is not a dim of flip \(its dims: M\)"):
        tkc.interpret(module, "flip", {"X": x}, {"BOGUS": 3})
    with pytest.raises(TkError, match=r"FLIP = True, but flip was compiled with FLIP = False"):
        tkc.interpret(module, "flip", {"X": x}, {"FLIP": True})
    assert tkc.interpret(module, "flip", {"X": x}, {"FLIP": False})["Y"][0, 0] == 1.0
    # a pinned annotation, as tkc.compile takes it, is checked and changes no result
    assert tkc.interpret(source, "flip", {"X": x}, {"FLIP": True, "@stages": 3})["Y"][0, 0] == -1.0
    with pytest.raises(TkError, match=r"@stagez: not an annotation -D sets .*did you mean '@stages'"):
        tkc.interpret(source, "flip", {"X": x}, {"@stagez": 3})
    with pytest.raises(TkError, match=r"the inputs map flip's argument names \(X, Y\) to arrays \(not ndarray\)"):
        tkc.interpret(module, "flip", x)


def test_numpy_scalars_override_parameters() -> None:
    assert tkc.compile(REPO / "examples/gemm.tk", BM=np.int64(64)).params["BM"] == 64


def test_interpret_on_a_path_applies_parameters_before_anything_compiles(tmp_path: Path) -> None:
    """The kernel compiles only with the override (its default fails a require): the parameters
    are read from the source, not from a build at the defaults."""
    source = tmp_path / "req.tk"
    source.write_text("kernel twice<ON = false>(X: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {\n"
                      "    require ON\n"
                      "    grid (ceildiv(M, 64)) as (i)\n"
                      "    store Y[i, 0] = load X[i, 0] : rt<f32>[64, 64] * 2.0\n"
                      "}\n")
    x = np.ones((64, 64), np.float32)
    assert tkc.interpret(source, "twice", {"X": x}, {"ON": True})["Y"][0, 0] == 2.0
