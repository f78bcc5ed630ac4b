/*
 * NIST P-256 (FIPS 186-5 section 6, SP 800-186 section 3.2.1.3): field arithmetic modulo p,
 * scalar arithmetic modulo the group order n, point arithmetic, and ECDSA signing and
 * verification on top (SEC 1 v2 sections 4.1.3 and 4.1.4). Hashing and the choice of the
 * per-signature nonce (RFC 6979) stay in Swift; this file only sees 32-byte big-endian values.
 *
 * Representation. Field elements and scalars are four 64-bit limbs, least significant first,
 * always fully reduced. Field elements are kept in Montgomery form (x R mod p, R = 2^256),
 * which for this p needs no multiplication by -p^-1 (it is 1 modulo 2^64) and only shifts for
 * most of p's limbs. Scalars use a generic Montgomery reduction modulo n. Points are Jacobian
 * (X / Z^2, Y / Z^3, Z = 0 for the point at infinity) or affine, coordinates in Montgomery form.
 *
 * Side channels. Everything that touches a private key or a nonce (base-point multiplication,
 * field and scalar inversion, the signing equation) runs in time independent of those values:
 * no branches on them, no memory addresses derived from them (table entries are read by
 * scanning the whole table under masks), and conditional subtractions done with masks.
 * Verification works only on public data and uses faster variable-time code (wNAF windows,
 * early exits). Functions whose name ends in _vartime must never see secrets.
 */

#include "CAuthCrypto.h"
#include "limbs4.h"

#include <pthread.h>
#include <string.h>

/* Overwrites secret intermediates; the volatile store keeps the compiler from dropping it. */
static void wipe(void *p, size_t bytes) {
    volatile uint8_t *v = (volatile uint8_t *)p;
    while (bytes--) *v++ = 0;
}

/* All ones when x == 0, else zero, without a branch. */
static inline uint64_t mask_if_zero(uint64_t x) {
    return ((x | ((uint64_t)0 - x)) >> 63) - 1;
}

/* ------------------------------------------------------------------------------------------
 * Constants (limbs least significant first).
 * ---------------------------------------------------------------------------------------- */

/* p = 2^256 - 2^224 + 2^192 + 2^96 - 1. */
static const uint64_t P[4] = {0xffffffffffffffff, 0x00000000ffffffff, 0x0000000000000000, 0xffffffff00000001};
/* n, the order of the base point. */
static const uint64_t N[4] = {0xf3b9cac2fc632551, 0xbce6faada7179e84, 0xffffffffffffffff, 0xffffffff00000000};
/* -n^-1 mod 2^64, for Montgomery reduction modulo n. */
static const uint64_t N0INV = 0xccd1c8aaee00bc4f;
/* R^2 mod p and R^2 mod n: one Montgomery multiplication by these converts into Montgomery form. */
static const uint64_t RR_P[4] = {0x0000000000000003, 0xfffffffbffffffff, 0xfffffffffffffffe, 0x00000004fffffffd};
static const uint64_t RR_N[4] = {0x83244c95be79eea2, 0x4699799c49bd6fa6, 0x2845b2392b6bec59, 0x66e12d94f3d95620};
/* 1 in Montgomery form modulo p (R mod p). */
static const uint64_t ONE_P[4] = {0x0000000000000001, 0xffffffff00000000, 0xffffffffffffffff, 0x00000000fffffffe};
/* The curve coefficient b in Montgomery form (b R mod p); a = -3 is built into the formulas. */
static const uint64_t B_MONT[4] = {0xd89cdf6229c4bddf, 0xacf005cd78843090, 0xe5a220abf7212ed6, 0xdc30061d04874834};
/* The base point G in ordinary form (FIPS 186-5 / SP 800-186 section 3.2.1.3). */
static const uint64_t GX[4] = {0xf4a13945d898c296, 0x77037d812deb33a0, 0xf8bce6e563a440f2, 0x6b17d1f2e12c4247};
static const uint64_t GY[4] = {0xcbb6406837bf51f5, 0x2bce33576b315ece, 0x8ee7eb4a7c0f9e16, 0x4fe342e2fe1a7f9b};

/* ------------------------------------------------------------------------------------------
 * Four-limb helpers shared by both moduli (limbs4.h has the conversions, add4 and sub4).
 * ---------------------------------------------------------------------------------------- */

/* All ones when a < m (constant time). */
static inline uint64_t mask_if_below(const uint64_t a[4], const uint64_t m[4]) {
    uint64_t t[4];
    return (uint64_t)0 - sub4(t, a, m);
}

static inline uint64_t mask_if_zero4(const uint64_t a[4]) {
    return mask_if_zero(a[0] | a[1] | a[2] | a[3]);
}

/* r = mask ? a : r, for an all-ones or all-zero mask. */
static inline void cmov4(uint64_t r[4], const uint64_t a[4], uint64_t mask) {
    for (int i = 0; i < 4; i++) r[i] = (r[i] & ~mask) | (a[i] & mask);
}

/*
 * Given value = top * 2^256 + t with value < 2m, stores value mod m: subtract m, and keep the
 * difference unless that borrowed while there was no top bit to absorb it.
 */
static inline void reduce_once(uint64_t r[4], const uint64_t t[4], uint64_t top, const uint64_t m[4]) {
    uint64_t d[4];
    const uint64_t borrow = sub4(d, t, m);
    const uint64_t keep = (uint64_t)0 - (borrow & (top ^ 1));
    for (int i = 0; i < 4; i++) r[i] = (t[i] & keep) | (d[i] & ~keep);
}

/* t (8 limbs) = a * b, schoolbook. */
static inline void mul_wide(uint64_t t[8], const uint64_t a[4], const uint64_t b[4]) {
    u128 s;
    uint64_t c;
    const uint64_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    uint64_t t0, t1, t2, t3, t4, t5, t6, t7;

    s = (u128)a0 * b[0];               t0 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a1 * b[0] + c;           t1 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a2 * b[0] + c;           t2 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a3 * b[0] + c;           t3 = (uint64_t)s; t4 = (uint64_t)(s >> 64);

    s = (u128)a0 * b[1] + t1;          t1 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a1 * b[1] + t2 + c;      t2 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a2 * b[1] + t3 + c;      t3 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a3 * b[1] + t4 + c;      t4 = (uint64_t)s; t5 = (uint64_t)(s >> 64);

    s = (u128)a0 * b[2] + t2;          t2 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a1 * b[2] + t3 + c;      t3 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a2 * b[2] + t4 + c;      t4 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a3 * b[2] + t5 + c;      t5 = (uint64_t)s; t6 = (uint64_t)(s >> 64);

    s = (u128)a0 * b[3] + t3;          t3 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a1 * b[3] + t4 + c;      t4 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a2 * b[3] + t5 + c;      t5 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a3 * b[3] + t6 + c;      t6 = (uint64_t)s; t7 = (uint64_t)(s >> 64);

    t[0] = t0; t[1] = t1; t[2] = t2; t[3] = t3; t[4] = t4; t[5] = t5; t[6] = t6; t[7] = t7;
}

