/*
 * Multi-precision unsigned arithmetic for RSA (RFC 8017): Montgomery multiplication, modular
 * exponentiation, Miller-Rabin, and the few slower helpers key handling needs.
 *
 * Numbers are arrays of 64-bit limbs, least significant limb first. Products use
 * `unsigned __int128`, which clang and gcc provide on every 64-bit target the package builds
 * for (Linux x86_64/arm64, macOS arm64/x86_64).
 *
 * This lives in C because debug builds of Swift are far too slow for these loops; the Swift
 * layer (AuthCrypto/BigUInt.swift) only shapes inputs and outputs.
 *
 * Side channels: exponentiation with a secret exponent uses a fixed 4-bit window over every
 * limb of the exponent (its length, not its bit length, shows), always multiplies, reads the
 * window table with masks rather than an index, and ends each Montgomery product with a
 * masked (not branching) conditional subtraction; long division (used on secret values by
 * CRT signing) visits every bit and subtracts under a mask. The gcd and Miller-Rabin's
 * early exits are plain: they only run while generating a key, on candidates.
 */

#include "CAuthCrypto.h"

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
/* Montgomery arithmetic (Montgomery, "Modular multiplication without trial division", 1985;
   the CIOS ordering of Koc, Acar, Kaliski, "Analyzing and comparing Montgomery
   multiplication algorithms", 1996). R = 2^(64 n). */

typedef struct {
    const uint64_t *m; /* odd modulus, n limbs */
    size_t n;
    uint64_t m0inv;   /* -m^-1 mod 2^64 */
    uint64_t *one;    /* R mod m (1 in Montgomery form) */
    uint64_t *rr;     /* R^2 mod m (converts into Montgomery form) */
    uint64_t *t;      /* n + 2 limbs of scratch for mont_mul */
    uint64_t *block;  /* the single allocation behind one, rr, t */
    size_t block_limbs;
} mont_ctx;

/* Newton iteration for the inverse modulo 2^64: x = m0 is right to 3 bits (m0 * m0 = 1 mod 8
   for odd m0) and each step doubles the number of correct bits. */
static uint64_t neg_inverse64(uint64_t m0) {
    uint64_t x = m0;
    for (int i = 0; i < 5; i++) x *= 2 - m0 * x;
    return (uint64_t)0 - x;
}

/* r = a * b / R mod m, for a * b < R * m (true when either factor is below m and the other
   below R). r may alias a or b. */
