// tile-hoist-invariants on hand-written tile IR: the scalar arithmetic a loop does not change
// (%row = %start + 64, then %row * 2, from the inner loop of a nest all the way out) moves before
// the loop, and cse then merges %row with the equal %after past it; what the loop changes (%ik),
// a division by a value that may be 0 (not speculatable: the loop may run no iteration), a scalar load (a memory read
// that traps past the end), a tile op and an op under an if stay. A second run changes nothing.
// RUN: tkc-opt %s -p tile-hoist-invariants | filecheck %s
// RUN: tkc-opt %s -p tile-hoist-invariants,cse | filecheck %s --check-prefix=CSE
// RUN: tkc-opt %s -p tile-hoist-invariants -o %t.once.mlir && tkc-opt %t.once.mlir -p tile-hoist-invariants | diff %t.once.mlir -

builtin.module {
  tile.kernel @nest(%X: !tile.gl<[M, K], f32>, %Off: !tile.gl<[E], i32>, %Y: !tile.gl<[M, K], f32>) {
    %K = tile.dim %X[1] : !tile.gl<[M, K], f32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    tile.grid(%c1) as ["g"]
    %start = tile.load_scalar %Off[%c0] : !tile.gl<[E], i32> -> index
    scf.for %i = %c0 to %K step %c1 {
      scf.for %k = %c0 to %K step %c1 {
        %row = arith.addi %start, %c64 : index
        %twice = arith.muli %row, %c2 : index
        %ik = arith.addi %i, %k : index
        %q = arith.divui %c64, %K : index
        %n = tile.load_scalar %Off[%c1] : !tile.gl<[E], i32> -> index
        %z = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
        %pos = arith.cmpi sgt, %K, %c0 : index
        scf.if %pos {
          %under = arith.addi %start, %c2 : index
          tile.store %z, %Y[%under, %twice] : !tile.rt<64x64xf32>, !tile.gl<[M, K], f32>
          scf.yield
        }
        tile.store %z, %Y[%ik, %q] : !tile.rt<64x64xf32>, !tile.gl<[M, K], f32>
        tile.store %z, %Y[%n, %row] : !tile.rt<64x64xf32>, !tile.gl<[M, K], f32>
        scf.yield
      }
      scf.yield
    }
    %after = arith.addi %start, %c64 : index
    %z2 = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    tile.store %z2, %Y[%after, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, K], f32>
    tile.return
  }
}

// CHECK:      %start = tile.load_scalar
// CHECK-NEXT: %row = arith.addi %start, %c64 : index
// CHECK-NEXT: %twice = arith.muli %row, %c2 : index
// CHECK-NEXT: %pos = arith.cmpi sgt, %K, %c0 : index
// CHECK-NEXT: scf.for %i = %c0 to %K step %c1 {
// CHECK-NEXT:   scf.for %k = %c0 to %K step %c1 {
// CHECK-NEXT:     %ik = arith.addi %i, %k : index
// CHECK-NEXT:     %q = arith.divui %c64, %K : index
// CHECK-NEXT:     %n = tile.load_scalar
// CHECK-NEXT:     %z = tile.fill
// CHECK-NEXT:     scf.if %pos {
// CHECK-NEXT:       %under = arith.addi %start, %c2 : index

// CSE:     %row = arith.addi %start, %c64 : index
// CSE-NOT: arith.addi %start, %c64
// CSE:     tile.store %z2, %Y[%row, %c0]
