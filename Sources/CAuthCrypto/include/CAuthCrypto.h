#ifndef CAUTHCRYPTO_H
#define CAUTHCRYPTO_H

/*
 * Small C layer under AuthCrypto:
 *  - hardware SHA-256 (x86 SHA extensions, ARMv8 SHA2) behind runtime CPU detection, so the
 *    Swift module can keep a portable fallback and choose per process;
 *  - the OS's secure random source, so the Swift module imports no platform module;
 *  - one atomic counter primitive for the deterministic (test-only) random source.
 *
 * State words use FIPS 180-4 order: state[0] = H0 (a) ... state[7] = H7 (h), host-endian
 * uint32_t values.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the SHA-256 hardware path is compiled in and this CPU supports it, else 0. */
int cauth_sha256_hw_available(void);

/*
 * Runs the SHA-256 compression function over `nblocks` consecutive 64-byte blocks.
 * Only call when cauth_sha256_hw_available() returned 1.
 */
void cauth_sha256_hw_compress(uint32_t state[8], const uint8_t *blocks, size_t nblocks);

/*
 * The PBKDF2-HMAC-SHA256 inner loop (RFC 8018 section 5.2, F function), for one output block.
 *
 * `inner` / `outer` are the SHA-256 states after absorbing (key XOR ipad) / (key XOR opad).
 * On entry `u` holds U_1 and `t` holds the running XOR (normally also U_1); the function then
 * computes `rounds` further U_j = HMAC(P, U_{j-1}) and XORs each into `t`. Both are digest
 * words (big-endian digest bytes read as uint32_t values). Every HMAC is exactly two
 * compression calls on a fixed padded block: 64-byte key block + 32-byte message = 768 bits.
 * Only call when cauth_sha256_hw_available() returned 1.
 */
void cauth_pbkdf2_sha256_hw(const uint32_t inner[8], const uint32_t outer[8],
                            uint32_t u[8], uint32_t t[8], uint64_t rounds);

/*
 * Fills `buffer` with `length` bytes from the operating system's CSPRNG
 * (getrandom(2) on Linux, arc4random_buf(3) on Apple platforms).
 * Returns 0 on success, -1 if the OS source failed.
 */
int cauth_random_fill(void *buffer, size_t length);

/* Atomically adds `delta` to `*counter` and returns the previous value (sequentially consistent). */
uint64_t cauth_atomic_fetch_add_u64(uint64_t *counter, uint64_t delta);

#ifdef __cplusplus
}
#endif

#endif /* CAUTHCRYPTO_H */