static void mont_mul(const mont_ctx *ctx, uint64_t *r, const uint64_t *a, const uint64_t *b) {
    const size_t n = ctx->n;
    const uint64_t *m = ctx->m;
    uint64_t *t = ctx->t;
    memset(t, 0, (n + 2) * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        uint64_t c = 0;
        const uint64_t bi = b[i];
        for (size_t j = 0; j < n; j++) {
            u128 s = (u128)a[j] * bi + t[j] + c;
            t[j] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        u128 s = (u128)t[n] + c;
        t[n] = (uint64_t)s;
        t[n + 1] = (uint64_t)(s >> 64);

        const uint64_t q = t[0] * ctx->m0inv;
        s = (u128)q * m[0] + t[0];
        c = (uint64_t)(s >> 64);
        for (size_t j = 1; j < n; j++) {
            s = (u128)q * m[j] + t[j] + c;
            t[j - 1] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        s = (u128)t[n] + c;
        t[n - 1] = (uint64_t)s;
        t[n] = t[n + 1] + (uint64_t)(s >> 64);
    }
    /* Here t < 2m. Subtract m into r, then keep t instead when that borrowed past t[n]. */
    const uint64_t borrow = sub_n(r, t, m, n);
    const uint64_t keep = (uint64_t)0 - (uint64_t)(t[n] < borrow);
    for (size_t j = 0; j < n; j++) r[j] = (t[j] & keep) | (r[j] & ~keep);
}

/* x = 2 x mod m, for x < m. The modulus is public, so branching is fine. */
static void double_mod(uint64_t *x, const uint64_t *m, size_t n) {
    uint64_t carry = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t top = x[i] >> 63;
        x[i] = (x[i] << 1) | carry;
        carry = top;
    }
    if (carry || compare(x, m, n) >= 0) sub_n(x, x, m, n);
}

static void mont_free(mont_ctx *ctx) {
    if (ctx->block) {
        wipe(ctx->block, ctx->block_limbs * sizeof(uint64_t));
        free(ctx->block);
    }
    ctx->block = NULL;
}

/* Sets up the context; m must be odd and above 1 with a non-zero top limb. */
static int mont_init(mont_ctx *ctx, const uint64_t *m, size_t n) {
    memset(ctx, 0, sizeof *ctx);
    if (n == 0 || (m[0] & 1) == 0 || m[n - 1] == 0) return -1;
    if (n == 1 && m[0] < 3) return -1;
    ctx->m = m;
    ctx->n = n;
    ctx->m0inv = neg_inverse64(m[0]);
    ctx->block_limbs = 3 * n + 2;
    ctx->block = calloc(ctx->block_limbs, sizeof(uint64_t));
    if (!ctx->block) return -1;
    ctx->one = ctx->block;
    ctx->rr = ctx->block + n;
    ctx->t = ctx->block + 2 * n;

    /* R mod m: start from the top bit of m (below m since m is odd) and double up to 2^(64n). */
    const size_t bits = bit_length(m, n);
    uint64_t *x = ctx->one;
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
    for (size_t i = 0; i < s; i++) mont_mul(ctx, ctx->rr, ctx->rr, ctx->rr);
    return 0;
}

/*
 * out = base^exp in Montgomery form (base in ordinary form, any value below R).
 * With `secret`, a fixed 4-bit window over all 64 * elen exponent bits, one multiplication
 * per window and a masked table read; otherwise plain left-to-right square-and-multiply
 * starting at the top set bit (public exponents such as 65537).
 */
static int mont_pow(const mont_ctx *ctx, uint64_t *out, const uint64_t *base, const uint64_t *exp,
                    size_t elen, int secret) {
    const size_t n = ctx->n;
    const size_t table_limbs = secret ? 16 * n : n;
    uint64_t *scratch = calloc(table_limbs + n, sizeof(uint64_t));
    if (!scratch) return -1;
    uint64_t *table = scratch, *sel = scratch + table_limbs;

    if (secret) {
        memcpy(table, ctx->one, n * sizeof *table);
        mont_mul(ctx, table + n, base, ctx->rr);
        for (size_t i = 2; i < 16; i++) mont_mul(ctx, table + i * n, table + (i - 1) * n, table + n);
        memcpy(out, ctx->one, n * sizeof *out);
        for (size_t w = 16 * elen; w-- > 0;) {
            for (int sq = 0; sq < 4; sq++) mont_mul(ctx, out, out, out);
            const uint64_t window = (exp[w / 16] >> (4 * (w % 16))) & 0xf;
            memset(sel, 0, n * sizeof *sel);
            for (uint64_t i = 0; i < 16; i++) {
                /* mask = all ones when i == window, computed without a comparison branch */
                const uint64_t diff = i ^ window;
                const uint64_t mask = ((diff | ((uint64_t)0 - diff)) >> 63) - 1;
                for (size_t j = 0; j < n; j++) sel[j] |= table[i * n + j] & mask;
            }
            mont_mul(ctx, out, out, sel);
        }
    } else {
        mont_mul(ctx, table, base, ctx->rr);
        memcpy(out, ctx->one, n * sizeof *out);
        const size_t bits = bit_length(exp, elen);
        for (size_t b = bits; b-- > 0;) {
            mont_mul(ctx, out, out, out);
            if ((exp[b / 64] >> (b % 64)) & 1) mont_mul(ctx, out, out, table);
        }
    }
    wipe(scratch, (table_limbs + n) * sizeof(uint64_t));
    free(scratch);
    return 0;
}

int cauth_bn_modexp(uint64_t *result, const uint64_t *base, const uint64_t *exponent, size_t exponent_limbs,
                    const uint64_t *modulus, size_t limbs, int exponent_is_secret) {
    mont_ctx ctx;
    if (mont_init(&ctx, modulus, limbs) != 0) return -1;
    int status = mont_pow(&ctx, result, base, exponent, exponent_limbs, exponent_is_secret);
    if (status == 0) {
        /* Leave Montgomery form: multiply by plain 1. */
        uint64_t *unit = calloc(limbs, sizeof(uint64_t));
        if (unit) {
            unit[0] = 1;
            mont_mul(&ctx, result, result, unit);
            free(unit);
        } else {
            status = -1;
        }
    }
    mont_free(&ctx);
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
    uint64_t *buffer = calloc(4 * n, sizeof(uint64_t));
    if (!buffer) {
        mont_free(&ctx);
        return -1;
    }
    uint64_t *d = buffer, *minus_one = buffer + n, *b = buffer + 2 * n, *x = buffer + 3 * n;

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
        if (mont_pow(&ctx, x, b, d, n, 1) != 0) {
            verdict = -1;
            break;
        }
        if (compare(x, ctx.one, n) == 0 || compare(x, minus_one, n) == 0) continue;
        int witness = 1;
        for (size_t i = 1; i < s; i++) {
            mont_mul(&ctx, x, x, x);
            if (compare(x, minus_one, n) == 0) {
                witness = 0;
                break;
            }
            if (compare(x, ctx.one, n) == 0) break;
        }
        if (witness) verdict = 0;
    }
    wipe(buffer, 4 * n * sizeof(uint64_t));
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
