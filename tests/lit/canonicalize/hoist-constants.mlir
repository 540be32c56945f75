// RUN: tkc-opt %s -p canonicalize | filecheck %s
// Constants leave a whole loop nest in one rewrite, to just before its outermost loop, and equal
// constants of one block become one; a constant under an if stays in the if, as xDSL's
// RehoistConstInLoops (which takes a constant out of one loop per walk of the module) leaves it.

// CHECK-LABEL: tile.kernel @nest
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: scf.for %{{.*}} = %[[C0]] to %[[C2]] step %[[C1]]
// CHECK-NEXT:   scf.for %{{.*}} = %[[C0]] to %[[C2]] step %[[C1]]
// CHECK-NEXT:     scf.for %{{.*}} = %[[C0]] to %[[C2]] step %[[C1]]
// CHECK-NEXT:       tile.binary mul %{{.*}}, %[[H]]
// CHECK:      scf.if
// CHECK-NEXT:   %[[Q:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:   tile.binary mul %{{.*}}, %[[Q]]
tile.kernel @nest(%A: !tile.gl<[M, N], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %A[0] : !tile.gl<[M, N], f32>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %x = tile.fill 1.000000e+00 : f32 : !tile.rt<64x64xf32>
  %a0 = arith.constant 0 : index
  %a2 = arith.constant 2 : index
  %a1 = arith.constant 1 : index
  %r = scf.for %k0 = %a0 to %a2 step %a1 iter_args(%t0 = %x) -> (!tile.rt<64x64xf32>) {
    %b0 = arith.constant 0 : index
    %b2 = arith.constant 2 : index
    %b1 = arith.constant 1 : index
    %r1 = scf.for %k1 = %b0 to %b2 step %b1 iter_args(%t1 = %t0) -> (!tile.rt<64x64xf32>) {
      %d0 = arith.constant 0 : index
      %d2 = arith.constant 2 : index
      %d1 = arith.constant 1 : index
      %r2 = scf.for %k2 = %d0 to %d2 step %d1 iter_args(%t2 = %t1) -> (!tile.rt<64x64xf32>) {
        %h = arith.constant 0.5 : f32
        %y = tile.binary mul %t2, %h : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
        scf.yield %y : !tile.rt<64x64xf32>
      }
      scf.yield %r2 : !tile.rt<64x64xf32>
    }
    scf.yield %r1 : !tile.rt<64x64xf32>
  }
  %cond = arith.cmpi ugt, %i, %a1 : index
  %s = scf.if %cond -> (!tile.rt<64x64xf32>) {
    %q = arith.constant 0.25 : f32
    %z = tile.binary mul %r, %q : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    scf.yield %z : !tile.rt<64x64xf32>
  } else {
    scf.yield %r : !tile.rt<64x64xf32>
  }
  tile.store %s, %A[%i, %i] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
  tile.return
}
