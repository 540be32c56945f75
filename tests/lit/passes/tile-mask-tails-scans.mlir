// tile-mask-tails and the scans. exp(x) holds exp(0) = 1 past a ragged N, yet its cumsum along
// the rows needs no mask: padding only ends an axis, so no valid element's sum reaches it (the
// result keeps x's tails, with sums in its padding). The vector e = exp(v) holds 1 past M: sum(e)
// needs 0 there and max(e) -inf, each a mask under the partial tile's branch (the first serves
// every other use of e, the cumsum's too, as masking changes no valid element).
// RUN: tkc-opt %s -p tile-mask-tails | filecheck %s
// RUN: tkc-opt %s -p tile-mask-tails -o %t.once.mlir && tkc-opt %t.once.mlir -p tile-mask-tails | diff %t.once.mlir -

builtin.module {
  tile.kernel @scans(%X: !tile.gl<[M, N], f32>, %V: !tile.gl<[M], f32>, %Y: !tile.gl<[M, N], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.ceildivui %M, %c64 : index
    %cols = arith.ceildivui %N, %c64 : index
    tile.grid(%rows, %cols) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %xs = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %ex = tile.unary exp %x : !tile.rt<64x64xf32>
    %rowscan = tile.cumsum %ex along row : !tile.rt<64x64xf32>
    %colscan = tile.cumsum %ex along col : !tile.rt<64x64xf32>
    %vs = tile.load %V[%i] : !tile.gl<[M], f32> -> !tile.sv<64xf32>
    %v = tile.to_reg %vs : !tile.sv<64xf32> -> !tile.rv<64xf32>
    %e = tile.unary exp %v : !tile.rv<64xf32>
    %scan = tile.cumsum %e : !tile.rv<64xf32>
    %sum = tile.vector_reduce sum %e : !tile.rv<64xf32>
    %max = tile.vector_reduce max %e : !tile.rv<64xf32>
    %both = tile.binary add %rowscan, %colscan : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %scaled = tile.binary mul %both, %sum : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    %shifted = tile.binary add %scaled, %max : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    %out = tile.broadcast add row %shifted, %scan : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    tile.store %out, %Y[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}

// CHECK:      tile.kernel @scans({{.*}}) attributes {tail_masks = #tile.decision<2,
// CHECK:      %ex = tile.unary exp %x : !tile.rt<64x64xf32>
// CHECK-NEXT: %rowscan = tile.cumsum %ex along row : !tile.rt<64x64xf32>
// CHECK-NEXT: %colscan = tile.cumsum %ex along col : !tile.rt<64x64xf32>
// CHECK:      %e = tile.unary exp %v : !tile.rv<64xf32>
// CHECK-NEXT: %[[MAXED:.*]] = scf.if %{{.*}} -> (!tile.rv<64xf32>) {
// CHECK-NEXT:   tile.bounds_mask %e[%{{.*}}] fill 0xff800000 : f32 {tails = "max(v) at line 29 leaves out the elements past the end"}
// CHECK:      %[[SUMMED:.*]] = scf.if %{{.*}} -> (!tile.rv<64xf32>) {
// CHECK-NEXT:   tile.bounds_mask %[[MAXED]][%{{.*}}] fill 0.000000e+00 : f32 {tails = "sum(v) at line 28 leaves out the elements past the end"}
// CHECK:      %scan = tile.cumsum %[[MAXED]] : !tile.rv<64xf32>
// CHECK-NEXT: %sum = tile.vector_reduce sum %[[SUMMED]] : !tile.rv<64xf32>
// CHECK-NEXT: %max = tile.vector_reduce max %[[MAXED]] : !tile.rv<64xf32>
// CHECK-NOT:  tile.bounds_mask
