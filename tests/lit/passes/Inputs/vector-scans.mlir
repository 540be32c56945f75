builtin.module {
  tile.kernel @scans(%X: !tile.gl<[M, N], f32>, %V: !tile.gl<[M], f32>, %Y: !tile.gl<[M, N], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.divui %M, %c64 : index
    tile.grid(%rows) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %vs = tile.load %V[%i] : !tile.gl<[M], f32> -> !tile.sv<64xf32>
    %v = tile.to_reg %vs : !tile.sv<64xf32> -> !tile.rv<64xf32>
    %cs = tile.cumsum %v : !tile.rv<64xf32>
    %total = tile.vector_reduce sum %cs : !tile.rv<64xf32>
    %xs = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %r = tile.reduce sum row %x : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
    %rs = tile.cumsum %r : !tile.rv<64xf32>
    %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    %a = tile.broadcast add row %zero, %cs : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    %d = tile.broadcast sub col %a, %cs : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    %e = tile.broadcast add row %d, %rs : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    %y = tile.binary mul %e, %total : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
    tile.store %y, %Y[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
