/* s_lanes_all.h -- s_lanes.h for AVX2 (8 lanes; 4 for FP32 arithmetic)
   and AVX-512 (16 lanes; 8 for FP32 arithmetic);
   the includer defines S_LANES_ARITH (an S_ARR_ operation) or
   S_LANES_CONVERT first, and includes s_array.h.  Not guarded: included
   once per file. */
#if S_ARRAY_VEC

/* Every function of s_lanes.h that passes a vector by value is inlined,
   so no vector crosses a call: the ABI warning for the 64-byte vectors
   of the AVX2 copy does not apply (the warning comes at the end of the
   file, so it stays off for the rest of the including file). */
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define S_LANES_Q 0
#define LN 8
#define L(x) x##_avx2
#define S_LANES_512 0
#define LT __attribute__((target("avx2,fma,f16c,bmi2")))
#include "s_lanes.h"
#undef LN
#undef L
#undef S_LANES_512
#undef LT
#undef S_LANES_Q

#ifdef S_LANES_ARITH
#define S_LANES_Q 1
#define LN 4
#define L(x) x##_avx2q
#define S_LANES_512 0
#define LT __attribute__((target("avx2,fma,f16c,bmi2")))
#include "s_lanes.h"
#undef LN
#undef L
#undef S_LANES_512
#undef LT
#undef S_LANES_Q
#endif

#define S_LANES_512 1
#define LT                                                                    \
    __attribute__((target("avx2,fma,f16c,bmi2,avx512f,avx512bw,avx512cd,"    \
                          "avx512vl,avx512dq")))
#define S_LANES_Q 0
#define LN 16
#define L(x) x##_avx512
#include "s_lanes.h"
#undef LN
#undef L
#undef S_LANES_Q

#ifdef S_LANES_ARITH
#define S_LANES_Q 1
#define LN 8
#define L(x) x##_avx512q
#include "s_lanes.h"
#undef LN
#undef L
#undef S_LANES_Q
#endif
#undef S_LANES_512
#undef LT

#endif
