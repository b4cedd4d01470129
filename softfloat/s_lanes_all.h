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

#define S_LANES_512 0
#define S_LANES_Q 0
#include "s_lanes.h"
#ifdef S_LANES_ARITH
#define S_LANES_512 0
#define S_LANES_Q 1
#include "s_lanes.h"
#endif

#define S_LANES_512 1
#define S_LANES_Q 0
#include "s_lanes.h"
#ifdef S_LANES_ARITH
#define S_LANES_512 1
#define S_LANES_Q 1
#include "s_lanes.h"
#endif

#endif