/* t (8 limbs) = a^2: the six cross products once, doubled, plus the four squares. */
static inline void sqr_wide(uint64_t t[8], const uint64_t a[4]) {
    u128 s;
    uint64_t c;
    const uint64_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    uint64_t t0, t1, t2, t3, t4, t5, t6, t7;

    s = (u128)a0 * a1;                 t1 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a0 * a2 + c;             t2 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a0 * a3 + c;             t3 = (uint64_t)s; t4 = (uint64_t)(s >> 64);
    s = (u128)a1 * a2 + t3;            t3 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a1 * a3 + t4 + c;        t4 = (uint64_t)s; t5 = (uint64_t)(s >> 64);
    s = (u128)a2 * a3 + t5;            t5 = (uint64_t)s; t6 = (uint64_t)(s >> 64);

    t7 = t6 >> 63;
    t6 = (t6 << 1) | (t5 >> 63);
    t5 = (t5 << 1) | (t4 >> 63);
    t4 = (t4 << 1) | (t3 >> 63);
    t3 = (t3 << 1) | (t2 >> 63);
    t2 = (t2 << 1) | (t1 >> 63);
    t1 = t1 << 1;

    s = (u128)a0 * a0;                 t0 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t1 + c;                  t1 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a1 * a1 + t2 + c;        t2 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t3 + c;                  t3 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a2 * a2 + t4 + c;        t4 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t5 + c;                  t5 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)a3 * a3 + t6 + c;        t6 = (uint64_t)s; c = (uint64_t)(s >> 64);
    t7 += c;

    t[0] = t0; t[1] = t1; t[2] = t2; t[3] = t3; t[4] = t4; t[5] = t5; t[6] = t6; t[7] = t7;
}

/* ------------------------------------------------------------------------------------------
 * Field arithmetic modulo p, Montgomery form.
 * ---------------------------------------------------------------------------------------- */

typedef uint64_t fe[4];

/*
 * r = t / R mod p for t < p R (Montgomery reduction). Because p = -1 mod 2^64, the multiplier
 * for each step is the low limb q itself, and adding q p clears that limb. With
 * p = 2^256 - 2^224 + 2^192 + 2^96 - 1 the limbs of q p beyond the cleared one are: q << 32 into
 * limbs 1-2 (q (2^96 - 1) + q = q 2^96, counting the carry q out of limb 0), nothing for the
 * zero limb, and q * 0xffffffff00000001 into limbs 3-4.
 */
static inline void fe_reduce(fe r, const uint64_t in[8]) {
    uint64_t t0 = in[0], t1 = in[1], t2 = in[2], t3 = in[3], t4 = in[4], t5 = in[5], t6 = in[6], t7 = in[7];
    uint64_t top, c;
    u128 s;

    /* Step 1: q = t0; the result is shifted down one limb (t1..t4 and the carry into t5). */
    s = (u128)t1 + ((u128)t0 << 32);                    t1 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t2 + c;                                   t2 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t0 * P[3] + t3 + c;                       t3 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t4 + c;                                   t4 = (uint64_t)s; top = (uint64_t)(s >> 64);

    /* Step 2: q = t1. */
    s = (u128)t2 + ((u128)t1 << 32);                    t2 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t3 + c;                                   t3 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t1 * P[3] + t4 + c;                       t4 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t5 + c + top;                             t5 = (uint64_t)s; top = (uint64_t)(s >> 64);

    /* Step 3: q = t2. */
    s = (u128)t3 + ((u128)t2 << 32);                    t3 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t4 + c;                                   t4 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t2 * P[3] + t5 + c;                       t5 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t6 + c + top;                             t6 = (uint64_t)s; top = (uint64_t)(s >> 64);

    /* Step 4: q = t3. */
    s = (u128)t4 + ((u128)t3 << 32);                    t4 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t5 + c;                                   t5 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t3 * P[3] + t6 + c;                       t6 = (uint64_t)s; c = (uint64_t)(s >> 64);
    s = (u128)t7 + c + top;                             t7 = (uint64_t)s; top = (uint64_t)(s >> 64);

    /* (t + m p) / R < (p R + R p) / R = 2p: one conditional subtraction. */
    const uint64_t t[4] = {t4, t5, t6, t7};
    reduce_once(r, t, top, P);
}

/* r = a b / R mod p. r may alias a or b. */
static inline void fe_mul(fe r, const fe a, const fe b) {
    uint64_t t[8];
    mul_wide(t, a, b);
    fe_reduce(r, t);
}

static inline void fe_sqr(fe r, const fe a) {
    uint64_t t[8];
    sqr_wide(t, a);
    fe_reduce(r, t);
}

static inline void fe_add(fe r, const fe a, const fe b) {
    uint64_t t[4];
    const uint64_t carry = add4(t, a, b);
    reduce_once(r, t, carry, P);
}

static inline void fe_sub(fe r, const fe a, const fe b) {
    uint64_t t[4], padd[4];
    const uint64_t mask = (uint64_t)0 - sub4(t, a, b);
    for (int i = 0; i < 4; i++) padd[i] = P[i] & mask;
    add4(r, t, padd);
}

static inline void fe_neg(fe r, const fe a) {
    static const uint64_t zero[4] = {0, 0, 0, 0};
    fe_sub(r, zero, a);
}

/* r = a / 2 mod p: add p when a is odd (masked), then shift the 257-bit sum right by one. */
static inline void fe_half(fe r, const fe a) {
    const uint64_t mask = (uint64_t)0 - (a[0] & 1);
    uint64_t t[4], padd[4];
    for (int i = 0; i < 4; i++) padd[i] = P[i] & mask;
    const uint64_t carry = add4(t, a, padd);
    r[0] = (t[0] >> 1) | (t[1] << 63);
    r[1] = (t[1] >> 1) | (t[2] << 63);
    r[2] = (t[2] >> 1) | (t[3] << 63);
    r[3] = (t[3] >> 1) | (carry << 63);
}

static inline void fe_copy(fe r, const fe a) { memcpy(r, a, sizeof(fe)); }

/* Converts ordinary limbs (any value below 2^256) into Montgomery form, reducing mod p. */
static inline void fe_to_mont(fe r, const uint64_t a[4]) { fe_mul(r, a, RR_P); }

/* Converts out of Montgomery form (multiplying by 1 divides by R). */
static inline void fe_from_mont(uint64_t r[4], const fe a) {
    uint64_t t[8] = {a[0], a[1], a[2], a[3], 0, 0, 0, 0};
    fe_reduce(r, t);
}

/* Non-zero when a == b (both reduced), in constant time: all ones or zero. */
static inline uint64_t fe_equal_mask(const fe a, const fe b) {
    return mask_if_zero((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]));
}

/* ------------------------------------------------------------------------------------------
 * Scalar arithmetic modulo n (Montgomery form where noted).
 * ---------------------------------------------------------------------------------------- */

typedef uint64_t sc[4];

