// signature: internal VerifyException at dialects/tile.py:verify
// tkc compile FILE
    %x = tile.to_reg %4 : !tile.st<64x64xf32> -> !tile.rt<64x65xf32>