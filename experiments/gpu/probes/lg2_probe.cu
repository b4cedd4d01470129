/* lg2_probe.cu -- derive the lg2-sm90 table model of lg2.approx.f32 and
 * lg2.approx.ftz.f32 from the hardware and check it on every FP32 input.
 *
 * Hypothesis: for a positive normal x = 2^E (1 + i 2^-23), the unit
 * reduces the significand to [0.75, 1.5) (e = E, or E + 1 for i >= 2^22)
 * and returns e + G(i) rounded toward zero to FP32, G(i) one real number
 * per mantissa.  Every output then confines G(i) to a half-open interval
 * (y - e, y + ulp - e] or [y - e, y + ulp - e); the intervals of all 254
 * exponents are intersected per mantissa on a 2^-62 grid, once with the
 * e = 0 output (the binade [0.75, 1.5)) and once without it.  The model
 * (attention/log.c, fa_lg2_table_eval) keeps the e = 0 outputs as the
 * base table and, where a base entry lies outside the e != 0 interval, a
 * correction: the point of that interval with the fewest fractional bits
 * (units 2^-54).
 *
 * Phase 2 compares the model, linked from attention/log.c, with the
 * hardware on all 2^32 inputs of both variants (the host's cores), and
 * counts the same without the corrections and, for subnormal inputs, the
 * normalising rule instead of the pre-scaling one.
 *
 * Writes OUTDIR/lg2-sm90.bin (the model file, to be gzip -9n'd; format
 * in analysis/lg2_table.h), OUTDIR/lg2_summary.json and
 * OUTDIR/lg2_samples.bin (records x, lg2, lg2.ftz; uint32 LE).
 *
 * Build (from the source tree, a config.h stub in DIR):
 *   gcc -std=c11 -O2 -IDIR -I. -Isoftfloat -c attention/log.c -o log.o
 *   nvcc -O2 -std=c++17 -arch=sm_90 -I. -Isoftfloat -o lg2_probe \
 *       experiments/gpu/probes/lg2_probe.cu log.o */

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <time.h>
#include <vector>

#include "attention/attention.h"

#define NM (1u << 23)
#define PROBE_NAME "lg2_probe"
#include "probe_cuda.h"

__device__ __forceinline__ float
hw(int ftz, float x)
{
    float y;
    if (ftz)
        asm volatile("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    else
        asm volatile("lg2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

struct ival
{
    long long lo, hi;
};

/* G's interval (2^-62 units, inclusive) from output Y at reduced
   exponent E; false when Y is not finite or out of range. */
__device__ bool
interval_of(uint32_t y, int e, ival *r)
{
    uint32_t fe = (y >> 23) & 0xFF;
    if (fe == 0xFF)
        return false;
    double yv = (double)__uint_as_float(y);
    double a = yv - (double)e; /* exact */
    if (!(a > -1.9 && a < 1.9))
        return false;
    long long A = __double2ll_rn(ldexp(a, 62));
    if ((y & 0x7FFFFFFF) == 0) {
        r->lo = r->hi = A;
        return true;
    }
    int ue = (fe ? (int)fe : 1) - 150 + 62;
    long long U = ue >= 0 ? (1ll << ue) : 1;
    if (y >> 31) {
        r->lo = A - U + 1;
        r->hi = A;
    } else {
        r->lo = A;
        r->hi = A + U - 1;
    }
    return true;
}

__global__ void
k_interval(int ftz, uint32_t *base, ival *all, ival *nz, int *bad)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= NM)
        return;
    ival ia = {-(1ll << 62), 1ll << 62}, in = ia;
    int nb = 0;
    for (int E = 1; E <= 254; E++) {
        uint32_t xb = ((uint32_t)E << 23) | i;
        uint32_t y = __float_as_uint(hw(ftz, __uint_as_float(xb)));
        int e = E - 127 + (i >= (1u << 22) ? 1 : 0);
        ival r;
        if (!interval_of(y, e, &r)) {
            nb++;
            continue;
        }
        ia.lo = max(ia.lo, r.lo);
        ia.hi = min(ia.hi, r.hi);
        if (e == 0) {
            base[i] = y;
        } else {
            in.lo = max(in.lo, r.lo);
            in.hi = min(in.hi, r.hi);
        }
    }
    all[i] = ia;
    nz[i] = in;
    bad[i] = nb;
}

__global__ void
k_eval(int ftz, uint64_t start, uint32_t n, uint32_t *out)
{
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    out[j] = __float_as_uint(hw(ftz, __uint_as_float((uint32_t)(start + j))));
}

__global__ void
k_list(int ftz, const uint32_t *x, uint32_t n, uint32_t *out)
{
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n)
        out[j] = __float_as_uint(hw(ftz, __uint_as_float(x[j])));
}

