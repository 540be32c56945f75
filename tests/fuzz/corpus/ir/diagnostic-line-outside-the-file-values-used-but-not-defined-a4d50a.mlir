// signature: diagnostic line outside the file: values used but not defined: [_]
// tkc compile FILE
    tile.store %12, %V[%i] : !tile.rv<64xf32>, !tile.gl<[M], f32>
