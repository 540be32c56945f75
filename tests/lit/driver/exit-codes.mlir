// Exit status: 0 success, 1 user error (bad input, missing file, usage), 2 compiler failure.
// RUN: sh -c 'tkc compile %S/Inputs/gemm.mlir --emit=tile >/dev/null; echo "exit $?"' | filecheck %s --check-prefix=OK
// OK: exit 0

// A file that does not exist is a user error.
// RUN: sh -c 'tkc compile %t.missing.tk 2>&1; echo "exit $?"' | filecheck %s --check-prefix=MISSING
// MISSING: {{.*}}missing.tk: error: cannot read the file: No such file or directory
// MISSING-NEXT: exit 1

// Invalid MLIR input is the user's, shown with its line and a caret.
// RUN: sh -c 'tkc compile %S/Inputs/bad.mlir --emit=tile 2>&1; echo "exit $?"' | filecheck %s --check-prefix=PARSE
// PARSE: bad.mlir:3:{{[0-9]+}}: error: Operation tile.nonsense is not registered
// PARSE-NEXT: "tile.nonsense"() : () -> ()
// PARSE-NEXT: {{^ +\^$}}
// PARSE-NEXT: exit 1

// Usage errors are user errors too (argparse alone would exit 2).
// RUN: sh -c 'tkc compile 2>&1; echo "exit $?"' | filecheck %s --check-prefix=USAGE
// RUN: sh -c 'tkc compile %S/Inputs/gemm.mlir --emit=bogus 2>&1; echo "exit $?"' | filecheck %s --check-prefix=USAGE
// RUN: sh -c 'tkc compile %S/Inputs/gemm.mlir -D BM 2>&1; echo "exit $?"' | filecheck %s --check-prefix=USAGE
// USAGE: usage: tkc compile
// USAGE: tkc compile: error:
// USAGE-NEXT: exit 1
