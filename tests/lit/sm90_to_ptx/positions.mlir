// sm90.position, conditions and sm90.select -> PTX. A position converts the thread's first row
// (first + the thread's row) or column (first + 2 * quad) to f32 once and adds each register's
// offset (rows 0 and 8 of an m-block; columns 0, 1, 8, 9, ...); their difference subtracts the
// bases once and adds the offsets' differences. A comparison is a setp and a
// selp of 1.0 or 0.0 (`!=` unordered, true for NaN); and/or combine the operands' predicates; a
// select or a logic op of a condition made that way tests its predicate directly, and any other
// condition is tested with setp.neu against 0 (NaN counts as true).
// RUN: tkc-opt %s -p convert-sm90-to-ptx,ptx-flatten-control-flow -t ptx | filecheck %s
// RUN: tkc compile %s --emit=cubin -o %t.cubin

builtin.module {
  sm90.kernel @positions threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [R: f32[N]], params [ptr_R = pointer R, dim_N = dim N], grid [1, 1, 1], written [R]> {
    %n = sm90.dim "dim_N"
    %c0 = arith.constant 0 : index
    %eight = arith.constant 8.000000e+00 : f32
    %zero = arith.constant 0.000000e+00 : f32
    %r = sm90.position row %n : !sm90.frag<64x32xf32>
    %c = sm90.position col %c0 : !sm90.frag<64x32xf32>
    %gap = sm90.binary sub %r, %c : !sm90.frag<64x32xf32>, !sm90.frag<64x32xf32> -> !sm90.frag<64x32xf32>
    %near = sm90.binary lt %gap, %eight : !sm90.frag<64x32xf32>, f32 -> !sm90.frag<64x32xf32>
    %other = sm90.binary ne %r, %c : !sm90.frag<64x32xf32>, !sm90.frag<64x32xf32> -> !sm90.frag<64x32xf32>
    %both = sm90.binary and %near, %other : !sm90.frag<64x32xf32>, !sm90.frag<64x32xf32> -> !sm90.frag<64x32xf32>
    %none = sm90.unary not %both : !sm90.frag<64x32xf32>
    %picked = sm90.select %near, %gap, %zero : !sm90.frag<64x32xf32>, !sm90.frag<64x32xf32>, f32 -> !sm90.frag<64x32xf32>
    %tested = sm90.select %gap, %picked, %none : !sm90.frag<64x32xf32>, !sm90.frag<64x32xf32>, !sm90.frag<64x32xf32> -> !sm90.frag<64x32xf32>
    %v = sm90.row_reduce sum %tested : !sm90.frag<64x32xf32> -> !sm90.frag<64xf32>
    %p = sm90.pointer "ptr_R"
    sm90.store_vector_global %v, %p[%c0] limit %n : !sm90.frag<64xf32>
  }
}

// Rows: first + the thread's row, then + 0 and + 8 (16 registers of a 64x32 m-block).
// CHECK:          ld.param.u32 [[N:%r[0-9]+]], [dim_N];
// CHECK:          add.s32 [[FIRST:%r[0-9]+]], [[ROW:%r[0-9]+]], [[N]];
// CHECK-NEXT:     cvt.rn.f32.s32 [[RBASE:%f[0-9]+]], [[FIRST]];
// CHECK-NEXT:     add.f32 [[R0:%f[0-9]+]], [[RBASE]], 0f00000000;
// CHECK-NEXT:     add.f32 {{%f[0-9]+}}, [[RBASE]], 0f00000000;
// CHECK-NEXT:     add.f32 [[R8:%f[0-9]+]], [[RBASE]], 0f41000000;
// CHECK-COUNT-13: add.f32 {{%f[0-9]+}}, [[RBASE]], {{0f[0-9A-F]+}};
// Columns: 2 * quad, then + 0, 1, 8, 9, ...
// CHECK:          shl.b32 [[QUAD2:%r[0-9]+]], {{%r[0-9]+}}, 1;
// CHECK-NEXT:     add.s32 [[CFIRST:%r[0-9]+]], [[QUAD2]], 0;
// CHECK-NEXT:     cvt.rn.f32.s32 [[CBASE:%f[0-9]+]], [[CFIRST]];
// CHECK-NEXT:     add.f32 [[C0:%f[0-9]+]], [[CBASE]], 0f00000000;
// CHECK-NEXT:     add.f32 {{%f[0-9]+}}, [[CBASE]], 0f3F800000;
// CHECK-NEXT:     add.f32 {{%f[0-9]+}}, [[CBASE]], 0f00000000;
// CHECK-NEXT:     add.f32 {{%f[0-9]+}}, [[CBASE]], 0f3F800000;
// CHECK-NEXT:     add.f32 {{%f[0-9]+}}, [[CBASE]], 0f41000000;
// A gap of positions (row - col): the two bases subtracted once, then each register's offset
// difference added (rows 0, 8 less columns 0, 1, 8, 9, ...), no subtraction per register.
// CHECK:          sub.f32 [[GBASE:%f[0-9]+]], [[RBASE]], [[CBASE]];
// CHECK-NEXT:     add.f32 [[GAP0:%f[0-9]+]], [[GBASE]], 0f00000000;
// CHECK-NEXT:     add.f32 {{%f[0-9]+}}, [[GBASE]], 0fBF800000;
// CHECK-NOT:      sub.f32
// A comparison: setp, then selp 1.0, 0.0.
// CHECK:          setp.lt.f32 [[NEAR0:%p[0-9]+]], [[GAP0]], 0f41000000;
// CHECK-NEXT:     mov.f32 [[ONE:%f[0-9]+]], 0f3F800000;
// CHECK-NEXT:     mov.f32 [[NIL:%f[0-9]+]], 0f00000000;
// CHECK-NEXT:     selp.f32 {{%f[0-9]+}}, [[ONE]], [[NIL]], [[NEAR0]];
// CHECK:          setp.neu.f32 [[OTHER0:%p[0-9]+]], [[R0]], [[C0]];
// and: the two comparisons' predicates.
// CHECK:          and.pred [[BOTH0:%p[0-9]+]], [[NEAR0]], [[OTHER0]];
// CHECK:          selp.f32 [[BOTHF0:%f[0-9]+]], {{%f[0-9]+}}, {{%f[0-9]+}}, [[BOTH0]];
// not: equal to 0.
// CHECK:          setp.eq.f32 {{%p[0-9]+}}, [[BOTHF0]], 0f00000000;
// A select of a comparison tests its predicate; of another tile, setp.neu against 0.
// CHECK:          selp.f32 [[PICK0:%f[0-9]+]], [[GAP0]], {{%f[0-9]+}}, [[NEAR0]];
// CHECK:          setp.neu.f32 [[TEST0:%p[0-9]+]], [[GAP0]], 0f00000000;
// CHECK-NEXT:     selp.f32 {{%f[0-9]+}}, [[PICK0]], {{%f[0-9]+}}, [[TEST0]];
