// Store Y[i, j] = X[i, j + 1]: X's tile ends (N - 64 (j + 1)) before Y's does (N - 64 j), so its
// padding would land on columns of Y.
builtin.module {
  tile.kernel @shifted(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %rows = arith.ceildivui %M, %c64 : index
    %cols = arith.ceildivui %N, %c64 : index
    %cols_1 = arith.subi %cols, %c1 : index
    tile.grid(%rows, %cols_1) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %j1 = arith.addi %j, %c1 : index
    %xs = tile.load %X[%i, %j1] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %x, %Y[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
