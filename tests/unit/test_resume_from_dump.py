"""`tkc compile DUMP` resumes where the dump was taken: for every example and GPU-test kernel, the
IR after every pass (as `--dump-dir` writes it) compiles to byte-identical PTX and the same ABI
as the uninterrupted compile, running exactly the passes that were still ahead of it. The GPU
test kernels resume from the input and the end of each stage only (STAGE_DUMPS): what a pass
adds stays in the IR to its stage's end, so those dumps print and parse all of it; the
examples resume from every pass (this file is CI's longest, several minutes). The resumed
compiles are not verified again: the direct compile verified the same IR after every pass, and
parsing a dump verifies it."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr

from tkc import driver
from tkc.api import ABI_ATTRIBUTE
from tkc.diagnostics import TkError
from tkc.frontend import parse_tk, read_source
from tkc.pipeline import PTX_PASSES

REPO = Path(__file__).resolve().parents[2]
EVERY_PASS = [
    *sorted((REPO / "examples").glob("*.tk")),
    REPO / "tests/lit/driver/cluster.tk",  # a 2-CTA cluster that multicasts B: optional syntax at each stage
]
STAGE_ENDS_ONLY = sorted((REPO / "tests/gpu/kernels").glob("*.tk"))
SOURCES = EVERY_PASS + STAGE_ENDS_ONLY
STAGE_DUMPS = frozenset({"input", driver.TILE_PASSES[-1], *driver.SM90_PASSES, *PTX_PASSES})
"""The dumps a GPU test kernel resumes from: the input, the last tile pass, each sm90 and PTX pass."""


class Ran(driver.Observer):
    """The passes a compile runs, and with `keep_ir` the IR text after each."""

    def __init__(self, keep_ir: bool = False) -> None:
        self.passes: list[str] = []
        self.ir: dict[str, str] = {}
        self.keep_ir = keep_ir

    def after(self, pass_name: str, module: ModuleOp) -> None:
        self.passes.append(pass_name)
        if self.keep_ir:
            self.ir[pass_name] = driver.ir_text(module)


def abi_of(module: ModuleOp) -> str:
    abis = [op.attributes[ABI_ATTRIBUTE] for op in module.walk() if ABI_ATTRIBUTE in op.attributes]
    assert len(abis) == 1 and isinstance(abis[0], StringAttr)
    return abis[0].data


def lower(module: ModuleOp, observer: driver.Observer, verify: bool = True) -> tuple[str, str]:
    """(PTX, ABI JSON) of `module` compiled to PTX, as `tkc compile --emit=ptx` makes them."""
    driver.compile_module(module, "ptx", observer, verify=verify)
    ptx = driver.emit_output(module, "ptx")
    assert isinstance(ptx, str)
    return ptx, abi_of(module)


def first_difference(text: str, direct: dict[str, str]) -> str:
    """The first pass after which resuming from `text` leaves other IR than the direct compile.
    Canonicalize run again sees its own or cse's output, not the frontend's: from cse on, the
    IR after each pass must be the uninterrupted compile's."""
    ran = Ran(keep_ir=True)
    lower(driver.parse_mlir(text, "dump.mlir"), ran)
    return next((name for name, ir in ran.ir.items() if name != "canonicalize" and ir != direct[name]), "none")


def ahead_of(dump: str) -> list[str]:
    """The passes a resumed compile of the dump taken after `dump` runs: tile IR that carries no
    decisions starts from canonicalize, and sm90 IR builds its rings again (nothing to do once
    built) and re-checks its barriers (driver docstring)."""
    if dump in ("input", "canonicalize", "tile-hoist-invariants", "cse"):
        return list(driver.PIPELINE)
    if dump in driver.SM90_PASSES:
        return list(driver.PIPELINE[driver.PIPELINE.index("sm90-build-rings") :])
    return list(driver.PIPELINE[driver.PIPELINE.index(dump) + 1 :])


@pytest.mark.parametrize("path", SOURCES, ids=[path.stem for path in SOURCES])
def test_every_dump_resumes_to_the_same_ptx_and_abi(path: Path, tmp_path: Path) -> None:
    """With the default parameters, each kernel of the file (`-k`) on its own."""
    module = parse_tk(read_source(str(path)), str(path))
    kernels = [op.sym_name.data for op in module.walk() if op.name == "tile.kernel"]
    assert kernels
    for kernel in kernels:
        dumps = tmp_path / kernel
        observer = driver.DumpOptions(StringIO(), dump_dir=dumps)
        module = driver.load_module(path, kernel)
        observer.input(module)
        ptx, abi = lower(module, observer)
        files = sorted(dumps.glob("*.mlir"))
        assert [f.name.split("-", 1)[1] for f in files] == ["input.mlir", *(f"{p}.mlir" for p in driver.PIPELINE)]
        # A pass that changed nothing (cse after canonicalize, the barrier check) leaves the same
        # text as the dump before it: compiling that text once covers both, and it resumes
        # after the first pass that left it.
        direct = {file.stem.split("-", 1)[1]: file.read_text() for file in files}
        first_with: dict[str, str] = {}
        for dump, text in direct.items():
            first_with.setdefault(text, dump)
        for text, dump in first_with.items():
            if path in STAGE_ENDS_ONLY and dump not in STAGE_DUMPS:
                continue
            resumed = driver.parse_mlir(text, f"{kernel}-after-{dump}.mlir")
            assert driver.ir_text(resumed) == text, f"the dump after {dump} does not print back to itself"
            ahead = ahead_of(dump)
            assert driver.passes_to_run(resumed, "ptx") == ahead, dump
            ran = Ran()
            tile_input = driver.input_stage(resumed)[0] == "tile"
            if tile_input:
                # Tile IR is resumed to the end of the sm90 passes: the sm90 IR, ABI included, is
                # the uninterrupted compile's, whose own dump is resumed to PTX in this loop too.
                driver.compile_module(resumed, "sm90", ran, verify=False)
                same = driver.ir_text(resumed) == direct[driver.SM90_PASSES[-1]]
            else:
                same = lower(resumed, ran, verify=False) == (ptx, abi)
            if not same:
                pytest.fail(f"{kernel}: resuming after {dump} changes the PTX or ABI; the IR first differs "
                            f"after the pass {first_difference(text, direct)}")
            assert ran.passes == [name for name in ahead if name not in PTX_PASSES or not tile_input], dump


