// RUN: tkc-opt %s -p canonicalize | filecheck %s
// Causal attention scales its scores, then masks the diagonal tiles under an if. The scaling
// moves past the mask (mask(x * c) = mask(x) * c: the fill is -inf and c > 0) and out of the if
// (both branches yield a multiple of the same c), and ReduceBeforeScaling then takes it past the
// row max, so the scaled tile has one use and its scaling fuses into exp2's FFMA.

// CHECK-LABEL: tile.kernel @causal
// CHECK:      %[[IF:.*]] = scf.if %{{.*}} -> (!tile.rt<64x64xf32>) {
// CHECK-NEXT:   %[[MASKED:.*]] = tile.mask causal %[[X:.*]], %{{.*}}, %{{.*}} fill 0xff800000
// CHECK-NEXT:   scf.yield %[[MASKED]]
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %[[X]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:.*]] = tile.binary mul %[[IF]], %[[C:.*]] : !tile.rt<64x64xf32>, f32
// CHECK:      tile.reduce max row %[[IF]]
// A fill that scaling would change (1.0 * 0.5 != 1.0) keeps the mask after the scaling.
// CHECK-LABEL: tile.kernel @ones
// CHECK:      %[[SC:.*]] = tile.binary mul
// CHECK-NEXT: tile.mask causal %[[SC]]
tile.kernel @causal(%O: !tile.gl<[M, M], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %O[0] : !tile.gl<[M, M], f32>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %x = tile.fill 1.000000e+00 : f32 : !tile.rt<64x64xf32>
  %c = arith.constant 0.5 : f32
  %s = tile.binary mul %x, %c : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %diag = arith.cmpi ult, %i, %g : index
  %s2 = scf.if %diag -> (!tile.rt<64x64xf32>) {
    %masked = tile.mask causal %s, %c64, %c64 fill 0xff800000 : f32 : !tile.rt<64x64xf32>
    scf.yield %masked : !tile.rt<64x64xf32>
  } else {
    scf.yield %s : !tile.rt<64x64xf32>
  }
  %r = tile.reduce max row %s2 : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
  %p = tile.broadcast sub row %s2, %r : !tile.rt<64x64xf32>, !tile.rv<64xf32>
  tile.store %p, %O[%i, %i] : !tile.rt<64x64xf32>, !tile.gl<[M, M], f32>
  tile.return
}
tile.kernel @ones(%O: !tile.gl<[M, M], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %O[0] : !tile.gl<[M, M], f32>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %x = tile.fill 1.000000e+00 : f32 : !tile.rt<64x64xf32>
  %c = arith.constant 0.5 : f32
  %s = tile.binary mul %x, %c : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %masked = tile.mask causal %s, %c64, %c64 fill 1.0 : f32 : !tile.rt<64x64xf32>
  tile.store %masked, %O[%i, %i] : !tile.rt<64x64xf32>, !tile.gl<[M, M], f32>
  tile.return
}

// Branches that scale by different constants keep their scalings, and so does a negative scale
// under a mask (mask(x * -1) != mask(x) * -1 for a -inf fill).
// CHECK-LABEL: tile.kernel @different
// CHECK:      scf.if
// CHECK-NEXT:   tile.binary mul %{{.*}}, %[[A:.*]] :
// CHECK:      } else {
// CHECK-NEXT:   tile.binary mul %{{.*}}, %[[B:.*]] :
// CHECK:      %[[NEG:.*]] = tile.binary mul %{{.*}}, %{{.*}} :
// CHECK-NEXT: tile.mask causal %[[NEG]]
tile.kernel @different(%O: !tile.gl<[M, M], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %O[0] : !tile.gl<[M, M], f32>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %x = tile.fill 1.000000e+00 : f32 : !tile.rt<64x64xf32>
  %a = arith.constant 0.5 : f32
  %b = arith.constant 0.25 : f32
  %cond = arith.cmpi ult, %i, %g : index
  %y = scf.if %cond -> (!tile.rt<64x64xf32>) {
    %ya = tile.binary mul %x, %a : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    scf.yield %ya : !tile.rt<64x64xf32>
  } else {
    %yb = tile.binary mul %x, %b : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    scf.yield %yb : !tile.rt<64x64xf32>
  }
  %n = arith.constant -1.0 : f32
  %neg = tile.binary mul %y, %n : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %masked = tile.mask causal %neg, %c64, %c64 fill 0xff800000 : f32 : !tile.rt<64x64xf32>
  tile.store %masked, %O[%i, %i] : !tile.rt<64x64xf32>, !tile.gl<[M, M], f32>
  tile.return
}
