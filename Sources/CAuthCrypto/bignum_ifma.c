/*
 * The two exponentiations of an RSA-CRT private-key operation, side by side, with AVX-512
 * IFMA (VPMADD52LUQ / VPMADD52HUQ: per 64-bit lane, add the low or the high 52 bits of a
 * 52 x 52-bit product) on 256-bit vectors (AVX-512VL). Intel has it since Ice Lake, AMD since
 * Zen 4. The functions carry a target attribute so the rest of the package builds for the
 * baseline ISA, and bignum.c only calls them after cauth_ifma_usable() said yes.
 *
 * Representation: k = 4 nv digits of 52 bits, least significant first, one digit per lane,
 * so a number fills nv vectors; R = 2^(52 k). Multiplication is Montgomery's, word by word
 * (operand scanning, Koc, Acar, Kaliski 1996), in the "almost Montgomery" form of Gueron
 * ("Efficient software implementations of modular exponentiation", J. Cryptographic
 * Engineering 2, 2012): operands and results stay below 2 m instead of m, which holds as long
 * as 4 m <= R, so no conditional subtraction is needed until the very end. Within a
 * multiplication, lanes collect unreduced sums (the 12 spare bits of each lane absorb them)
 * and carries are resolved once at the end.
 *
 * One multiplication is a chain of k dependent steps (each reduction digit needs the previous
 * one), too short to keep the multipliers busy; the p and q halves of RSA-CRT are independent,
 * so every call here advances both, which fills the pipeline with two chains.
 *
 * Side channels: the schedule is fixed by nv and the exponent length; table entries are
 * selected by reading all of them under masks; carries are resolved with mask arithmetic, not
 * branches.
 */

#include "CAuthCrypto.h"
#include "bignum_internal.h"

#include <string.h>

#define DIGIT_MASK ((UINT64_C(1) << 52) - 1)

typedef unsigned __int128 u128;

size_t cauth_ifma_vectors(size_t bits) {
    /* 4 m <= R needs bits + 2 <= 52 k = 208 nv. */
    const size_t nv = (bits + 2 + 207) / 208;
    return nv <= CAUTH_IFMA_MAX_VECTORS ? nv : 0;
}

/* p, q, rr_p, rr_q, one_p, one_q */
size_t cauth_ifma_storage_limbs(size_t nv) { return 6 * 4 * nv; }

/* Two tables, two accumulators, two selected entries, the digit 1; plus room to align to 64
   bytes so that no vector load straddles a cache line. */
size_t cauth_ifma_scratch_limbs(size_t nv) { return (2 * CAUTH_WINDOW_SIZE + 5) * 4 * nv + 8; }

#if defined(__x86_64__)
/* ------------------------------------------------------------------------------------------ */
#include <cpuid.h>
#include <immintrin.h>

#define CAUTH_IFMA __attribute__((target("avx512f,avx512vl,avx512ifma")))
#define INLINE static inline __attribute__((always_inline))

/* d (k digits) = x (limbs 64-bit limbs); bits of x beyond 52 k are dropped. */
static void to_digits(uint64_t *d, size_t k, const uint64_t *x, size_t limbs) {
    for (size_t i = 0; i < k; i++) {
        const size_t bit = 52 * i, w = bit / 64, s = bit % 64;
        uint64_t v = w < limbs ? x[w] >> s : 0;
        if (s > 12 && w + 1 < limbs) v |= x[w + 1] << (64 - s);
        d[i] = v & DIGIT_MASK;
    }
}

/* x (limbs 64-bit limbs) = d (k digits, each below 2^52); bits beyond 64 limbs are dropped. */
static void from_digits(uint64_t *x, size_t limbs, const uint64_t *d, size_t k) {
    memset(x, 0, limbs * sizeof *x);
    for (size_t i = 0; i < k; i++) {
        const size_t bit = 52 * i, w = bit / 64, s = bit % 64;
        if (w < limbs) x[w] |= d[i] << s;
        if (s > 12 && w + 1 < limbs) x[w + 1] |= d[i] >> (64 - s);
    }
}

