/* probe_cuda.h -- the probes' check of a CUDA runtime call.  The includer
   defines PROBE_NAME (the program's name) first; CK(call) runs CALL and,
   when it fails, prints the program, the call and CUDA's message on
   stderr and exits with status 1. */
#ifndef BF16EMU_PROBE_CUDA_H
#define BF16EMU_PROBE_CUDA_H

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CK(call)                                                              \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) {                                              \
            fprintf(stderr, "%s: %s: %s\n", PROBE_NAME, #call,                \
                    cudaGetErrorString(e_));                                  \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#endif
