// A column vector stored at an element offset with a first element it may write (`from`: the
// store may begin before its tensor) is written element by element, each element where it lies
// in [from, limit), whatever the offset's parity. The pair-aligned fast path is for stores
// without `from` only: a run-time offset read from a table (a varlen batch's sequence start) was
// tested for evenness, and the odd case stored nothing.
// RUN: tkc-opt %s -p convert-sm90-to-ptx,ptx-flatten-control-flow -t ptx | filecheck %s
// RUN: tkc compile %s --emit=cubin -o %t.cubin

builtin.module {
  sm90.kernel @column_start threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [C: f32[N], D: f32[S]], params [ptr_C = pointer C, dim_N = dim N, dim_S = dim S], grid [1, 1, 1], written [C, D]> {
    %n = sm90.dim "dim_N"
    %s = sm90.dim "dim_S"
    %c0 = arith.constant 0 : index
    %from = arith.subi %c0, %s : index
    %w = sm90.fill 2.000000e+00 : f32 : !sm90.frag<32xf32, col>
    %c = sm90.pointer "ptr_C"
    sm90.store_vector_global %w, %c[%s] limit %n from %from : !sm90.frag<32xf32, col>
  }
}

// CHECK:     ld.param.u32 [[S:%r[0-9]+]], [dim_S];
// CHECK-NOT: and.b32 {{%r[0-9]+}}, [[S]], 1;
// CHECK-NOT: st.global.v2
// CHECK-COUNT-8: st.global.f32
// CHECK-NOT: st.global
