// tkc compile FILE
// expect: tile.store uses %x before its definition
// Two lines swapped: xDSL parses the forward reference and its verifier does not check dominance.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    tile.store %x, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    %x = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    tile.return
  }
}
