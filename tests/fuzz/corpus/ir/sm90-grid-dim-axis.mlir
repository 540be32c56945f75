// tkc compile FILE
// expect: axis is 0, 1 or 2
// The lowering indexed 'xyz' with it (IndexError).
builtin.module {
  sm90.kernel @k threads 256 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [dim_N = dim N], grid [1, 1, 1]> {
    %n = sm90.dim "dim_N"
    %c0 = arith.constant 0 : index
    %d = sm90.grid_dim 3 : i32
    sm90.named_barrier %c0, 256 : i32
  }
}
