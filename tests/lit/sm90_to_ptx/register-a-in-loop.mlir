// A register A operand computed before a loop is read through per-iteration copies (shfl.sync.idx
// to the thread's own lane) by the wgmma inside the loop: ptxas before CUDA 13.3 may hand the
// original registers to other values in the loop once the wgmma has read them. An A operand
// computed inside the loop, and one outside any loop, are read as they are.
// RUN: tkc-opt %s -p convert-sm90-to-ptx,ptx-flatten-control-flow -t ptx | filecheck %s

builtin.module {
  sm90.kernel @mma threads 128 : i32 smem 33792 : i32 min_ctas 1 : i32 abi <args [], params [], grid [1, 1, 1]> {
    %base = sm90.smem_base
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8192 = arith.constant 8192 : index
    %a = sm90.smem_view %base : !sm90.smem<64x64xbf16, swizzle 128>
    %b_addr = arith.addi %base, %c8192 : index
    %b = sm90.smem_view %b_addr : !sm90.smem<64x64xbf16, swizzle 128>
    %first = sm90.wgmma %a[%c0], %b : !sm90.smem<64x64xbf16, swizzle 128>, !sm90.smem<64x64xbf16, swizzle 128> -> !sm90.frag<64x64xf32>
    %first_done = sm90.wgmma_wait %first, 0 : i32 : !sm90.frag<64x64xf32>
    %outside = sm90.convert %first_done : !sm90.frag<64x64xf32> -> !sm90.frag<64x64xbf16>
    %straight = sm90.wgmma %outside, %b, %first_done : !sm90.frag<64x64xbf16>, !sm90.smem<64x64xbf16, swizzle 128>, !sm90.frag<64x64xf32> -> !sm90.frag<64x64xf32>
    %straight_done = sm90.wgmma_wait %straight, 0 : i32 : !sm90.frag<64x64xf32>
    %sum = scf.for %it = %c0 to %c4 step %c1 iter_args(%acc = %straight_done) -> (!sm90.frag<64x64xf32>) {
      %s = sm90.wgmma %outside, %b, %acc : !sm90.frag<64x64xbf16>, !sm90.smem<64x64xbf16, swizzle 128>, !sm90.frag<64x64xf32> -> !sm90.frag<64x64xf32>
      %s_done = sm90.wgmma_wait %s, 0 : i32 : !sm90.frag<64x64xf32>
      %inside = sm90.convert %s_done : !sm90.frag<64x64xf32> -> !sm90.frag<64x64xbf16>
      %o = sm90.wgmma %inside, %b, %s_done : !sm90.frag<64x64xbf16>, !sm90.smem<64x64xbf16, swizzle 128>, !sm90.frag<64x64xf32> -> !sm90.frag<64x64xf32>
      %o_done = sm90.wgmma_wait %o, 0 : i32 : !sm90.frag<64x64xf32>
      scf.yield %o_done : !sm90.frag<64x64xf32>
    }
  }
}

// Outside any loop: the converted registers themselves.
// CHECK:      cvt.rn.bf16x2.f32 [[A0:%r[0-9]+]], {{%f[0-9]+}}, {{%f[0-9]+}};
// CHECK:      wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, {[[A0]], {{.*}}}, {{%rd[0-9]+}}, 1, 1, 1, 1;
// In the loop: 16 copies (64x64 bf16 is 16 registers a thread), then the wgmma reads them.
// CHECK:      LOOP_0:
// CHECK:      mov.u32 [[LANE:%r[0-9]+]], %laneid;
// CHECK-NEXT: shfl.sync.idx.b32 [[C0:%r[0-9]+]], [[A0]], [[LANE]], 0x1f, 0xffffffff;
// CHECK-COUNT-15: shfl.sync.idx.b32
// CHECK-NEXT: wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, {[[C0]], {{.*}}}, {{%rd[0-9]+}}, 1, 1, 1, 1;
// The A converted in the loop is read without copies.
// CHECK:      cvt.rn.bf16x2.f32 [[I0:%r[0-9]+]], {{%f[0-9]+}}, {{%f[0-9]+}};
// CHECK-NOT:  shfl.sync
// CHECK:      wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, {[[I0]], {{.*}}}, {{%rd[0-9]+}}, 1, 1, 1, 1;
// CHECK:      bra LOOP_0;
