/*
 * Multi-precision unsigned arithmetic for RSA (RFC 8017): Montgomery multiplication, modular
 * exponentiation, Miller-Rabin, and the few slower helpers key handling needs.
 *
 * Numbers are arrays of 64-bit limbs, least significant limb first. Products use
 * `unsigned __int128`, which clang and gcc provide on every 64-bit target the package builds
 * for (Linux x86_64/arm64, macOS arm64/x86_64).
 *
 * This lives in C because debug builds of Swift are far too slow for these loops; the Swift
 * layer (AuthCrypto/BigUInt.swift) only shapes inputs and outputs. On x86-64 CPUs with AVX-512
 * IFMA, the two exponentiations of an RSA-CRT private-key operation run in bignum_ifma.c.
 *
 * Side channels: exponentiation with a secret exponent uses a fixed 5-bit window over every
 * limb of the exponent (its length, not its bit length, shows), always multiplies, reads the
 * window table with masks rather than an index, and ends each Montgomery product with a
 * masked (not branching) conditional subtraction; long division visits every bit and
 * subtracts under a mask. The gcd and Miller-Rabin's
 * early exits are plain: they only run while generating a key, on candidates.
 */

#include "CAuthCrypto.h"
#include "bignum_internal.h"

#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

/* Overwrites secret intermediates before their memory is released; the volatile store keeps
   the compiler from dropping it as dead. */
static void wipe(void *p, size_t bytes) {
    volatile uint8_t *v = (volatile uint8_t *)p;
    while (bytes--) *v++ = 0;
}

static int is_zero(const uint64_t *a, size_t n) {
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) acc |= a[i];
    return acc == 0;
}

static size_t bit_length(const uint64_t *a, size_t n) {
    while (n > 0 && a[n - 1] == 0) n--;
    if (n == 0) return 0;
    return 64 * n - (size_t)__builtin_clzll(a[n - 1]);
}

/* -1, 0, 1 as a < b, a == b, a > b (both n limbs); variable time. */
static int compare(const uint64_t *a, const uint64_t *b, size_t n) {
    for (size_t i = n; i-- > 0;) {
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return 0;
}

/* r = a - b over n limbs; returns the final borrow. r may alias a or b. */
static uint64_t sub_n(uint64_t *r, const uint64_t *a, const uint64_t *b, size_t n) {
    uint64_t borrow = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = a[i], y = b[i];
        uint64_t d = x - y;
        uint64_t b1 = x < y;
        uint64_t d2 = d - borrow;
        uint64_t b2 = d < borrow;
        r[i] = d2;
        borrow = b1 | b2;
    }
    return borrow;
}

static size_t trailing_zeros(const uint64_t *a, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (a[i]) return 64 * i + (size_t)__builtin_ctzll(a[i]);
    }
    return 64 * n;
}

static void shift_right(uint64_t *a, size_t n, size_t bits) {
    const size_t limbs = bits / 64, rest = bits % 64;
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = i + limbs < n ? a[i + limbs] : 0;
        uint64_t hi = i + limbs + 1 < n ? a[i + limbs + 1] : 0;
        a[i] = rest ? (lo >> rest) | (hi << (64 - rest)) : lo;
    }
}

