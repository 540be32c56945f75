// sm90.wgmma -> fence, K/16 mma_async with shared-memory descriptors, commit; the wait hands
// the accumulator registers on; convert packs pairs into bf16x2; store_fragment swizzles.
// RUN: tkc-opt %s -p convert-sm90-to-ptx -t ptx | filecheck %s

builtin.module {
  sm90.kernel @mma threads 128 : i32 smem 33792 : i32 min_ctas 1 : i32 abi <args [], params [], grid [1, 1, 1]> {
    %base = sm90.smem_base
    %c0 = arith.constant 0 : index
    %c8192 = arith.constant 8192 : index
    %c16384 = arith.constant 16384 : index
    %a = sm90.smem_view %base : !sm90.smem<64x64xbf16, swizzle 128>
    %b_addr = arith.addi %base, %c8192 : index
    %b = sm90.smem_view %b_addr : !sm90.smem<64x64xbf16, swizzle 128>
    %c_addr = arith.addi %base, %c16384 : index
    %c = sm90.smem_view %c_addr : !sm90.smem<64x64xbf16, swizzle 128>
    %acc = sm90.wgmma %a[%c0], %b : !sm90.smem<64x64xbf16, swizzle 128>, !sm90.smem<64x64xbf16, swizzle 128> -> !sm90.frag<64x64xf32>
    %done = sm90.wgmma_wait %acc, 0 : i32 : !sm90.frag<64x64xf32>
    %packed = sm90.convert %done : !sm90.frag<64x64xf32> -> !sm90.frag<64x64xbf16>
    sm90.store_fragment %packed[cols 0], %c[%c0] : !sm90.frag<64x64xbf16>, !sm90.smem<64x64xbf16, swizzle 128>
  }
}

// B: MN-major [K, N], LBO = 64 rows * 128 B, SBO 1024; A: K-major, LBO 16, SBO 1024; 128B swizzle.
// CHECK:      or.b64 [[BDESC:%rd[0-9]+]], {{%rd[0-9]+}}, 0x4000004002000000;
// CHECK:      or.b64 [[ADESC:%rd[0-9]+]], {{%rd[0-9]+}}, 0x4000004000010000;
// CHECK:      wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {[[D0:%f[0-9]+]], [[D1:%f[0-9]+]], {{.*}}}, [[ADESC]], [[BDESC]], 0, 1, 1, 0, 1;
// CHECK-NEXT: add.u64 [[B1:%rd[0-9]+]], [[BDESC]], 128;
// CHECK-NEXT: add.u64 [[A1:%rd[0-9]+]], [[ADESC]], 2;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, [[A1]], [[B1]], 1, 1, 1, 0, 1;
// CHECK:      wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK:      wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: cvt.rn.bf16x2.f32 [[P0:%r[0-9]+]], [[D1]], [[D0]];
// The swizzle XOR of the thread's row (row & 7) << 4, then one st.shared.b32 per pair:
// CHECK:      xor.b32
// CHECK:      st.shared.b32 [{{%r[0-9]+}}], [[P0]];
// CHECK-NEXT: st.shared.b32 [{{%r[0-9]+}}+1024], {{%r[0-9]+}};
