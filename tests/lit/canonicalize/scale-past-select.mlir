// RUN: tkc-opt %s -p canonicalize | filecheck %s
// A sliding window scales its scores, then selects them or -inf under an if. The scaling moves
// past the select (where(c, x * k, -inf) = where(c, x, -inf) * k for a constant k > 0), out of
// the if and past the row max, as it does past a causal mask. Two branches scaled by one scalar
// move it too (any scalar); a branch that scaling would change (1.0 * 0.5 != 1.0), or a scale
// that is not a positive constant, keeps the select after the scaling.

// CHECK-LABEL: tile.kernel @window
// CHECK:      %[[IF:.*]] = scf.if %{{.*}} -> (!tile.rt<64x64xf32>) {
// CHECK:        %[[SEL:.*]] = tile.select %{{.*}}, %[[X:.*]], %{{.*}} : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>, f32
// CHECK-NEXT:   scf.yield %[[SEL]]
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %[[X]]
// CHECK-NEXT: }
// CHECK-NEXT: tile.binary mul %[[IF]], %{{.*}} : !tile.rt<64x64xf32>, f32
// CHECK:      tile.reduce max row %[[IF]]
// CHECK-LABEL: tile.kernel @both
// CHECK:      %[[BOTH:.*]] = tile.select %{{.*}}, %{{.*}}, %{{.*}} : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>, !tile.rt<64x64xf32>
// CHECK-NEXT: tile.binary mul %[[BOTH]], %k
// CHECK-LABEL: tile.kernel @kept
// CHECK:      %[[ONE:.*]] = tile.binary mul
// CHECK-NEXT: tile.select %{{.*}}, %[[ONE]], %one
// CHECK:      %[[NEG:.*]] = tile.binary mul
// CHECK-NEXT: tile.select %{{.*}}, %[[NEG]], %ninf
tile.kernel @window(%O: !tile.gl<[M, M], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %O[0] : !tile.gl<[M, M], f32>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %x = tile.fill 1.000000e+00 : f32 : !tile.rt<64x64xf32>
  %c = arith.constant 0.5 : f32
  %w = arith.constant 8.0 : f32
  %ninf = arith.constant 0xff800000 : f32
  %s = tile.binary mul %x, %c : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %edge = arith.cmpi ult, %i, %g : index
  %s2 = scf.if %edge -> (!tile.rt<64x64xf32>) {
    %row0 = arith.muli %i, %c64 : index
    %r = tile.position row %row0 : !tile.rt<64x64xf32>
    %near = tile.binary lt %r, %w : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    %masked = tile.select %near, %s, %ninf : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    scf.yield %masked : !tile.rt<64x64xf32>
  } else {
    scf.yield %s : !tile.rt<64x64xf32>
  }
  %mx = tile.reduce max row %s2 : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
  %d = tile.broadcast sub row %s2, %mx : !tile.rt<64x64xf32>, !tile.rv<64xf32>
  %p = tile.unary exp2 %d : !tile.rt<64x64xf32>
  %i0 = arith.constant 0 : index
  tile.store %p, %O[%i, %i0] : !tile.rt<64x64xf32>, !tile.gl<[M, M], f32>
  tile.return
}
tile.kernel @both(%O: !tile.gl<[M, M], f32>, %K: !tile.gl<[M], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %O[0] : !tile.gl<[M, M], f32>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %x = tile.fill 1.000000e+00 : f32 : !tile.rt<64x64xf32>
  %y = tile.fill 2.000000e+00 : f32 : !tile.rt<64x64xf32>
  %k = arith.constant -3.0 : f32
  %xs = tile.binary mul %x, %k : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %ys = tile.binary mul %k, %y : f32, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  %cond = tile.binary gt %x, %y : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  %sel = tile.select %cond, %xs, %ys : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  %i0 = arith.constant 0 : index
  tile.store %sel, %O[%i, %i0] : !tile.rt<64x64xf32>, !tile.gl<[M, M], f32>
  tile.return
}
tile.kernel @kept(%O: !tile.gl<[M, M], f32>, %P: !tile.gl<[M, M], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %O[0] : !tile.gl<[M, M], f32>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %x = tile.fill 1.000000e+00 : f32 : !tile.rt<64x64xf32>
  %c = arith.constant 0.5 : f32
  %neg = arith.constant -0.5 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xff800000 : f32
  %cond = tile.binary gt %x, %c : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %s = tile.binary mul %x, %c : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %a = tile.select %cond, %s, %one : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %t = tile.binary mul %x, %neg : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %b = tile.select %cond, %t, %ninf : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %i0 = arith.constant 0 : index
  tile.store %a, %O[%i, %i0] : !tile.rt<64x64xf32>, !tile.gl<[M, M], f32>
  tile.store %b, %P[%i, %i0] : !tile.rt<64x64xf32>, !tile.gl<[M, M], f32>
  tile.return
}
