"""Reading IR input (tkc.ir_input): every op located at its line, attribute verifiers and
dominance checked before any pass, each mistake a TkError at the op; tkc-opt's exit statuses."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from tkc import opt
from tkc.diagnostics import TkError, location_of
from tkc.driver import make_context
from tkc.ir_input import parse_mlir

KERNEL = """\
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %x = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    tile.store %x, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
"""


def parse(text: str, line_offset: int = 0) -> ModuleOp:
    return parse_mlir(text, "k.mlir", make_context(), line_offset)


def error(text: str) -> TkError:
    with pytest.raises(TkError) as info:
        parse(text)
    return info.value


def test_every_op_is_located_at_its_line_and_column() -> None:
    module = parse(KERNEL)
    places = {op.name: location_of(op) for op in module.walk()}
    assert places["builtin.module"] == ("k.mlir", 1, 1)
    assert places["tile.kernel"] == ("k.mlir", 2, 3)
    assert places["tile.grid"] == ("k.mlir", 6, 5)
    assert places["tile.fill"] == ("k.mlir", 9, 5)  # the result's name starts the op


def test_a_dump_location_is_kept_where_it_can_be_shown(tmp_path: Path) -> None:
    source = tmp_path / "k.tk"
    source.write_text("kernel k(X: gl<f32>[M, N]) {\n    grid (M / 64) as (i)\n}\n")
    shown = f'loc("{source}":2:5)'
    text = KERNEL.replace('tile.grid(%g) as ["i"]', f'tile.grid(%g) as ["i"] {shown}')
    grid = lambda module: next(op for op in module.walk() if op.name == "tile.grid")  # noqa: E731
    assert location_of(grid(parse(text))) == (str(source), 2, 5)
    for unshown in (f'loc("{source}":9:5)', f'loc("{source}":2:99)', 'loc("gone.tk":2:5)'):
        module = parse(KERNEL.replace('tile.grid(%g) as ["i"]', f'tile.grid(%g) as ["i"] {unshown}'), line_offset=10)
        assert location_of(grid(module)) == ("k.mlir", 16, 5)


def test_a_verifier_failure_is_located_in_the_input_even_with_a_dump_location(tmp_path: Path) -> None:
    source = tmp_path / "k.tk"
    source.write_text("kernel k() {\n    grid (M / 64) as (i, j)\n}\n")
    e = error(KERNEL.replace("%i = tile.block_id 0", f'%i = tile.block_id 3 loc("{source}":2:5)'))
    assert (e.filename, e.line, e.col) == ("k.mlir", 7, 5)


def test_a_verifier_failure_is_located_at_its_op_with_a_caret() -> None:
    e = error(KERNEL.replace("tile.block_id 0", "tile.block_id 2"))
    assert (e.filename, e.line, e.col) == ("k.mlir", 7, 5)
    assert e.render().splitlines() == [
        "k.mlir:7:5: error: invalid tile.block_id: axis 2 is not an axis of the 1-D grid",
        "    %i = tile.block_id 2",
        "    ^",
    ]


def test_an_attribute_verifier_fails_as_a_parse_error_of_its_op() -> None:
    e = error(KERNEL.replace("!tile.rt<64x64xf32>", "!tile.rt<64x40xf32>", 1))
    assert (e.line, e.col) == (9, 5) and "multiples of 16" in e.message
    e = error(KERNEL.replace("tile.fill 0.000000e+00 : f32", "tile.fill 1.0e+39 : f32"))
    assert e.line == 9 and "does not fit its type" in e.message


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (  # two lines swapped
            lambda t: t.replace("    %c64 = arith.constant 64 : index\n    %g = arith.divui %m, %c64 : index\n",
                                "    %g = arith.divui %m, %c64 : index\n    %c64 = arith.constant 64 : index\n"),
            4,
            "arith.divui uses %c64 before its definition (line 5)",
        ),
        (  # a loop's operand defined in its own body
            lambda t: t.replace(
                "    %x = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>\n",
                "    %x = scf.for %k = %c0 to %c64 step %c64 iter_args(%a = %y) -> (!tile.rt<64x64xf32>) {\n"
                "      %y = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>\n"
                "      scf.yield %y : !tile.rt<64x64xf32>\n"
                "    }\n",
            ),
            9,
            "scf.for uses operand 3 outside the region that defines it",
        ),
        (  # a name never defined: at its first use, not at the end of the file
            lambda t: t.replace("tile.store %x,", "tile.store %nope,"),
            10,
            "%nope is used, but not defined above the use in its block or an enclosing one",
        ),
    ],
)
def test_values_are_defined_before_their_uses(edit: Callable[[str], str], line: int, message: str) -> None:
    e = error(edit(KERNEL))
    assert (e.line, e.message) == (line, message)


def test_the_end_of_the_file_is_on_its_last_line() -> None:
    e = error(KERNEL.rsplit("}", 1)[0])  # 12 lines, the last "  }"
    assert e.line == 12 and e.message.startswith("the input ends inside an op") and e.render().endswith("   ^")


def test_an_unclosed_string_is_lexed_in_linear_time() -> None:
    text = KERNEL.replace("tile.store %x, %X[%i, %c0] :", 'tile.store %x, %X[%i, %c0] {r = "' + "ab " * 4000 + "} :")
    start = time.perf_counter()
    e = error(text)
    assert time.perf_counter() - start < 2 and e.line == 10 and "closing string literal" in e.message


def test_tkc_opt_reports_input_mistakes_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text(KERNEL.replace("tile.block_id 0", "tile.block_id 1"))
    assert opt.main([str(bad)]) == 1
    assert capsys.readouterr().err.startswith(f"{bad}:7:5: error: invalid tile.block_id: axis 1")
    assert opt.main([str(bad), "--no-such-flag"]) == 1
    capsys.readouterr()
    assert opt.main([str(bad), "-p", "cse,,"]) == 1
    assert capsys.readouterr().err.startswith("tkc-opt: error: Error parsing pass pipeline specification")


def test_tkc_opt_splits_diagnostics_per_chunk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    split = tmp_path / "split.mlir"
    split.write_text(KERNEL + "// -----\n" + KERNEL.replace("tile.block_id 0", "tile.block_id 1"))
    assert opt.main([str(split), "--split-input-file", "--verify-diagnostics"]) == 0
    assert f"{split}:21:5: error: invalid tile.block_id" in capsys.readouterr().out  # 14 lines above the chunk


def test_tkc_opt_internal_errors_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.mlir"
    good.write_text(KERNEL)

    def explode(*args: object) -> None:
        raise KeyError("a pass fell over")

    monkeypatch.setattr(opt.TkcOptMain, "apply_passes", explode)
    monkeypatch.delenv("TKC_TRACEBACK", raising=False)
    assert opt.main([str(good)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tkc-opt: internal compiler error: KeyError: 'a pass fell over'\n")
    assert f"tkc-opt {good}" in err and "Traceback" not in err
