/* cuda_logf_probe.cu -- where CUDA's accurate logf differs from the
   correctly rounded log over [1, 1024), and its machine code.

   usage: cuda_logf_probe OUTDIR
   writes OUTDIR/logf_diff.bin: one uint32 per FP32 x in [1, 1024) whose
   logf(x) is not RN(log(x)) (log in FP64, then rounded): x's bits, bit 31
   set when logf(x) is the next FP32 value above RN(log(x)), clear when
   below; OUTDIR/logf_count.txt the count and whether any other
   difference than one ulp occurred. */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" __global__ void only_logf(float *p) { p[threadIdx.x] = logf(p[threadIdx.x]); }

__global__ void diff(uint32_t x0, uint32_t n, uint32_t *out, unsigned *cnt,
                     unsigned *other)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t x = x0 + i;
    float v = __uint_as_float(x);
    uint32_t a = __float_as_uint(logf(v));
    uint32_t b = __float_as_uint((float)log((double)v));
    if (a == b)
        return;
    if (a != b + 1 && a + 1 != b)
        atomicAdd(other, 1u);
    unsigned k = atomicAdd(cnt, 1u);
    if (k < (1u << 22))
        out[k] = x | (a == b + 1 ? 0x80000000u : 0u);
}

int main(int argc, char **argv)
{
    uint32_t x0 = 0x3F800000u, n = 0x44800000u - 0x3F800000u;
    uint32_t *d;
    unsigned *c, hc[2];
    char path[4096];
    if (argc != 2)
        return 2;
    cudaMalloc(&d, 4u << 22);
    cudaMalloc(&c, 8);
    cudaMemset(c, 0, 8);
    diff<<<(n + 255) / 256, 256>>>(x0, n, d, c, c + 1);
    cudaMemcpy(hc, c, 8, cudaMemcpyDeviceToHost);
    unsigned m = hc[0] < (1u << 22) ? hc[0] : (1u << 22);
    std::vector<uint32_t> h(m);
    cudaMemcpy(h.data(), d, 4 * (size_t)m, cudaMemcpyDeviceToHost);
    snprintf(path, sizeof path, "%s/logf_diff.bin", argv[1]);
    FILE *f = fopen(path, "wb");
    fwrite(h.data(), 4, m, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/logf_count.txt", argv[1]);
    f = fopen(path, "w");
    fprintf(f, "differ %u other %u kept %u (%s)\n", hc[0], hc[1], m,
            cudaGetErrorString(cudaGetLastError()));
    fclose(f);
    printf("differ %u other %u kept %u\n", hc[0], hc[1], m);
    return 0;
}
