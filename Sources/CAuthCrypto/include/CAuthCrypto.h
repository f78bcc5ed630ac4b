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

/* The 64 SHA-256 round constants (FIPS 180-4 section 4.2.2), for the portable Swift path too. */
const uint32_t *cauth_sha256_round_constants(void);

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
 * Two independent runs of cauth_pbkdf2_sha256_hw (chain a and chain b, `rounds` each), with
 * the same results as two calls. Each chain is strictly serial (every compression needs the
 * previous one's output), so one chain leaves the SHA unit waiting on instruction latency;
 * interleaving a second chain fills those slots: on x86-64 two hashes cost ~0.62x of two
 * single runs (bench/results/HISTORY.md). Used to hash many passwords at once (fixtures).
 * Only call when cauth_sha256_hw_available() returned 1.
 */
void cauth_pbkdf2_sha256_hw_x2(const uint32_t inner_a[8], const uint32_t outer_a[8],
                               uint32_t u_a[8], uint32_t t_a[8],
                               const uint32_t inner_b[8], const uint32_t outer_b[8],
                               uint32_t u_b[8], uint32_t t_b[8], uint64_t rounds);

/*
 * Fills `buffer` with `length` bytes from the operating system's CSPRNG
 * (getrandom(2) on Linux, arc4random_buf(3) on Apple platforms).
 * Returns 0 on success, -1 if the OS source failed.
 */
int cauth_random_fill(void *buffer, size_t length);

/*
 * Zeroed memory for the memory-hard password hashes (Argon2, scrypt), whose size a stored
 * hash chooses: NULL when the allocator refuses, where Swift's own allocation would trap.
 * Release with cauth_free.
 */
void *cauth_calloc(size_t count, size_t size);
void cauth_free(void *pointer);

/* Atomically adds `delta` to `*counter` and returns the previous value (sequentially consistent). */
uint64_t cauth_atomic_fetch_add_u64(uint64_t *counter, uint64_t delta);

/* ------------------------------------------------------------------------------------------
 * Multi-precision arithmetic for RSA (bignum.c).
 *
 * Numbers are arrays of uint64_t limbs, least significant limb first. Functions returning int
 * give 0 on success and -1 on invalid input or allocation failure, unless stated otherwise.
 * ---------------------------------------------------------------------------------------- */

/*
 * result = base^exponent mod modulus, all `limbs` wide except the exponent. The modulus must
 * be odd, above 1, with a non-zero top limb, and at most 1024 limbs; base may be any value
 * below 2^(64 * limbs).
 * With `exponent_is_secret` non-zero the work depends only on exponent_limbs (fixed window,
 * masked table reads); otherwise it skips leading zero bits (for public exponents).
 */
int cauth_bn_modexp(uint64_t *result, const uint64_t *base, const uint64_t *exponent, size_t exponent_limbs,
                    const uint64_t *modulus, size_t limbs, int exponent_is_secret);

/* result (a_limbs + b_limbs wide) = a * b. */
void cauth_bn_mul(uint64_t *result, const uint64_t *a, size_t a_limbs, const uint64_t *b, size_t b_limbs);

/* quotient (a_limbs wide, may be NULL) and remainder (d_limbs wide) of a / d; d non-zero. */
int cauth_bn_divmod(uint64_t *quotient, uint64_t *remainder, const uint64_t *a, size_t a_limbs,
                    const uint64_t *d, size_t d_limbs);

/* result = gcd(a, b), all `limbs` wide (gcd(0, b) = b). */
int cauth_bn_gcd(uint64_t *result, const uint64_t *a, const uint64_t *b, size_t limbs);

/* a mod m for a non-zero 32-bit m. */
uint32_t cauth_bn_mod_u32(const uint64_t *a, size_t limbs, uint32_t m);

/* 1 when an odd prime below 2048 divides a (a itself being such a prime counts too), else 0. */
int cauth_bn_has_small_prime_factor(const uint64_t *a, size_t limbs);

/*
 * Miller-Rabin (FIPS 186-5 appendix B.3.1) on the odd w > 3 with `rounds` bases taken from
 * `bases` (rounds * limbs random limbs; each is cut below the bit length of w and lifted to 2
 * if smaller, so 2 <= b <= w - 2). Returns 1 probably prime, 0 composite, -1 on error.
 */
int cauth_bn_miller_rabin(const uint64_t *w, size_t limbs, const uint64_t *bases, size_t rounds);

/*
 * RSA private-key operations with the Chinese remainder theorem (RFC 8017 section 5.1.2,
 * step 2.b) on a key prepared once: Montgomery constants for n, p and q and, on x86-64 CPUs
 * with AVX-512 IFMA, a vector form of p and q. cauth_rsa_private only reads a prepared key,
 * so threads may share one.
 */
typedef struct cauth_rsa_key cauth_rsa_key;

/*
 * Copies n (n_limbs), e (e_limbs), p (p_limbs), q (q_limbs), dp = d mod (p - 1) and
 * qinv = q^-1 mod p (p_limbs each, zero-padded), dq = d mod (q - 1) (q_limbs), and
 * precomputes. n, p and q must be odd with a non-zero top limb, and p q = n; the caller has
 * checked that the values belong together. Returns NULL for unusable sizes or when out of
 * memory. Release with cauth_rsa_key_free, which also wipes the copies.
 */
cauth_rsa_key *cauth_rsa_key_new(const uint64_t *n, size_t n_limbs, const uint64_t *e, size_t e_limbs,
                                 const uint64_t *p, size_t p_limbs, const uint64_t *q, size_t q_limbs,
                                 const uint64_t *dp, const uint64_t *dq, const uint64_t *qinv);

void cauth_rsa_key_free(cauth_rsa_key *key);

/* Flag for cauth_rsa_private: use the portable path even where the vector one is prepared. */
#define CAUTH_RSA_PORTABLE 1

/*
 * out = in^d mod n for in < n (both n_limbs wide), computed modulo p and q and recombined,
 * then checked with the public exponent: out^e mod n must equal in (a fault in one half
 * would otherwise leak a prime). Time and memory accesses do not depend on d, p, q or the
 * result, only on their sizes. `flags` is 0 or CAUTH_RSA_PORTABLE. Returns 0 on success, 1
 * when the check failed (out is then zeroed), -1 when in >= n or out of memory.
 */
int cauth_rsa_private(const cauth_rsa_key *key, uint64_t *out, const uint64_t *in, int flags);

#ifdef __cplusplus
}
#endif

/* Elliptic-curve cores, one header each. */
#include "cauth_p256.h"
#include "cauth_ed25519.h"
#include "cauth_secp256k1.h"

#endif /* CAUTHCRYPTO_H */
