// --dump-dir writes the input and the IR after each pass as numbered files that parse back.
// RUN: rm -rf %t && tkc compile %S/Inputs/gemm.mlir --emit=tile --dump-dir %t -o %t.out
// RUN: ls %t | filecheck %s
// RUN: tkc-opt %t/02-cse.mlir | filecheck %s --check-prefix=IR

// CHECK:      00-input.mlir
// CHECK-NEXT: 01-canonicalize.mlir
// CHECK-NEXT: 02-cse.mlir

// IR: tile.kernel @gemm
// IR: tile.store