/* x = x - m when x >= m (n limbs), else unchanged; masked, not branching. */
static void subtract_if_not_below(uint64_t *x, const uint64_t *m, size_t n) {
    uint64_t d[n], borrow = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t a = x[i], b = m[i];
        const uint64_t t = a - b;
        d[i] = t - borrow;
        borrow = (a < b) | (t < borrow);
    }
    const uint64_t keep = (uint64_t)0 - borrow; /* all ones when x < m */
    for (size_t i = 0; i < n; i++) x[i] = (x[i] & keep) | (d[i] & ~keep);
}

/* -m0^-1 mod 2^52 for odd m0 (Newton iteration as in bignum.c, each step doubling the
   correct low bits from 3). */
static uint64_t neg_inverse52(uint64_t m0) {
    uint64_t x = m0;
    for (int i = 0; i < 5; i++) x *= 2 - m0 * x;
    return ((uint64_t)0 - x) & DIGIT_MASK;
}

__attribute__((target("xsave"))) static uint64_t read_xcr0(void) { return _xgetbv(0); }

int cauth_ifma_usable(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    if (!((ecx >> 27) & 1)) return 0; /* OSXSAVE: XGETBV is available */
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    const unsigned f = (ebx >> 16) & 1, ifma = (ebx >> 21) & 1, vl = (ebx >> 31) & 1;
    if (!(f && ifma && vl)) return 0;
    /* The OS must save the SSE, AVX, opmask and upper ZMM state (XCR0 bits 1, 2, 5, 6, 7). */
    return (read_xcr0() & 0xe6) == 0xe6;
}

INLINE CAUTH_IFMA __m256i load4(const uint64_t *p) { return _mm256_loadu_si256((const __m256i *)p); }

/*
 * Carries: lanes hold up to 63 bits; afterwards every lane is a 52-bit digit. First each
 * lane's bits above 52 move one lane up (leaving lanes below 2^52 + 2^12), then the single
 * carries that remain are found all at once as in a carry-lookahead adder: with one bit per
 * lane, g marks lanes that carry out on their own (>= 2^52) and p lanes that pass an incoming
 * carry on (== 2^52 - 1); adding (g | p) + g over those bit strings moves every carry as far
 * as it runs, and XOR with p leaves exactly the lanes that receive one. The value must fit
 * in k digits (no carry leaves the top lane).
 */
INLINE CAUTH_IFMA void normalize(__m256i *x, const size_t nv) {
    const __m256i mask = _mm256_set1_epi64x((long long)DIGIT_MASK), zero = _mm256_setzero_si256();
    __m256i high[CAUTH_IFMA_MAX_VECTORS];
    for (size_t v = 0; v < nv; v++) {
        high[v] = _mm256_srli_epi64(x[v], 52);
        x[v] = _mm256_and_si256(x[v], mask);
    }
    /* lane j of the shifted vector holds the high part of lane j - 1 */
    x[0] = _mm256_add_epi64(x[0], _mm256_alignr_epi64(high[0], zero, 3));
    for (size_t v = 1; v < nv; v++) x[v] = _mm256_add_epi64(x[v], _mm256_alignr_epi64(high[v], high[v - 1], 3));
    uint64_t g = 0, p = 0;
    for (size_t v = 0; v < nv; v++) {
        g |= (uint64_t)_mm256_cmpgt_epu64_mask(x[v], mask) << (4 * v);
        p |= (uint64_t)_mm256_cmpeq_epu64_mask(x[v], mask) << (4 * v);
    }
    const uint64_t incoming = ((g | p) + g) ^ p;
    const __m256i one = _mm256_set1_epi64x(1);
    for (size_t v = 0; v < nv; v++) {
        const __mmask8 in = (__mmask8)((incoming >> (4 * v)) & 0xf);
        x[v] = _mm256_and_si256(_mm256_mask_add_epi64(x[v], in, x[v], one), mask);
    }
}

