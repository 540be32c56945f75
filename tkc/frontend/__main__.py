"""`python -m tkc.frontend FILE [-k KERNEL] [-D NAME=VALUE ...]`: print the tile IR of a .tk file.

A small stand-in for `tkc compile --emit=tile`, so the frontend's lit tests do not depend on
the CLI. A user error prints the diagnostic to stderr and exits 1.
"""

from __future__ import annotations

import argparse
import sys

from xdsl.printer import Printer

from tkc.diagnostics import TkError
from tkc.frontend import parse_define, parse_tk, read_source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tkc.frontend", description=__doc__)
    parser.add_argument("file")
    parser.add_argument("-k", "--kernel")
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--loc", action="store_true", help="print each op's source location")
    args = parser.parse_args(argv)
    try:
        params = dict(parse_define(d) for d in args.defines)
        module = parse_tk(read_source(args.file), args.file, params, args.kernel)
    except TkError as err:
        sys.stderr.write(err.render() + "\n")
        return 1
    except OSError as err:
        sys.stderr.write(f"{args.file}: error: cannot read: {err.strerror or err}\n")
        return 1
    try:
        Printer(stream=sys.stdout, print_debuginfo=args.loc).print_op(module)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `python -m tkc.frontend FILE | head`: the reader left
        sys.stderr.close()  # as tkc does: silences the failed flush of stdout at exit
    return 0


if __name__ == "__main__":
    sys.exit(main())
