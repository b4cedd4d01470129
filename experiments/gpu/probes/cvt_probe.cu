/* cvt_probe.cu -- every FP32 input through the GPU's narrowing conversions,
 * compared with the emulator.
 *
 * For each conversion below, all 2^32 FP32 bit patterns are converted on
 * the GPU in chunks of 2^24; the host converts the same chunk with
 * the emulator (sf_convert under the NVIDIA environment, plus the .relu
 * rule where the instruction has it) on every CPU core and compares bit
 * for bit.  Both sides' results are hashed per chunk, so that a CPU-only
 * test can recompute the emulator's hashes and compare them with the
 * hardware's: FNV-1a 64 over the results of each 2^20 inputs (in input
 * order, each result as little-endian bytes of the format's storage
 * width), then FNV-1a 64 over the chunk's 16 such hashes (each as 8
 * little-endian bytes).
 *
 * The x2 forms convert (a, b) = (x, -x) and both halves are checked
 * against the emulator, so the packing order is checked too (PTX puts a
 * in the upper half).  Examples list the input, the GPU's bits and the
 * emulator's bits (packed the same way for x2 forms).
 *
 * Usage: cvt_probe OUTDIR [CHUNKS [KEY,KEY,...]]
 * Writes OUTDIR/cvt_h200.json: device facts, per conversion the PTX, the
 * emulator rule, the mismatch count, up to 16 mismatches and the 256
 * per-chunk hashes of the hardware results.  CHUNKS (default 256) runs
 * only the first CHUNKS chunks (for a quick look); KEYS only the
 * conversions named.
 *
 * The conversions and the emulator's rules are in cvt_rules.c (shared with
 * the CPU-only fixture test); the kernel's cases follow that table's order.
 *
 * Build: nvcc -O2 -std=c++17 -arch=sm_90 -I. -Isoftfloat -o cvt_probe
 *        experiments/gpu/probes/cvt_probe.cu
 *        experiments/gpu/probes/cvt_rules.c .libs/libbf16emu.a */

#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <time.h>
#include <vector>

#include "cvt_rules.h"
#include "softfloat.h"

#define PROBE_NAME "cvt_probe"
#include "probe_cuda.h"

enum
{
    C_BF16_RN,
    C_BF16_RZ,
    C_BF16_RN_RELU,
    C_BF16X2_RN,
    C_F16_RN,
    C_F16_RZ,
    C_F16_RN_RELU,
    C_F16X2_RN,
    C_E4M3X2_RN_SAT,
    C_E5M2X2_RN_SAT,
    C_TF32_RNA,
    C_TF32_RN,
    C_TF32_RZ,
    C_N
};

#define CHUNK_BITS CVT_CHUNK_BITS
#define CHUNK (1u << CHUNK_BITS)
#define NCHUNK CVT_NCHUNK
#define NEX 16

/* Results: one uint32 per input (x2 forms: the packed 32 bits). */
__global__ void
k_cvt(int c, uint32_t base, uint32_t *out)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t xb = base + i;
    float x = __uint_as_float(xb);
    float x2 = __uint_as_float(xb ^ 0x80000000u);
    uint32_t r = 0;
    unsigned short h;
    switch (c) {
    case C_BF16_RN:
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
        r = h;
        break;
    case C_BF16_RZ:
        asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
        r = h;
        break;
    case C_BF16_RN_RELU:
        asm("cvt.rn.relu.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
        r = h;
        break;
    case C_BF16X2_RN:
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(x), "f"(x2));
        break;
    case C_F16_RN:
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
        r = h;
        break;
    case C_F16_RZ:
        asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
        r = h;
        break;
    case C_F16_RN_RELU:
        asm("cvt.rn.relu.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
        r = h;
        break;
    case C_F16X2_RN:
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(x), "f"(x2));
        break;
    case C_E4M3X2_RN_SAT:
        asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;"
            : "=h"(h)
            : "f"(x), "f"(x2));
        r = h;
        break;
    case C_E5M2X2_RN_SAT:
        asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;"
            : "=h"(h)
            : "f"(x), "f"(x2));
        r = h;
        break;
    case C_TF32_RNA:
        asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
        break;
    case C_TF32_RN:
        asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
        break;
    default:
        asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
        break;
    }
    out[i] = r;
}

struct mism
{
    uint32_t x, gpu, emu;
};

#define SUB_BITS CVT_PART_BITS
#define NSUB CVT_NPART

struct worker_out
{
    uint64_t n_mism;
    std::vector<mism> ex;
};


/* Compare sub-chunks LO..HI-1 of one chunk and hash both sides' results
   per sub-chunk (x2 forms: the half that holds x). */
static void
check_subs(const cvt_rule *cv, uint32_t base, const uint32_t *gpu, unsigned lo,
           unsigned hi, uint64_t *hh, uint64_t *he, worker_out *wo)
{
    unsigned w = cv->bytes * 8;
    uint32_t mask = w == 32 ? 0xFFFFFFFFu : ((1u << w) - 1);
    for (unsigned sub = lo; sub < hi; sub++) {
        uint64_t a = CVT_FNV_BASIS, b = CVT_FNV_BASIS;
        for (size_t i = (size_t)sub << SUB_BITS;
             i < ((size_t)sub + 1) << SUB_BITS; i++) {
            uint32_t xb = base + (uint32_t)i;
            uint32_t e = cvt_emulate(cv, xb);
            uint32_t g = gpu[i];
            uint32_t want = e, gx = g & mask;
            if (cv->pair) {
                /* a = x goes to the upper half, b = -x to the lower */
                want = (e << w) | cvt_emulate(cv, xb ^ 0x80000000u);
                gx = (g >> w) & mask;
            }
            if (g != want) {
                wo->n_mism++;
                if (wo->ex.size() < NEX)
                    wo->ex.push_back({xb, g, want});
            }
            a = cvt_fnv_feed(a, gx, cv->bytes);
            b = cvt_fnv_feed(b, e, cv->bytes);
        }
        hh[sub] = a;
        he[sub] = b;
    }
}

