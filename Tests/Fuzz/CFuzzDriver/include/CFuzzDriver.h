#ifndef C_FUZZ_DRIVER_H
#define C_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

// libFuzzer's documented entry point for programs that keep their own main
// (https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library). SwiftPM links an
// executable target's main under its own name, so the targets call this from their @main
// instead of relying on libFuzzer's main. Defined only when linked with -sanitize=fuzzer;
// referenced only under -DFUZZING.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
