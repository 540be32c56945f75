// sm90.bounds_mask -> one setp per distinct row (column) offset of the thread's registers
// against limit - the thread's first row (2 * quad), signed, then a selp per register and masked
// axis; an axis whose limit is a constant at least its extent has no compare. A vector store
// writes only the elements before its limit.
// RUN: tkc-opt %s -p convert-sm90-to-ptx,ptx-flatten-control-flow -t ptx | filecheck %s
// RUN: tkc compile %s --emit=cubin -o %t.cubin

builtin.module {
  sm90.kernel @tails threads 128 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [R: f32[N], C: f32[N]], params [ptr_R = pointer R, ptr_C = pointer C, dim_N = dim N], grid [1, 1, 1], written [R, C]> {
    %n = sm90.dim "dim_N"
    %c64 = arith.constant 64 : index
    %c32 = arith.constant 32 : index
    %c0 = arith.constant 0 : index
    %x = sm90.fill 1.000000e+00 : f32 : !sm90.frag<64x32xf32>
    %both = sm90.bounds_mask %x[%n, %n] fill 0xff800000 : f32 : !sm90.frag<64x32xf32>
    %cols = sm90.bounds_mask %both[%c64, %n] fill 0.000000e+00 : f32 : !sm90.frag<64x32xf32>
    %none = sm90.bounds_mask %cols[%c64, %c32] fill 0.000000e+00 : f32 : !sm90.frag<64x32xf32>
    %v = sm90.row_reduce max %none : !sm90.frag<64x32xf32> -> !sm90.frag<64xf32>
    %vm = sm90.bounds_mask %v[%n] fill 0.000000e+00 : f32 : !sm90.frag<64xf32>
    %r = sm90.pointer "ptr_R"
    sm90.store_vector_global %vm, %r[%c0] limit %n : !sm90.frag<64xf32>
    %w = sm90.fill 2.000000e+00 : f32 : !sm90.frag<32xf32, col>
    %wm = sm90.bounds_mask %w[%n] fill 0.000000e+00 : f32 : !sm90.frag<32xf32, col>
    %c = sm90.pointer "ptr_C"
    sm90.store_vector_global %wm, %c[%c0] limit %n : !sm90.frag<32xf32, col>
  }
}

