/* cuda_math_probe.cu -- CUDA's accurate expf, logf and exp2f against
   candidate instruction sequences built on the hardware's ex2.approx and
   FP32 FMA, over every FP32 input; strided samples of expf and logf.

   usage: cuda_math_probe OUTDIR
   writes OUTDIR/funcs.json (mismatch counts, the first mismatches as hex),
   OUTDIR/expf_sample.bin (x, expf(x) as uint32 pairs, x every 512th FP32
   from -0 down to -110), OUTDIR/logf_sample.bin (x, logf(x), x every 64th
   FP32 in [1, 8192) and every 4096th positive FP32). */
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#define PROBE_NAME "cuda_math_probe"
#include "probe_cuda.h"

__device__ __forceinline__ float ex2_ftz(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
__device__ __forceinline__ float ex2_noftz(float x)
{
    float y;
    asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* candidate: FFMA.SAT, FFMA.RM, FADD, 2 FFMA, MUFU.EX2, shift, FMUL */
__device__ __forceinline__ float cand_expf(float x, bool ftz)
{
    float j = __saturatef(__fmaf_rn(x, 0.0057249800302088260651f, 0.5f));
    float r0 = __fmaf_rd(j, 252.0f, 12582913.0f);
    float n = __fadd_rn(r0, -12583039.0f);
    float f = __fmaf_rn(x, 1.4426950216293334961f, -n);
    f = __fmaf_rn(x, 1.925963033500011079e-08f, f);
    float s = __int_as_float(__float_as_int(r0) << 23);
    float e = ftz ? ex2_ftz(f) : ex2_noftz(f);
    return __fmul_rn(s, e);
}

/* candidate logf: the classic accurate sequence */
__device__ __forceinline__ float cand_logf(float a)
{
    float m, r, s, t, i, f;
    int e;
    i = 0.0f;
    if (a < 1.175494351e-38f) {
        a = __fmul_rn(a, 8388608.0f);
        i = -23.0f;
    }
    e = (__float_as_int(a) - __float_as_int(0.666666667f)) & 0xff800000;
    m = __int_as_float(__float_as_int(a) - e);
    i = __fmaf_rn((float)e, 1.19209290e-7f, i);
    f = __fadd_rn(m, -1.0f);
    s = __fmul_rn(f, f);
    r = __fmaf_rn(-0.130187988f, f, 0.140889585f);
    t = __fmaf_rn(-0.121489584f, f, 0.139809534f);
    r = __fmaf_rn(r, s, t);
    r = __fmaf_rn(r, f, -0.166845024f);
    r = __fmaf_rn(r, f, 0.200121149f);
    r = __fmaf_rn(r, f, -0.249996364f);
    r = __fmaf_rn(r, f, 0.333331943f);
    r = __fmaf_rn(r, f, -0.5f);
    r = __fmul_rn(r, s);
    r = __fmaf_rn(r, f, f);
    r = __fmaf_rn(i, 0.693147182f, r);
    if (!((a > 0.0f) && (a < __int_as_float(0x7f800000)))) {
        r = a + a;
        if (a < 0.0f)
            r = __int_as_float(0x7fffffff);
        if (a == 0.0f)
            r = __int_as_float(0xff800000);
    }
    return r;
}

#define NF 8
#define NREC 32
struct Res {
    unsigned long long count[NF];
    unsigned int nrec[NF];
    unsigned int rec[NF][NREC][3];
};

__device__ void note(Res *r, int f, uint32_t x, float a, float b)
{
    uint32_t ua = __float_as_uint(a), ub = __float_as_uint(b);
    bool na = (ua & 0x7fffffff) > 0x7f800000, nb = (ub & 0x7fffffff) > 0x7f800000;
    if (ua == ub || (na && nb))
        return;
    atomicAdd(&r->count[f], 1ull);
    unsigned k = atomicAdd(&r->nrec[f], 1u);
    if (k < NREC) {
        r->rec[f][k][0] = x;
        r->rec[f][k][1] = ua;
        r->rec[f][k][2] = ub;
    }
}

__global__ void sweep(uint64_t base, Res *r)
{
    uint64_t idx = base + blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint32_t x = (uint32_t)idx;
    float v = __uint_as_float(x);
    float ef = expf(v);
    note(r, 0, x, ef, cand_expf(v, true));
    note(r, 1, x, ef, cand_expf(v, false));
    float e2 = exp2f(v);
    note(r, 2, x, e2, ex2_noftz(v));
    note(r, 3, x, e2, ex2_ftz(v));
    float lf = logf(v);
    note(r, 4, x, lf, cand_logf(v));
    note(r, 5, x, lf, (float)log((double)v));
    note(r, 6, x, ef, (float)exp((double)v));
    note(r, 7, x, __logf(v), lf);
}

/* one function each, for reading the machine code */
__global__ void only_expf(float *p) { p[threadIdx.x] = expf(p[threadIdx.x]); }
__global__ void only_logf(float *p) { p[threadIdx.x] = logf(p[threadIdx.x]); }
__global__ void only_exp2f(float *p) { p[threadIdx.x] = exp2f(p[threadIdx.x]); }
__global__ void only_div(float *p) { p[threadIdx.x] = p[threadIdx.x] / p[threadIdx.x + 32]; }

__global__ void sample_exp(uint32_t *out, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t x = 0x80000000u + i * 512u;
    out[2 * i] = x;
    out[2 * i + 1] = __float_as_uint(expf(__uint_as_float(x)));
}

__global__ void sample_log(uint32_t *out, uint32_t n, uint32_t x0, uint32_t step)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t x = x0 + i * step;
    out[2 * i] = x;
    out[2 * i + 1] = __float_as_uint(logf(__uint_as_float(x)));
}

int main(int argc, char **argv)
{
    const char *names[NF] = {"expf vs cand(ex2.ftz)", "expf vs cand(ex2)",
                             "exp2f vs ex2.approx", "exp2f vs ex2.approx.ftz",
                             "logf vs cand", "logf vs RN(log double)",
                             "expf vs RN(exp double)", "__logf vs logf"};
    char path[4096];
    Res *d, h;
    if (argc != 2)
        return 2;
    CK(cudaMalloc(&d, sizeof(Res)));
    CK(cudaMemset(d, 0, sizeof(Res)));
    for (uint64_t b = 0; b < (1ull << 32); b += (1ull << 30))
        sweep<<<(1u << 30) / 256, 256>>>(b, d);
    CK(cudaGetLastError());
    CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    snprintf(path, sizeof path, "%s/funcs.json", argv[1]);
    FILE *f = fopen(path, "w");
    fprintf(f, "{\n");
    for (int i = 0; i < NF; i++) {
        fprintf(f, " \"%s\": {\"mismatches\": %llu, \"first\": [", names[i],
                h.count[i]);
        for (unsigned k = 0; k < h.nrec[i] && k < NREC; k++)
            fprintf(f, "%s[\"%08x\",\"%08x\",\"%08x\"]", k ? "," : "",
                    h.rec[i][k][0], h.rec[i][k][1], h.rec[i][k][2]);
        fprintf(f, "]}%s\n", i + 1 < NF ? "," : "");
        printf("%-28s %llu\n", names[i], h.count[i]);
    }
    fprintf(f, "}\n");
    fclose(f);

    /* samples */
    {
        uint32_t n = (0x42DC0000u) / 512u; /* down to -110 */
        uint32_t *dd;
        std::vector<uint32_t> hh(2 * (size_t)n);
        CK(cudaMalloc(&dd, 8 * (size_t)n));
        sample_exp<<<(n + 255) / 256, 256>>>(dd, n);
        CK(cudaMemcpy(hh.data(), dd, 8 * (size_t)n, cudaMemcpyDeviceToHost));
        snprintf(path, sizeof path, "%s/expf_sample.bin", argv[1]);
        f = fopen(path, "wb");
        fwrite(hh.data(), 4, hh.size(), f);
        fclose(f);
        CK(cudaFree(dd));
    }
    {
        uint32_t n1 = (0x46000000u - 0x3F800000u) / 64u;
        uint32_t n2 = 0x7F800000u / 4096u;
        uint32_t *dd;
        std::vector<uint32_t> hh(2 * (size_t)(n1 + n2));
        CK(cudaMalloc(&dd, 8 * (size_t)(n1 + n2)));
        sample_log<<<(n1 + 255) / 256, 256>>>(dd, n1, 0x3F800000u, 64u);
        sample_log<<<(n2 + 255) / 256, 256>>>(dd + 2 * (size_t)n1, n2, 1u, 4096u);
        CK(cudaMemcpy(hh.data(), dd, 8 * (size_t)(n1 + n2), cudaMemcpyDeviceToHost));
        snprintf(path, sizeof path, "%s/logf_sample.bin", argv[1]);
        f = fopen(path, "wb");
        fwrite(hh.data(), 4, hh.size(), f);
        fclose(f);
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
