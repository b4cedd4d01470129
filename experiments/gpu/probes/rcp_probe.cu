/* rcp_probe.cu -- the H200's rcp.approx.f32 (MUFU.RCP) against the
   correctly rounded reciprocal on every FP32 significand in [1, 2).

   usage: rcp_probe OUT.bin

   Writes 2^23 signed bytes: byte i is rcp.approx.f32(x) - rcp.rn.f32(x)
   in FP32 ulps for x = 1 + i 2^-23, and prints how many are not 0 and
   how many inputs have rcp.approx.ftz.f32 differ from rcp.approx.f32;
   rcp.approx is exponent-independent away from the subnormal and
   overflow ranges.
   Build: nvcc -O3 -arch=sm_90 rcp_probe.cu -o rcp_probe */
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define PROBE_NAME "rcp_probe"
#include "probe_cuda.h"

__global__ void
probe(signed char *out, unsigned long long *n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << 23))
        return;
    uint32_t xb = 0x3F800000u | i;
    float x = __uint_as_float(xb), a, f, r;
    asm("rcp.approx.f32 %0, %1;" : "=f"(a) : "f"(x));
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(f) : "f"(x));
    asm("rcp.rn.f32 %0, %1;" : "=f"(r) : "f"(x));
    int dlt = (int)__float_as_uint(a) - (int)__float_as_uint(r);
    out[i] = (signed char)(dlt < -127 ? -127 : dlt > 127 ? 127 : dlt);
    if (dlt != 0)
        atomicAdd(&n[0], 1ull);
    if (__float_as_uint(f) != __float_as_uint(a))
        atomicAdd(&n[1], 1ull);
}

int
main(int argc, char **argv)
{
    const size_t count = (size_t)1 << 23;
    signed char *d, *h;
    unsigned long long *dn, n[2] = {0, 0};
    FILE *fo;

    if (argc != 2) {
        fprintf(stderr, "usage: rcp_probe OUT.bin\n");
        return 2;
    }
    CK(cudaMalloc(&d, count));
    CK(cudaMalloc(&dn, sizeof n));
    CK(cudaMemset(dn, 0, sizeof n));
    probe<<<(unsigned)(count / 256), 256>>>(d, dn);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(n, dn, sizeof n, cudaMemcpyDeviceToHost));
    h = (signed char *)malloc(count);
    if (h == NULL)
        return 1;
    CK(cudaMemcpy(h, d, count, cudaMemcpyDeviceToHost));
    fo = fopen(argv[1], "wb");
    if (fo == NULL || fwrite(h, 1, count, fo) != count) {
        fprintf(stderr, "rcp_probe: %s: cannot write\n", argv[1]);
        return 1;
    }
    fclose(fo);
    printf("rcp_probe: %llu of 8388608 significands differ from rcp.rn, "
           "%llu ftz differ from approx\n", n[0], n[1]);
    return 0;
}
