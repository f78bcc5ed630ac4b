/*
 * Ed25519 (RFC 8032 section 5.1): arithmetic modulo p = 2^255 - 19 and modulo the group order
 * L, point encoding and decoding, constant-time fixed-base scalar multiplication for signing
 * and a variable-time double-scalar multiplication for verification.
 *
 * Field elements are five 51-bit limbs (value = sum of v[i] * 2^(51 i)); products are
 * accumulated in `unsigned __int128`. Limbs are allowed to grow a little past 51 bits between
 * reductions. The bounds every function keeps:
 *   - "tight": each limb below 2^52. fe_mul, fe_sq, fe_sub and fe_carry return tight values.
 *   - fe_add of two tight values gives limbs below 2^53; fe_add of such a sum and a tight value
 *     stays below 2^54.
 *   - fe_mul and fe_sq accept limbs below 2^54 (then 19 * limb < 2^59 and every 128-bit
 *     accumulator stays below 2^116); fe_sub accepts a subtrahend with limbs below 2^53.
 * Only fe_tobytes produces the unique representative in [0, p).
 *
 * Points use the twisted Edwards curve -x^2 + y^2 = 1 + d x^2 y^2 with the formulas of RFC 8032
 * section 5.1.4 (Hisil, Wong, Carter, Dawson, "Twisted Edwards Curves Revisited", 2008), in
 * four representations:
 *   ge_p2     projective (X : Y : Z)              x = X/Z, y = Y/Z
 *   ge_p3     extended   (X : Y : Z : T)          additionally xy = T/Z
 *   ge_p1p1   completed  (E, F, G, H)             X = EF, Y = GH, Z = FG, T = EH
 *   ge_niels  affine     (y + x, y - x, 2dxy)     precomputed multiples of B
 *   ge_cached projective (Y + X, Y - X, Z, 2dT)   multiples of the public key
 * A doubling or addition produces ge_p1p1; converting it to ge_p2 costs three multiplications
 * and to ge_p3 four, so a doubling that is followed by another doubling skips T.
 *
 * Side channels: signing only calls fe_*, scalar reduction, the table selection and the
 * mixed addition, none of which branch on or index memory by secret data. Table entries are
 * chosen by reading every candidate and keeping one with a mask. Verification uses only public
 * values and runs in variable time.
 */

#include "CAuthCrypto.h"

#include <pthread.h>
#include <string.h>

typedef unsigned __int128 u128;

#define MASK51 ((UINT64_C(1) << 51) - 1)

/* Overwrites secret intermediates; the volatile stores keep the compiler from dropping them. */
static void wipe(void *p, size_t bytes) {
    volatile uint8_t *v = (volatile uint8_t *)p;
    while (bytes--) *v++ = 0;
}

/* Hides a mask's value from the optimiser so it cannot turn masked selection into a branch. */
static inline uint64_t value_barrier(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+r"(x));
#endif
    return x;
}

static inline uint64_t load64_le(const uint8_t *s) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | s[i];
    return v;
}

