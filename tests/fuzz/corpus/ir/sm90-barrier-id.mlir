// tkc compile FILE
// expect: the barrier id must be in 0..15
// A constant barrier id the lowering folds into bar.sync (the PTX verifier failed after the lowering).
builtin.module {
  sm90.kernel @k threads 256 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [dim_N = dim N], grid [1, 1, 1]> {
    %n = sm90.dim "dim_N"
    %c0 = arith.constant 65536 : index
    sm90.named_barrier %c0, 256 : i32
  }
}
