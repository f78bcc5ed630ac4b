#ifndef CAUTH_BIGNUM_INTERNAL_H
#define CAUTH_BIGNUM_INTERNAL_H

/*
 * Shared by bignum.c and bignum_ifma.c; not part of the module's interface.
 *
 * bignum_ifma.c runs the two half-size exponentiations of an RSA-CRT private-key operation
 * side by side with AVX-512 IFMA. bignum.c owns the key, the portable arithmetic and every
 * step around the exponentiations (reduction of the input, recombination, fault check).
 */

#include <stddef.h>
#include <stdint.h>

/* Fixed windows of this many bits for secret exponents: 2^5 table entries against one
   multiplication per five squarings (HAC 14.82 with k = 5; for 1024-bit exponents, 4, 5 and
   6 bits cost 1295, 1261 and 1260 products, and the table scan grows with 2^k). */
#define CAUTH_WINDOW_BITS 5
#define CAUTH_WINDOW_SIZE (1u << CAUTH_WINDOW_BITS)

/* Bits [bit, bit + CAUTH_WINDOW_BITS) of the exponent (elen limbs, zero above). The position
   is public; only the value read is secret. */
static inline uint64_t cauth_window_at(const uint64_t *exp, size_t elen, size_t bit) {
    const size_t limb = bit / 64, shift = bit % 64;
    uint64_t w = limb < elen ? exp[limb] >> shift : 0;
    if (shift > 64 - CAUTH_WINDOW_BITS && limb + 1 < elen) w |= exp[limb + 1] << (64 - shift);
    return w & (CAUTH_WINDOW_SIZE - 1);
}

/* All ones when a == b, else zero, without a comparison branch. */
static inline uint64_t cauth_equal_mask(uint64_t a, uint64_t b) {
    const uint64_t diff = a ^ b;
    return ((diff | ((uint64_t)0 - diff)) >> 63) - 1;
}

/* Largest number of 256-bit vectors (4 digits of 52 bits each) per number on the IFMA path:
   10 covers the 2048-bit primes of RSA-4096 and keeps two accumulators in registers. */
#define CAUTH_IFMA_MAX_VECTORS 10

/* The two primes of a key in the IFMA representation: k = 4 nv digits of 52 bits, least
   significant first, R = 2^(52 k). Arrays point into storage owned by the key. */
typedef struct {
    size_t nv;
    const uint64_t *p64, *q64; /* the primes as 64-bit limbs (pl and ql of them) */
    size_t pl, ql;
    uint64_t *p, *q;          /* the primes as digits */
    uint64_t *rr_p, *rr_q;    /* R^2 mod p, R^2 mod q as digits */
    uint64_t *one_p, *one_q;  /* R mod p, R mod q as digits: 1 in Montgomery form */
    uint64_t k0_p, k0_q;      /* -p^-1, -q^-1 mod 2^52 */
} cauth_ifma_crt;

/* 1 when this CPU and OS run AVX-512F, AVX-512VL and AVX-512 IFMA, else 0 (always 0 when the
   compiler does not target x86-64). Executes CPUID: call it once per key, not per operation. */
int cauth_ifma_usable(void);

/* Vectors per number for primes of up to `bits` bits (the representation needs
   bits <= 52 k - 2), or 0 when above CAUTH_IFMA_MAX_VECTORS. */
size_t cauth_ifma_vectors(size_t bits);

/* Limbs of storage cauth_ifma_crt_setup needs, and of scratch cauth_ifma_crt_pow needs. */
size_t cauth_ifma_storage_limbs(size_t nv);
size_t cauth_ifma_scratch_limbs(size_t nv);

/*
 * Prepares `c` for the primes p (pl limbs) and q (ql limbs), both odd and below 2^(52 k - 2)
 * with k = 4 nv; rr_p = 2^(104 k) mod p and rr_q = 2^(104 k) mod q as pl and ql limbs. The
 * primes must stay in place while `c` is used. Only call when cauth_ifma_usable() said 1.
 */
void cauth_ifma_crt_setup(cauth_ifma_crt *c, size_t nv, uint64_t *storage, const uint64_t *p, size_t pl,
                          const uint64_t *q, size_t ql, const uint64_t *rr_p, const uint64_t *rr_q);

/*
 * s1 = x1^dp mod p and s2 = x2^dq mod q, fully reduced, for x1 < p and x2 < q (pl and ql
 * limbs) and exponents of elen limbs each, with the fixed-window schedule of the portable
 * path run for both primes in lockstep. `scratch` holds cauth_ifma_scratch_limbs(nv) limbs.
 */
void cauth_ifma_crt_pow(const cauth_ifma_crt *c, uint64_t *s1, uint64_t *s2, const uint64_t *x1, const uint64_t *x2,
                        const uint64_t *dp, const uint64_t *dq, size_t elen, uint64_t *scratch);

#endif /* CAUTH_BIGNUM_INTERNAL_H */
