// signature: internal VerifyException at tkc/driver.py:parse_mlir (parameter '_' does not verify:)
// tkc compile FILE
    %K = tile.dim %A[1] : !tile.gl<[], i64>