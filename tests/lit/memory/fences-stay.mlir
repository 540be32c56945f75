// Canonicalization and CSE after tile-memory-order keep its fence and both loads: the fence is
// neither dead nor movable (unknown effects), and the loads are not merged across it.
// RUN: tkc-opt %s -p tile-memory-order,canonicalize,cse | filecheck %s
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %a = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %ra = tile.to_reg %a : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %ra, %Y[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    %b = tile.load %Y[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %rb = tile.to_reg %b : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %rb, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
// CHECK:      %a = tile.load %X[%i, %c0]
// CHECK:      tile.store %ra, %Y[%i, %c0]
// CHECK-NEXT: tile.fence
// CHECK-NEXT: %b = tile.load %Y[%i, %c0]
// CHECK:      tile.store %rb, %X[%i, %c0]
