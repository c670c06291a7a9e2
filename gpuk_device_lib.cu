/* gpuk_device_lib.cu - gpuk_device.cuh's functions as a linkable library: extern "C" definitions
   that tools/gen_ptx.py compiles relocatable (nvcc -rdc) into ptx/gpuk_device_lib.ptx, which
   gpuk.h carries and gpuk_module_link adds where gpuk_link_desc.gpuk_device is set. A kernel
   compiled relocatable (NVRTC -rdc=true, nvcc -rdc) may then declare one and call it:
       extern "C" __device__ float gpuk_uniform_f32(unsigned long long seed,
                                                    unsigned long long e);
   Each is the inline function of the same name in gpuk_device.cuh (bit for bit: the same
   code); the templates come as one function a type, named by gpuk's type suffixes. Declare
   them with extern "C" and these exact parameter types; a kernel that includes
   gpuk_device.cuh itself has the inline forms and needs none of this. */
namespace gpuk_inline {
#include "gpuk_device.cuh"
}
typedef gpuk_inline::gpuk_philox4 gpuk_philox4;
#define GPUK__LINK extern "C" __device__

GPUK__LINK gpuk_philox4 gpuk_philox4x32_10(unsigned long long counter, unsigned long long seed) {
    return gpuk_inline::gpuk_philox4x32_10(counter, seed);
}
GPUK__LINK float gpuk_u01_f32(unsigned int w) { return gpuk_inline::gpuk_u01_f32(w); }
GPUK__LINK double gpuk_u01_f64(unsigned int w0, unsigned int w1) {
    return gpuk_inline::gpuk_u01_f64(w0, w1);
}
GPUK__LINK void gpuk_box_muller_f32(float u1, float u2, float* z0, float* z1) {
    gpuk_inline::gpuk_box_muller_f32(u1, u2, z0, z1);
}
GPUK__LINK void gpuk_box_muller_f64(double u1, double u2, double* z0, double* z1) {
    gpuk_inline::gpuk_box_muller_f64(u1, u2, z0, z1);
}
GPUK__LINK float gpuk_uniform_f32(unsigned long long seed, unsigned long long e) {
    return gpuk_inline::gpuk_uniform_f32(seed, e);
}
GPUK__LINK double gpuk_uniform_f64(unsigned long long seed, unsigned long long e) {
    return gpuk_inline::gpuk_uniform_f64(seed, e);
}
GPUK__LINK float gpuk_normal_f32(unsigned long long seed, unsigned long long e) {
    return gpuk_inline::gpuk_normal_f32(seed, e);
}
GPUK__LINK double gpuk_normal_f64(unsigned long long seed, unsigned long long e) {
    return gpuk_inline::gpuk_normal_f64(seed, e);
}
GPUK__LINK unsigned int gpuk_lane_id(void) { return gpuk_inline::gpuk_lane_id(); }

/* the templates, one function a type: gpuk_warp_sum_f32 is gpuk_warp_sum<float> */
#define GPUK__LINK_SUMS(T, S) \
    GPUK__LINK T gpuk_warp_sum_##S(T v) { return gpuk_inline::gpuk_warp_sum(v); } \
    GPUK__LINK T gpuk_warp_inclusive_scan_##S(T v) { \
        return gpuk_inline::gpuk_warp_inclusive_scan(v); \
    } \
    GPUK__LINK T gpuk_block_sum_##S(T v) { return gpuk_inline::gpuk_block_sum(v); }
GPUK__LINK_SUMS(int, i32)
GPUK__LINK_SUMS(unsigned int, u32)
GPUK__LINK_SUMS(long long, i64)
GPUK__LINK_SUMS(unsigned long long, u64)
GPUK__LINK_SUMS(float, f32)
GPUK__LINK_SUMS(double, f64)
