// tkc compile FILE
// expect: 32..1024 threads
// bar.sync counts whole warps.
builtin.module {
  sm90.kernel @k threads 256 : i32 smem 0 : i32 min_ctas 1 : i32 abi "{\22entry\22: \22k\22, \22args\22: [{\22name\22: \22X\22, \22dtype\22: \22f32\22, \22dims\22: [\22N\22]}], \22params\22: [{\22name\22: \22dim_N\22, \22dim\22: \22N\22, \22kind\22: \22dim\22}], \22grid\22: [1, 1, 1], \22block\22: 256, \22smem_bytes\22: 0, \22divisibility\22: []}" {
    %n = sm90.dim "dim_N"
    %c0 = arith.constant 0 : index
    sm90.named_barrier %c0, 127 : i32
  }
}
