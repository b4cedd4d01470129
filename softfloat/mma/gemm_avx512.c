/* gemm_avx512 -- the AVX-512 GEMM path for truncating fused models */
#include "softfloat/mma/mma_local.h"

bool
sf_mma_gemm_avx512_available(void)
{
    return false;
}

bool
s_mma_gemm_avx512(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                  const sf_format *fa, const void *a, const sf_format *fb,
                  const void *b, const uint32_t *c, uint32_t *d, sf_env *env)
{
    (void)m; (void)rows; (void)cols; (void)k; (void)fa; (void)a; (void)fb;
    (void)b; (void)c; (void)d; (void)env;
    return false;
}
