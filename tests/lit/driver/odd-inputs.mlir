// Odd inputs are user errors (exit 1) with a located diagnostic where there is a place to point
// at: a directory, invalid UTF-8 in .mlir (tkc and tkc-opt), an empty .tk, bad tkc-opt usage.
// RUN: sh -c 'tkc compile %S 2>&1; echo "exit $?"' | filecheck %s --check-prefix=DIR
// RUN: sh -c 'tkc-opt %S 2>&1; echo "exit $?"' | filecheck %s --check-prefix=DIR
// DIR:      {{.*}}driver: error: cannot read the file: Is a directory
// DIR-NEXT: exit 1

// RUN: printf 'builtin.module {\n}\n// caf\351\n' > %t.latin1.mlir
// RUN: sh -c 'tkc compile %t.latin1.mlir 2>&1; echo "exit $?"' | filecheck %s --check-prefix=UTF8
// RUN: sh -c 'tkc-opt %t.latin1.mlir 2>&1; echo "exit $?"' | filecheck %s --check-prefix=UTF8
// UTF8:      latin1.mlir:3:7: error: invalid UTF-8 byte 0xe9 (source files must be UTF-8)
// UTF8-NEXT: // caf{{.}}
// UTF8-NEXT: {{^}}      ^{{$}}
// UTF8-NEXT: exit 1

// RUN: printf '' > %t.empty.tk
// RUN: sh -c 'tkc compile %t.empty.tk 2>&1; echo "exit $?"' | filecheck %s --check-prefix=EMPTY --strict-whitespace
// EMPTY:      empty.tk:1:1: error: no kernel in the file
// EMPTY-NEXT: {{^$}}
// EMPTY-NEXT: {{^\^$}}
// EMPTY-NEXT: exit 1

// RUN: sh -c 'tkc-opt %s -f bogus 2>&1; echo "exit $?"' | filecheck %s --check-prefix=USAGE
// USAGE: tkc-opt: error: argument -f/--frontend: invalid choice: 'bogus'
// USAGE-NEXT: exit 1
