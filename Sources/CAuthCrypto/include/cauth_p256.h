#ifndef CAUTH_P256_H
#define CAUTH_P256_H

/*
 * NIST P-256 (ECDSA) field and group arithmetic (p256.c).
 *
 * Every integer crosses this interface as 32 big-endian bytes (SEC 1 section 2.3.7), points
 * as their affine x and y. Functions taking a private key or a nonce run in constant time with
 * respect to them; the _vartime function must only see public values.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Results of cauth_p256_check_point. */
#define CAUTH_P256_POINT_VALID 0
/* x or y is not below p. */
#define CAUTH_P256_POINT_OUT_OF_RANGE 1
/* x = y = 0, the conventional fixed-length encoding of the point at infinity. */
#define CAUTH_P256_POINT_INFINITY 2
/* y^2 != x^3 - 3x + b (mod p). */
#define CAUTH_P256_POINT_NOT_ON_CURVE 3

/* 1 when 1 <= scalar < n, else 0 (constant time). */
int cauth_p256_scalar_is_valid(const uint8_t scalar[32]);

/* out = in mod n, for any 256-bit input (constant time). out may alias in. */
void cauth_p256_scalar_reduce(uint8_t out[32], const uint8_t in[32]);

/* Public-key validation (SEC 1 section 3.2.2.1; the cofactor is 1): one of the codes above. */
int cauth_p256_check_point(const uint8_t x[32], const uint8_t y[32]);

/*
 * (x, y) = (scalar mod n) G in constant time. Returns 0, or -1 (and zeros) when the result is
 * the point at infinity, that is when scalar is a multiple of n.
 */
int cauth_p256_mul_base(uint8_t x[32], uint8_t y[32], const uint8_t scalar[32]);

/*
 * (x, y) = (scalar mod n) P in constant time with respect to the scalar. Returns 0, -1 (and
 * zeros) for the point at infinity, or -2 when P fails cauth_p256_check_point.
 */
int cauth_p256_mul(uint8_t x[32], uint8_t y[32], const uint8_t scalar[32], const uint8_t px[32],
                   const uint8_t py[32]);

/*
 * (x, y) = (u1 mod n) G + (u2 mod n) Q in variable time (public inputs only). Returns as
 * cauth_p256_mul.
 */
int cauth_p256_mul_double_vartime(uint8_t x[32], uint8_t y[32], const uint8_t u1[32], const uint8_t u2[32],
                                  const uint8_t qx[32], const uint8_t qy[32]);

/*
 * ECDSA signing with a caller-chosen nonce (RFC 6979 lives in the caller): writes r || s.
 * Returns 0, or -1 when the private key or the nonce is not in [1, n - 1] or the nonce gives
 * r = 0 or s = 0 (the caller then derives the next nonce). The digest is the 32-byte hash.
 */
int cauth_p256_sign(uint8_t signature[64], const uint8_t private_key[32], const uint8_t nonce[32],
                    const uint8_t digest[32]);

/*
 * ECDSA verification of r || s over a 32-byte digest with public key (qx, qy). Returns 1 for a
 * valid signature, 0 otherwise (including r or s outside [1, n - 1] and an invalid key).
 */
int cauth_p256_verify(const uint8_t signature[64], const uint8_t digest[32], const uint8_t qx[32],
                      const uint8_t qy[32]);

#ifdef __cplusplus
}
#endif

#endif /* CAUTH_P256_H */
