// A load is not pure: CSE merges two loads of X[i, j] only with no write between them, so the
// load after the store stays (it reads the stored values); two loads with nothing between merge.
// RUN: tkc-opt %s -p canonicalize,cse | filecheck %s
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %a = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %a2 = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %ra = tile.to_reg %a : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %ra2 = tile.to_reg %a2 : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %sum = tile.binary add %ra, %ra2 : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %sum, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    %b = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %rb = tile.to_reg %b : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %rb, %Y[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
// CHECK:      %a = tile.load %X[%i, %c0]
// CHECK-NOT:  tile.load
// CHECK:      tile.store %{{.*}}, %X[%i, %c0]
// CHECK-NEXT: %b = tile.load %X[%i, %c0]
// CHECK:      tile.store %rb, %Y[%i, %c0]