/*
 * r1 = a1 b1 / R mod p and r2 = a2 b2 / R mod q, almost Montgomery: for operands below 2 p
 * (resp. 2 q) in normalised digits, the results are below 2 p (resp. 2 q) and normalised.
 * Any output may alias any input.
 *
 * Step i adds a b_i and u m, with u = -(x_0 + a_0 b_i) / m mod 2^52 chosen so that the
 * current digit becomes a multiple of 2^52, then drops that digit, passing its bits above 52
 * on; the accumulator x shifts down one digit per step. Low halves of a_j b_i and u m_j land
 * in lane j before the shift, high halves in lane j + 1, which is lane j after it.
 *
 * Each step's u waits for the previous one, so that chain sets the pace. To keep it short,
 * the current digit lives in a general register (s, carry included): the next one is what
 * the vectors hold for it before this step (lane 1, read before this step's products land)
 * plus this step's four products at that position, recomputed in scalar (lo(a_1 b_i),
 * lo(m_1 u), hi(a_0 b_i), hi(m_0 u)), plus the carry. The vectors receive every product as
 * well but never the carries; their lanes for positions below k are read at most once and
 * then dropped, and the one carry into position k is placed at the end.
 */
INLINE CAUTH_IFMA void amm_x2(const cauth_ifma_crt *c, uint64_t *r1, const uint64_t *a1, const uint64_t *b1,
                              uint64_t *r2, const uint64_t *a2, const uint64_t *b2, const size_t nv) {
    const uint64_t *m1 = c->p, *m2 = c->q;
    const uint64_t k1 = c->k0_p, k2 = c->k0_q;
    const uint64_t a10 = a1[0], a11 = a1[1], m10 = m1[0], m11 = m1[1];
    const uint64_t a20 = a2[0], a21 = a2[1], m20 = m2[0], m21 = m2[1];
    const __m256i zero = _mm256_setzero_si256();
    __m256i x1[CAUTH_IFMA_MAX_VECTORS], x2[CAUTH_IFMA_MAX_VECTORS];
    for (size_t v = 0; v < nv; v++) x1[v] = x2[v] = zero;
    uint64_t s1 = 0, s2 = 0; /* the current digit, below 2^62 */
    for (size_t i = 0; i < 4 * nv; i++) {
        const uint64_t bi1 = b1[i], bi2 = b2[i];
        const u128 ab1 = (u128)a10 * bi1, ab2 = (u128)a20 * bi2;
        const uint64_t t1 = s1 + ((uint64_t)ab1 & DIGIT_MASK), t2 = s2 + ((uint64_t)ab2 & DIGIT_MASK);
        const uint64_t u1 = (t1 * k1) & DIGIT_MASK, u2 = (t2 * k2) & DIGIT_MASK;
        /* the vectors' share of the next digit, before this step's products */
        const uint64_t next1 = (uint64_t)_mm256_extract_epi64(x1[0], 1);
        const uint64_t next2 = (uint64_t)_mm256_extract_epi64(x2[0], 1);

        const __m256i bv1 = _mm256_set1_epi64x((long long)bi1), bv2 = _mm256_set1_epi64x((long long)bi2);
        const __m256i uv1 = _mm256_set1_epi64x((long long)u1), uv2 = _mm256_set1_epi64x((long long)u2);
        for (size_t v = 0; v < nv; v++) {
            x1[v] = _mm256_madd52lo_epu64(x1[v], bv1, load4(a1 + 4 * v));
            x2[v] = _mm256_madd52lo_epu64(x2[v], bv2, load4(a2 + 4 * v));
        }
        for (size_t v = 0; v < nv; v++) {
            x1[v] = _mm256_madd52lo_epu64(x1[v], uv1, load4(m1 + 4 * v));
            x2[v] = _mm256_madd52lo_epu64(x2[v], uv2, load4(m2 + 4 * v));
        }
        for (size_t v = 0; v + 1 < nv; v++) {
            x1[v] = _mm256_alignr_epi64(x1[v + 1], x1[v], 1);
            x2[v] = _mm256_alignr_epi64(x2[v + 1], x2[v], 1);
        }
        x1[nv - 1] = _mm256_alignr_epi64(zero, x1[nv - 1], 1);
        x2[nv - 1] = _mm256_alignr_epi64(zero, x2[nv - 1], 1);
        for (size_t v = 0; v < nv; v++) {
            x1[v] = _mm256_madd52hi_epu64(x1[v], bv1, load4(a1 + 4 * v));
            x2[v] = _mm256_madd52hi_epu64(x2[v], bv2, load4(a2 + 4 * v));
        }
        for (size_t v = 0; v < nv; v++) {
            x1[v] = _mm256_madd52hi_epu64(x1[v], uv1, load4(m1 + 4 * v));
            x2[v] = _mm256_madd52hi_epu64(x2[v], uv2, load4(m2 + 4 * v));
        }

        /* t + lo(m_0 u) is a multiple of 2^52 (below 2^63); the quotient is the carry. */
        const u128 mu1 = (u128)m10 * u1, mu2 = (u128)m20 * u2;
        const uint64_t carry1 = (t1 + ((uint64_t)mu1 & DIGIT_MASK)) >> 52;
        const uint64_t carry2 = (t2 + ((uint64_t)mu2 & DIGIT_MASK)) >> 52;
        s1 = next1 + carry1 + ((a11 * bi1) & DIGIT_MASK) + ((m11 * u1) & DIGIT_MASK) + (uint64_t)(ab1 >> 52) +
             (uint64_t)(mu1 >> 52);
        s2 = next2 + carry2 + ((a21 * bi2) & DIGIT_MASK) + ((m21 * u2) & DIGIT_MASK) + (uint64_t)(ab2 >> 52) +
             (uint64_t)(mu2 >> 52);
    }
    /* s is now digit k of the sum, the vectors' lane 0 plus the last carry. */
    x1[0] = _mm256_mask_mov_epi64(x1[0], 1, _mm256_set1_epi64x((long long)s1));
    x2[0] = _mm256_mask_mov_epi64(x2[0], 1, _mm256_set1_epi64x((long long)s2));
    normalize(x1, nv);
    normalize(x2, nv);
    for (size_t v = 0; v < nv; v++) {
        _mm256_storeu_si256((__m256i *)(r1 + 4 * v), x1[v]);
        _mm256_storeu_si256((__m256i *)(r2 + 4 * v), x2[v]);
    }
}

