// tkc compile FILE
// expect: identifier or string literal expected
// A damaged launch contract (cut short).
builtin.module {
  sm90.kernel @k threads 256 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [dim_N = dim N], grid [1, 1, 1], divisible [> {
    %n = sm90.dim "dim_N"
    %c0 = arith.constant 0 : index
    sm90.named_barrier %c0, 256 : i32
  }
}
