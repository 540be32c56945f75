"""The compile cache (tkc.cache): where it lives, what its keys cover, that `tkc compile` answers
a repeated compile from it without loading xDSL, that spellings of one call share an entry, and
that the Python API shares entries with the CLI and caches the cubin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tkc
import tkc.version
import tkc.api
from tkc import cache, cli
from tkc.driver import DUMP_MANIFEST
from tkc.pipeline import PIPELINE

REPO = Path(__file__).resolve().parents[2]
GEMM = str(REPO / "examples/gemm.tk")


def entries(directory: Path, suffix: str) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.endswith(suffix))


def test_cache_dir_follows_tkc_cache_dir_then_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TKC_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "tkc"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "tkc"
    monkeypatch.setenv("TKC_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.cache_dir() == tmp_path / "mine"
    monkeypatch.setenv("TKC_CACHE_DIR", "~/mine")
    assert cache.cache_dir() == tmp_path / "home" / "mine"
    monkeypatch.delenv("TKC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # the XDG spec: ignored
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "tkc"


@pytest.mark.parametrize("value, on", [("", False), ("0", False), ("false", False), ("No", False), (" off ", False),
                                       ("1", True), ("yes", True), ("true", True)])
def test_switches_in_the_environment(monkeypatch: pytest.MonkeyPatch, value: str, on: bool) -> None:
    monkeypatch.setenv("TKC_ALWAYS_COMPILE", value)
    assert cache.always_compile() is on


def test_keys_cover_the_compiler_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = cache.spelling_key("k.tk", "src", None, {}), cache.entry_key("ir")
    cache.compiler_fingerprint.cache_clear()
    monkeypatch.setattr(tkc.version, "__version__", "99.0")
    try:
        assert cache.compiler_fingerprint().startswith("99.0-")
        after = cache.spelling_key("k.tk", "src", None, {}), cache.entry_key("ir")
    finally:
        cache.compiler_fingerprint.cache_clear()
    assert not set(before) & set(after)


def test_spelling_keys_tell_parameter_types_and_file_names_apart() -> None:
    keys = {
        cache.spelling_key("k.tk", "src", None, {"X": 1}),
        cache.spelling_key("k.tk", "src", None, {"X": True}),
        cache.spelling_key("k.tk", "src", None, {"X": 1.0}),
        cache.spelling_key("./k.tk", "src", None, {"X": 1}),
    }
    assert len(keys) == 4


def test_repeated_compile_comes_from_the_cache_without_loading_xdsl(_own_cache: Path) -> None:
    code = (
        "import sys; from tkc import cli; status = cli.main(sys.argv[1:]); "
        "print(status, sorted({m.split('.')[0] for m in sys.modules} & {'xdsl', 'lark'}))"
    )
    argv = [sys.executable, "-c", code, "compile", GEMM, "--emit=ptx", "-o", os.devnull]
    first = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    second = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert first.strip() == "0 ['lark', 'xdsl']"
    assert second.strip() == "0 []"


def test_spellings_of_one_call_share_one_entry(_own_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for defines in ([], ["-D", "BM=128"], ["-D", "BN=256", "-D", "BM=128", "-k", "gemm"]):
        assert cli.main(["compile", GEMM, "--emit=tile", *defines]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2]
    assert len(entries(_own_cache, ".tile.mlir")) == 1
    assert len(entries(_own_cache, ".entry")) == 3
    assert cli.main(["compile", GEMM, "--emit=tile", "-D", "BM=64"]) == 0
    assert capsys.readouterr().out != outputs[0]
    assert len(entries(_own_cache, ".tile.mlir")) == 2


def test_a_hit_serves_what_the_entry_holds_and_always_compile_ignores_it(
    _own_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["compile", GEMM, "--emit=tile"]) == 0
    real = capsys.readouterr().out
    (entry,) = entries(_own_cache, ".tile.mlir")
    cache.write(entry.name, "// from the cache\n")
    assert cli.main(["compile", GEMM, "--emit=tile"]) == 0
    assert capsys.readouterr().out == "// from the cache\n"
    monkeypatch.setenv("TKC_ALWAYS_COMPILE", "1")
    assert cli.main(["compile", GEMM, "--emit=tile"]) == 0
    assert capsys.readouterr().out == real
    assert cache.read_text(entry.name) == real  # the recompiled result is written back


@pytest.mark.parametrize("damage", ["cut short", "edited", "unsealed"])
def test_a_damaged_entry_is_a_miss_and_is_written_again(
    _own_cache: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    """A cache file whose contents do not match the sha256 it was written with (cut short by a full
    disk, edited, written by something else) is compiled again, never served."""
    assert cli.main(["compile", GEMM, "--emit=tile"]) == 0
    real = capsys.readouterr().out
    (entry,) = entries(_own_cache, ".tile.mlir")
    data = entry.read_bytes()
    entry.write_bytes({"cut short": data[: len(data) // 2], "edited": data.replace(b"tile.", b"tile_", 1),
                       "unsealed": real.encode()}[damage])
    assert cli.main(["compile", GEMM, "--emit=tile"]) == 0
    assert capsys.readouterr().out == real
    assert cache.read_text(entry.name) == real


def test_dumps_run_the_passes_even_when_cached(_own_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compile", GEMM, "--emit=tile"]) == 0
    capsys.readouterr()
    assert cli.main(["compile", GEMM, "--emit=tile", "--print-ir-after=cse"]) == 0
    assert "// -----// IR Dump After cse //----- //" in capsys.readouterr().err


def test_an_edited_source_is_compiled_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "k.tk"
    source.write_text(Path(GEMM).read_text())
    assert cli.main(["compile", str(source), "--emit=tile"]) == 0
    first = capsys.readouterr().out
    source.write_text(Path(GEMM).read_text().replace("BM = 128", "BM = 64"))
    assert cli.main(["compile", str(source), "--emit=tile"]) == 0
    assert capsys.readouterr().out != first


def test_the_api_serves_what_tkc_compile_lowered(
    _own_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["compile", GEMM, "--emit=ptx"]) == 0
    ptx = capsys.readouterr().out

    def no_lowering(*args: object, **kwargs: object) -> None:
        raise AssertionError("lowered again instead of reading the cache")

    kernel = tkc.compile(GEMM, BM=128)  # the default, spelt out: the same entry
    monkeypatch.setattr(tkc.api, "emit_output", no_lowering)
    assert kernel.ptx == ptx and kernel.abi.entry == "gemm"


def test_the_api_caches_the_cubin_and_launches_it(_own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nvidia.cu13")  # ptxas comes from the nvidia-cuda-nvcc wheel
    import tkc.backends.ptxas
    import tkc.runtime

    kernel = tkc.compile(GEMM)
    cubin = kernel.cubin
    assert cubin is not None and cubin.startswith(b"\x7fELF")
    assert entries(_own_cache, ".cubin")

    def no_ptxas(*args: object, **kwargs: object) -> None:
        raise AssertionError("assembled again instead of reading the cache")

    monkeypatch.setattr(tkc.backends.ptxas, "assemble", no_ptxas)
    again = tkc.compile(GEMM)
    loads: list[dict[str, object]] = []
    monkeypatch.setattr(tkc.runtime, "load", lambda **kwargs: loads.append(kwargs) or (lambda *a, stream: None))
    again(stream=None)
    assert loads[0]["cubin"] == cubin and "ptx" not in loads[0]


def test_without_ptxas_the_api_launches_the_ptx(_own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tkc.backends.ptxas
    import tkc.runtime

    def missing(*args: object, **kwargs: object) -> None:
        raise tkc.backends.ptxas.ToolNotFound("ptxas not found")

    monkeypatch.setattr(tkc.backends.ptxas, "assemble", missing)
    kernel = tkc.compile(GEMM)
    loads: list[dict[str, object]] = []
    monkeypatch.setattr(tkc.runtime, "load", lambda **kwargs: loads.append(kwargs) or (lambda *a, stream: None))
    kernel(stream=None)
    assert kernel.cubin is None and loads[0]["ptx"] == kernel.ptx


def test_dump_dir_environment_writes_every_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKC_DUMP_DIR", str(tmp_path / "dumps"))
    kernel = tkc.compile(GEMM)
    assert kernel.ptx
    (directory,) = (tmp_path / "dumps").iterdir()
    assert directory.name == f"gemm-{kernel._key[:12]}"
    names = sorted(p.name for p in directory.iterdir() if p.name != DUMP_MANIFEST)
    last = f"{len(PIPELINE):02d}-{PIPELINE[-1]}.mlir"
    assert names[0] == "00-input.mlir" and names[-1] == last and len(names) == len(PIPELINE) + 1


def test_dump_dir_starts_afresh(tmp_path: Path) -> None:
    """A second run removes the dumps of the first, which its manifest lists, and nothing else."""
    dumps = tmp_path / "dumps"
    assert cli.main(["compile", GEMM, "--emit=ptx", "--dump-dir", str(dumps), "-o", os.devnull]) == 0
    (dumps / "99-my-pass.mlir").write_text("mine")
    (dumps / "notes.txt").write_text("mine")
    assert cli.main(["compile", GEMM, "--emit=tile", "--dump-dir", str(dumps), "-o", os.devnull]) == 0
    names = {p.name for p in dumps.iterdir()}
    tile_pipeline = f"{PIPELINE.index('tile-pipeline') + 1:02d}-tile-pipeline.mlir"
    last = f"{len(PIPELINE):02d}-{PIPELINE[-1]}.mlir"
    assert last not in names and {"99-my-pass.mlir", "notes.txt", tile_pipeline} <= names


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out == f"tkc {tkc.__version__}\n"