/* o1 = t1[i1] and o2 = t2[i2] (tables of CAUTH_WINDOW_SIZE entries of k digits): every entry
   is read and merged under an all-ones or all-zeros mask, so neither the instructions nor the
   addresses depend on the secret indices. */
INLINE CAUTH_IFMA void select_x2(uint64_t *o1, const uint64_t *t1, uint64_t i1, uint64_t *o2, const uint64_t *t2,
                                 uint64_t i2, const size_t nv) {
    const size_t k = 4 * nv;
    __m256i s1[CAUTH_IFMA_MAX_VECTORS], s2[CAUTH_IFMA_MAX_VECTORS];
    for (size_t v = 0; v < nv; v++) s1[v] = s2[v] = _mm256_setzero_si256();
    for (uint64_t e = 0; e < CAUTH_WINDOW_SIZE; e++) {
        const __m256i mask1 = _mm256_set1_epi64x((long long)cauth_equal_mask(e, i1));
        const __m256i mask2 = _mm256_set1_epi64x((long long)cauth_equal_mask(e, i2));
        for (size_t v = 0; v < nv; v++) {
            /* 0xf8: s | (mask & entry) */
            s1[v] = _mm256_ternarylogic_epi64(s1[v], mask1, load4(t1 + e * k + 4 * v), 0xf8);
            s2[v] = _mm256_ternarylogic_epi64(s2[v], mask2, load4(t2 + e * k + 4 * v), 0xf8);
        }
    }
    for (size_t v = 0; v < nv; v++) {
        _mm256_storeu_si256((__m256i *)(o1 + 4 * v), s1[v]);
        _mm256_storeu_si256((__m256i *)(o2 + 4 * v), s2[v]);
    }
}

