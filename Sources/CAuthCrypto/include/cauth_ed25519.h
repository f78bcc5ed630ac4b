#ifndef CAUTH_ED25519_H
#define CAUTH_ED25519_H

/*
 * Ed25519 (RFC 8032) field and group arithmetic (ed25519.c).
 *
 * The caller does the hashing (AuthCrypto's SHA512) and passes digests in; this core does
 * everything modulo p = 2^255 - 19 and modulo the group order
 * L = 2^252 + 27742317777372353535851937790883648493. Scalars and encodings are 32-byte
 * little-endian strings, digests 64-byte little-endian integers (RFC 8032 sections 5.1.2, 5.1.5).
 *
 * Functions that touch secrets (cauth_ed25519_scalar_reduce, cauth_ed25519_scalar_muladd,
 * cauth_ed25519_base_mul) run in time independent of their inputs' values: no branches and no
 * memory indices depend on them. Decoding and verification work on public data and may take
 * data-dependent time.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A decoded curve point in extended twisted Edwards coordinates (x = X/Z, y = Y/Z, xy = T/Z),
 * each coordinate five 51-bit limbs, least significant first. Only produced by
 * cauth_ed25519_point_decode; treat it as opaque.
 */
typedef struct {
    uint64_t x[5];
    uint64_t y[5];
    uint64_t z[5];
    uint64_t t[5];
} cauth_ed25519_point;

/* out = in mod L, for a 64-byte little-endian `in` (a SHA-512 digest, RFC 8032 5.1.6 steps 2, 4). */
void cauth_ed25519_scalar_reduce(uint8_t out[32], const uint8_t in[64]);

/*
 * out = (r + k * s) mod L (RFC 8032 5.1.6 step 5). k must be below 2^253 (a reduced scalar);
 * s and r may be any 256-bit values.
 */
void cauth_ed25519_scalar_muladd(uint8_t out[32], const uint8_t k[32], const uint8_t s[32], const uint8_t r[32]);

/* 1 when the 32-byte little-endian `s` is below L (RFC 8032 5.1.7 step 1), else 0. */
int cauth_ed25519_scalar_is_canonical(const uint8_t s[32]);

/*
 * out = the encoding (RFC 8032 5.1.2) of [scalar]B for the base point B. The scalar's top bit
 * must be clear (true for clamped secret scalars and for reduced ones).
 */
void cauth_ed25519_base_mul(uint8_t out[32], const uint8_t scalar[32]);

/*
 * Decodes a 32-byte point encoding (RFC 8032 5.1.3). Rejects y >= p, y values with no
 * matching x on the curve, and x = 0 with the sign bit set. Returns 0 on success, -1 otherwise.
 */
int cauth_ed25519_point_decode(cauth_ed25519_point *out, const uint8_t in[32]);

/*
 * The verification equation of RFC 8032 5.1.7 without the cofactor: with S the second half of
 * `signature` and k = `k_digest` mod L (the caller's SHA-512(R || A || M)), checks S < L and
 * that the encoding of [S]B - [k]A equals R, the first half of `signature` byte for byte. A
 * non-canonical or undecodable R therefore never matches. `public_key` is the decoded A.
 * Returns 1 for a valid signature, 0 otherwise.
 */
int cauth_ed25519_verify(const uint8_t signature[64], const uint8_t k_digest[64],
                         const cauth_ed25519_point *public_key);

#ifdef __cplusplus
}
#endif

#endif /* CAUTH_ED25519_H */
