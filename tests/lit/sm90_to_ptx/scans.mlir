// sm90.row_scan: per row of the thread, a pair sum per 8-column group, a scan of the pair sums
// over the quad (shfl.up 1 and 2 in 4-lane segments, c = 0x1C00; lanes before the offset keep
// their value), the exclusive prefix (shfl.up 1, 0 for the quad's first lane) and the group
// total from the quad's last lane (shfl.idx 3) carried into the next group.
// sm90.col_scan: per column value, the rows g and g + 8 of the warp's 16 scanned over the lanes
// of the column (shfl.up 4, 8, 16 over the whole warp; lanes 4 * d and above add), the total of
// rows 0..7 from lane 28 + quad; the slab totals meet in the scratch between two syncs, each
// thread adding the 2 x 64 / 16 = 8 slabs' rows above its own (selp on slab > s).
// sm90.vector_reduce: the thread's columns, then the quad (bfly 1, 2).
// sm90.transpose: a sync, every thread writes what it holds, a sync, every thread reads.
// RUN: tkc-opt %s -p convert-sm90-to-ptx,ptx-flatten-control-flow -t ptx | filecheck %s
// RUN: tkc compile %s --emit=cubin -o %t.cubin

builtin.module {
  sm90.kernel @scans threads 384 : i32 smem 1024 : i32 min_ctas 1 : i32 abi <args [S: f32[N]], params [ptr_S = pointer S, dim_N = dim N], grid [1, 1, 1], written [S]> {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %bar = arith.constant 3 : index
    %x = sm90.fill 1.000000e+00 : f32 : !sm90.frag<64x16xf32>
    %scanned = sm90.row_scan %x : !sm90.frag<64x16xf32>
    %down = sm90.col_scan %scanned via %c0[%c0 of 2 : i32] bar %bar : !sm90.frag<64x16xf32> -> !sm90.frag<64x16xf32>
    %rows = sm90.row_reduce sum %down : !sm90.frag<64x16xf32> -> !sm90.frag<64xf32>
    %cols = sm90.transpose %rows via %c0 rows %c64 of 2 bar %bar : !sm90.frag<64xf32> -> !sm90.frag<128xf32, col>
    %total = sm90.vector_reduce max %cols : !sm90.frag<128xf32, col>
    %back = sm90.transpose %cols via %c0 rows %c64 of 2 bar %bar : !sm90.frag<128xf32, col> -> !sm90.frag<64xf32>
    %scaled = sm90.binary mul %back, %total : !sm90.frag<64xf32>, f32 -> !sm90.frag<64xf32>
    %n = sm90.dim "dim_N"
    %s = sm90.pointer "ptr_S"
    sm90.store_vector_global %scaled, %s[%c0] limit %n : !sm90.frag<64xf32>
  }
}

// The first row's first group: pair sum, the quad scan, the exclusive prefix, the two columns.
// CHECK:      add.f32 [[PAIR:%f[0-9]+]], [[X0:%f[0-9]+]], [[X1:%f[0-9]+]];
// CHECK-NEXT: shfl.sync.up.b32 [[UP1:%f[0-9]+]], [[PAIR]], 1, 0x1c00, 0xffffffff;
// CHECK-NEXT: add.f32 [[S1:%f[0-9]+]], [[PAIR]], [[UP1]];
// CHECK-NEXT: selp.f32 [[SCAN1:%f[0-9]+]], [[S1]], [[PAIR]], [[AFTER1:%p[0-9]+]];
// CHECK-NEXT: shfl.sync.up.b32 [[UP2:%f[0-9]+]], [[SCAN1]], 2, 0x1c00, 0xffffffff;
// CHECK-NEXT: add.f32 [[S2:%f[0-9]+]], [[SCAN1]], [[UP2]];
// CHECK-NEXT: selp.f32 [[SCAN2:%f[0-9]+]], [[S2]], [[SCAN1]], [[AFTER2:%p[0-9]+]];
// CHECK-NEXT: shfl.sync.up.b32 [[PREV:%f[0-9]+]], [[SCAN2]], 1, 0x1c00, 0xffffffff;
// CHECK:      selp.f32 [[BEFORE:%f[0-9]+]], [[PREV]], {{%f[0-9]+}}, [[AFTER1]];
// CHECK-NEXT: add.f32 [[Y0:%f[0-9]+]], [[BEFORE]], [[X0]];
// CHECK-NEXT: add.f32 {{%f[0-9]+}}, [[Y0]], [[X1]];
// CHECK-NEXT: shfl.sync.idx.b32 [[TOTAL:%f[0-9]+]], [[SCAN2]], 3, 0x1c1f, 0xffffffff;
// The second group adds the carry.
// CHECK:      add.f32 {{%f[0-9]+}}, {{%f[0-9]+}}, [[TOTAL]];
// The column scan of the first column value (rows g and g + 8).
// CHECK:      shfl.sync.up.b32 [[D4:%f[0-9]+]], [[A:%f[0-9]+]], 4, 0x0, 0xffffffff;
// CHECK-NEXT: add.f32 {{%f[0-9]+}}, [[A]], [[D4]];
// CHECK-NEXT: selp.f32
// CHECK-NEXT: shfl.sync.up.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 8, 0x0, 0xffffffff;
// CHECK:      shfl.sync.up.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, 16, 0x0, 0xffffffff;
// CHECK:      shfl.sync.idx.b32 {{%f[0-9]+}}, {{%f[0-9]+}}, [[LAST:%r[0-9]+]], 0x1f, 0xffffffff;
// CHECK:      bar.sync 3, 256;
// CHECK:      st.shared.v2.f32
// CHECK:      bar.sync 3, 256;
// CHECK:      ld.shared.v2.f32
// CHECK:      selp.f32
// The transposes sync the 256 consumer threads before and after the scratch.
// CHECK:      bar.sync 3, 256;
// CHECK:      st.shared.f32
// CHECK:      bar.sync 3, 256;
// CHECK:      ld.shared.v2.f32
// CHECK:      shfl.sync.bfly.b32 {{.*}}, 1, 0x1f, 0xffffffff;
// CHECK:      max.f32
// CHECK:      shfl.sync.bfly.b32 {{.*}}, 2, 0x1f, 0xffffffff;
// CHECK:      bar.sync 3, 256;
// CHECK:      st.shared.v2.f32
// CHECK:      bar.sync 3, 256;
// CHECK:      ld.shared.f32