static uint64_t
fnv_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t k = 0; k < n; k++) {
        h ^= b[k];
        h *= 1099511628211ull;
    }
    return h;
}
#define FNV0 1469598103934665603ull

/* smallest k (fractional bits, 2^-62 grid) with a multiple of 2^-k in
   [lo, hi]; the multiple in *c.  -1 when the interval is empty. */
static int
min_bits(long long lo, long long hi, long long *c)
{
    if (lo > hi)
        return -1;
    for (int k = 0; k <= 62; k++) {
        long long s = 1ll << (62 - k);
        /* ceil(lo / s) * s */
        long long q = lo >= 0 ? (lo + s - 1) / s : -((-lo) / s);
        long long v = q * s;
        if (v <= hi) {
            *c = v;
            return k;
        }
    }
    return -1;
}

static long long
fixed62_of_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return (long long)ldexp((double)f, 62);
}

static void
put_varint(std::vector<unsigned char> &o, uint64_t v)
{
    while (v >= 0x80) {
        o.push_back((unsigned char)(v | 0x80));
        v >>= 7;
    }
    o.push_back((unsigned char)v);
}

static uint64_t
zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void
put_le(std::vector<unsigned char> &o, uint64_t v, int n)
{
    for (int k = 0; k < n; k++)
        o.push_back((unsigned char)(v >> (8 * k)));
}

static uint64_t
splitmix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct check
{
    std::atomic<unsigned long long> mism[4]; /* model, no corr, normalise
                                                (subnormals), special */
    std::atomic<unsigned long long> by_class[4]; /* model mism: normal,
                                                    subnormal, zero/neg,
                                                    inf/nan */
    std::mutex mu;
    std::vector<uint32_t> ex; /* x, hw, model */
};

static uint32_t
normalise_rule(const fa_lg2_table *t, uint32_t x)
{
    /* positive subnormal x = 1.f 2^(p - 149): RZ(e + G) directly */
    uint32_t m = x & 0x7FFFFF;
    int p = 31 - __builtin_clz(m);
    uint32_t i = (m << (23 - p)) & 0x7FFFFF;
    int e = p - 149 + (i >= (1u << 22) ? 1 : 0);
    return fa_lg2_table_core(t, e, i);
}

