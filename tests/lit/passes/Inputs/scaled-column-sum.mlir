builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.divui %M, %c64 : index
    tile.grid(%rows) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %xs = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %two = arith.constant 2.000000e+00 : f32
    %s = tile.binary mul %x, %two : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    %r = tile.reduce max col %s : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
    %y = tile.broadcast sub col %x, %r : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    tile.store %y, %Y[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