static void shift_left(uint64_t *a, size_t n, size_t bits) {
    const size_t limbs = bits / 64, rest = bits % 64;
    for (size_t i = n; i-- > 0;) {
        uint64_t hi = i >= limbs ? a[i - limbs] : 0;
        uint64_t lo = i >= limbs + 1 ? a[i - limbs - 1] : 0;
        a[i] = rest ? (hi << rest) | (lo >> (64 - rest)) : hi;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Montgomery arithmetic (Montgomery, "Modular multiplication without trial division", 1985),
   in the finely integrated product scanning (FIPS) order of Koc, Acar, Kaliski, "Analyzing
   and comparing Montgomery multiplication algorithms", 1996: each column of the product and
   of the reduction is summed into a three-limb accumulator, so the intermediate value never
   goes to memory. R = 2^(64 n). A context is only read while in use, so one context (such as
   a cached key's) can serve several threads at once. */

typedef struct {
    const uint64_t *m;  /* odd modulus, n limbs */
    size_t n;
    uint64_t m0inv;     /* -m^-1 mod 2^64 */
    uint64_t *one;      /* R mod m (1 in Montgomery form) */
    uint64_t *rr;       /* R^2 mod m (converts into Montgomery form) */
    uint64_t *block;    /* the allocation behind one and rr when mont_init made it, else NULL */
} mont_ctx;

/* Newton iteration for the inverse modulo 2^64: x = m0 is right to 3 bits (m0 * m0 = 1 mod 8
   for odd m0) and each step doubles the number of correct bits. */
static uint64_t neg_inverse64(uint64_t m0) {
    uint64_t x = m0;
    for (int i = 0; i < 5; i++) x *= 2 - m0 * x;
    return (uint64_t)0 - x;
}

/* Column accumulator lo + mid 2^64 + hi 2^128. A column of the n-limb products here sums at
   most 2 n products below 2^128, far from overflowing 192 bits. */
typedef struct {
    uint64_t lo, mid, hi;
} acc3;

/* c += x y */
static inline void acc_mul(acc3 *c, uint64_t x, uint64_t y) {
    const u128 p = (u128)x * y;
    const u128 s = (((u128)c->mid << 64) | c->lo) + p;
    c->hi += s < p;
    c->lo = (uint64_t)s;
    c->mid = (uint64_t)(s >> 64);
}

/* c += 2 d (the doubled cross products of a squaring) */
static inline void acc_add_twice(acc3 *c, const acc3 *d) {
    const uint64_t lo = d->lo << 1, mid = (d->mid << 1) | (d->lo >> 63), hi = (d->hi << 1) | (d->mid >> 63);
    u128 s = (u128)c->lo + lo;
    c->lo = (uint64_t)s;
    s = (u128)c->mid + mid + (uint64_t)(s >> 64);
    c->mid = (uint64_t)s;
    c->hi += hi + (uint64_t)(s >> 64);
}

/* Moves to the next column: c /= 2^64. */
static inline void acc_shift(acc3 *c) {
    c->lo = c->mid;
    c->mid = c->hi;
    c->hi = 0;
}

/* r = t + top 2^(64 n) reduced once by m, for t + top 2^(64 n) < 2 m: subtract m into r, then
   keep t instead when that borrowed past the top limb. Masked, not branching. */
static void reduce_once(uint64_t *r, const uint64_t *t, uint64_t top, const uint64_t *m, size_t n) {
    const uint64_t borrow = sub_n(r, t, m, n);
    const uint64_t keep = (uint64_t)0 - (uint64_t)(top < borrow);
    for (size_t j = 0; j < n; j++) r[j] = (t[j] & keep) | (r[j] & ~keep);
}

/* r = a * b / R mod m, for a * b < R * m (true when either factor is below m and the other
   below R). r may alias a or b. Column k sums a_i b_(k-i) and u_i m_(k-i); the reduction
   digit u_k is chosen in column k so that the column's low limb cancels. */
static void mont_mul(const mont_ctx *ctx, uint64_t *r, const uint64_t *a, const uint64_t *b) {
    const size_t n = ctx->n;
    const uint64_t *m = ctx->m;
    uint64_t u[n]; /* reduction digits, then (from column n on) the low limbs of the result */
    acc3 c = {0, 0, 0};
    for (size_t k = 0; k < n; k++) {
        for (size_t i = 0; i < k; i++) {
            acc_mul(&c, a[i], b[k - i]);
            acc_mul(&c, u[i], m[k - i]);
        }
        acc_mul(&c, a[k], b[0]);
        u[k] = c.lo * ctx->m0inv;
        acc_mul(&c, u[k], m[0]);
        acc_shift(&c);
    }
    for (size_t k = n; k < 2 * n - 1; k++) {
        for (size_t i = k - n + 1; i < n; i++) {
            acc_mul(&c, a[i], b[k - i]);
            acc_mul(&c, u[i], m[k - i]);
        }
        u[k - n] = c.lo; /* column k no longer reads u_(k-n) */
        acc_shift(&c);
    }
    u[n - 1] = c.lo;
    reduce_once(r, u, c.mid, m, n);
}

/* r = a^2 / R mod m, for a < m. Like mont_mul, but each column adds the cross products
   a_i a_j (i < j) once and doubles them (HAC 14.16), which saves almost half of the
   multiplications outside the reduction. r may alias a. */
static void mont_sqr(const mont_ctx *ctx, uint64_t *r, const uint64_t *a) {
    const size_t n = ctx->n;
    const uint64_t *m = ctx->m;
    uint64_t u[n];
    acc3 c = {0, 0, 0};
    for (size_t k = 0; k < 2 * n - 1; k++) {
        const size_t low = k < n ? 0 : k - n + 1; /* smallest index whose partner is below n */
        acc3 cross = {0, 0, 0};
        for (size_t i = low; 2 * i < k; i++) acc_mul(&cross, a[i], a[k - i]);
        acc_add_twice(&c, &cross);
        if ((k & 1) == 0) acc_mul(&c, a[k / 2], a[k / 2]);
        for (size_t i = low; i < (k < n ? k : n); i++) acc_mul(&c, u[i], m[k - i]);
        if (k < n) {
            u[k] = c.lo * ctx->m0inv;
            acc_mul(&c, u[k], m[0]);
        } else {
            u[k - n] = c.lo;
        }
        acc_shift(&c);
    }
    u[n - 1] = c.lo;
    reduce_once(r, u, c.mid, m, n);
}

/* x = 2 x mod m, for x < m; masked, so it serves secret moduli too. */
static void double_mod(uint64_t *x, const uint64_t *m, size_t n) {
    uint64_t carry = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t top = x[i] >> 63;
        x[i] = (x[i] << 1) | carry;
        carry = top;
    }
    uint64_t t[n];
    memcpy(t, x, sizeof t);
    reduce_once(x, t, carry, m, n);
}

static void mont_free(mont_ctx *ctx) {
    if (ctx->block) {
        wipe(ctx->block, 2 * ctx->n * sizeof(uint64_t));
        free(ctx->block);
    }
    ctx->block = NULL;
}

/* The products keep n-limb arrays on the stack; this bound (65536 bits, four times the
   largest RSA modulus accepted) keeps them small. */
#define MAX_LIMBS 1024

/* Whether m can be a Montgomery modulus: odd and above 1 with a non-zero top limb, at most
   MAX_LIMBS long. */
static int mont_modulus_ok(const uint64_t *m, size_t n) {
    if (n == 0 || n > MAX_LIMBS || (m[0] & 1) == 0 || m[n - 1] == 0) return 0;
    return n > 1 || m[0] >= 3;
}

/* Sets up the context with one and rr in `storage` (2 n limbs, owned by the caller); m must
   pass mont_modulus_ok. Only the bit length of m steers the work. */
static void mont_setup(mont_ctx *ctx, const uint64_t *m, size_t n, uint64_t *storage) {
    ctx->m = m;
    ctx->n = n;
    ctx->m0inv = neg_inverse64(m[0]);
    ctx->one = storage;
    ctx->rr = storage + n;
    ctx->block = NULL;

    /* R mod m: start from the top bit of m (below m since m is odd) and double up to 2^(64n). */
    const size_t bits = bit_length(m, n);
    uint64_t *x = ctx->one;
    memset(x, 0, n * sizeof *x);
    x[(bits - 1) / 64] = (uint64_t)1 << ((bits - 1) % 64);
    for (size_t i = bits - 1; i < 64 * n; i++) double_mod(x, m, n);

    /* R^2 mod m without a long division: 64 n = k * 2^s with k odd. Doubling R mod m k times
       gives 2^k in Montgomery form, and each Montgomery squaring squares the represented
       value, so s squarings give 2^(k 2^s) = R in Montgomery form, which is R^2 mod m. */
    size_t k = 64 * n, s = 0;
    while ((k & 1) == 0) {
        k >>= 1;
        s++;
    }
    memcpy(ctx->rr, x, n * sizeof *x);
    for (size_t i = 0; i < k; i++) double_mod(ctx->rr, m, n);
    for (size_t i = 0; i < s; i++) mont_sqr(ctx, ctx->rr, ctx->rr);
}

/* mont_setup with its own allocation (released by mont_free). */
static int mont_init(mont_ctx *ctx, const uint64_t *m, size_t n) {
    memset(ctx, 0, sizeof *ctx);
    if (!mont_modulus_ok(m, n)) return -1;
    uint64_t *block = calloc(2 * n, sizeof(uint64_t));
    if (!block) return -1;
    mont_setup(ctx, m, n, block);
    ctx->block = block;
    return 0;
}

/* out = table[index] (entries of n limbs), reading every entry so that the memory traffic
   does not depend on the secret index. */
static void table_select(uint64_t *out, const uint64_t *table, size_t entries, size_t n, uint64_t index) {
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < entries; i++) {
        const uint64_t mask = cauth_equal_mask(i, index);
        for (size_t j = 0; j < n; j++) out[j] |= table[i * n + j] & mask;
    }
}

/* Limbs of scratch mont_pow_secret needs. */
#define POW_SCRATCH_LIMBS(n) ((CAUTH_WINDOW_SIZE + 1) * (n))

/*
 * out = base^exp, both in Montgomery form (base below m), for a secret exponent: a fixed
 * 5-bit window over all 64 * elen exponent bits, one multiplication per window with a masked
 * table read, so the sequence of operations depends only on elen. `scratch` holds
 * POW_SCRATCH_LIMBS(n) limbs. out may alias base.
 */
static void mont_pow_secret(const mont_ctx *ctx, uint64_t *out, const uint64_t *base, const uint64_t *exp,
                            size_t elen, uint64_t *scratch) {
    const size_t n = ctx->n;
    uint64_t *table = scratch, *sel = scratch + CAUTH_WINDOW_SIZE * n;
    memcpy(table, ctx->one, n * sizeof *table);
    memcpy(table + n, base, n * sizeof *table);
    for (size_t i = 2; i < CAUTH_WINDOW_SIZE; i++) {
        if (i % 2 == 0) mont_sqr(ctx, table + i * n, table + (i / 2) * n);
        else mont_mul(ctx, table + i * n, table + (i - 1) * n, table + n);
    }
    /* The top window starts the accumulator, so the first squarings of 1 are skipped. */
    const size_t windows = (64 * elen + CAUTH_WINDOW_BITS - 1) / CAUTH_WINDOW_BITS;
    table_select(out, table, CAUTH_WINDOW_SIZE, n, cauth_window_at(exp, elen, (windows - 1) * CAUTH_WINDOW_BITS));
    for (size_t w = windows - 1; w-- > 0;) {
        for (int sq = 0; sq < CAUTH_WINDOW_BITS; sq++) mont_sqr(ctx, out, out);
        table_select(sel, table, CAUTH_WINDOW_SIZE, n, cauth_window_at(exp, elen, w * CAUTH_WINDOW_BITS));
        mont_mul(ctx, out, out, sel);
    }
}

/* out = base^exp in Montgomery form (base in Montgomery form) for a public exponent: plain
   left-to-right square-and-multiply from the top set bit (HAC 14.79). out must not alias base. */
static void mont_pow_public(const mont_ctx *ctx, uint64_t *out, const uint64_t *base, const uint64_t *exp,
                            size_t elen) {
    memcpy(out, ctx->one, ctx->n * sizeof *out);
    for (size_t b = bit_length(exp, elen); b-- > 0;) {
        mont_sqr(ctx, out, out);
        if ((exp[b / 64] >> (b % 64)) & 1) mont_mul(ctx, out, out, base);
    }
}

/* Leaves Montgomery form: out = x / R mod m, fully reduced. out may alias x. */
static void mont_leave(const mont_ctx *ctx, uint64_t *out, const uint64_t *x) {
    uint64_t unit[ctx->n];
    memset(unit, 0, sizeof unit);
    unit[0] = 1;
    mont_mul(ctx, out, x, unit);
}

int cauth_bn_modexp(uint64_t *result, const uint64_t *base, const uint64_t *exponent, size_t exponent_limbs,
                    const uint64_t *modulus, size_t limbs, int exponent_is_secret) {
    static const uint64_t zero = 0;
    if (exponent_limbs == 0) { /* an empty exponent is 0 */
        exponent = &zero;
        exponent_limbs = 1;
    }
    mont_ctx ctx;
    if (mont_init(&ctx, modulus, limbs) != 0) return -1;
    const size_t scratch_limbs = POW_SCRATCH_LIMBS(limbs) + limbs;
    uint64_t *scratch = calloc(scratch_limbs, sizeof(uint64_t));
    if (!scratch) {
        mont_free(&ctx);
        return -1;
    }
    uint64_t *x = scratch + POW_SCRATCH_LIMBS(limbs);
    /* Into Montgomery form; any base below R works since R^2 mod m is below m. */
    mont_mul(&ctx, x, base, ctx.rr);
    if (exponent_is_secret) mont_pow_secret(&ctx, result, x, exponent, exponent_limbs, scratch);
    else mont_pow_public(&ctx, result, x, exponent, exponent_limbs);
    mont_leave(&ctx, result, result);
    wipe(scratch, scratch_limbs * sizeof(uint64_t));
    free(scratch);
    mont_free(&ctx);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* RSA private-key operation with the Chinese remainder theorem (RFC 8017 section 5.1.2, step
   2.b; HAC 14.75 for the recombination), on a key prepared once. */

/* r = a - b mod m for a, b < m (n limbs); masked. r may alias a or b. */
static void sub_mod(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *m, size_t n) {
    const uint64_t borrow = sub_n(r, a, b, n);
    const uint64_t mask = (uint64_t)0 - borrow;
    uint64_t carry = 0;
    for (size_t i = 0; i < n; i++) {
        const u128 s = (u128)r[i] + (m[i] & mask) + carry;
        r[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
}

/* r = a + b mod m for a, b < m (n limbs); masked. r may alias a or b. */
static void add_mod(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *m, size_t n) {
    uint64_t t[n], carry = 0;
    for (size_t i = 0; i < n; i++) {
        const u128 s = (u128)a[i] + b[i] + carry;
        t[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
    reduce_once(r, t, carry, m, n);
}

/* out = x R mod m (x mod m in Montgomery form) for x of any length xl: Horner's rule in base R
   over n-limb chunks from the top, V <- V R + c. In Montgomery form V R is mont_mul(V, R^2)
   and a chunk c (below R) enters as mont_mul(c, R^2) = c R. A 2048-bit x and a 1024-bit m
   take three products. */
static void to_mont_reduced(const mont_ctx *ctx, uint64_t *out, const uint64_t *x, size_t xl) {
    const size_t n = ctx->n;
    const size_t chunks = xl == 0 ? 1 : (xl + n - 1) / n;
    uint64_t c[n];
    for (size_t j = chunks; j-- > 0;) {
        memset(c, 0, sizeof c);
        for (size_t i = 0; i < n && j * n + i < xl; i++) c[i] = x[j * n + i];
        mont_mul(ctx, c, c, ctx->rr);
        if (j == chunks - 1) {
            memcpy(out, c, sizeof c);
        } else {
            mont_mul(ctx, out, out, ctx->rr);
            add_mod(out, out, c, ctx->m, n);
        }
    }
}

/* out = 2^e mod m for e >= 64 n: from R or R^2 mod m, masked doublings the rest of the way. */
static void pow2_mod(const mont_ctx *ctx, uint64_t *out, size_t e) {
    const size_t n = ctx->n;
    size_t have = 128 * n;
    if (e >= have) {
        memcpy(out, ctx->rr, n * sizeof *out);
    } else {
        memcpy(out, ctx->one, n * sizeof *out);
        have = 64 * n;
    }
    for (; have < e; have++) double_mod(out, ctx->m, n);
}

struct cauth_rsa_key {
    size_t n_limbs, e_limbs, p_limbs, q_limbs;
    size_t d_limbs;               /* dp and dq are both stored zero-padded to this length */
    const uint64_t *n, *e, *p, *q, *dp, *dq, *qinv;
    mont_ctx mn, mp, mq;
    int vector;                   /* ifma is prepared and used */
    cauth_ifma_crt ifma;
    uint64_t *block;              /* one allocation behind every array above */
    size_t block_limbs;
};

cauth_rsa_key *cauth_rsa_key_new(const uint64_t *n, size_t n_limbs, const uint64_t *e, size_t e_limbs,
                                 const uint64_t *p, size_t p_limbs, const uint64_t *q, size_t q_limbs,
                                 const uint64_t *dp, const uint64_t *dq, const uint64_t *qinv) {
    if (!mont_modulus_ok(n, n_limbs) || !mont_modulus_ok(p, p_limbs) || !mont_modulus_ok(q, q_limbs)) return NULL;
    if (e_limbs == 0 || p_limbs > n_limbs || q_limbs > n_limbs || p_limbs + q_limbs < n_limbs) return NULL;
    const size_t d_limbs = p_limbs > q_limbs ? p_limbs : q_limbs;
    const size_t p_bits = bit_length(p, p_limbs), q_bits = bit_length(q, q_limbs);
    const size_t nv = cauth_ifma_usable() ? cauth_ifma_vectors(p_bits > q_bits ? p_bits : q_bits) : 0;

    cauth_rsa_key *key = calloc(1, sizeof *key);
    if (!key) return NULL;
    /* n e p q, dp dq (padded), qinv, one and R^2 for n p q, the vector form */
    key->block_limbs = 3 * (n_limbs + p_limbs + q_limbs) + e_limbs + 2 * d_limbs + p_limbs +
                       (nv ? cauth_ifma_storage_limbs(nv) : 0);
    key->block = calloc(key->block_limbs, sizeof(uint64_t));
    if (!key->block) {
        free(key);
        return NULL;
    }
    uint64_t *next = key->block;
#define TAKE(count) (next += (count), next - (count))
    uint64_t *kn = TAKE(n_limbs), *ke = TAKE(e_limbs), *kp = TAKE(p_limbs), *kq = TAKE(q_limbs);
    uint64_t *kdp = TAKE(d_limbs), *kdq = TAKE(d_limbs), *kqinv = TAKE(p_limbs);
    memcpy(kn, n, n_limbs * sizeof *kn);
    memcpy(ke, e, e_limbs * sizeof *ke);
    memcpy(kp, p, p_limbs * sizeof *kp);
    memcpy(kq, q, q_limbs * sizeof *kq);
    memcpy(kdp, dp, p_limbs * sizeof *kdp);
    memcpy(kdq, dq, q_limbs * sizeof *kdq);
    memcpy(kqinv, qinv, p_limbs * sizeof *kqinv);
    key->n_limbs = n_limbs;
    key->e_limbs = e_limbs;
    key->p_limbs = p_limbs;
    key->q_limbs = q_limbs;
    key->d_limbs = d_limbs;
    key->n = kn;
    key->e = ke;
    key->p = kp;
    key->q = kq;
    key->dp = kdp;
    key->dq = kdq;
    key->qinv = kqinv;
    mont_setup(&key->mn, kn, n_limbs, TAKE(2 * n_limbs));
    mont_setup(&key->mp, kp, p_limbs, TAKE(2 * p_limbs));
    mont_setup(&key->mq, kq, q_limbs, TAKE(2 * q_limbs));
    if (nv) {
        /* The vector form needs R'^2 mod p and mod q for its own R' = 2^(52 k). */
        uint64_t rr_p[p_limbs], rr_q[q_limbs];
        const size_t e2 = 2 * 52 * 4 * nv;
        pow2_mod(&key->mp, rr_p, e2);
        pow2_mod(&key->mq, rr_q, e2);
        cauth_ifma_crt_setup(&key->ifma, nv, TAKE(cauth_ifma_storage_limbs(nv)), kp, p_limbs, kq, q_limbs, rr_p, rr_q);
        wipe(rr_p, sizeof rr_p);
        wipe(rr_q, sizeof rr_q);
        key->vector = 1;
    }
#undef TAKE
    return key;
}

void cauth_rsa_key_free(cauth_rsa_key *key) {
    if (!key) return;
    wipe(key->block, key->block_limbs * sizeof(uint64_t));
    free(key->block);
    wipe(key, sizeof *key);
    free(key);
}

int cauth_rsa_private(const cauth_rsa_key *key, uint64_t *out, const uint64_t *in, int flags) {
    const size_t nl = key->n_limbs, pl = key->p_limbs, ql = key->q_limbs;
    const mont_ctx *mp = &key->mp, *mq = &key->mq, *mn = &key->mn;
    /* The input is public (an encoded message), so this comparison may take any time. */
    if (compare(in, key->n, nl) >= 0) return -1;
    const int vector = key->vector && !(flags & CAUTH_RSA_PORTABLE);
    const size_t larger = pl > ql ? pl : ql;
    const size_t pow_limbs = vector ? cauth_ifma_scratch_limbs(key->ifma.nv) : POW_SCRATCH_LIMBS(larger);
    const size_t work_limbs = 3 * pl + 2 * ql + (pl + ql) + 2 * nl + pow_limbs;
    uint64_t *work = calloc(work_limbs, sizeof(uint64_t));
    if (!work) return -1;
    uint64_t *xp = work, *xq = xp + pl, *sp = xq + ql, *sq = sp + pl, *h = sq + ql;
    uint64_t *s = h + pl, *c1 = s + pl + ql, *c2 = c1 + nl, *scratch = c2 + nl;

    /* m mod p and m mod q, in Montgomery form; then s1 = m^dp mod p as s1 R mod p and
       s2 = m^dq mod q as a plain value. */
    to_mont_reduced(mp, xp, in, nl);
    to_mont_reduced(mq, xq, in, nl);
    if (vector) {
        mont_leave(mp, xp, xp);
        mont_leave(mq, xq, xq);
        cauth_ifma_crt_pow(&key->ifma, sp, sq, xp, xq, key->dp, key->dq, key->d_limbs, scratch);
        mont_mul(mp, sp, sp, mp->rr);
    } else {
        mont_pow_secret(mp, sp, xp, key->dp, pl, scratch);
        mont_pow_secret(mq, sq, xq, key->dq, ql, scratch);
        mont_leave(mq, sq, sq);
    }

    /* h = (s1 - s2) qInv mod p: the difference in Montgomery form times the plain qInv leaves
       Montgomery form by itself. */
    to_mont_reduced(mp, h, sq, ql);
    sub_mod(h, sp, h, key->p, pl);
    mont_mul(mp, h, h, key->qinv);
    /* s = s2 + q h, below q + q (p - 1) = n, so no reduction. */
    cauth_bn_mul(s, key->q, ql, h, pl);
    uint64_t carry = 0;
    for (size_t i = 0; i < pl + ql; i++) {
        const u128 t = (u128)s[i] + (i < ql ? sq[i] : 0) + carry;
        s[i] = (uint64_t)t;
        carry = (uint64_t)(t >> 64);
    }
    memcpy(out, s, nl * sizeof *out);

    /* A fault in either half would make s right modulo one prime only, and gcd(s^e - m, n)
       would reveal the other (Boneh, DeMillo, Lipton 1997). s^e mod n must give m back; with
       a small e this costs a few percent of the private operation. */
    mont_mul(mn, c1, out, mn->rr);
    mont_pow_public(mn, c2, c1, key->e, key->e_limbs);
    mont_leave(mn, c2, c2);
    uint64_t diff = 0;
    for (size_t i = 0; i < nl; i++) diff |= c2[i] ^ in[i];
    const int status = diff == 0 ? 0 : 1;
    if (status != 0) memset(out, 0, nl * sizeof *out);

    wipe(work, work_limbs * sizeof(uint64_t));
    free(work);
    return status;
}

/* ---------------------------------------------------------------------------------------- */
/* Primality (FIPS 186-5 appendix B.3: trial division, then Miller-Rabin). */

/* Odd primes below this bound screen candidates before Miller-Rabin. */
#define SMALL_PRIME_BOUND 2048

uint32_t cauth_bn_mod_u32(const uint64_t *a, size_t limbs, uint32_t m) {
    /* Two 32-bit digits per limb keep every step a native 64-bit division. */
    uint64_t r = 0;
    for (size_t i = limbs; i-- > 0;) {
        r = ((r << 32) | (a[i] >> 32)) % m;
        r = ((r << 32) | (a[i] & 0xffffffffu)) % m;
    }
    return (uint32_t)r;
}

/* Whether one of the primes in `group` (whose product is `product`) divides a. */
static int group_divides(const uint64_t *a, size_t limbs, const uint32_t *group, size_t count, uint64_t product) {
    const uint32_t r = cauth_bn_mod_u32(a, limbs, (uint32_t)product);
    for (size_t i = 0; i < count; i++) {
        if (r % group[i] == 0) return 1;
    }
    return 0;
}

int cauth_bn_has_small_prime_factor(const uint64_t *a, size_t limbs) {
    uint8_t composite[SMALL_PRIME_BOUND] = {0};
    /* Odd primes are batched into products below 2^32 (at most nine fit), so the big number
       is reduced once per product and each prime then divides a 32-bit remainder. */
    uint32_t group[16];
    size_t count = 0;
    uint64_t product = 1;
    for (uint32_t p = 3; p < SMALL_PRIME_BOUND; p += 2) {
        if (composite[p]) continue;
        for (uint32_t k = p * p; k < SMALL_PRIME_BOUND; k += 2 * p) composite[k] = 1;
        if (product * p > 0xffffffffu) {
            if (group_divides(a, limbs, group, count, product)) return 1;
            count = 0;
            product = 1;
        }
        group[count++] = p;
        product *= p;
    }
    return count > 0 && group_divides(a, limbs, group, count, product);
}

int cauth_bn_miller_rabin(const uint64_t *w, size_t limbs, const uint64_t *bases, size_t rounds) {
    mont_ctx ctx;
    if (mont_init(&ctx, w, limbs) != 0) return -1;
    const size_t n = limbs;
    const size_t buffer_limbs = 4 * n + POW_SCRATCH_LIMBS(n);
    uint64_t *buffer = calloc(buffer_limbs, sizeof(uint64_t));
    if (!buffer) {
        mont_free(&ctx);
        return -1;
    }
    uint64_t *d = buffer, *minus_one = buffer + n, *b = buffer + 2 * n, *x = buffer + 3 * n;
    uint64_t *scratch = buffer + 4 * n;

    /* w - 1 = 2^s d with d odd (w is odd, so s >= 1). */
    memcpy(d, w, n * sizeof *d);
    d[0] &= ~(uint64_t)1;
    const size_t s = trailing_zeros(d, n);
    shift_right(d, n, s);
    /* w - 1 in Montgomery form is w - (R mod w). */
    sub_n(minus_one, w, ctx.one, n);

    const size_t bits = bit_length(w, n);
    int verdict = 1;
    for (size_t round = 0; round < rounds && verdict == 1; round++) {
        /* The base keeps fewer bits than w, so 2 <= b <= w - 2 after lifting 0 and 1 to 2. */
        memcpy(b, bases + round * n, n * sizeof *b);
        for (size_t j = 0; j < n; j++) {
            const size_t low = 64 * j;
            if (low >= bits - 1) b[j] = 0;
            else if (bits - 1 - low < 64) b[j] &= ((uint64_t)1 << (bits - 1 - low)) - 1;
        }
        if (bit_length(b, n) <= 1) {
            memset(b, 0, n * sizeof *b);
            b[0] = 2;
        }
        /* b^d in Montgomery form; the candidate is a secret prime to be, so the exponent d
           takes the fixed-window path. */
        mont_mul(&ctx, b, b, ctx.rr);
        mont_pow_secret(&ctx, x, b, d, n, scratch);
        if (compare(x, ctx.one, n) == 0 || compare(x, minus_one, n) == 0) continue;
        int witness = 1;
        for (size_t i = 1; i < s; i++) {
            mont_sqr(&ctx, x, x);
            if (compare(x, minus_one, n) == 0) {
                witness = 0;
                break;
            }
            if (compare(x, ctx.one, n) == 0) break;
        }
        if (witness) verdict = 0;
    }
    wipe(buffer, buffer_limbs * sizeof(uint64_t));
    free(buffer);
    mont_free(&ctx);
    return verdict;
}

/* ---------------------------------------------------------------------------------------- */
/* Schoolbook helpers for key loading and generation. */

void cauth_bn_mul(uint64_t *result, const uint64_t *a, size_t a_limbs, const uint64_t *b, size_t b_limbs) {
    memset(result, 0, (a_limbs + b_limbs) * sizeof *result);
    for (size_t i = 0; i < a_limbs; i++) {
        uint64_t c = 0;
        for (size_t j = 0; j < b_limbs; j++) {
            u128 s = (u128)a[i] * b[j] + result[i + j] + c;
            result[i + j] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        result[i + b_limbs] = c;
    }
}

int cauth_bn_divmod(uint64_t *quotient, uint64_t *remainder, const uint64_t *a, size_t a_limbs,
                    const uint64_t *d, size_t d_limbs) {
    if (d_limbs == 0 || is_zero(d, d_limbs)) return -1;
    /* Restoring binary long division: one bit of `a` at a time into a remainder one limb
       wider than d, subtracting d whenever it fits. The CRT signing path divides secret
       values, so every bit position is visited and the subtraction is selected by a mask. */
    const size_t w = d_limbs + 1;
    uint64_t *r = calloc(3 * w, sizeof(uint64_t));
    if (!r) return -1;
    uint64_t *dd = r + w, *diff = r + 2 * w;
    memcpy(dd, d, d_limbs * sizeof *dd);
    if (quotient) memset(quotient, 0, a_limbs * sizeof *quotient);
    for (size_t bit = 64 * a_limbs; bit-- > 0;) {
        uint64_t carry = (a[bit / 64] >> (bit % 64)) & 1;
        for (size_t j = 0; j < w; j++) {
            uint64_t top = r[j] >> 63;
            r[j] = (r[j] << 1) | carry;
            carry = top;
        }
        const uint64_t fits = 1 - sub_n(diff, r, dd, w);
        const uint64_t take = (uint64_t)0 - fits;
        for (size_t j = 0; j < w; j++) r[j] = (diff[j] & take) | (r[j] & ~take);
        if (quotient) quotient[bit / 64] |= fits << (bit % 64);
    }
    memcpy(remainder, r, d_limbs * sizeof *remainder);
    wipe(r, 3 * w * sizeof(uint64_t));
    free(r);
    return 0;
}

int cauth_bn_gcd(uint64_t *result, const uint64_t *a, const uint64_t *b, size_t limbs) {
    /* Binary gcd (Stein): common factors of two come out first, then odd values subtract. */
    uint64_t *block = calloc(2 * limbs, sizeof(uint64_t));
    if (!block) return -1;
    uint64_t *x = block, *y = block + limbs;
    memcpy(x, a, limbs * sizeof *x);
    memcpy(y, b, limbs * sizeof *y);
    if (is_zero(x, limbs) || is_zero(y, limbs)) {
        for (size_t i = 0; i < limbs; i++) result[i] = x[i] | y[i];
        wipe(block, 2 * limbs * sizeof(uint64_t));
        free(block);
        return 0;
    }
    size_t tx = trailing_zeros(x, limbs), ty = trailing_zeros(y, limbs);
    const size_t common = tx < ty ? tx : ty;
    shift_right(x, limbs, tx);
    for (;;) {
        shift_right(y, limbs, trailing_zeros(y, limbs));
        if (compare(x, y, limbs) > 0) {
            uint64_t *swap = x;
            x = y;
            y = swap;
        }
        sub_n(y, y, x, limbs);
        if (is_zero(y, limbs)) break;
    }
    memcpy(result, x, limbs * sizeof *result);
    shift_left(result, limbs, common);
    wipe(block, 2 * limbs * sizeof(uint64_t));
    free(block);
    return 0;
}
