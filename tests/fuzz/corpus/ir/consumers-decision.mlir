// tkc compile FILE
// expect: the plan's consumers must be an integer, 1..7
// The lowering divides the rows by the consumers it finds.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<0, "damaged">>} {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %x = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    tile.store %x, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
