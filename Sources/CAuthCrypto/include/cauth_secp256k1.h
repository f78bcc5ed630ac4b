#ifndef CAUTH_SECP256K1_H
#define CAUTH_SECP256K1_H

/*
 * secp256k1 (SEC 2 v2 section 2.4.1) for Ethereum sign-in (secp256k1.c): ECDSA signing with a
 * caller-chosen nonce, verification, and public-key recovery (SEC 1 v2 section 4.1.6).
 *
 * Integers cross this interface as 32 big-endian bytes, points as affine x and y. Unlike
 * p256.c this code makes no constant-time claim: it verifies public signatures and signs for
 * the emulator's test wallets, whose keys are derived from public labels.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when 1 <= scalar < n, else 0. */
int cauth_secp256k1_scalar_is_valid(const uint8_t scalar[32]);

/* out = in mod n, for any 256-bit input. out may alias in. */
void cauth_secp256k1_scalar_reduce(uint8_t out[32], const uint8_t in[32]);

/* 0 when (x, y) is a point of the curve y^2 = x^3 + 7 with both coordinates below p, else -1. */
int cauth_secp256k1_check_point(const uint8_t x[32], const uint8_t y[32]);

/* (x, y) = (scalar mod n) G. Returns 0, or -1 (and zeros) for the point at infinity. */
int cauth_secp256k1_mul_base(uint8_t x[32], uint8_t y[32], const uint8_t scalar[32]);

/*
 * ECDSA signing (SEC 1 section 4.1.3) of a 32-byte digest with nonce k: writes r || s with s
 * in the lower half of [1, n - 1] (s replaced by n - s otherwise, as Ethereum requires since
 * EIP-2) and the recovery id (bit 0: parity of R's y, bit 1: R's x was at least n), adjusted
 * for that replacement. Returns 0, or -1 when d or k is not in [1, n - 1] or r or s is 0.
 */
int cauth_secp256k1_sign(uint8_t signature[64], int *recovery_id, const uint8_t private_key[32],
                         const uint8_t nonce[32], const uint8_t digest[32]);

/* ECDSA verification (SEC 1 section 4.1.4) of r || s over a 32-byte digest: 1 valid, else 0. */
int cauth_secp256k1_verify(const uint8_t signature[64], const uint8_t digest[32], const uint8_t qx[32],
                           const uint8_t qy[32]);

/*
 * Public-key recovery (SEC 1 section 4.1.6) from r || s, the recovery id (0 to 3) and the
 * 32-byte digest. Returns 0 with the key in (x, y), or -1 when no key results.
 */
int cauth_secp256k1_recover(uint8_t x[32], uint8_t y[32], const uint8_t signature[64], int recovery_id,
                            const uint8_t digest[32]);

#ifdef __cplusplus
}
#endif

#endif /* CAUTH_SECP256K1_H */
