/* bits_internal.h -- BF16 and FP32 bit patterns as binary64 values (both
   exact), for the analyzers that read tensors as raw bits, and the hex
   digits such patterns (and hex significands) are written in */
#ifndef BF16EMU_ANALYSIS_BITS_INTERNAL_H
#define BF16EMU_ANALYSIS_BITS_INTERNAL_H

#include <stdint.h>
#include <string.h>

/* The value of the FP32 bit pattern W. */
static inline double
bits_f32_value(uint32_t w)
{
    float f;

    memcpy(&f, &w, sizeof f);
    return (double)f;
}

/* The value of the BF16 bit pattern B. */
static inline double
bits_bf16_value(uint16_t b)
{
    return bits_f32_value((uint32_t)b << 16);
}

/* The value of the hex digit C ('0'-'9', 'a'-'f', 'A'-'F'), else -1. */
static inline int
bits_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
