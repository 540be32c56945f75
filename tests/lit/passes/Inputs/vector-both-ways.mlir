builtin.module {
  tile.kernel @both(%X: !tile.gl<[M, N], f32>, %V: !tile.gl<[N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.divui %M, %c64 : index
    tile.grid(%rows) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %xs = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %vs = tile.load %V[%c0] : !tile.gl<[N], f32> -> !tile.sv<64xf32>
    %v = tile.to_reg %vs : !tile.sv<64xf32> -> !tile.rv<64xf32>
    %y = tile.broadcast add col %x, %v : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    %z = tile.broadcast mul row %y, %v : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    %ws = tile.load %V[%i] : !tile.gl<[N], f32> -> !tile.sv<64xf32>
    %w = tile.to_reg %ws : !tile.sv<64xf32> -> !tile.rv<64xf32>
    %a = tile.broadcast add row %z, %w : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    %b = tile.broadcast sub col %a, %w : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    tile.store %b, %Y[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