int
main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: cvt_probe OUTDIR [CHUNKS [KEY,...]]\n");
        return 2;
    }
    unsigned nchunk = argc >= 3 ? (unsigned)atoi(argv[2]) : NCHUNK;
    const char *keys = argc == 4 ? argv[3] : NULL;
    if (nchunk < 1 || nchunk > NCHUNK)
        nchunk = NCHUNK;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    unsigned nthr = std::thread::hardware_concurrency();
    if (nthr < 1)
        nthr = 1;

    uint32_t *dout;
    CK(cudaMalloc(&dout, (size_t)CHUNK * 4));
    std::vector<uint32_t> gpu(CHUNK);
    char path[4096];
    snprintf(path, sizeof path, "%s/cvt_h200.json", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    time_t t0 = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t0));
    fprintf(f,
            "{\n  \"gpu\": \"%s\", \"cc\": \"%d.%d\", \"driver\": %d, "
            "\"runtime\": %d, \"date\": \"%s\",\n  \"chunk_bits\": %d, "
            "\"chunks\": %u,\n  \"hash\": \"per chunk of 2^24 inputs: FNV-1a "
            "64 over the 16 FNV-1a 64 hashes (8 bytes LE each) of its 2^20-input "
            "parts, each over the results in input order as LE bytes of the "
            "storage width; x2 forms: the half holding x\",\n"
            "  \"conversions\": [\n",
            prop.name, prop.major, prop.minor, drv, rt, date, CHUNK_BITS,
            nchunk);
    bool first_conv = true;
    for (int c = 0; c < CVT_NRULES; c++) {
        const cvt_rule *cv = &cvt_rules[c];
        if (keys) {
            const char *p = strstr(keys, cv->key);
            size_t kl = strlen(cv->key);
            while (p && !((p == keys || p[-1] == ',') &&
                          (p[kl] == ',' || p[kl] == 0)))
                p = strstr(p + 1, cv->key);
            if (!p)
                continue;
        }
        uint64_t total = 0;
        std::vector<mism> ex;
        std::vector<uint64_t> hh(nchunk), he(nchunk);
        for (unsigned ch = 0; ch < nchunk; ch++) {
            uint32_t base = ch << CHUNK_BITS;
            k_cvt<<<CHUNK / 256, 256>>>(c, base, dout);
            CK(cudaGetLastError());
            CK(cudaMemcpy(gpu.data(), dout, (size_t)CHUNK * 4,
                          cudaMemcpyDeviceToHost));
            std::vector<worker_out> wo(nthr);
            std::vector<std::thread> th;
            uint64_t subh[NSUB], sube[NSUB];
            unsigned per = (NSUB + nthr - 1) / nthr;
            for (unsigned t = 0; t < nthr && t * per < NSUB; t++) {
                unsigned lo = t * per, hi = lo + per > NSUB ? NSUB : lo + per;
                th.emplace_back(check_subs, cv, base, gpu.data(), lo, hi, subh,
                                sube, &wo[t]);
            }
            for (auto &t : th)
                t.join();
            for (auto &w : wo) {
                total += w.n_mism;
                for (auto &m : w.ex)
                    if (ex.size() < NEX)
                        ex.push_back(m);
            }
            hh[ch] = cvt_combine(subh);
            he[ch] = cvt_combine(sube);
        }
        unsigned hash_diff = 0;
        for (unsigned ch = 0; ch < nchunk; ch++)
            hash_diff += hh[ch] != he[ch];
        printf("%-16s %-32s mismatches %llu, chunks whose hashes differ %u\n",
               cv->key, cv->ptx, (unsigned long long)total, hash_diff);
        fflush(stdout);
        fprintf(f, "%s", first_conv ? "" : ",\n");
        first_conv = false;
        fprintf(f,
                "    {\"key\": \"%s\", \"ptx\": \"%s\", \"format\": \"%s\", "
                "\"emulator\": \"%s\",\n     \"mismatches\": %llu, "
                "\"chunks_hash_differ\": %u,\n     \"examples\": [",
                cv->key, cv->ptx, cv->fmt->name, cv->rule,
                (unsigned long long)total, hash_diff);
        for (size_t j = 0; j < ex.size(); j++)
            fprintf(f, "%s[\"%08x\",\"%08x\",\"%08x\"]", j ? "," : "",
                    ex[j].x, ex[j].gpu, ex[j].emu);
        fprintf(f, "],\n     \"gpu_chunk_hashes\": [");
        for (unsigned ch = 0; ch < nchunk; ch++)
            fprintf(f, "%s\"%016llx\"", ch ? "," : "",
                    (unsigned long long)hh[ch]);
        fprintf(f, "]}");
    }
    fprintf(f, "\n  ],\n  \"seconds\": %ld\n}\n", (long)(time(NULL) - t0));
    fclose(f);
    return 0;
}
