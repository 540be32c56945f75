// The tile IR of examples/gemm.tk, and the IR after every tile-level pass, print and parse
// back to identical text, in custom and generic form.
// RUN: TKC_EXAMPLE_ROUNDTRIP
// RUN: filecheck %s < %t.tile.mlir

// CHECK: tile.kernel @gemm(
// CHECK: tile.grid
// CHECK: tile.store
// CHECK: tile.return
