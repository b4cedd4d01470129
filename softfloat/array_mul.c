/* sf_<fmt>_mul_array -- a[i] * b[i] over arrays of BF16, FP16 and FP32
   (portable, AVX2 and AVX-512 paths) */
#define S_LANES_ARITH S_ARR_MUL
#include "s_array.h"
#include "s_lanes_all.h"

S_ARR_DEFINE_RUN()
S_ARR_DEFINE_BINARY(mul, false)