static inline void store64_le(uint8_t *s, uint64_t v) {
    for (int i = 0; i < 8; i++) {
        s[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* ------------------------------------------------------------------------------------------
 * Field arithmetic modulo p = 2^255 - 19.
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    uint64_t v[5];
} fe;

/* d = -121665 / 121666 mod p (RFC 8032 section 5.1)
     = 37095705934669439343138083508754565189542113879843219016388785533085940283555. */
static const fe fe_d = {{0x34dca135978a3, 0x1a8283b156ebd, 0x5e7a26001c029, 0x739c663a03cbb, 0x52036cee2b6ff}};
/* 2d mod p. */
static const fe fe_d2 = {{0x69b9426b2f159, 0x35050762add7a, 0x3cf44c0038052, 0x6738cc7407977, 0x2406d9dc56dff}};
/* A square root of -1: 2^((p - 1) / 4) mod p (RFC 8032 section 5.1.3 step 3)
     = 19681161376707505956807079304988542015446066515923890162744021073123829784752. */
static const fe fe_sqrtm1 = {{0x61b274a0ea0b0, 0x0d5a5fc8f189d, 0x7ef5e9cbd0c60, 0x78595a6804c9e, 0x2b8324804fc1d}};

static inline void fe_0(fe *h) { memset(h, 0, sizeof *h); }

static inline void fe_1(fe *h) {
    fe_0(h);
    h->v[0] = 1;
}

static inline void fe_add(fe *h, const fe *f, const fe *g) {
    for (int i = 0; i < 5; i++) h->v[i] = f->v[i] + g->v[i];
}

/* Brings every limb back to 51 bits (limb 1 may keep a tiny excess): tight. */
static inline void fe_carry(fe *h) {
    uint64_t c;
    c = h->v[0] >> 51; h->v[0] &= MASK51; h->v[1] += c;
    c = h->v[1] >> 51; h->v[1] &= MASK51; h->v[2] += c;
    c = h->v[2] >> 51; h->v[2] &= MASK51; h->v[3] += c;
    c = h->v[3] >> 51; h->v[3] &= MASK51; h->v[4] += c;
    c = h->v[4] >> 51; h->v[4] &= MASK51; h->v[0] += 19 * c;
    c = h->v[0] >> 51; h->v[0] &= MASK51; h->v[1] += c;
}

/* h = f - g, computed as f + 4p - g so no limb goes negative (g's limbs below 2^53). */
static inline void fe_sub(fe *h, const fe *f, const fe *g) {
    h->v[0] = (f->v[0] + UINT64_C(0x1fffffffffffb4)) - g->v[0];
    h->v[1] = (f->v[1] + UINT64_C(0x1ffffffffffffc)) - g->v[1];
    h->v[2] = (f->v[2] + UINT64_C(0x1ffffffffffffc)) - g->v[2];
    h->v[3] = (f->v[3] + UINT64_C(0x1ffffffffffffc)) - g->v[3];
    h->v[4] = (f->v[4] + UINT64_C(0x1ffffffffffffc)) - g->v[4];
    fe_carry(h);
}

static inline void fe_neg(fe *h, const fe *f) {
    fe zero;
    fe_0(&zero);
    fe_sub(h, &zero, f);
}

/* Folds the five 128-bit column sums of a product into tight limbs. */
static inline void fe_reduce_wide(fe *h, u128 r0, u128 r1, u128 r2, u128 r3, u128 r4) {
    r1 += (uint64_t)(r0 >> 51);
    r2 += (uint64_t)(r1 >> 51);
    r3 += (uint64_t)(r2 >> 51);
    r4 += (uint64_t)(r3 >> 51);
    /* r4 < 2^111, so the carry is below 2^60 and 19 times it still fits in 64 bits. */
    const uint64_t c = (uint64_t)(r4 >> 51);
    uint64_t h0 = ((uint64_t)r0 & MASK51) + 19 * c;
    uint64_t h1 = ((uint64_t)r1 & MASK51) + (h0 >> 51);
    h->v[0] = h0 & MASK51;
    h->v[1] = h1;
    h->v[2] = (uint64_t)r2 & MASK51;
    h->v[3] = (uint64_t)r3 & MASK51;
    h->v[4] = (uint64_t)r4 & MASK51;
}

/* h = f * g. Terms that land at 2^255 and above wrap around with the factor 19, because
   2^255 = 19 mod p. */
static void fe_mul(fe *h, const fe *f, const fe *g) {
    const uint64_t f0 = f->v[0], f1 = f->v[1], f2 = f->v[2], f3 = f->v[3], f4 = f->v[4];
    const uint64_t g0 = g->v[0], g1 = g->v[1], g2 = g->v[2], g3 = g->v[3], g4 = g->v[4];
    const uint64_t g1_19 = 19 * g1, g2_19 = 19 * g2, g3_19 = 19 * g3, g4_19 = 19 * g4;
    const u128 r0 = (u128)f0 * g0 + (u128)f1 * g4_19 + (u128)f2 * g3_19 + (u128)f3 * g2_19 + (u128)f4 * g1_19;
    const u128 r1 = (u128)f0 * g1 + (u128)f1 * g0 + (u128)f2 * g4_19 + (u128)f3 * g3_19 + (u128)f4 * g2_19;
    const u128 r2 = (u128)f0 * g2 + (u128)f1 * g1 + (u128)f2 * g0 + (u128)f3 * g4_19 + (u128)f4 * g3_19;
    const u128 r3 = (u128)f0 * g3 + (u128)f1 * g2 + (u128)f2 * g1 + (u128)f3 * g0 + (u128)f4 * g4_19;
    const u128 r4 = (u128)f0 * g4 + (u128)f1 * g3 + (u128)f2 * g2 + (u128)f3 * g1 + (u128)f4 * g0;
    fe_reduce_wide(h, r0, r1, r2, r3, r4);
}

/* h = f^2: the cross terms of fe_mul appear twice, so they are doubled once. */
static void fe_sq(fe *h, const fe *f) {
    const uint64_t f0 = f->v[0], f1 = f->v[1], f2 = f->v[2], f3 = f->v[3], f4 = f->v[4];
    const uint64_t f0_2 = 2 * f0, f1_2 = 2 * f1;
    const uint64_t f1_38 = 38 * f1, f2_38 = 38 * f2, f3_38 = 38 * f3;
    const uint64_t f3_19 = 19 * f3, f4_19 = 19 * f4;
    const u128 r0 = (u128)f0 * f0 + (u128)f1_38 * f4 + (u128)f2_38 * f3;
    const u128 r1 = (u128)f0_2 * f1 + (u128)f2_38 * f4 + (u128)f3_19 * f3;
    const u128 r2 = (u128)f0_2 * f2 + (u128)f1 * f1 + (u128)f3_38 * f4;
    const u128 r3 = (u128)f0_2 * f3 + (u128)f1_2 * f2 + (u128)f4_19 * f4;
    const u128 r4 = (u128)f0_2 * f4 + (u128)f1_2 * f3 + (u128)f2 * f2;
    fe_reduce_wide(h, r0, r1, r2, r3, r4);
}

/* h = f^(2^n), n >= 1. */
static void fe_sqn(fe *h, const fe *f, int n) {
    fe_sq(h, f);
    for (int i = 1; i < n; i++) fe_sq(h, h);
}

/* Sets z250 = f^(2^250 - 1) and z11 = f^11, the common prefix of inversion and of the square
   root exponent. Each comment gives the exponent reached. */
static void fe_pow_2_250_1(fe *z250, fe *z11, const fe *f) {
    fe t0, t1, t2;
    fe_sq(&t0, f);              /* 2 */
    fe_sqn(&t1, &t0, 2);        /* 8 */
    fe_mul(&t1, f, &t1);        /* 9 */
    fe_mul(z11, &t0, &t1);      /* 11 */
    fe_sq(&t0, z11);            /* 22 */
    fe_mul(&t0, &t1, &t0);      /* 31 = 2^5 - 1 */
    fe_sqn(&t1, &t0, 5);        /* 2^10 - 2^5 */
    fe_mul(&t0, &t1, &t0);      /* 2^10 - 1 */
    fe_sqn(&t1, &t0, 10);
    fe_mul(&t1, &t1, &t0);      /* 2^20 - 1 */
    fe_sqn(&t2, &t1, 20);
    fe_mul(&t1, &t2, &t1);      /* 2^40 - 1 */
    fe_sqn(&t1, &t1, 10);
    fe_mul(&t0, &t1, &t0);      /* 2^50 - 1 */
    fe_sqn(&t1, &t0, 50);
    fe_mul(&t1, &t1, &t0);      /* 2^100 - 1 */
    fe_sqn(&t2, &t1, 100);
    fe_mul(&t1, &t2, &t1);      /* 2^200 - 1 */
    fe_sqn(&t1, &t1, 50);
    fe_mul(z250, &t1, &t0);     /* 2^250 - 1 */
}

/* h = f^(p - 2) = f^(2^255 - 21) = 1/f (Fermat), and 0 for f = 0. */
static void fe_invert(fe *h, const fe *f) {
    fe z250, z11;
    fe_pow_2_250_1(&z250, &z11, f);
    fe_sqn(&z250, &z250, 5);    /* 2^255 - 32 */
    fe_mul(h, &z250, &z11);     /* 2^255 - 21 */
}

/* h = f^((p - 5) / 8) = f^(2^252 - 3), used for square roots (RFC 8032 section 5.1.3). */
static void fe_pow22523(fe *h, const fe *f) {
    fe z250, z11;
    fe_pow_2_250_1(&z250, &z11, f);
    fe_sqn(&z250, &z250, 2);    /* 2^252 - 4 */
    fe_mul(h, &z250, f);        /* 2^252 - 3 */
}

/* The low 255 bits of a 32-byte little-endian string; bit 255 is ignored. */
static void fe_frombytes(fe *h, const uint8_t s[32]) {
    const uint64_t w0 = load64_le(s), w1 = load64_le(s + 8), w2 = load64_le(s + 16), w3 = load64_le(s + 24);
    h->v[0] = w0 & MASK51;
    h->v[1] = ((w0 >> 51) | (w1 << 13)) & MASK51;
    h->v[2] = ((w1 >> 38) | (w2 << 26)) & MASK51;
    h->v[3] = ((w2 >> 25) | (w3 << 39)) & MASK51;
    h->v[4] = (w3 >> 12) & MASK51;
}

/* The canonical little-endian encoding of f mod p, in constant time. */
static void fe_tobytes(uint8_t s[32], const fe *f) {
    fe h = *f;
    fe_carry(&h);
    fe_carry(&h);
    /* Now limbs 0, 2, 3, 4 are below 2^51 and limb 1 at most 2^51, so h < 2^255 + 2^102 < 2p.
       q = 1 exactly when h >= p, i.e. when h + 19 reaches 2^255; the chain below propagates
       the carries of h + 19 up to bit 255. */
    uint64_t q = (h.v[0] + 19) >> 51;
    q = (h.v[1] + q) >> 51;
    q = (h.v[2] + q) >> 51;
    q = (h.v[3] + q) >> 51;
    q = (h.v[4] + q) >> 51;
    /* h - q p = h + 19 q - q 2^255: add 19 q and drop bit 255. */
    h.v[0] += 19 * q;
    h.v[1] += h.v[0] >> 51; h.v[0] &= MASK51;
    h.v[2] += h.v[1] >> 51; h.v[1] &= MASK51;
    h.v[3] += h.v[2] >> 51; h.v[2] &= MASK51;
    h.v[4] += h.v[3] >> 51; h.v[3] &= MASK51;
    h.v[4] &= MASK51;
    store64_le(s, h.v[0] | (h.v[1] << 51));
    store64_le(s + 8, (h.v[1] >> 13) | (h.v[2] << 38));
    store64_le(s + 16, (h.v[2] >> 26) | (h.v[3] << 25));
    store64_le(s + 24, (h.v[3] >> 39) | (h.v[4] << 12));
}

/* The low bit of f mod p: the "sign" of x in RFC 8032 section 5.1.2. */
static int fe_isnegative(const fe *f) {
    uint8_t s[32];
    fe_tobytes(s, f);
    return s[0] & 1;
}

static int fe_iszero(const fe *f) {
    uint8_t s[32];
    fe_tobytes(s, f);
    uint8_t acc = 0;
    for (int i = 0; i < 32; i++) acc |= s[i];
    return acc == 0;
}

/* f = g when flag is 1, unchanged when flag is 0, without a branch. */
static inline void fe_cmov(fe *f, const fe *g, uint64_t flag) {
    const uint64_t mask = value_barrier(0 - flag);
    for (int i = 0; i < 5; i++) f->v[i] ^= mask & (f->v[i] ^ g->v[i]);
}

/* ------------------------------------------------------------------------------------------
 * Group operations.
 * ---------------------------------------------------------------------------------------- */

typedef struct { fe X, Y, Z; } ge_p2;
typedef struct { fe X, Y, Z, T; } ge_p3;
typedef struct { fe E, F, G, H; } ge_p1p1;
typedef struct { fe ypx, ymx, xy2d; } ge_niels;
typedef struct { fe YpX, YmX, Z, T2d; } ge_cached;

static void ge_p3_0(ge_p3 *h) {
    fe_0(&h->X);
    fe_1(&h->Y);
    fe_1(&h->Z);
    fe_0(&h->T);
}

static void ge_p2_0(ge_p2 *h) {
    fe_0(&h->X);
    fe_1(&h->Y);
    fe_1(&h->Z);
}

static void ge_niels_0(ge_niels *h) {
    fe_1(&h->ypx);
    fe_1(&h->ymx);
    fe_0(&h->xy2d);
}

static void ge_p1p1_to_p2(ge_p2 *r, const ge_p1p1 *p) {
    fe_mul(&r->X, &p->E, &p->F);
    fe_mul(&r->Y, &p->G, &p->H);
    fe_mul(&r->Z, &p->F, &p->G);
}

static void ge_p1p1_to_p3(ge_p3 *r, const ge_p1p1 *p) {
    fe_mul(&r->X, &p->E, &p->F);
    fe_mul(&r->Y, &p->G, &p->H);
    fe_mul(&r->Z, &p->F, &p->G);
    fe_mul(&r->T, &p->E, &p->H);
}

static void ge_p3_to_p2(ge_p2 *r, const ge_p3 *p) {
    r->X = p->X;
    r->Y = p->Y;
    r->Z = p->Z;
}

static void ge_p3_to_cached(ge_cached *r, const ge_p3 *p) {
    fe_add(&r->YpX, &p->Y, &p->X);
    fe_carry(&r->YpX);
    fe_sub(&r->YmX, &p->Y, &p->X);
    r->Z = p->Z;
    fe_mul(&r->T2d, &p->T, &fe_d2);
}

/* The affine form of p: one inversion. Only used to build the tables of multiples of B. */
static void ge_p3_to_niels(ge_niels *r, const ge_p3 *p) {
    fe zinv, x, y;
    fe_invert(&zinv, &p->Z);
    fe_mul(&x, &p->X, &zinv);
    fe_mul(&y, &p->Y, &zinv);
    fe_add(&r->ypx, &y, &x);
    fe_carry(&r->ypx);
    fe_sub(&r->ymx, &y, &x);
    fe_mul(&r->xy2d, &x, &y);
    fe_mul(&r->xy2d, &r->xy2d, &fe_d2);
}

/* r = 2p (RFC 8032 section 5.1.4, doubling): A = X^2, B = Y^2, C = 2Z^2, H = A + B,
   E = H - (X + Y)^2, G = A - B, F = C + G. */
static void ge_p2_dbl(ge_p1p1 *r, const ge_p2 *p) {
    fe a, b, c, t;
    fe_sq(&a, &p->X);
    fe_sq(&b, &p->Y);
    fe_sq(&c, &p->Z);
    fe_add(&c, &c, &c);
    fe_add(&r->H, &a, &b);
    fe_add(&t, &p->X, &p->Y);
    fe_sq(&t, &t);
    fe_sub(&r->E, &r->H, &t);
    fe_sub(&r->G, &a, &b);
    fe_add(&r->F, &c, &r->G);
}

static void ge_p3_dbl(ge_p1p1 *r, const ge_p3 *p) {
    ge_p2 q;
    ge_p3_to_p2(&q, p);
    ge_p2_dbl(r, &q);
}

/* r = p + q (RFC 8032 section 5.1.4, addition): A = (Y1 - X1)(Y2 - X2), B = (Y1 + X1)(Y2 + X2),
   C = T1 2d T2, D = 2 Z1 Z2, E = B - A, F = D - C, G = D + C, H = B + A. */
static void ge_add(ge_p1p1 *r, const ge_p3 *p, const ge_cached *q) {
    fe a, b, c, d, t;
    fe_sub(&t, &p->Y, &p->X);
    fe_mul(&a, &t, &q->YmX);
    fe_add(&t, &p->Y, &p->X);
    fe_mul(&b, &t, &q->YpX);
    fe_mul(&c, &p->T, &q->T2d);
    fe_mul(&d, &p->Z, &q->Z);
    fe_add(&d, &d, &d);
    fe_sub(&r->E, &b, &a);
    fe_sub(&r->F, &d, &c);
    fe_add(&r->G, &d, &c);
    fe_add(&r->H, &b, &a);
}

/* r = p - q: q negated is (-x, y), which swaps Y + X with Y - X and negates 2dT, so F and G
   trade places. */
static void ge_sub(ge_p1p1 *r, const ge_p3 *p, const ge_cached *q) {
    fe a, b, c, d, t;
    fe_sub(&t, &p->Y, &p->X);
    fe_mul(&a, &t, &q->YpX);
    fe_add(&t, &p->Y, &p->X);
    fe_mul(&b, &t, &q->YmX);
    fe_mul(&c, &p->T, &q->T2d);
    fe_mul(&d, &p->Z, &q->Z);
    fe_add(&d, &d, &d);
    fe_sub(&r->E, &b, &a);
    fe_add(&r->F, &d, &c);
    fe_sub(&r->G, &d, &c);
    fe_add(&r->H, &b, &a);
}

/* r = p + q for an affine q (Z2 = 1, so D = 2 Z1). */
static void ge_madd(ge_p1p1 *r, const ge_p3 *p, const ge_niels *q) {
    fe a, b, c, d, t;
    fe_sub(&t, &p->Y, &p->X);
    fe_mul(&a, &t, &q->ymx);
    fe_add(&t, &p->Y, &p->X);
    fe_mul(&b, &t, &q->ypx);
    fe_mul(&c, &p->T, &q->xy2d);
    fe_add(&d, &p->Z, &p->Z);
    fe_sub(&r->E, &b, &a);
    fe_sub(&r->F, &d, &c);
    fe_add(&r->G, &d, &c);
    fe_add(&r->H, &b, &a);
}

/* r = p - q for an affine q. */
static void ge_msub(ge_p1p1 *r, const ge_p3 *p, const ge_niels *q) {
    fe a, b, c, d, t;
    fe_sub(&t, &p->Y, &p->X);
    fe_mul(&a, &t, &q->ypx);
    fe_add(&t, &p->Y, &p->X);
    fe_mul(&b, &t, &q->ymx);
    fe_mul(&c, &p->T, &q->xy2d);
    fe_add(&d, &p->Z, &p->Z);
    fe_sub(&r->E, &b, &a);
    fe_add(&r->F, &d, &c);
    fe_sub(&r->G, &d, &c);
    fe_add(&r->H, &b, &a);
}

/* RFC 8032 section 5.1.2: y in 255 bits little-endian, the low bit of x in bit 255. */
static void ge_tobytes(uint8_t s[32], const fe *X, const fe *Y, const fe *Z) {
    fe zinv, x, y;
    fe_invert(&zinv, Z);
    fe_mul(&x, X, &zinv);
    fe_mul(&y, Y, &zinv);
    fe_tobytes(s, &y);
    s[31] ^= (uint8_t)(fe_isnegative(&x) << 7);
}

/* RFC 8032 section 5.1.3. Variable time: encodings are public. */
static int ge_frombytes(ge_p3 *h, const uint8_t s[32]) {
    /* Step 1: y must be canonical. y >= p means bits 0..254 lie in [2^255 - 19, 2^255 - 1]:
       the top byte (without the sign bit) is 0x7f, bytes 30..1 are 0xff, byte 0 >= 0xed. */
    if ((s[31] & 0x7f) == 0x7f) {
        int all_ones = 1;
        for (int i = 1; i < 31; i++) all_ones &= s[i] == 0xff;
        if (all_ones && s[0] >= 0xed) return -1;
    }
    const int x_0 = s[31] >> 7;
    fe u, v, v3, vxx, check;
    fe_frombytes(&h->Y, s);
    fe_1(&h->Z);
    /* Step 2: x^2 = u / v with u = y^2 - 1, v = d y^2 + 1. */
    fe_sq(&u, &h->Y);
    fe_mul(&v, &u, &fe_d);
    fe_sub(&u, &u, &h->Z);
    fe_add(&v, &v, &h->Z);
    /* Step 3: candidate x = u v^3 (u v^7)^((p - 5) / 8). */
    fe_sq(&v3, &v);
    fe_mul(&v3, &v3, &v);           /* v^3 */
    fe_sq(&h->X, &v3);
    fe_mul(&h->X, &h->X, &v);       /* v^7 */
    fe_mul(&h->X, &h->X, &u);       /* u v^7 */
    fe_pow22523(&h->X, &h->X);
    fe_mul(&h->X, &h->X, &v3);
    fe_mul(&h->X, &h->X, &u);
    /* v x^2 = u: done; v x^2 = -u: multiply by sqrt(-1); otherwise there is no square root. */
    fe_sq(&vxx, &h->X);
    fe_mul(&vxx, &vxx, &v);
    fe_sub(&check, &vxx, &u);
    if (!fe_iszero(&check)) {
        fe_add(&check, &vxx, &u);
        fe_carry(&check);
        if (!fe_iszero(&check)) return -1;
        fe_mul(&h->X, &h->X, &fe_sqrtm1);
    }
    /* Step 4: pick the root whose low bit matches; x = 0 has only the even one. */
    if (fe_iszero(&h->X) && x_0) return -1;
    if (fe_isnegative(&h->X) != x_0) fe_neg(&h->X, &h->X);
    fe_mul(&h->T, &h->X, &h->Y);
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Tables of multiples of the base point B, built once per process.
 * ---------------------------------------------------------------------------------------- */

/* base_table[i][j] = (j + 1) * 256^i * B, for the radix-16 signing ladder. */
static ge_niels base_table[32][8];
/* base_odd[j] = (2j + 1) * B, for the width-8 NAF of verification. */
static ge_niels base_odd[64];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* B is the point with y = 4/5 and even x (RFC 8032 section 5.1); its encoding is 0x58
   followed by 31 bytes 0x66. Decoding it derives x, so no coordinate is written out here. */
static void build_tables(void) {
    uint8_t encoding[32];
    memset(encoding, 0x66, sizeof encoding);
    encoding[0] = 0x58;
    ge_p3 b, p, q;
    ge_cached step;
    ge_p1p1 t;
    if (ge_frombytes(&b, encoding) != 0) __builtin_trap();

    p = b;
    for (int i = 0; i < 32; i++) {
        ge_p3_to_cached(&step, &p);
        q = p;
        for (int j = 0; j < 8; j++) {
            ge_p3_to_niels(&base_table[i][j], &q);
            ge_add(&t, &q, &step);
            ge_p1p1_to_p3(&q, &t);
        }
        for (int k = 0; k < 8; k++) {
            ge_p3_dbl(&t, &p);
            ge_p1p1_to_p3(&p, &t);
        }
    }

    ge_p3_dbl(&t, &b);
    ge_p1p1_to_p3(&p, &t);
    ge_p3_to_cached(&step, &p);
    q = b;
    for (int j = 0; j < 64; j++) {
        ge_p3_to_niels(&base_odd[j], &q);
        ge_add(&t, &q, &step);
        ge_p1p1_to_p3(&q, &t);
    }
}

static void ensure_tables(void) { pthread_once(&tables_once, build_tables); }

/* ------------------------------------------------------------------------------------------
 * Constant-time fixed-base multiplication (signing, key derivation).
 * ---------------------------------------------------------------------------------------- */

static inline void niels_cmov(ge_niels *t, const ge_niels *u, uint64_t flag) {
    fe_cmov(&t->ypx, &u->ypx, flag);
    fe_cmov(&t->ymx, &u->ymx, flag);
    fe_cmov(&t->xy2d, &u->xy2d, flag);
}

/* 1 when a == b, else 0, for values below 2^63. */
static inline uint64_t equal(uint64_t a, uint64_t b) { return ((a ^ b) - 1) >> 63; }

/* t = digit * 256^pos * B for a digit in [-8, 8]: all eight entries of the row are read and
   the wanted one kept by mask, then negated by mask if the digit is negative. */
static void select_base(ge_niels *t, int pos, int8_t digit) {
    const uint64_t d = (uint64_t)(int64_t)digit;
    const uint64_t negative = d >> 63;
    const uint64_t magnitude = d - ((0 - negative) & (d << 1));
    ge_niels_0(t);
    for (uint64_t j = 0; j < 8; j++) niels_cmov(t, &base_table[pos][j], equal(magnitude, j + 1));
    ge_niels minus;
    minus.ypx = t->ymx;
    minus.ymx = t->ypx;
    fe_neg(&minus.xy2d, &t->xy2d);
    niels_cmov(t, &minus, negative);
    wipe(&minus, sizeof minus);
}

/* h = a * B for a 32-byte scalar with its top bit clear. With a = sum of e[i] 16^i and signed
   digits e[i] in [-8, 8], a B = sum over odd i + 16 * sum over even i, each sum being one table
   entry per pair of digits: 64 additions and 4 doublings. */
static void ge_base_mul(ge_p3 *h, const uint8_t a[32]) {
    int8_t e[64];
    for (int i = 0; i < 32; i++) {
        e[2 * i] = (int8_t)(a[i] & 15);
        e[2 * i + 1] = (int8_t)(a[i] >> 4);
    }
    /* Recode from [0, 15] to [-8, 7] with a carry; the top digit ends in [0, 8] because the
       top bit of a is clear. */
    int8_t carry = 0;
    for (int i = 0; i < 63; i++) {
        e[i] = (int8_t)(e[i] + carry);
        carry = (int8_t)((e[i] + 8) >> 4);
        e[i] = (int8_t)(e[i] - (carry << 4));
    }
    e[63] = (int8_t)(e[63] + carry);

    ge_niels t;
    ge_p1p1 r;
    ge_p2 s;
    ge_p3_0(h);
    for (int i = 1; i < 64; i += 2) {
        select_base(&t, i / 2, e[i]);
        ge_madd(&r, h, &t);
        ge_p1p1_to_p3(h, &r);
    }
    ge_p3_dbl(&r, h);
    ge_p1p1_to_p2(&s, &r);
    ge_p2_dbl(&r, &s);
    ge_p1p1_to_p2(&s, &r);
    ge_p2_dbl(&r, &s);
    ge_p1p1_to_p2(&s, &r);
    ge_p2_dbl(&r, &s);
    ge_p1p1_to_p3(h, &r);
    for (int i = 0; i < 64; i += 2) {
        select_base(&t, i / 2, e[i]);
        ge_madd(&r, h, &t);
        ge_p1p1_to_p3(h, &r);
    }
    wipe(e, sizeof e);
    wipe(&t, sizeof t);
    wipe(&r, sizeof r);
    wipe(&s, sizeof s);
}

void cauth_ed25519_base_mul(uint8_t out[32], const uint8_t scalar[32]) {
    ensure_tables();
    ge_p3 h;
    ge_base_mul(&h, scalar);
    ge_tobytes(out, &h.X, &h.Y, &h.Z);
    wipe(&h, sizeof h);
}

/* ------------------------------------------------------------------------------------------
 * Variable-time double-scalar multiplication (verification).
 * ---------------------------------------------------------------------------------------- */

/* Width-w non-adjacent form of a scalar below 2^255: naf[i] odd in (-2^(w-1), 2^(w-1)) or 0,
   at most one non-zero digit in any w consecutive positions, and scalar = sum naf[i] 2^i. */
static void wnaf(int8_t naf[256], const uint8_t s[32], int w) {
    uint64_t x[5];
    for (int i = 0; i < 4; i++) x[i] = load64_le(s + 8 * i);
    x[4] = 0;
    memset(naf, 0, 256);
    const uint64_t window_mask = (UINT64_C(1) << w) - 1;
    int i = 0;
    while (i < 256) {
        const int limb = i / 64, shift = i % 64;
        if (((x[limb] >> shift) & 1) == 0) {
            i++;
            continue;
        }
        uint64_t window = x[limb] >> shift;
        if (shift + w > 64) window |= x[limb + 1] << (64 - shift);
        window &= window_mask;
        int digit = (int)window;
        if (digit >= (1 << (w - 1))) digit -= 1 << w;
        naf[i] = (int8_t)digit;
        /* x -= digit * 2^i, which clears bits i .. i + w - 1 (a negative digit carries up). */
        const u128 amount = (u128)(uint64_t)(digit < 0 ? -digit : digit) << shift;
        const uint64_t part[2] = {(uint64_t)amount, (uint64_t)(amount >> 64)};
        uint64_t carry = 0;
        for (int k = limb; k < 5; k++) {
            const uint64_t addend = k - limb < 2 ? part[k - limb] : 0;
            if (digit > 0) {
                const u128 d = (u128)x[k] - addend - carry;
                x[k] = (uint64_t)d;
                carry = (uint64_t)(d >> 64) & 1;
            } else {
                const u128 d = (u128)x[k] + addend + carry;
                x[k] = (uint64_t)d;
                carry = (uint64_t)(d >> 64);
            }
        }
        i += w;
    }
}

/* r = a A + b B, with A's odd multiples built on the fly (width 5) and B's from base_odd
   (width 8). */
static void ge_double_scalar_mul_vartime(ge_p2 *r, const uint8_t a[32], const ge_p3 *A, const uint8_t b[32]) {
    int8_t a_naf[256], b_naf[256];
    wnaf(a_naf, a, 5);
    wnaf(b_naf, b, 8);

    ge_cached a_odd[8]; /* A, 3A, 5A, ..., 15A */
    ge_p1p1 t;
    ge_p3 u, a2;
    ge_p3_to_cached(&a_odd[0], A);
    ge_p3_dbl(&t, A);
    ge_p1p1_to_p3(&a2, &t);
    for (int j = 1; j < 8; j++) {
        ge_add(&t, &a2, &a_odd[j - 1]);
        ge_p1p1_to_p3(&u, &t);
        ge_p3_to_cached(&a_odd[j], &u);
    }

    ge_p2_0(r);
    int i = 255;
    while (i >= 0 && a_naf[i] == 0 && b_naf[i] == 0) i--;
    for (; i >= 0; i--) {
        ge_p2_dbl(&t, r);
        if (a_naf[i] > 0) {
            ge_p1p1_to_p3(&u, &t);
            ge_add(&t, &u, &a_odd[a_naf[i] / 2]);
        } else if (a_naf[i] < 0) {
            ge_p1p1_to_p3(&u, &t);
            ge_sub(&t, &u, &a_odd[-a_naf[i] / 2]);
        }
        if (b_naf[i] > 0) {
            ge_p1p1_to_p3(&u, &t);
            ge_madd(&t, &u, &base_odd[b_naf[i] / 2]);
        } else if (b_naf[i] < 0) {
            ge_p1p1_to_p3(&u, &t);
            ge_msub(&t, &u, &base_odd[-b_naf[i] / 2]);
        }
        ge_p1p1_to_p2(r, &t);
    }
}

/* ------------------------------------------------------------------------------------------
 * Arithmetic modulo the group order L = 2^252 + 27742317777372353535851937790883648493.
 * Scalars are four 64-bit limbs, least significant first.
 * ---------------------------------------------------------------------------------------- */

static const uint64_t L_limbs[4] = {
    UINT64_C(0x5812631a5cf5d3ed), UINT64_C(0x14def9dea2f79cd6), 0, UINT64_C(0x1000000000000000),
};

/* floor(2^512 / L), the Barrett constant (260 bits). */
static const uint64_t barrett_mu[5] = {
    UINT64_C(0xed9ce5a30a2c131b), UINT64_C(0x2106215d086329a7), UINT64_C(0xffffffffffffffeb),
    UINT64_C(0xffffffffffffffff), UINT64_C(0x000000000000000f),
};

/* r (4 limbs) = x mod L for any x below 2^512 (8 limbs), by Barrett reduction (Menezes, van
   Oorschot, Vanstone, Handbook of Applied Cryptography, algorithm 14.42): q = floor(x mu /
   2^512) is floor(x / L) or one less, so x - q L lies in [0, 2L) and one masked subtraction
   of L finishes. Constant time. */
static void sc_reduce_wide(uint64_t r[4], const uint64_t x[8]) {
    uint64_t prod[13] = {0};
    for (int i = 0; i < 8; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < 5; j++) {
            const u128 t = (u128)x[i] * barrett_mu[j] + prod[i + j] + carry;
            prod[i + j] = (uint64_t)t;
            carry = (uint64_t)(t >> 64);
        }
        prod[i + 5] = carry;
    }
    const uint64_t *q = prod + 8; /* 5 limbs */

    /* The low 320 bits of q L; x - q L < 2L < 2^254 fits, so arithmetic mod 2^320 is exact. */
    uint64_t ql[5] = {0};
    for (int i = 0; i < 5; i++) {
        uint64_t carry = 0;
        for (int j = 0; i + j < 5 && j < 4; j++) {
            const u128 t = (u128)q[i] * L_limbs[j] + ql[i + j] + carry;
            ql[i + j] = (uint64_t)t;
            carry = (uint64_t)(t >> 64);
        }
        if (i + 4 < 5) ql[i + 4] += carry;
    }
    uint64_t t[5], borrow = 0;
    for (int i = 0; i < 5; i++) {
        const u128 d = (u128)x[i] - ql[i] - borrow;
        t[i] = (uint64_t)d;
        borrow = (uint64_t)(d >> 64) & 1;
    }
    /* u = t - L; keep t when that borrows (t < L). */
    uint64_t u[5];
    borrow = 0;
    for (int i = 0; i < 5; i++) {
        const u128 d = (u128)t[i] - (i < 4 ? L_limbs[i] : 0) - borrow;
        u[i] = (uint64_t)d;
        borrow = (uint64_t)(d >> 64) & 1;
    }
    const uint64_t keep_t = value_barrier(0 - borrow);
    for (int i = 0; i < 4; i++) r[i] = (t[i] & keep_t) | (u[i] & ~keep_t);
    wipe(prod, sizeof prod);
    wipe(ql, sizeof ql);
    wipe(t, sizeof t);
    wipe(u, sizeof u);
}

static void sc_load(uint64_t r[4], const uint8_t s[32]) {
    for (int i = 0; i < 4; i++) r[i] = load64_le(s + 8 * i);
}

static void sc_store(uint8_t s[32], const uint64_t r[4]) {
    for (int i = 0; i < 4; i++) store64_le(s + 8 * i, r[i]);
}

void cauth_ed25519_scalar_reduce(uint8_t out[32], const uint8_t in[64]) {
    uint64_t x[8], r[4];
    for (int i = 0; i < 8; i++) x[i] = load64_le(in + 8 * i);
    sc_reduce_wide(r, x);
    sc_store(out, r);
    wipe(x, sizeof x);
    wipe(r, sizeof r);
}

void cauth_ed25519_scalar_muladd(uint8_t out[32], const uint8_t k[32], const uint8_t s[32], const uint8_t r[32]) {
    uint64_t a[4], b[4], c[4], x[8] = {0}, result[4];
    sc_load(a, k);
    sc_load(b, s);
    sc_load(c, r);
    for (int i = 0; i < 4; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < 4; j++) {
            const u128 t = (u128)a[i] * b[j] + x[i + j] + carry;
            x[i + j] = (uint64_t)t;
            carry = (uint64_t)(t >> 64);
        }
        x[i + 4] = carry;
    }
    /* k s < 2^509 and r < 2^256, so the sum stays below 2^512. */
    uint64_t carry = 0;
    for (int i = 0; i < 8; i++) {
        const u128 t = (u128)x[i] + (i < 4 ? c[i] : 0) + carry;
        x[i] = (uint64_t)t;
        carry = (uint64_t)(t >> 64);
    }
    sc_reduce_wide(result, x);
    sc_store(out, result);
    wipe(a, sizeof a);
    wipe(b, sizeof b);
    wipe(c, sizeof c);
    wipe(x, sizeof x);
    wipe(result, sizeof result);
}

int cauth_ed25519_scalar_is_canonical(const uint8_t s[32]) {
    uint64_t v[4];
    sc_load(v, s);
    for (int i = 3; i >= 0; i--) {
        if (v[i] != L_limbs[i]) return v[i] < L_limbs[i];
    }
    return 0; /* s == L */
}

/* ------------------------------------------------------------------------------------------
 * Public entry points on points.
 * ---------------------------------------------------------------------------------------- */

int cauth_ed25519_point_decode(cauth_ed25519_point *out, const uint8_t in[32]) {
    ge_p3 p;
    if (ge_frombytes(&p, in) != 0) return -1;
    memcpy(out->x, p.X.v, sizeof out->x);
    memcpy(out->y, p.Y.v, sizeof out->y);
    memcpy(out->z, p.Z.v, sizeof out->z);
    memcpy(out->t, p.T.v, sizeof out->t);
    return 0;
}

int cauth_ed25519_verify(const uint8_t signature[64], const uint8_t k_digest[64],
                         const cauth_ed25519_point *public_key) {
    const uint8_t *s = signature + 32;
    if (!cauth_ed25519_scalar_is_canonical(s)) return 0;
    ensure_tables();

    uint8_t k[32];
    cauth_ed25519_scalar_reduce(k, k_digest);

    /* -A = (-x, y): negate X and T. */
    ge_p3 minus_a;
    memcpy(minus_a.X.v, public_key->x, sizeof minus_a.X.v);
    memcpy(minus_a.Y.v, public_key->y, sizeof minus_a.Y.v);
    memcpy(minus_a.Z.v, public_key->z, sizeof minus_a.Z.v);
    memcpy(minus_a.T.v, public_key->t, sizeof minus_a.T.v);
    fe_neg(&minus_a.X, &minus_a.X);
    fe_neg(&minus_a.T, &minus_a.T);

    ge_p2 check;
    ge_double_scalar_mul_vartime(&check, k, &minus_a, s);
    uint8_t encoded[32];
    ge_tobytes(encoded, &check.X, &check.Y, &check.Z);
    return memcmp(encoded, signature, 32) == 0;
}