/* One instance of each per vector count, so that the loops above unroll over the vectors
   and the accumulators live in registers. */
typedef void amm_x2_fn(const cauth_ifma_crt *, uint64_t *, const uint64_t *, const uint64_t *, uint64_t *,
                       const uint64_t *, const uint64_t *);
typedef void select_x2_fn(uint64_t *, const uint64_t *, uint64_t, uint64_t *, const uint64_t *, uint64_t);

#define INSTANCES(NV)                                                                                         \
    static CAUTH_IFMA void amm_x2_##NV(const cauth_ifma_crt *c, uint64_t *r1, const uint64_t *a1,             \
                                       const uint64_t *b1, uint64_t *r2, const uint64_t *a2, const uint64_t *b2) { \
        amm_x2(c, r1, a1, b1, r2, a2, b2, NV);                                                                \
    }                                                                                                         \
    static CAUTH_IFMA void select_x2_##NV(uint64_t *o1, const uint64_t *t1, uint64_t i1, uint64_t *o2,        \
                                          const uint64_t *t2, uint64_t i2) {                                  \
        select_x2(o1, t1, i1, o2, t2, i2, NV);                                                                \
    }
INSTANCES(1)
INSTANCES(2)
INSTANCES(3)
INSTANCES(4)
INSTANCES(5)
INSTANCES(6)
INSTANCES(7)
INSTANCES(8)
INSTANCES(9)
INSTANCES(10)

static amm_x2_fn *const amm_x2_for[CAUTH_IFMA_MAX_VECTORS + 1] = {
    NULL, amm_x2_1, amm_x2_2, amm_x2_3, amm_x2_4, amm_x2_5, amm_x2_6, amm_x2_7, amm_x2_8, amm_x2_9, amm_x2_10,
};
static select_x2_fn *const select_x2_for[CAUTH_IFMA_MAX_VECTORS + 1] = {
    NULL,          select_x2_1, select_x2_2, select_x2_3, select_x2_4, select_x2_5,
    select_x2_6,   select_x2_7, select_x2_8, select_x2_9, select_x2_10,
};

void cauth_ifma_crt_setup(cauth_ifma_crt *c, size_t nv, uint64_t *storage, const uint64_t *p, size_t pl,
                          const uint64_t *q, size_t ql, const uint64_t *rr_p, const uint64_t *rr_q) {
    const size_t k = 4 * nv;
    c->nv = nv;
    c->p64 = p;
    c->q64 = q;
    c->pl = pl;
    c->ql = ql;
    c->p = storage;
    c->q = storage + k;
    c->rr_p = storage + 2 * k;
    c->rr_q = storage + 3 * k;
    c->one_p = storage + 4 * k;
    c->one_q = storage + 5 * k;
    to_digits(c->p, k, p, pl);
    to_digits(c->q, k, q, ql);
    to_digits(c->rr_p, k, rr_p, pl);
    to_digits(c->rr_q, k, rr_q, ql);
    c->k0_p = neg_inverse52(c->p[0]);
    c->k0_q = neg_inverse52(c->q[0]);
    /* R mod p = R^2 / R: the Montgomery product of R^2 and 1. */
    uint64_t unit[4 * CAUTH_IFMA_MAX_VECTORS] = {1};
    amm_x2_for[nv](c, c->one_p, c->rr_p, unit, c->one_q, c->rr_q, unit);
}

