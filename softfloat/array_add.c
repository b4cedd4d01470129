/* sf_<fmt>_add_array -- a[i] + b[i] over arrays of BF16, FP16 and FP32
   (portable, AVX2 and AVX-512 paths; BF16 on AVX2 and AVX-512 by
   s_add16.h) */
#define S_LANES_ARITH S_ARR_ADD
#include "s_array.h"
#include "s_lanes_all.h"
#include "s_add16.h"

S_ARR_DEFINE_RUN()
S_ARR_DEFINE_BINARY(add, s_add16_run(a, b, out, n, false, rm, env))
