builtin.module {
  tile.kernel @k(%A: !tile.gl<[M, K], bf16>) {
    %c0 = arith.constant 0 : index
    tile.grid(%c0) as ["i"]
    %a = tile.load %A[%c0, %c0] {swizzle = 128 : i64} : !tile.gl<[M, K], bf16> -> !tile.st<64x32xbf16>
    tile.return
  }
}