/* r = t / R mod n for t < n R: four word-by-word Montgomery steps. */
static inline void sc_reduce(sc r, const uint64_t in[8]) {
    uint64_t t[8];
    memcpy(t, in, sizeof t);
    uint64_t top = 0;
    for (int i = 0; i < 4; i++) {
        const uint64_t q = t[i] * N0INV;
        uint64_t c = 0;
        for (int j = 0; j < 4; j++) {
            u128 s = (u128)q * N[j] + t[i + j] + c;
            t[i + j] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        /* The carry lands in limb i + 4, plus the carry left over from the previous step. */
        u128 s = (u128)t[i + 4] + c + top;
        t[i + 4] = (uint64_t)s;
        top = (uint64_t)(s >> 64);
    }
    reduce_once(r, t + 4, top, N);
}

static inline void sc_mul(sc r, const sc a, const sc b) {
    uint64_t t[8];
    mul_wide(t, a, b);
    sc_reduce(r, t);
}

static inline void sc_add(sc r, const sc a, const sc b) {
    uint64_t t[4];
    const uint64_t carry = add4(t, a, b);
    reduce_once(r, t, carry, N);
}

/* Any 256-bit value mod n: below 2^256 < 2n, so one conditional subtraction suffices. */
static inline void sc_reduce_bytes(sc r, const uint8_t b[32]) {
    uint64_t t[4];
    limbs_from_bytes(t, b);
    reduce_once(r, t, 0, N);
}

static inline void sc_to_mont(sc r, const sc a) { sc_mul(r, a, RR_N); }

/* ------------------------------------------------------------------------------------------
 * Modular inversion by "safegcd" (Bernstein, Yang: "Fast constant-time gcd computation and
 * modular inversion", TCHES 2019), for both moduli.
 *
 * divstep(delta, f, g) = (1 - delta, g, (g - f) / 2) if delta > 0 and g is odd,
 *                        (1 + delta, f, (g + f) / 2) if g is odd, else (1 + delta, f, g / 2),
 * started from (1, M, x), reaches g = 0 and f = +-gcd(M, x) = +-1 within 741 steps for 256-bit
 * inputs (the paper's theorem 11.2: floor((49 d + 57) / 17) steps for d = 256). Alongside, d and
 * e with f = d x and g = e x (mod M) follow the same linear maps, so at the end x^-1 = +-d.
 *
 * The steps go in batches of 62: each batch looks only at the low 64 bits of f and g (all a
 * step needs is g's parity, and each step consumes one bit), records the batch as a 2x2 matrix
 * scaled by 2^62, and then applies that matrix to the full values. The variable-time variant
 * (verification only) stops as soon as g is zero, within twelve batches (744 steps).
 *
 * The constant-time variant runs the "half-delta" divstep instead, the same step started from
 * delta = 1/2 (Wuille, "Bounds on divsteps iterations in safegcd", github.com/sipa/safegcd-bounds):
 * counting delta in halves, it starts at 1 and moves to 2 - delta or 2 + delta. That variant
 * needs at most floor((3787 log2(M) + 2166) / 1644) = 591 steps for M < 2^256 (a bound
 * verified there for every M up to 2^3805, and the one libsecp256k1 relies on), so ten batches
 * (620 steps) always run instead of twelve, every step branch-free, so the time does not depend
 * on x. Once g is zero, further steps of either kind leave f as it is.
 *
 * Numbers here are signed: five 62-bit limbs, the low four in [0, 2^62), the top one signed.
 * ---------------------------------------------------------------------------------------- */

#define M62 ((uint64_t)0x3fffffffffffffff)

typedef struct {
    int64_t v[5];
} s62;

typedef struct {
    s62 m;           /* the odd modulus */
    uint64_t m_inv;  /* m^-1 mod 2^62 */
    uint64_t limbs[4];
} inv_modulus;

static const inv_modulus INV_P = {
    {{0x3fffffffffffffff, 0x00000003ffffffff, 0x0000000000000000, 0x3fffffc000000040, 0x00000000000000ff}},
    0x3fffffffffffffff,
    {0xffffffffffffffff, 0x00000000ffffffff, 0x0000000000000000, 0xffffffff00000001},
};
static const inv_modulus INV_N = {
    {{0x33b9cac2fc632551, 0x339beab69c5e7a13, 0x3ffffffffffffffb, 0x3fffffc00000003f, 0x00000000000000ff}},
    0x332e375511ff43b1,
    {0xf3b9cac2fc632551, 0xbce6faada7179e84, 0xffffffffffffffff, 0xffffffff00000000},
};

typedef struct {
    int64_t u, v, q, r;
} transition; /* 2^62 (f', g') = (u f + v g, q f + r g) */

static void s62_from_limbs(s62 *r, const uint64_t a[4]) {
    r->v[0] = (int64_t)(a[0] & M62);
    r->v[1] = (int64_t)(((a[0] >> 62) | (a[1] << 2)) & M62);
    r->v[2] = (int64_t)(((a[1] >> 60) | (a[2] << 4)) & M62);
    r->v[3] = (int64_t)(((a[2] >> 58) | (a[3] << 6)) & M62);
    r->v[4] = (int64_t)(a[3] >> 56);
}

/* For a value in [0, 2^256). */
static void s62_to_limbs(uint64_t r[4], const s62 *a) {
    const uint64_t v0 = (uint64_t)a->v[0], v1 = (uint64_t)a->v[1], v2 = (uint64_t)a->v[2];
    const uint64_t v3 = (uint64_t)a->v[3], v4 = (uint64_t)a->v[4];
    r[0] = v0 | (v1 << 62);
    r[1] = (v1 >> 2) | (v2 << 60);
    r[2] = (v2 >> 4) | (v3 << 58);
    r[3] = (v3 >> 6) | (v4 << 56);
}

/*
 * 62 half-delta divsteps (delta counted in halves, see above) on the low 64 bits of f and g
 * (f odd); returns the new delta and the matrix. Each step is branch-free. With c1 = (delta > 0)
 * and c2 = (g odd) as masks, a step is:
 * g += (c1 ? -f : f) if c2, then, when swapping (c1 and c2), f += g, which turns f into the
 * old g while g already holds g - f; then g is halved. The matrix rows follow the same
 * operations, doubling the f row instead of halving the g row, which keeps every entry an
 * integer of absolute value at most 2^62.
 */
static int64_t divsteps_62(int64_t delta, uint64_t f, uint64_t g, transition *t) {
    uint64_t u = 1, v = 0, q = 0, r = 1;
    for (int i = 0; i < 62; i++) {
        uint64_t c1 = (uint64_t)0 - ((uint64_t)(-delta) >> 63); /* delta > 0 */
        const uint64_t c2 = (uint64_t)0 - (g & 1);               /* g odd */
        const uint64_t x = (f ^ c1) - c1, y = (u ^ c1) - c1, z = (v ^ c1) - c1;
        g += x & c2;
        q += y & c2;
        r += z & c2;
        c1 &= c2;
        delta = (int64_t)(((uint64_t)delta ^ c1) - c1) + 2;
        f += g & c1;
        u += q & c1;
        v += r & c1;
        g >>= 1;
        u <<= 1;
        v <<= 1;
    }
    t->u = (int64_t)u; t->v = (int64_t)v; t->q = (int64_t)q; t->r = (int64_t)r;
    return delta;
}

/*
 * The same 62 divsteps with branches, for public inputs: runs of even g are consumed at once
 * (count trailing zeros), and the swap is a plain exchange.
 */
static int64_t divsteps_62_vartime(int64_t delta, uint64_t f, uint64_t g, transition *t) {
    uint64_t u = 1, v = 0, q = 0, r = 1, tmp;
    int left = 62;
    for (;;) {
        /* Halve while g is even, at most `left` times (the guard bit stops the count there). */
        const int zeros = __builtin_ctzll(g | ((uint64_t)-1 << left));
        g >>= zeros;
        u <<= zeros;
        v <<= zeros;
        delta += zeros;
        left -= zeros;
        if (left == 0) break;
        /* g is odd: swap if delta > 0 (to (-delta, g, -f)), then g += f; the halving that
           completes this step is the first one of the next round. */
        if (delta > 0) {
            delta = -delta;
            tmp = f; f = g; g = (uint64_t)0 - tmp;
            tmp = u; u = q; q = (uint64_t)0 - tmp;
            tmp = v; v = r; r = (uint64_t)0 - tmp;
        }
        g += f;
        q += u;
        r += v;
    }
    t->u = (int64_t)u; t->v = (int64_t)v; t->q = (int64_t)q; t->r = (int64_t)r;
    return delta;
}

/* (f, g) = (u f + v g, q f + r g) / 2^62, exact by construction. Arithmetic right shifts of
   signed 128-bit values floor, as clang and gcc define them. */
static void update_fg(s62 *f, s62 *g, const transition *t) {
    const int64_t u = t->u, v = t->v, q = t->q, r = t->r;
    __int128 cf = (__int128)u * f->v[0] + (__int128)v * g->v[0];
    __int128 cg = (__int128)q * f->v[0] + (__int128)r * g->v[0];
    cf >>= 62;
    cg >>= 62;
    for (int i = 1; i < 5; i++) {
        cf += (__int128)u * f->v[i] + (__int128)v * g->v[i];
        cg += (__int128)q * f->v[i] + (__int128)r * g->v[i];
        f->v[i - 1] = (int64_t)((uint64_t)cf & M62);
        g->v[i - 1] = (int64_t)((uint64_t)cg & M62);
        cf >>= 62;
        cg >>= 62;
    }
    f->v[4] = (int64_t)cf;
    g->v[4] = (int64_t)cg;
}

/* Brings a value in (-m, 2m) into [0, m) with two masked corrections. */
static void s62_normalize(s62 *a, const inv_modulus *m) {
    uint64_t mask = (uint64_t)(a->v[4] >> 63); /* negative: add m */
    for (int i = 0; i < 5; i++) a->v[i] += (int64_t)((uint64_t)m->m.v[i] & mask);
    for (int i = 0; i < 4; i++) {
        a->v[i + 1] += a->v[i] >> 62;
        a->v[i] = (int64_t)((uint64_t)a->v[i] & M62);
    }
    s62 t;
    for (int i = 0; i < 5; i++) t.v[i] = a->v[i] - m->m.v[i];
    for (int i = 0; i < 4; i++) {
        t.v[i + 1] += t.v[i] >> 62;
        t.v[i] = (int64_t)((uint64_t)t.v[i] & M62);
    }
    mask = ~(uint64_t)(t.v[4] >> 63); /* a - m >= 0: take it */
    for (int i = 0; i < 5; i++) a->v[i] = (int64_t)(((uint64_t)a->v[i] & ~mask) | ((uint64_t)t.v[i] & mask));
}

/*
 * (d, e) = (u d + v e, q d + r e) / 2^62 mod m, for d, e in [0, m). Adding md m and me m, with
 * md, me in [0, 2^62) chosen to clear the low 62 bits, makes the division exact; since
 * |u| + |v| <= 2^62 the results lie in (-m, 2m) and are normalised back to [0, m).
 */
static void update_de(s62 *d, s62 *e, const transition *t, const inv_modulus *m) {
    const int64_t u = t->u, v = t->v, q = t->q, r = t->r;
    const uint64_t d0 = (uint64_t)d->v[0], e0 = (uint64_t)e->v[0];
    const uint64_t md = ((uint64_t)0 - ((uint64_t)u * d0 + (uint64_t)v * e0) * m->m_inv) & M62;
    const uint64_t me = ((uint64_t)0 - ((uint64_t)q * d0 + (uint64_t)r * e0) * m->m_inv) & M62;
    __int128 cd = (__int128)u * d->v[0] + (__int128)v * e->v[0] + (__int128)md * m->m.v[0];
    __int128 ce = (__int128)q * d->v[0] + (__int128)r * e->v[0] + (__int128)me * m->m.v[0];
    cd >>= 62;
    ce >>= 62;
    for (int i = 1; i < 5; i++) {
        cd += (__int128)u * d->v[i] + (__int128)v * e->v[i] + (__int128)md * m->m.v[i];
        ce += (__int128)q * d->v[i] + (__int128)r * e->v[i] + (__int128)me * m->m.v[i];
        d->v[i - 1] = (int64_t)((uint64_t)cd & M62);
        e->v[i - 1] = (int64_t)((uint64_t)ce & M62);
        cd >>= 62;
        ce >>= 62;
    }
    d->v[4] = (int64_t)cd;
    e->v[4] = (int64_t)ce;
    s62_normalize(d, m);
    s62_normalize(e, m);
}

/* r = x^-1 mod m for ordinary (not Montgomery) x < m; 0 for x = 0. r may alias x. */
static void mod_inverse(uint64_t r[4], const uint64_t x[4], const inv_modulus *m, int vartime) {
    s62 f = m->m, g, d = {{0, 0, 0, 0, 0}}, e = {{1, 0, 0, 0, 0}};
    transition t;
    int64_t delta = 1;
    s62_from_limbs(&g, x);
    const int batches = vartime ? 12 : 10;
    for (int batch = 0; batch < batches; batch++) {
        const uint64_t f0 = (uint64_t)f.v[0] | ((uint64_t)f.v[1] << 62);
        const uint64_t g0 = (uint64_t)g.v[0] | ((uint64_t)g.v[1] << 62);
        delta = vartime ? divsteps_62_vartime(delta, f0, g0, &t) : divsteps_62(delta, f0, g0, &t);
        update_fg(&f, &g, &t);
        update_de(&d, &e, &t, m);
        if (vartime && (g.v[0] | g.v[1] | g.v[2] | g.v[3] | g.v[4]) == 0) break;
    }
    /* f = +-1: negate d when f is negative. */
    uint64_t value[4], negated[4];
    s62_to_limbs(value, &d);
    sub4(negated, m->limbs, value);
    cmov4(value, negated, (uint64_t)(f.v[4] >> 63));
    memcpy(r, value, sizeof value);
    wipe(&f, sizeof f); wipe(&g, sizeof g); wipe(&d, sizeof d); wipe(&e, sizeof e);
    wipe(&t, sizeof t); wipe(value, sizeof value); wipe(negated, sizeof negated);
}

/* R^3 mod p and R^3 mod n: a Montgomery multiplication by these turns the plain inverse of a
   Montgomery-form value, (a R)^-1, into the Montgomery form of the inverse, a^-1 R. */
static const uint64_t R3_P[4] = {0xfffffffd0000000a, 0xffffffedfffffff7, 0x00000005fffffffc, 0x0000001800000001};
static const uint64_t R3_N[4] = {0xac8ebec90b65a624, 0x111f28ae0c0555c9, 0x2543b9246ba5e93f, 0x503a54e76407be65};

/* r = a^-1 mod p, Montgomery form in and out, constant time. */
static void fe_inv(fe r, const fe a) {
    uint64_t t[4];
    mod_inverse(t, a, &INV_P, 0);
    fe_mul(r, t, R3_P);
    wipe(t, sizeof t);
}

/* r = a^-1 mod n, Montgomery form in and out; constant time unless `vartime`. */
static void sc_inv(sc r, const sc a, int vartime) {
    uint64_t t[4];
    mod_inverse(t, a, &INV_N, vartime);
    sc_mul(r, t, R3_N);
    wipe(t, sizeof t);
}

/* ------------------------------------------------------------------------------------------
 * Points. Formulas from the Explicit-Formulas Database (Bernstein, Lange), for a = -3.
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    fe x, y, z;
} jpoint; /* Jacobian: (X / Z^2, Y / Z^3); Z = 0 is the point at infinity */

typedef struct {
    fe x, y;
} apoint; /* affine, never the point at infinity */

/*
 * r = 2 p, 4M + 4S: with S = 4 Y^2, M = 3 (X - Z^2)(X + Z^2) (a = -3),
 *   X3 = M^2 - 2 X S,  Y3 = M (X S - X3) - S^2 / 2,  Z3 = 2 Y Z
 * ("dbl-2001-b" with 4 beta = X S and 8 gamma^2 = S^2 / 2 folded in, which saves additions).
 * Right for the point at infinity too (Z stays 0); P-256 has no point of order 2, so Y = 0
 * never occurs otherwise. r may alias p.
 */
static void point_double(jpoint *r, const jpoint *p) {
    fe y2, z3, delta, s, m, t, xs;
    fe_add(y2, p->y, p->y);
    fe_mul(z3, y2, p->z);              /* 2 Y Z */
    fe_sqr(delta, p->z);
    fe_sqr(s, y2);                     /* 4 Y^2 */
    fe_sub(t, p->x, delta);
    fe_add(m, p->x, delta);
    fe_mul(m, m, t);
    fe_add(t, m, m);
    fe_add(m, t, m);                   /* 3 (X - Z^2)(X + Z^2) */
    fe_mul(xs, p->x, s);               /* 4 X Y^2 */
    fe_copy(r->z, z3);
    fe_sqr(t, m);
    fe_sub(t, t, xs);
    fe_sub(r->x, t, xs);               /* M^2 - 2 X S */
    fe_sub(t, xs, r->x);
    fe_mul(t, m, t);
    fe_sqr(s, s);
    fe_half(s, s);                     /* 8 Y^4 */
    fe_sub(r->y, t, s);
}

/*
 * r = p + q for Jacobian p and affine q, 8M + 3S ("madd-2004-hmv"):
 *   H = X2 Z1^2 - X1,  R = Y2 Z1^3 - Y1,  X3 = R^2 - H^3 - 2 X1 H^2,
 *   Y3 = R (X1 H^2 - X3) - Y1 H^3,  Z3 = Z1 H.
 * No special cases: the caller must rule out p at infinity and p = q (both give junk with
 * Z = 0); for p = -q the result is the point at infinity (Z = 0). h_zero and r_zero, when
 * given, receive masks telling whether H and R were zero, for callers that need to detect
 * those cases. r may alias p.
 */
static void point_add_mixed_raw(jpoint *r, const jpoint *p, const apoint *q, uint64_t *h_zero, uint64_t *r_zero) {
    fe zz, zzz, h, rr, hh, hhh, v, yh, t;
    fe_sqr(zz, p->z);
    fe_mul(zzz, zz, p->z);
    fe_mul(h, q->x, zz);
    fe_sub(h, h, p->x);
    fe_mul(rr, q->y, zzz);
    fe_sub(rr, rr, p->y);
    if (h_zero) *h_zero = mask_if_zero4(h);
    if (r_zero) *r_zero = mask_if_zero4(rr);
    fe_sqr(hh, h);
    fe_mul(hhh, hh, h);
    fe_mul(v, p->x, hh);
    fe_mul(yh, p->y, hhh);
    fe_mul(r->z, p->z, h);
    fe_sqr(t, rr);
    fe_sub(t, t, hhh);
    fe_sub(t, t, v);
    fe_sub(r->x, t, v);
    fe_sub(t, v, r->x);
    fe_mul(t, rr, t);
    fe_sub(r->y, t, yh);
}

/*
 * r = p + q for Jacobian p and q, given q's Z^2 and Z^3 (tables keep them, saving a squaring
 * and a multiplication per addition), 11M + 3S ("add-1998-cmo-2"):
 *   U1 = X1 Z2^2, U2 = X2 Z1^2, S1 = Y1 Z2^3, S2 = Y2 Z1^3, H = U2 - U1, R = S2 - S1,
 *   X3 = R^2 - H^3 - 2 U1 H^2,  Y3 = R (U1 H^2 - X3) - S1 H^3,  Z3 = Z1 Z2 H.
 * Same contract as point_add_mixed_raw. r may alias p or q.
 */
static void point_add_raw(jpoint *r, const jpoint *p, const jpoint *q, const fe qzz, const fe qzzz,
                          uint64_t *h_zero, uint64_t *r_zero) {
    fe zz, zzz, u1, h, s1, rr, hh, hhh, v, z3, t;
    fe_sqr(zz, p->z);
    fe_mul(zzz, zz, p->z);
    fe_mul(u1, p->x, qzz);
    fe_mul(h, q->x, zz);
    fe_sub(h, h, u1);
    fe_mul(s1, p->y, qzzz);
    fe_mul(rr, q->y, zzz);
    fe_sub(rr, rr, s1);
    if (h_zero) *h_zero = mask_if_zero4(h);
    if (r_zero) *r_zero = mask_if_zero4(rr);
    fe_mul(z3, p->z, q->z);
    fe_mul(r->z, z3, h);
    fe_sqr(hh, h);
    fe_mul(hhh, hh, h);
    fe_mul(v, u1, hh);
    fe_mul(s1, s1, hhh);
    fe_sqr(t, rr);
    fe_sub(t, t, hhh);
    fe_sub(t, t, v);
    fe_sub(r->x, t, v);
    fe_sub(t, v, r->x);
    fe_mul(t, rr, t);
    fe_sub(r->y, t, s1);
}

static inline void point_cmov(jpoint *r, const jpoint *a, uint64_t mask) {
    cmov4(r->x, a->x, mask);
    cmov4(r->y, a->y, mask);
    cmov4(r->z, a->z, mask);
}

/*
 * r = p + q in constant time for any inputs, including the point at infinity on either side
 * and p = q: the sum and the double are both computed and the right one is selected by masks.
 * Only the generic (variable-point) multiplication needs this much care.
 */
static void point_add_ct(jpoint *r, const jpoint *p, const jpoint *q) {
    jpoint sum, dbl;
    uint64_t h_zero, r_zero;
    const uint64_t p_inf = mask_if_zero4(p->z), q_inf = mask_if_zero4(q->z);
    fe qzz, qzzz;
    fe_sqr(qzz, q->z);
    fe_mul(qzzz, qzz, q->z);
    point_add_raw(&sum, p, q, qzz, qzzz, &h_zero, &r_zero);
    point_double(&dbl, p);
    point_cmov(&sum, &dbl, h_zero & r_zero & ~p_inf & ~q_inf);
    point_cmov(&sum, q, p_inf);
    point_cmov(&sum, p, q_inf);
    *r = sum;
}

/* A Jacobian point with its Z^2 and Z^3, for tables that are added from many times. */
typedef struct {
    jpoint p;
    fe zz, zzz;
} cached_point;

static void cache_point(cached_point *c, const jpoint *p) {
    c->p = *p;
    fe_sqr(c->zz, p->z);
    fe_mul(c->zzz, c->zz, p->z);
}

/* Variable-time r = p + q with every special case handled by branching (public data only). */
static void point_add_vartime(jpoint *r, const jpoint *p, const cached_point *q) {
    if (mask_if_zero4(p->z)) { *r = q->p; return; }
    if (mask_if_zero4(q->p.z)) { *r = *p; return; }
    uint64_t h_zero, r_zero;
    jpoint sum;
    point_add_raw(&sum, p, &q->p, q->zz, q->zzz, &h_zero, &r_zero);
    if (h_zero) {
        if (r_zero) point_double(r, p);
        else memset(r, 0, sizeof *r); /* p = -q */
        return;
    }
    *r = sum;
}

static void point_add_mixed_vartime(jpoint *r, const jpoint *p, const apoint *q) {
    if (mask_if_zero4(p->z)) {
        fe_copy(r->x, q->x);
        fe_copy(r->y, q->y);
        fe_copy(r->z, ONE_P);
        return;
    }
    uint64_t h_zero, r_zero;
    jpoint sum;
    point_add_mixed_raw(&sum, p, q, &h_zero, &r_zero);
    if (h_zero) {
        if (r_zero) point_double(r, p);
        else memset(r, 0, sizeof *r);
        return;
    }
    *r = sum;
}

/* Affine coordinates of a Jacobian point that is not at infinity (constant time). */
static void point_to_affine(apoint *r, const jpoint *p) {
    fe zinv, zinv2;
    fe_inv(zinv, p->z);
    fe_sqr(zinv2, zinv);
    fe_mul(r->x, p->x, zinv2);
    fe_mul(zinv, zinv, zinv2);
    fe_mul(r->y, p->y, zinv);
    wipe(zinv, sizeof zinv);
    wipe(zinv2, sizeof zinv2);
}

/* y^2 == x^3 - 3x + b for Montgomery-form coordinates (all ones when on the curve). */
static uint64_t on_curve_mask(const fe x, const fe y) {
    fe lhs, rhs, t;
    fe_sqr(lhs, y);
    fe_sqr(rhs, x);
    fe_mul(rhs, rhs, x);
    fe_add(t, x, x);
    fe_add(t, t, x);
    fe_sub(rhs, rhs, t);
    fe_add(rhs, rhs, B_MONT);
    return fe_equal_mask(lhs, rhs);
}

/* ------------------------------------------------------------------------------------------
 * Base-point table.
 *
 * k G is computed with signed 6-bit windows (Booth recoding): k = sum d_i 2^(6i) over 43
 * windows, |d_i| <= 32, so k G = sum d_i (2^(6i) G) needs no doublings at all, only one
 * table read and one mixed addition per window. TABLE[i][j - 1] holds j 2^(6i) G in affine
 * form for j = 1..32 (43 * 32 points, 88 KB), built once per process on first use.
 * Window 0 (the odd multiples 1..31 of G among them) also serves the wNAF loop of verification.
 * ---------------------------------------------------------------------------------------- */

#define WINDOW_BITS 6
#define WINDOWS 43       /* ceil(257 / 6): Booth recoding needs one bit above the scalar's top */
#define WINDOW_SIZE 32   /* 2^(WINDOW_BITS - 1) */

static apoint TABLE[WINDOWS][WINDOW_SIZE];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* Converts `count` Jacobian points (none at infinity) to affine with one inversion
   (Montgomery's trick: invert the product of all Z, then peel off one factor at a time). */
static void batch_to_affine(apoint *out, const jpoint *in, size_t count, fe *scratch) {
    fe_copy(scratch[0], in[0].z);
    for (size_t i = 1; i < count; i++) fe_mul(scratch[i], scratch[i - 1], in[i].z);
    fe inv, zinv, zinv2;
    fe_inv(inv, scratch[count - 1]);
    for (size_t i = count; i-- > 0;) {
        if (i > 0) {
            fe_mul(zinv, inv, scratch[i - 1]); /* 1 / Z_i */
            fe_mul(inv, inv, in[i].z);         /* 1 / (Z_0 ... Z_(i-1)) */
        } else {
            fe_copy(zinv, inv);
        }
        fe_sqr(zinv2, zinv);
        fe_mul(out[i].x, in[i].x, zinv2);
        fe_mul(zinv2, zinv2, zinv);
        fe_mul(out[i].y, in[i].y, zinv2);
    }
}

static void build_table(void) {
    jpoint points[WINDOW_SIZE + 1];
    apoint affine[WINDOW_SIZE + 1];
    fe scratch[WINDOW_SIZE + 1];
    apoint base; /* 2^(6i) G */
    fe_to_mont(base.x, GX);
    fe_to_mont(base.y, GY);
    for (int w = 0; w < WINDOWS; w++) {
        /* points[j - 1] = j base for j = 1..32, then points[32] = 64 base, the next window's base.
           The additions are never exceptional: j base != +-base for 2 <= j <= 32 < n. */
        fe_copy(points[0].x, base.x);
        fe_copy(points[0].y, base.y);
        fe_copy(points[0].z, ONE_P);
        point_double(&points[1], &points[0]);
        for (int j = 2; j < WINDOW_SIZE; j++) point_add_mixed_raw(&points[j], &points[j - 1], &base, NULL, NULL);
        point_double(&points[WINDOW_SIZE], &points[WINDOW_SIZE - 1]);
        batch_to_affine(affine, points, WINDOW_SIZE + 1, scratch);
        memcpy(TABLE[w], affine, sizeof TABLE[w]);
        base = affine[WINDOW_SIZE];
    }
}

static void ensure_table(void) { pthread_once(&table_once, build_table); }

/* Bits [pos, pos + count) of k (count <= 8; bits at 256 and above read as zero). */
static inline unsigned scalar_bits(const uint64_t k[4], int pos, int count) {
    const int limb = pos / 64, offset = pos % 64;
    if (limb >= 4) return 0;
    uint64_t v = k[limb] >> offset;
    if (offset + count > 64 && limb + 1 < 4) v |= k[limb + 1] << (64 - offset);
    return (unsigned)v & ((1u << count) - 1);
}

/*
 * Booth digit of window i (Booth 1951; the signed-window form of e.g. Möller 2001): bits
 * 6i - 1 .. 6i + 5 of k as v (bit -1 reads as 0), digit = (bits 6i..6i+5) + bit(6i - 1) -
 * 64 bit(6i + 5), so that sum digit_i 2^(6i) telescopes back to k. Returns |digit| (0..32) and
 * sets *negative to 1 for a negative digit, computed without branches.
 */
static inline unsigned booth_digit(const uint64_t k[4], int window, unsigned *negative) {
    const unsigned v = window == 0 ? scalar_bits(k, 0, WINDOW_BITS) << 1
                                   : scalar_bits(k, WINDOW_BITS * window - 1, WINDOW_BITS + 1);
    const unsigned t = (v >> 1) + (v & 1);               /* 0..64 */
    const unsigned sign = v >> WINDOW_BITS;               /* the window's top bit */
    const unsigned mask = 0u - sign;
    *negative = sign;
    return ((64 - t) & mask) | (t & ~mask);
}

/* out = TABLE[window][index - 1], or (0, 0) for index 0, reading every entry under a mask. */
static inline void table_select(apoint *out, int window, unsigned index) {
    uint64_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const uint64_t *entries = (const uint64_t *)TABLE[window];
    for (unsigned j = 0; j < WINDOW_SIZE; j++) {
        const uint64_t mask = mask_if_zero((uint64_t)(index ^ (j + 1)));
        for (unsigned l = 0; l < 8; l++) acc[l] |= entries[8 * j + l] & mask;
    }
    memcpy(out->x, acc, sizeof(fe));
    memcpy(out->y, acc + 4, sizeof(fe));
}

/*
 * r = k G in constant time, for k < n (k = 0 gives the point at infinity, Z = 0).
 *
 * The mixed additions never meet an exceptional case for 0 < k < n: before window i the
 * accumulator holds S G with |S| < 2^(6i) (32/63 of it), and the addend is d 2^(6i) G with
 * 1 <= |d| <= 32. For i < 42, 0 < |S +- d 2^(6i)| < 2^252 < n, so the two points are neither
 * equal nor opposite. For the top window d = k_top in 1..16 is positive, S = k - d 2^252, and
 * equality (S = d 2^252 mod n) would need k = d 2^253 mod n, whose top window is never d;
 * oppositeness would need k = 0 mod n. The only special cases left are an empty accumulator
 * and a zero digit, which masks resolve.
 */
static void mul_base(jpoint *r, const uint64_t k[4]) {
    jpoint acc, sum;
    apoint addend;
    fe neg_y;
    memset(&acc, 0, sizeof acc);
    for (int w = 0; w < WINDOWS; w++) {
        unsigned negative;
        const unsigned digit = booth_digit(k, w, &negative);
        table_select(&addend, w, digit);
        fe_neg(neg_y, addend.y);
        cmov4(addend.y, neg_y, (uint64_t)0 - negative);
        const uint64_t acc_inf = mask_if_zero4(acc.z), digit_zero = mask_if_zero(digit);
        point_add_mixed_raw(&sum, &acc, &addend, NULL, NULL);
        /* Empty accumulator: take the addend (with Z = 1). Zero digit: keep the accumulator. */
        jpoint lifted;
        fe_copy(lifted.x, addend.x);
        fe_copy(lifted.y, addend.y);
        fe_copy(lifted.z, ONE_P);
        point_cmov(&sum, &lifted, acc_inf);
        point_cmov(&sum, &acc, digit_zero);
        acc = sum;
    }
    *r = acc;
    wipe(&acc, sizeof acc); wipe(&sum, sizeof sum); wipe(&addend, sizeof addend); wipe(neg_y, sizeof neg_y);
}

/*
 * r = k P in constant time for any affine P and k < n: signed 5-bit windows from the top, a
 * table of 1P..16P read under masks, and additions that handle every special case by masks
 * (a windowed ladder can meet P + P, e.g. for k = n - 34).
 */
static void mul_point(jpoint *r, const uint64_t k[4], const apoint *p) {
    enum { BITS = 5, SIZE = 16, COUNT = 52 }; /* 52 windows of 5 bits cover 260 > 257 bits */
    jpoint table[SIZE], acc, addend;
    fe_copy(table[0].x, p->x);
    fe_copy(table[0].y, p->y);
    fe_copy(table[0].z, ONE_P);
    for (int j = 1; j < SIZE; j++) point_add_ct(&table[j], &table[j - 1], &table[0]);
    memset(&acc, 0, sizeof acc);
    for (int w = COUNT - 1; w >= 0; w--) {
        for (int d = 0; d < BITS; d++) point_double(&acc, &acc);
        const unsigned v = w == 0 ? scalar_bits(k, 0, BITS) << 1 : scalar_bits(k, BITS * w - 1, BITS + 1);
        const unsigned t = (v >> 1) + (v & 1), sign = v >> BITS, mask = 0u - sign;
        const unsigned digit = ((32 - t) & mask) | (t & ~mask);
        memset(&addend, 0, sizeof addend);
        for (unsigned j = 0; j < SIZE; j++) point_cmov(&addend, &table[j], mask_if_zero((uint64_t)(digit ^ (j + 1))));
        fe neg_y;
        fe_neg(neg_y, addend.y);
        cmov4(addend.y, neg_y, (uint64_t)0 - sign);
        point_add_ct(&acc, &acc, &addend); /* a zero digit selects Z = 0, which add_ct skips */
    }
    *r = acc;
    wipe(table, sizeof table); wipe(&acc, sizeof acc); wipe(&addend, sizeof addend);
}

/* ------------------------------------------------------------------------------------------
 * Variable-time double multiplication for verification: u1 G + u2 Q.
 * ---------------------------------------------------------------------------------------- */

/*
 * Width-w NAF of k (Solinas 2000; Hankerson, Menezes, Vanstone, Guide to ECC, algorithm 3.35):
 * digits are zero or odd with |d| < 2^(w-1), and any w consecutive digits hold at most one
 * non-zero. Returns the number of digits (at most 257).
 */
static int wnaf_vartime(int8_t out[257], const uint64_t k[4], int w) {
    uint64_t s[5] = {k[0], k[1], k[2], k[3], 0};
    const int64_t full = (int64_t)1 << w, half = full >> 1;
    int length = 0;
    memset(out, 0, 257);
    for (int i = 0; i < 257; i++) {
        if ((s[0] | s[1] | s[2] | s[3] | s[4]) == 0) break;
        if (s[0] & 1) {
            int64_t d = (int64_t)(s[0] & (uint64_t)(full - 1));
            if (d >= half) d -= full;
            out[i] = (int8_t)d;
            /* s -= d: subtracting a positive digit never borrows out, adding never overflows 5 limbs. */
            if (d > 0) {
                uint64_t borrow = (uint64_t)d;
                for (int l = 0; l < 5 && borrow; l++) {
                    const uint64_t before = s[l];
                    s[l] -= borrow;
                    borrow = before < borrow;
                }
            } else {
                uint64_t carry = (uint64_t)(-d);
                for (int l = 0; l < 5 && carry; l++) {
                    s[l] += carry;
                    carry = s[l] < carry;
                }
            }
            length = i + 1;
        }
        for (int l = 0; l < 4; l++) s[l] = (s[l] >> 1) | (s[l + 1] << 63);
        s[4] >>= 1;
    }
    return length;
}

/* r = u1 G + u2 Q for public u1, u2 < n and an affine Q on the curve. */
static void mul_double_vartime(jpoint *r, const uint64_t u1[4], const uint64_t u2[4], const apoint *q) {
    enum { QW = 5, QSIZE = 8 };   /* odd multiples 1Q, 3Q, ..., 15Q */
    enum { GW = 6 };              /* odd multiples up to 31G, from TABLE[0] */
    int8_t n1[257], n2[257];
    cached_point qtable[QSIZE], q2;
    jpoint acc, t;
    ensure_table();

    /* qtable[j] = (2j + 1) Q. */
    fe_copy(t.x, q->x);
    fe_copy(t.y, q->y);
    fe_copy(t.z, ONE_P);
    cache_point(&qtable[0], &t);
    point_double(&t, &t);
    cache_point(&q2, &t);
    for (int j = 1; j < QSIZE; j++) {
        point_add_vartime(&t, &qtable[j - 1].p, &q2);
        cache_point(&qtable[j], &t);
    }

    const int l1 = wnaf_vartime(n1, u1, GW), l2 = wnaf_vartime(n2, u2, QW);
    memset(&acc, 0, sizeof acc);
    for (int i = (l1 > l2 ? l1 : l2) - 1; i >= 0; i--) {
        if (!mask_if_zero4(acc.z)) point_double(&acc, &acc);
        if (n1[i]) {
            const int d = n1[i];
            apoint g = TABLE[0][(d < 0 ? -d : d) - 1];
            if (d < 0) fe_neg(g.y, g.y);
            point_add_mixed_vartime(&acc, &acc, &g);
        }
        if (n2[i]) {
            const int d = n2[i];
            cached_point c = qtable[((d < 0 ? -d : d) - 1) / 2];
            if (d < 0) fe_neg(c.p.y, c.p.y);
            point_add_vartime(&acc, &acc, &c);
        }
    }
    *r = acc;
}

/* ------------------------------------------------------------------------------------------
 * Public interface.
 * ---------------------------------------------------------------------------------------- */

int cauth_p256_scalar_is_valid(const uint8_t scalar[32]) {
    uint64_t k[4];
    limbs_from_bytes(k, scalar);
    const uint64_t ok = mask_if_below(k, N) & ~mask_if_zero4(k);
    wipe(k, sizeof k);
    return (int)(ok & 1);
}

void cauth_p256_scalar_reduce(uint8_t out[32], const uint8_t in[32]) {
    sc k;
    sc_reduce_bytes(k, in);
    limbs_to_bytes(out, k);
    wipe(k, sizeof k);
}

/* Loads and validates an affine point (SEC 1 section 3.2.2.1 steps 1-3; the cofactor is 1). */
static int load_point(apoint *out, const uint8_t x[32], const uint8_t y[32]) {
    uint64_t xl[4], yl[4];
    limbs_from_bytes(xl, x);
    limbs_from_bytes(yl, y);
    if ((xl[0] | xl[1] | xl[2] | xl[3] | yl[0] | yl[1] | yl[2] | yl[3]) == 0) return CAUTH_P256_POINT_INFINITY;
    if (!mask_if_below(xl, P) || !mask_if_below(yl, P)) return CAUTH_P256_POINT_OUT_OF_RANGE;
    fe_to_mont(out->x, xl);
    fe_to_mont(out->y, yl);
    if (!on_curve_mask(out->x, out->y)) return CAUTH_P256_POINT_NOT_ON_CURVE;
    return CAUTH_P256_POINT_VALID;
}

int cauth_p256_check_point(const uint8_t x[32], const uint8_t y[32]) {
    apoint p;
    return load_point(&p, x, y);
}

/* Writes the affine coordinates of r; returns -1 (writing zeros) when r is at infinity. */
static int store_point(uint8_t x[32], uint8_t y[32], const jpoint *r) {
    if (mask_if_zero4(r->z)) {
        memset(x, 0, 32);
        memset(y, 0, 32);
        return -1;
    }
    apoint a;
    uint64_t t[4];
    point_to_affine(&a, r);
    fe_from_mont(t, a.x);
    limbs_to_bytes(x, t);
    fe_from_mont(t, a.y);
    limbs_to_bytes(y, t);
    return 0;
}

int cauth_p256_mul_base(uint8_t x[32], uint8_t y[32], const uint8_t scalar[32]) {
    sc k;
    jpoint r;
    ensure_table();
    sc_reduce_bytes(k, scalar);
    mul_base(&r, k);
    const int status = store_point(x, y, &r);
    wipe(k, sizeof k);
    wipe(&r, sizeof r);
    return status;
}

int cauth_p256_mul(uint8_t x[32], uint8_t y[32], const uint8_t scalar[32], const uint8_t px[32], const uint8_t py[32]) {
    apoint p;
    if (load_point(&p, px, py) != CAUTH_P256_POINT_VALID) return -2;
    sc k;
    jpoint r;
    sc_reduce_bytes(k, scalar);
    mul_point(&r, k, &p);
    const int status = store_point(x, y, &r);
    wipe(k, sizeof k);
    wipe(&r, sizeof r);
    return status;
}

int cauth_p256_mul_double_vartime(uint8_t x[32], uint8_t y[32], const uint8_t u1[32], const uint8_t u2[32],
                                  const uint8_t qx[32], const uint8_t qy[32]) {
    apoint q;
    if (load_point(&q, qx, qy) != CAUTH_P256_POINT_VALID) return -2;
    sc a, b;
    jpoint r;
    sc_reduce_bytes(a, u1);
    sc_reduce_bytes(b, u2);
    mul_double_vartime(&r, a, b, &q);
    return store_point(x, y, &r);
}

/*
 * ECDSA signature generation (SEC 1 section 4.1.3 steps 1-6, FIPS 186-5 section 6.4.1) for a
 * given nonce k: R = k G, r = x_R mod n, s = k^-1 (e + r d) mod n, e being the digest as an
 * integer (bits2int for a 256-bit hash and a 256-bit n, then reduced mod n).
 */
int cauth_p256_sign(uint8_t signature[64], const uint8_t private_key[32], const uint8_t nonce[32],
                    const uint8_t digest[32]) {
    sc d, k, e, r, s, t;
    jpoint point;
    apoint affine;
    int status = -1;
    ensure_table();
    limbs_from_bytes(d, private_key);
    limbs_from_bytes(k, nonce);
    /* Out-of-range inputs are rejected outright; this reveals only that they were invalid. */
    const uint64_t valid = mask_if_below(d, N) & ~mask_if_zero4(d) & mask_if_below(k, N) & ~mask_if_zero4(k);
    if (!valid) goto done;

    mul_base(&point, k);
    point_to_affine(&affine, &point);
    fe_from_mont(t, affine.x);
    reduce_once(r, t, 0, N); /* x < p < 2n */
    if (mask_if_zero4(r)) goto done; /* the caller picks another nonce */

    sc_reduce_bytes(e, digest);
    sc_to_mont(t, r);
    sc_mul(s, t, d);          /* r d (Montgomery form times ordinary form gives ordinary form) */
    sc_add(s, s, e);          /* e + r d */
    sc_to_mont(k, k);
    sc_inv(t, k, 0);          /* k^-1 in Montgomery form */
    sc_mul(s, t, s);          /* k^-1 (e + r d) */
    if (mask_if_zero4(s)) goto done;

    limbs_to_bytes(signature, r);
    limbs_to_bytes(signature + 32, s);
    status = 0;
done:
    wipe(d, sizeof d); wipe(k, sizeof k); wipe(e, sizeof e); wipe(r, sizeof r); wipe(s, sizeof s);
    wipe(t, sizeof t); wipe(&point, sizeof point); wipe(&affine, sizeof affine);
    return status;
}

/*
 * ECDSA signature verification (SEC 1 section 4.1.4, FIPS 186-5 section 6.4.2): r and s in
 * [1, n - 1], w = s^-1, u1 = e w, u2 = r w, R = u1 G + u2 Q not at infinity, and x_R mod n = r.
 * The last test avoids an inversion: x_R = X / Z^2, and since x_R < p < 2n, x_R mod n = r exactly
 * when X = r Z^2 or (if r + n < p) X = (r + n) Z^2.
 */
int cauth_p256_verify(const uint8_t signature[64], const uint8_t digest[32], const uint8_t qx[32],
                      const uint8_t qy[32]) {
    sc r, s, e, w, u1, u2;
    apoint q;
    jpoint point;
    limbs_from_bytes(r, signature);
    limbs_from_bytes(s, signature + 32);
    if (mask_if_zero4(r) || mask_if_zero4(s) || !mask_if_below(r, N) || !mask_if_below(s, N)) return 0;
    if (load_point(&q, qx, qy) != CAUTH_P256_POINT_VALID) return 0;

    sc_reduce_bytes(e, digest);
    sc_to_mont(w, s);
    sc_inv(w, w, 1);          /* s^-1 in Montgomery form */
    sc_mul(u1, w, e);         /* e s^-1, ordinary form */
    sc_mul(u2, w, r);         /* r s^-1 */
    mul_double_vartime(&point, u1, u2, &q);
    if (mask_if_zero4(point.z)) return 0;

    fe z2, rz2, candidate;
    fe_sqr(z2, point.z);
    fe_to_mont(candidate, r);
    fe_mul(rz2, candidate, z2);
    if (fe_equal_mask(rz2, point.x)) return 1;
    uint64_t rn[4];
    if (add4(rn, r, N) == 0 && mask_if_below(rn, P)) {
        fe_to_mont(candidate, rn);
        fe_mul(rz2, candidate, z2);
        if (fe_equal_mask(rz2, point.x)) return 1;
    }
    return 0;
}