@pytest.fixture(scope="module")
def gemm_dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """GEMM's dump files by the pass they were taken after."""
    dumps = tmp_path_factory.mktemp("gemm")
    driver.compile_file(REPO / "examples/gemm.tk", emit="ptx", observer=driver.DumpOptions(StringIO(), dump_dir=dumps))
    return {file.stem.split("-", 1)[1]: file for file in dumps.glob("*.mlir")}


@pytest.mark.parametrize(
    ("dump", "emit", "stage"),
    [("convert-tile-to-sm90", "tile", "sm90"), ("convert-sm90-to-ptx", "tile", "ptx"),
     ("convert-sm90-to-ptx", "sm90", "ptx")],
)
def test_emit_of_an_earlier_stage_than_the_input_is_a_user_error(gemm_dumps: dict[str, Path], dump: str, emit: str,
                                                                  stage: str) -> None:
    with pytest.raises(TkError, match=f"cannot emit {emit} IR: the input is already {stage} IR, a later stage"):
        driver.compile_file(gemm_dumps[dump], emit=emit)


def test_emit_of_the_input_stage_prints_it_back(gemm_dumps: dict[str, Path]) -> None:
    for dump, emit in ((driver.TILE_PASSES[-1], "tile"), ("sm90-verify-barriers", "sm90")):
        assert driver.compile_file(gemm_dumps[dump], emit=emit) == gemm_dumps[dump].read_text()


def test_k_names_the_kernel_of_a_dump_at_every_stage(gemm_dumps: dict[str, Path]) -> None:
    for dump in ("tile-pipeline", "convert-tile-to-sm90", "convert-sm90-to-ptx"):
        driver.load_module(gemm_dumps[dump], "gemm")
        with pytest.raises(TkError, match=r"no kernel named 'nope' \(the file defines gemm\)"):
            driver.load_module(gemm_dumps[dump], "nope")


def test_a_module_mixing_stages_is_a_user_error(gemm_dumps: dict[str, Path]) -> None:
    module = driver.load_module(gemm_dumps["tile-pipeline"])
    ptx = driver.load_module(gemm_dumps["convert-sm90-to-ptx"])
    for op in list(ptx.body.block.ops):
        op.detach()
        module.body.block.add_op(op)
    with pytest.raises(TkError, match="the input mixes tile and ptx IR"):
        driver.compile_module(module, "ptx")


RING_AROUND_A_LOOP = """\
kernel k<BM = 64, BN = 64>(X: gl<f32>[M, N], Z: gl<f32>[M, N], Y: gl<f32>[M, N]) {
    grid (M / BM) as (i)
    for j in 0 .. N / BN {
        let a = load X[i, j] : rt<f32>[BM, BN]
        var t = zero<f32>[BM, BN]
        for k in 0 .. N / BN {
            t = t + load X[i, k] : rt<f32>[BM, BN]
        }
        store Y[i, j] = a + t + load Z[i, j] : rt<f32>[BM, BN]
    }
}
"""


def test_a_late_diagnostic_on_a_resumed_dump_points_at_the_source(tmp_path: Path) -> None:
    """The lowering rejects a loop that loads between the loads of one stage; from the tile dump,
    it still names the .tk line."""
    source = tmp_path / "k.tk"
    source.write_text(RING_AROUND_A_LOOP)
    dump = tmp_path / "k.mlir"
    dump.write_text(driver.compile_file(source, emit="tile"))  # type: ignore[arg-type]
    with pytest.raises(TkError) as direct:
        driver.compile_file(source, emit="ptx")
    with pytest.raises(TkError) as resumed:
        driver.compile_file(dump, emit="ptx")
    assert (resumed.value.filename, resumed.value.line, resumed.value.col) == (str(source), 6, 9)
    assert resumed.value.render() == direct.value.render()


@pytest.mark.parametrize("pin", ["", "@overlap(0)", "@overlap(1)", "@turns(0)", "@turns(1)"])
def test_each_tile_pass_run_again_on_its_own_output_changes_nothing(pin: str) -> None:
    """Not what resuming relies on (it never runs a pass twice), but `tkc-opt -p PASS` on a dump
    and `tkc run --bisect` on tile IR do: an @overlap or @turns pin survives tile-pipeline run twice."""
    source = read_source(str(REPO / "examples/attention.tk"))
    if pin:
        assert source.count("\n    for kv in") == 1
        source = source.replace("\n    for kv in", f"\n    {pin} for kv in")
    for name, snapshot in driver.ir_after_each_pass(parse_tk(source, "attention.tk"))[1:]:
        again = snapshot.clone()
        driver.instantiate([name])[0].apply(driver.make_context(), again)
        assert driver.ir_text(again) == driver.ir_text(snapshot), name