// Both axes of a 64x32 tile: rows r0 + {0, 8}, columns 2 * quad + {0, 1, 8, 9, 16, 17, 24, 25}.
// CHECK:          ld.param.u32 [[N:%r[0-9]+]], [dim_N];
// CHECK:          shl.b32 [[COL:%r[0-9]+]], {{%r[0-9]+}}, 1;
// CHECK-NEXT:     sub.s32 [[ROWS:%r[0-9]+]], [[N]], [[ROW:%r[0-9]+]];
// CHECK-NEXT:     setp.le.s32 [[R0:%p[0-9]+]], [[ROWS]], 0;
// CHECK-NEXT:     setp.le.s32 [[R8:%p[0-9]+]], [[ROWS]], 8;
// CHECK-NEXT:     sub.s32 [[COLS:%r[0-9]+]], [[N]], [[COL]];
// CHECK-NEXT:     setp.le.s32 [[C0:%p[0-9]+]], [[COLS]], 0;
// CHECK-NEXT:     setp.le.s32 [[C1:%p[0-9]+]], [[COLS]], 1;
// CHECK-COUNT-6:  setp.le.s32 {{%p[0-9]+}}, [[COLS]], {{[0-9]+}};
// CHECK-NEXT:     mov.f32 [[NEGINF:%f[0-9]+]], 0fFF800000;
// CHECK-NEXT:     selp.f32 [[X0:%f[0-9]+]], [[NEGINF]], {{%f[0-9]+}}, [[R0]];
// CHECK-NEXT:     selp.f32 {{%f[0-9]+}}, [[NEGINF]], [[X0]], [[C0]];
// CHECK-NEXT:     selp.f32 [[X1:%f[0-9]+]], [[NEGINF]], {{%f[0-9]+}}, [[R0]];
// CHECK-NEXT:     selp.f32 {{%f[0-9]+}}, [[NEGINF]], [[X1]], [[C1]];
// CHECK-NEXT:     selp.f32 {{%f[0-9]+}}, [[NEGINF]], {{%f[0-9]+}}, [[R8]];
// CHECK-COUNT-27: selp.f32 {{%f[0-9]+}}, [[NEGINF]], {{%f[0-9]+}}, {{%p[0-9]+}};
// Rows at their extent (64): the columns alone, one selp per register.
// CHECK-NOT:      setp.le.s32 {{%p[0-9]+}}, {{%r[0-9]+}}, 8;
// CHECK:          sub.s32 [[COLS2:%r[0-9]+]], [[N]], {{%r[0-9]+}};
// CHECK-COUNT-8:  setp.le.s32 {{%p[0-9]+}}, [[COLS2]], {{[0-9]+}};
// CHECK-NEXT:     mov.f32 [[ZERO:%f[0-9]+]], 0f00000000;
// CHECK-COUNT-16: selp.f32 {{%f[0-9]+}}, [[ZERO]], {{%f[0-9]+}}, {{%p[0-9]+}};
// Both limits constants at the extent: copies, no compare.
// CHECK-NOT:      setp
// CHECK-COUNT-16: mov.f32 {{%f[0-9]+}}, {{%f[0-9]+}};
// CHECK-NOT:      setp
// CHECK:          shfl.sync.bfly
// The row vector: rows r0 and r0 + 8.
// CHECK:          sub.s32 [[VROWS:%r[0-9]+]], [[N]], {{%r[0-9]+}};
// CHECK-NEXT:     setp.le.s32 [[V0:%p[0-9]+]], [[VROWS]], 0;
// CHECK-NEXT:     setp.le.s32 [[V8:%p[0-9]+]], [[VROWS]], 8;
// CHECK-NEXT:     mov.f32 [[VFILL:%f[0-9]+]], 0f00000000;
// CHECK-NEXT:     selp.f32 {{%f[0-9]+}}, [[VFILL]], {{%f[0-9]+}}, [[V0]];
// CHECK-NEXT:     selp.f32 {{%f[0-9]+}}, [[VFILL]], {{%f[0-9]+}}, [[V8]];
// Its store: lane 0 of each quad, each row where it lies before the limit.
// CHECK:          setp.eq.u32 {{%p[0-9]+}}, {{%r[0-9]+}}, 0;
// CHECK:          sub.s32 [[LEFT:%r[0-9]+]], [[N]], {{%r[0-9]+}};
// CHECK-NEXT:     setp.gt.s32 [[S0:%p[0-9]+]], [[LEFT]], 0;
// CHECK-NEXT:     @!{{%p[0-9]+}} bra [[END0:ENDIF_[0-9]+]];
// CHECK-NEXT:     st.global.f32 [{{%rd[0-9]+}}], {{%f[0-9]+}};
// CHECK-NEXT: [[END0]]:
// CHECK-NEXT:     setp.gt.s32 {{%p[0-9]+}}, [[LEFT]], 8;
// CHECK-NEXT:     @!{{%p[0-9]+}} bra [[END8:ENDIF_[0-9]+]];
// CHECK-NEXT:     st.global.f32 [{{%rd[0-9]+}}+32], {{%f[0-9]+}};
// CHECK-NEXT: [[END8]]:
// The column vector: columns 2 * quad + {0, 1, 8, 9, ...}, one compare each.
// CHECK:          sub.s32 [[CLEFT:%r[0-9]+]], [[N]], {{%r[0-9]+}};
// CHECK-COUNT-8:  setp.le.s32 {{%p[0-9]+}}, [[CLEFT]], {{[0-9]+}};
// CHECK-COUNT-8:  selp.f32
// Its store: a pair where both columns lie before the limit, the first alone where only it does.
// CHECK:          setp.gt.s32 {{%p[0-9]+}}, [[PAIR:%r[0-9]+]], 1;
// CHECK-NEXT:     @!{{%p[0-9]+}} bra [[ENDP:ENDIF_[0-9]+]];
// CHECK-NEXT:     st.global.v2.f32 [{{%rd[0-9]+}}], {{{%f[0-9]+}}, {{%f[0-9]+}}};
// CHECK-NEXT: [[ENDP]]:
// CHECK-NEXT:     setp.eq.s32 {{%p[0-9]+}}, [[PAIR]], 1;
// CHECK-NEXT:     @!{{%p[0-9]+}} bra [[ENDS:ENDIF_[0-9]+]];
// CHECK-NEXT:     st.global.f32 [{{%rd[0-9]+}}], {{%f[0-9]+}};
// CHECK-NEXT: [[ENDS]]:
// CHECK-NEXT:     setp.gt.s32 {{%p[0-9]+}}, [[PAIR]], 9;