void cauth_ifma_crt_pow(const cauth_ifma_crt *c, uint64_t *s1, uint64_t *s2, const uint64_t *x1, const uint64_t *x2,
                        const uint64_t *dp, const uint64_t *dq, size_t elen, uint64_t *scratch) {
    const size_t nv = c->nv, k = 4 * nv;
    amm_x2_fn *const mul = amm_x2_for[nv];
    select_x2_fn *const select = select_x2_for[nv];
    uint64_t *base = (uint64_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    uint64_t *table1 = base, *table2 = base + CAUTH_WINDOW_SIZE * k;
    uint64_t *acc1 = base + 2 * CAUTH_WINDOW_SIZE * k, *acc2 = acc1 + k;
    uint64_t *sel1 = acc2 + k, *sel2 = sel1 + k, *unit = sel2 + k;

    /* Table of x^0 .. x^31 in Montgomery form: x R = x R^2 / R, then squares of earlier
       entries for the even powers and products with x for the odd ones. */
    memset(unit, 0, k * sizeof *unit);
    unit[0] = 1;
    memcpy(table1, c->one_p, k * sizeof *table1);
    memcpy(table2, c->one_q, k * sizeof *table2);
    to_digits(acc1, k, x1, c->pl);
    to_digits(acc2, k, x2, c->ql);
    mul(c, table1 + k, acc1, c->rr_p, table2 + k, acc2, c->rr_q);
    for (size_t i = 2; i < CAUTH_WINDOW_SIZE; i++) {
        const size_t a = i % 2 == 0 ? i / 2 : i - 1, b = i % 2 == 0 ? i / 2 : 1;
        mul(c, table1 + i * k, table1 + a * k, table1 + b * k, table2 + i * k, table2 + a * k, table2 + b * k);
    }

    /* Fixed windows from the top, as mont_pow_secret in bignum.c. */
    const size_t windows = (64 * elen + CAUTH_WINDOW_BITS - 1) / CAUTH_WINDOW_BITS;
    size_t bit = (windows - 1) * CAUTH_WINDOW_BITS;
    select(acc1, table1, cauth_window_at(dp, elen, bit), acc2, table2, cauth_window_at(dq, elen, bit));
    for (size_t w = windows - 1; w-- > 0;) {
        for (int sq = 0; sq < CAUTH_WINDOW_BITS; sq++) mul(c, acc1, acc1, acc1, acc2, acc2, acc2);
        bit = w * CAUTH_WINDOW_BITS;
        select(sel1, table1, cauth_window_at(dp, elen, bit), sel2, table2, cauth_window_at(dq, elen, bit));
        mul(c, acc1, acc1, sel1, acc2, acc2, sel2);
    }

    /* Out of Montgomery form: x R / R. For x < 2 p the product is at most p (it is p only
       for x = 0 mod p), so one masked subtraction leaves it fully reduced. */
    mul(c, acc1, acc1, unit, acc2, acc2, unit);
    from_digits(s1, c->pl, acc1, k);
    from_digits(s2, c->ql, acc2, k);
    subtract_if_not_below(s1, c->p64, c->pl);
    subtract_if_not_below(s2, c->q64, c->ql);
}

#else
/* ------------------------------------------------------------------------------------------ */
/* Not x86-64: never usable, so bignum.c never calls the functions below. */

int cauth_ifma_usable(void) { return 0; }

void cauth_ifma_crt_setup(cauth_ifma_crt *c, size_t nv, uint64_t *storage, const uint64_t *p, size_t pl,
                          const uint64_t *q, size_t ql, const uint64_t *rr_p, const uint64_t *rr_q) {
    (void)c, (void)nv, (void)storage, (void)p, (void)pl, (void)q, (void)ql, (void)rr_p, (void)rr_q;
}

void cauth_ifma_crt_pow(const cauth_ifma_crt *c, uint64_t *s1, uint64_t *s2, const uint64_t *x1, const uint64_t *x2,
                        const uint64_t *dp, const uint64_t *dq, size_t elen, uint64_t *scratch) {
    (void)c, (void)s1, (void)s2, (void)x1, (void)x2, (void)dp, (void)dq, (void)elen, (void)scratch;
}
#endif
