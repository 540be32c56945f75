// --dump-dir writes the input and the IR after each pass as numbered files that parse back, in
// tkc compile and tkc-opt alike, and lists them in .tkc-dumps.
// RUN: rm -rf %t %t.opt && tkc compile %S/Inputs/gemm.mlir --emit=tile --dump-dir %t -o %t.out
// RUN: ls -A %t | filecheck %s
// RUN: tkc-opt %t/03-cse.mlir | filecheck %s --check-prefix=IR
// RUN: tkc-opt %S/Inputs/gemm.mlir -p canonicalize,cse --dump-dir %t.opt -o %t.out
// RUN: ls -A %t.opt | filecheck %s --check-prefix=OPT

// A second run replaces the dumps of the first (those in .tkc-dumps) and leaves the user's files.
// RUN: touch %t/notes.txt && tkc-opt %S/Inputs/gemm.mlir -p cse --dump-dir %t -o %t.out
// RUN: ls -A %t | filecheck %s --check-prefix=AGAIN

// A file of a dump's name that tkc did not write is never overwritten.
// RUN: rm -rf %t.user && mkdir %t.user && echo mine > %t.user/01-canonicalize.mlir
// RUN: not tkc compile %S/Inputs/gemm.mlir --emit=tile --dump-dir %t.user 2>&1 | filecheck %s --check-prefix=USER
// RUN: filecheck %s --check-prefix=KEPT < %t.user/01-canonicalize.mlir

// CHECK:      .tkc-dumps
// CHECK-NEXT: 00-input.mlir
// CHECK-NEXT: 01-canonicalize.mlir
// CHECK-NEXT: 02-tile-hoist-invariants.mlir
// CHECK-NEXT: 03-cse.mlir

// IR: tile.kernel @gemm
// IR: tile.store

// OPT:      .tkc-dumps
// OPT-NEXT: 00-input.mlir
// OPT-NEXT: 01-canonicalize.mlir
// OPT-NEXT: 02-cse.mlir
// OPT-NOT:  .mlir

// AGAIN:      .tkc-dumps
// AGAIN-NEXT: 00-input.mlir
// AGAIN-NEXT: 01-cse.mlir
// AGAIN-NEXT: notes.txt
// AGAIN-NOT:  .mlir

// USER: {{.*}}: error: --dump-dir: {{.*}}01-canonicalize.mlir exists and tkc did not write it (it is not in {{.*}}.tkc-dumps); remove it or choose another directory
// KEPT: mine
