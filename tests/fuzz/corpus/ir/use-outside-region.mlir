// tkc compile FILE
// expect: outside the region that defines it
// A loop's operand defined in its own body (the parser leaves a forward reference behind).
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %x = scf.for %k = %c0 to %c1 step %c1 iter_args(%a = %y) -> (!tile.rt<64x64xf32>) {
      %y = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
      scf.yield %a : !tile.rt<64x64xf32>
    }
    tile.store %x, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