int
main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: lg2_probe OUTDIR\n");
        return 2;
    }
    char path[4096];
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    time_t t0 = time(NULL);

    uint32_t *dbase;
    ival *dall, *dnz;
    int *dbad;
    CK(cudaMalloc(&dbase, NM * 4));
    CK(cudaMalloc(&dall, NM * sizeof(ival)));
    CK(cudaMalloc(&dnz, NM * sizeof(ival)));
    CK(cudaMalloc(&dbad, NM * 4));
    std::vector<uint32_t> base[2];
    std::vector<ival> all[2], nz[2];
    std::vector<int> bad[2];
    for (int v = 0; v < 2; v++) {
        base[v].resize(NM);
        all[v].resize(NM);
        nz[v].resize(NM);
        bad[v].resize(NM);
        k_interval<<<NM / 256, 256>>>(v, dbase, dall, dnz, dbad);
        CK(cudaGetLastError());
        CK(cudaMemcpy(base[v].data(), dbase, NM * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(all[v].data(), dall, NM * sizeof(ival),
                      cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(nz[v].data(), dnz, NM * sizeof(ival),
                      cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(bad[v].data(), dbad, NM * 4, cudaMemcpyDeviceToHost));
    }
    bool same = base[0] == base[1];
    unsigned long long empty_all[2] = {0, 0}, empty_nz[2] = {0, 0},
                       nbad[2] = {0, 0}, ival_diff = 0;
    for (uint32_t i = 0; i < NM; i++) {
        for (int v = 0; v < 2; v++) {
            empty_all[v] += all[v][i].lo > all[v][i].hi;
            empty_nz[v] += nz[v][i].lo > nz[v][i].hi;
            nbad[v] += bad[v][i] != 0;
        }
        ival_diff += nz[0][i].lo != nz[1][i].lo || nz[0][i].hi != nz[1][i].hi;
    }
    printf("base tables equal: %d; intervals differing: %llu\n", same,
           ival_diff);
    for (int v = 0; v < 2; v++)
        printf("%s: empty with e=0: %llu, empty without: %llu, "
               "mantissas with non-finite outputs: %llu\n",
               v ? "ftz" : "f32", empty_all[v], empty_nz[v], nbad[v]);

    /* corrections from the .f32 intervals (nz intersected over both) */
    std::vector<uint32_t> ci;
    std::vector<int64_t> cg;
    unsigned long long hist_all[64] = {0}, hist_nz[64] = {0},
                       hist_corr[64] = {0};
    int worst_k = 0;
    for (uint32_t i = 0; i < NM; i++) {
        long long lo = std::max(nz[0][i].lo, nz[1][i].lo);
        long long hi = std::min(nz[0][i].hi, nz[1][i].hi);
        long long c, ca;
        int k = min_bits(lo, hi, &c);
        int ka = min_bits(all[0][i].lo, all[0][i].hi, &ca);
        if (ka >= 0)
            hist_all[ka]++;
        if (k < 0)
            continue;
        hist_nz[k]++;
        long long r = fixed62_of_f32(base[0][i]);
        if (r >= lo && r <= hi)
            continue;
        hist_corr[k]++;
        if (k > worst_k)
            worst_k = k;
        ci.push_back(i);
        cg.push_back((int64_t)(c >> (62 - FA_LG2_GBITS)));
        if (ci.size() <= 12)
            printf("corr i=%06x base=%08x G=[%lld, %lld] 2^-62 -> k=%d "
                   "g=%lld 2^-54\n",
                   i, base[0][i], lo, hi, k, (long long)cg.back());
    }
    printf("corrections: %zu, most fractional bits needed: %d\n",
           ci.size(), worst_k);

    /* the model file */
    uint64_t hb = fnv_bytes(FNV0, base[0].data(), (size_t)NM * 4);
    uint64_t hc = FNV0;
    for (size_t k = 0; k < ci.size(); k++) {
        uint32_t a = ci[k];
        int64_t g = cg[k];
        hc = fnv_bytes(hc, &a, 4);
        hc = fnv_bytes(hc, &g, 8);
    }
    std::vector<unsigned char> f;
    const char magic[8] = {'B', 'F', '1', '6', 'L', 'G', '2', 0};
    f.insert(f.end(), magic, magic + 8);
    put_le(f, 1, 4);
    put_le(f, FA_LG2_MBITS, 4);
    put_le(f, FA_LG2_GBITS, 4);
    put_le(f, ci.size(), 4);
    put_le(f, hb, 8);
    put_le(f, hc, 8);
    put_le(f, base[0][0], 4);
    int64_t pd = 0;
    for (uint32_t i = 1; i < NM; i++) {
        int64_t d = (int64_t)base[0][i] - (int64_t)base[0][i - 1];
        put_varint(f, zigzag(d - pd));
        pd = d;
    }
    uint32_t pi = 0;
    for (size_t k = 0; k < ci.size(); k++) {
        put_varint(f, ci[k] - pi);
        pi = ci[k];
        float bf;
        memcpy(&bf, &base[0][ci[k]], 4);
        int64_t r54 = (int64_t)ldexp((double)bf, FA_LG2_GBITS);
        put_varint(f, zigzag(cg[k] - r54));
    }
    snprintf(path, sizeof path, "%s/lg2-sm90.bin", argv[1]);
    FILE *fo = fopen(path, "wb");
    if (!fo || fwrite(f.data(), 1, f.size(), fo) != f.size()) {
        perror(path);
        return 1;
    }
    fclose(fo);

    /* phase 2: every input, both variants */
    fa_lg2_table tm = {base[0].data(), ci.size(), ci.data(), cg.data(),
                       false};
    fa_lg2_table t0m = {base[0].data(), 0, NULL, NULL, false};
    const char *why = fa_lg2_table_check(&tm);
    if (why) {
        fprintf(stderr, "lg2_probe: %s\n", why);
        return 1;
    }
    const uint32_t chunk = 1u << 28;
    uint32_t *dout, *hout;
    CK(cudaMalloc(&dout, (size_t)chunk * 4));
    CK(cudaMallocHost(&hout, (size_t)chunk * 4));
    unsigned nth = std::max(1u, std::thread::hardware_concurrency());
    check res[2];
    for (int v = 0; v < 2; v++) {
        for (auto &a : res[v].mism)
            a = 0;
        for (auto &a : res[v].by_class)
            a = 0;
        fa_lg2_table t = tm, tn = t0m;
        t.ftz = tn.ftz = v != 0;
        for (uint64_t s = 0; s < (1ull << 32); s += chunk) {
            k_eval<<<chunk / 256, 256>>>(v, s, chunk, dout);
            CK(cudaGetLastError());
            CK(cudaMemcpy(hout, dout, (size_t)chunk * 4,
                          cudaMemcpyDeviceToHost));
            std::vector<std::thread> th;
            for (unsigned w = 0; w < nth; w++)
                th.emplace_back([&, w]() {
                    unsigned long long mm[4] = {0}, bc[4] = {0};
                    uint32_t lo = (uint32_t)((uint64_t)chunk * w / nth);
                    uint32_t hi = (uint32_t)((uint64_t)chunk * (w + 1) / nth);
                    for (uint32_t j = lo; j < hi; j++) {
                        uint32_t x = (uint32_t)(s + j), y = hout[j];
                        uint32_t fe = (x >> 23) & 0xFF;
                        int cls = fe == 0xFF ? 3
                                  : ((x & 0x7FFFFFFF) == 0 || (x >> 31)) ? 2
                                  : fe == 0 ? 1 : 0;
                        uint32_t p = fa_lg2_table_eval(&t, x);
                        if (p != y) {
                            mm[0]++;
                            bc[cls]++;
                            std::lock_guard<std::mutex> g(res[v].mu);
                            if (res[v].ex.size() < 3 * 40) {
                                res[v].ex.push_back(x);
                                res[v].ex.push_back(y);
                                res[v].ex.push_back(p);
                            }
                        }
                        if (fa_lg2_table_eval(&tn, x) != y)
                            mm[1]++;
                        if (cls == 1 && v == 0 &&
                            normalise_rule(&t, x) != y)
                            mm[2]++;
                    }
                    for (int q = 0; q < 4; q++) {
                        res[v].mism[q] += mm[q];
                        res[v].by_class[q] += bc[q];
                    }
                });
            for (auto &x : th)
                x.join();
        }
        printf("%s: model mismatches %llu (normal %llu, subnormal %llu, "
               "zero/negative %llu, inf/nan %llu); without corrections "
               "%llu; normalising subnormals %llu\n",
               v ? "lg2.approx.ftz.f32" : "lg2.approx.f32",
               res[v].mism[0].load(), res[v].by_class[0].load(),
               res[v].by_class[1].load(), res[v].by_class[2].load(),
               res[v].by_class[3].load(), res[v].mism[1].load(),
               res[v].mism[2].load());
        for (size_t k = 0; k + 2 < res[v].ex.size() && k < 30; k += 3)
            printf("  x=%08x hw=%08x model=%08x\n", res[v].ex[k],
                   res[v].ex[k + 1], res[v].ex[k + 2]);
    }
    time_t t1 = time(NULL);

    /* samples */
    std::vector<uint32_t> xs;
    uint32_t specials[] = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000,
                           0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF,
                           0x3F800000, 0x06800000, 0x7F7FFFFF, 0x00800000,
                           0x00000001, 0x007FFFFF, 0x80000001, 0x807FFFFF,
                           0xBF800000, 0x3F400000, 0x3FC00000, 0x3FBFFFFF,
                           0x3F3FFFFF, 0x40000000, 0x3F7FFFFF, 0x3F800001};
    for (uint32_t x : specials)
        xs.push_back(x);
    uint64_t ctr = 0;
    for (size_t k = 0; k < ci.size() && k < 16384; k++) {
        /* corrected mantissas: a random exponent each, e = +-1 for some */
        uint64_t r = splitmix(ctr++);
        uint32_t E = 1 + (uint32_t)(r % 254);
        if (k % 4 == 0)
            E = (r >> 20) & 1 ? 128u : 126u;
        xs.push_back((E << 23) | ci[k]);
    }
    for (int k = 0; k < 4096; k++) /* subnormals */
        xs.push_back((uint32_t)(splitmix(ctr++) & 0x7FFFFF) | 1u);
    for (int k = 0; k < 8192; k++) /* any positive */
        xs.push_back((uint32_t)splitmix(ctr++) & 0x7FFFFFFF);
    for (int k = 0; k < 1024; k++) /* near 1 */
        xs.push_back(0x3F800000u - 512 + (uint32_t)k);
    uint32_t n = (uint32_t)xs.size(), *dx, *dy;
    CK(cudaMalloc(&dx, n * 4));
    CK(cudaMalloc(&dy, n * 4));
    CK(cudaMemcpy(dx, xs.data(), n * 4, cudaMemcpyHostToDevice));
    std::vector<uint32_t> rec(3 * (size_t)n), y(n);
    for (int v = 0; v < 2; v++) {
        k_list<<<(n + 255) / 256, 256>>>(v, dx, n, dy);
        CK(cudaGetLastError());
        CK(cudaMemcpy(y.data(), dy, n * 4, cudaMemcpyDeviceToHost));
        for (uint32_t j = 0; j < n; j++)
            rec[3 * j + 1 + v] = y[j];
    }
    for (uint32_t j = 0; j < n; j++)
        rec[3 * j] = xs[j];
    snprintf(path, sizeof path, "%s/lg2_samples.bin", argv[1]);
    fo = fopen(path, "wb");
    if (!fo || fwrite(rec.data(), 4, rec.size(), fo) != rec.size()) {
        perror(path);
        return 1;
    }
    fclose(fo);

    snprintf(path, sizeof path, "%s/lg2_summary.json", argv[1]);
    fo = fopen(path, "w");
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t0));
    fprintf(fo,
            "{\n \"gpu\": \"%s\", \"cc\": \"%d.%d\", \"driver_api\": %d, "
            "\"runtime\": %d, \"date\": \"%s\", \"seconds\": %ld,\n"
            " \"base_equal_f32_ftz\": %s, \"intervals_differing\": %llu,\n"
            " \"empty_with_e0\": [%llu, %llu], \"empty_without_e0\": "
            "[%llu, %llu],\n \"corrections\": %zu, \"worst_bits\": %d,\n"
            " \"base_fnv1a64\": \"%016llx\", \"corr_fnv1a64\": \"%016llx\","
            " \"file_bytes\": %zu,\n \"samples\": %u,\n",
            prop.name, prop.major, prop.minor, drv, rt, date,
            (long)(t1 - t0), same ? "true" : "false", ival_diff,
            empty_all[0], empty_all[1], empty_nz[0], empty_nz[1], ci.size(),
            worst_k, (unsigned long long)hb, (unsigned long long)hc,
            f.size(), n);
    const char *hn[3] = {"bits_hist_with_e0", "bits_hist_without_e0",
                         "bits_hist_corrections"};
    unsigned long long *hp[3] = {hist_all, hist_nz, hist_corr};
    for (int q = 0; q < 3; q++) {
        fprintf(fo, " \"%s\": {", hn[q]);
        int first = 1;
        for (int k = 0; k < 64; k++)
            if (hp[q][k]) {
                fprintf(fo, "%s\"%d\": %llu", first ? "" : ", ", k,
                        hp[q][k]);
                first = 0;
            }
        fprintf(fo, "},\n");
    }
    fprintf(fo, " \"variants\": [\n");
    for (int v = 0; v < 2; v++) {
        fprintf(fo,
                "  {\"instr\": \"%s\", \"model_mismatches_of_2^32\": %llu, "
                "\"normal\": %llu, \"subnormal\": %llu, "
                "\"zero_or_negative\": %llu, \"inf_nan\": %llu,\n"
                "   \"without_corrections\": %llu, "
                "\"normalising_subnormals\": %llu, \"examples\": [",
                v ? "lg2.approx.ftz.f32" : "lg2.approx.f32",
                res[v].mism[0].load(), res[v].by_class[0].load(),
                res[v].by_class[1].load(), res[v].by_class[2].load(),
                res[v].by_class[3].load(), res[v].mism[1].load(),
                v ? 0ull : res[v].mism[2].load());
        for (size_t k = 0; k + 2 < res[v].ex.size(); k += 3)
            fprintf(fo, "%s[\"%08x\",\"%08x\",\"%08x\"]", k ? "," : "",
                    res[v].ex[k], res[v].ex[k + 1], res[v].ex[k + 2]);
        fprintf(fo, "]}%s\n", v ? "" : ",");
    }
    fprintf(fo, " ]\n}\n");
    fclose(fo);
    printf("lg2_probe: %s, %ld s, file %zu bytes\n", prop.name,
           (long)(t1 - t0), f.size());
    return 0;
}
