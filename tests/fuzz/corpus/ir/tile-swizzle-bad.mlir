// tkc compile FILE
// expect: swizzle must be 0, 32, 64 or 128 bytes
// A shared tile type with a swizzle TMA does not have.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %s = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32, swizzle 100>
    %x = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    tile.store %x, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
