// tkc compile FILE
// expect: computes with i16
// No PTX register of the lowering holds an i16 (KeyError).
builtin.module {
  sm90.kernel @k threads 256 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [dim_N = dim N], grid [1, 1, 1]> {
    %n = sm90.dim "dim_N"
    %c0 = arith.constant 0 : index
    %h = arith.constant 0 : i16
    sm90.named_barrier %c0, 256 : i32
  }
}
