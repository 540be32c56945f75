// RUN: tkc-opt %s -p canonicalize | filecheck %s
// A row max of a tile scaled by a positive constant reduces first and scales the vector, so the
// scaled tile keeps one use (and its scaling fuses into it); a negative scale would swap max
// and min, so it stays. So do a sum (sum(x) * c rounds and overflows otherwise than sum(x * c))
// and a max scaled by +inf (x = 0 would give NaN where the max of x * inf is -inf or inf).

// CHECK-LABEL: tile.kernel @scaled
// CHECK:      %[[S:.*]] = tile.binary mul %[[X:.*]], %[[C:.*]] : !tile.rt<64x64xf32>, f32
// CHECK-NEXT: %[[M:.*]] = tile.reduce max row %[[X]] : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
// CHECK-NEXT: %{{.*}} = tile.binary mul %[[M]], %[[C]] : !tile.rv<64xf32>, f32
// CHECK:      tile.reduce min row %{{.*}} : !tile.rt<64x64xf32>
// CHECK-NOT:  tile.reduce min row %[[X]]
// CHECK-LABEL: tile.kernel @kept
// CHECK:      %[[H:.*]] = tile.binary mul %{{.*}}, %{{.*}} : !tile.rt<64x64xf32>, f32
// CHECK-NEXT: tile.reduce sum row %[[H]]
// CHECK:      %[[I:.*]] = tile.binary mul %{{.*}}, %{{.*}} : !tile.rt<64x64xf32>, f32
// CHECK-NEXT: tile.reduce max row %[[I]]
tile.kernel @scaled(%O: !tile.gl<[M], f32>, %P: !tile.gl<[M, M], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %O[0] : !tile.gl<[M], f32>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %x = tile.fill 1.000000e+00 : f32 : !tile.rt<64x64xf32>
  %c = arith.constant 0.5 : f32
  %s = tile.binary mul %x, %c : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %r = tile.reduce max row %s : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
  %neg = arith.constant -2.0 : f32
  %t = tile.binary mul %x, %neg : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %q = tile.reduce min row %t : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
  %sum = tile.binary add %r, %q : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
  tile.store %sum, %O[%i] : !tile.rv<64xf32>, !tile.gl<[M], f32>
  %z = tile.binary add %s, %t : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  tile.store %z, %P[%i, %i] : !tile.rt<64x64xf32>, !tile.gl<[M, M], f32>
  tile.return
}

tile.kernel @kept(%O: !tile.gl<[M], f32>) {
  %c64 = arith.constant 64 : index
  %m = tile.dim %O[0] : !tile.gl<[M], f32>
  %g = arith.divui %m, %c64 : index
  tile.grid(%g) as ["i"]
  %i = tile.block_id 0
  %x = tile.fill 1.000000e+00 : f32 : !tile.rt<64x64xf32>
  %half = arith.constant 0.5 : f32
  %h = tile.binary mul %x, %half : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %s = tile.reduce sum row %h : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
  %inf = arith.constant 0x7F800000 : f32
  %y = tile.binary mul %x, %inf : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
  %r = tile.reduce max row %y : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
  %sum = tile.binary add %s, %r : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
  tile.store %sum, %O[%i] : !tile.rv<64xf32>, !tile.gl<[M], f32>
  tile.return
}
