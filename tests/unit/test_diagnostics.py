"""TkError.render: the location, the message, the source line as the lexer counts lines, a caret."""

from __future__ import annotations

from pathlib import Path

import pytest

from tkc.diagnostics import TkError
from tkc.frontend import parse_tk


COPY_KERNEL = ("kernel k(X: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {\n"
               "    grid (M / 64) as (i)\n"
               "    store Y[i, 0] = load X[i, 0] : rt<f32>[64, 64]\n}\n")
"""A kernel of three lines whose store is on line 3."""


def rendered(source: str) -> list[str]:
    with pytest.raises(TkError) as info:
        parse_tk(source, "t.tk")
    return info.value.render().split("\n")


@pytest.mark.parametrize("source", ["", "\n", "   \n\t\n", "// only a comment\n"])
def test_a_file_without_kernels_is_located_with_a_caret(source: str) -> None:
    where, line, caret = rendered(source)
    assert where == "t.tk:1:1: error: no kernel in the file"
    assert line == source.split("\n")[0].replace("\t", " ") and caret == "^"


@pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028"])
def test_only_newline_ends_a_line(separator: str) -> None:
    # Python's splitlines() also breaks at these; the lexer does not, so neither may the caret.
    where, line, caret = rendered(f"// a{separator}b\nkernel k() {{ let $ }}")
    assert where == "t.tk:2:18: error: unexpected character '$'"
    assert line == "kernel k() { let $ }" and caret == " " * 17 + "^"


def test_crlf_and_control_characters_print_as_one_column_each() -> None:
    where, line, caret = rendered("kernel k() {\r\n\tlet x = $ // \x1b[2J\r\n}\r\n")
    assert where == "t.tk:2:10: error: unexpected character '$'"
    assert line == " let x = $ //  [2J" and caret == " " * 9 + "^"


def test_a_late_error_reads_the_line_from_the_file_as_bytes(tmp_path: Path) -> None:
    path = tmp_path / "k.mlir"
    path.write_bytes(b"a\rb\nline two\n")  # text mode would turn the lone \r into a line break
    assert TkError("late", str(path), 2, 6).render().split("\n")[1:] == ["line two", "     ^"]
    tk = tmp_path / "k.tk"  # the frontend ends a .tk line at a lone CR too, and so does the quote
    tk.write_bytes(b"a\rb\nline two\n")
    assert TkError("late", str(tk), 3, 6).render().split("\n")[1:] == ["line two", "     ^"]


def test_an_op_a_pass_made_without_a_location_is_located_at_what_encloses_it() -> None:
    """error_at on an op with no location (a constant a pass materialised) points at the nearest
    enclosing op that has one: a diagnostic never loses its place in the source."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IndexType, IntegerAttr

    from tkc.diagnostics import error_at
    from tkc.dialects.tile import KernelOp

    module = parse_tk(COPY_KERNEL, "k.tk")
    kernel = next(op for op in module.walk() if isinstance(op, KernelOp))
    made = arith.ConstantOp(IntegerAttr(7, IndexType()))
    kernel.body.block.insert_op_before(made, kernel.body.block.first_op)  # type: ignore[arg-type]
    error = error_at(made, "too big")
    assert (error.filename, error.line) == ("k.tk", 1)


def test_a_location_past_the_end_of_its_file_is_no_place(tmp_path: Path) -> None:
    """An edited dump may give an op a line its `.tk` file does not have, and a pass copies it
    onto the ops it makes: error_at then looks further out, as for an op with no location."""
    from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

    from tkc.diagnostics import error_at, location_of
    from tkc.dialects.tile import KernelOp, StoreOp

    path = tmp_path / "k.tk"
    path.write_text(COPY_KERNEL)
    module = parse_tk(path.read_text(), str(path))
    store = next(op for op in module.walk() if isinstance(op, StoreOp))
    assert location_of(store)[1] == 3
    store.location = FileLineColLoc(StringAttr(str(path)), IntAttr(1000), IntAttr(5))
    assert location_of(store) == (None, None, None)
    error = error_at(store, "edited")
    kernel = next(op for op in module.walk() if isinstance(op, KernelOp))
    assert (error.filename, error.line) == (str(path), location_of(kernel)[1])


def test_a_location_in_a_file_that_cannot_be_read_gives_way_to_one_that_can(tmp_path: Path) -> None:
    """A pass copies an edited dump's location naming a missing file onto the ops it makes:
    error_at shows the nearest enclosing place that can be shown, and keeps the unreadable one
    only where nothing can be shown (a program compiled from a string)."""
    from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

    from tkc.diagnostics import error_at, location_of
    from tkc.dialects.tile import KernelOp, StoreOp

    path = tmp_path / "k.tk"
    path.write_text(COPY_KERNEL)
    module = parse_tk(path.read_text(), str(path))
    store = next(op for op in module.walk() if isinstance(op, StoreOp))
    kernel = next(op for op in module.walk() if isinstance(op, KernelOp))
    store.location = FileLineColLoc(StringAttr(str(tmp_path / "gone.tk")), IntAttr(3), IntAttr(5))
    error = error_at(store, "edited")
    assert (error.filename, error.line) == (str(path), location_of(kernel)[1])
    path.unlink()  # nothing can be shown: the op's own place, unreadable as it is
    error = error_at(store, "edited")
    assert (error.filename, error.line, error.col) == (str(tmp_path / "gone.tk"), 3, 5)
