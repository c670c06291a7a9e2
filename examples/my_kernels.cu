// examples/my_kernels.cu - your own CUDA C for gpuk: tools/gpuk_embed.py turns it into
// examples/my_kernels.h (PTX + a typed C wrapper per kernel), which 02_own_kernels.c uses.
//   python3 tools/gpuk_embed.py examples/my_kernels.cu -o examples/my_kernels.h
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
