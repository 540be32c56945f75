// tkc compile FILE
// expect: tkc.abi is not a kernel ABI
// A damaged ABI string on the PTX module (JSONDecodeError when it was read).
builtin.module {
  ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64, tkc.abi = "{\22entry\22: \22k\22, \22args\22: [{\22name\22: \22X\22, \22dtype\22: \22f32\22, \22dims\22: [\22N\22]}], \22params\22: [{\22name\22: \22dim_N\22, \22dim\22: \22N\22, \22kind\22: \22dim\22}], \22grid\22: [1, 1, 1, \22block\22: 128, \22smem_bytes\22: 0, \22divisibility\22: []}"} {
    ptx.entry @k {params = [#ptx.param<"dim_N", u32>], maxntid = array<i64: 128, 1, 1>} {
      %0 = ptx.ld_param {param = "dim_N", ty = "u32"} : b32
      ptx.ret
    }
  }
}
