/*
 * secp256k1 (SEC 2 v2 section 2.4.1): y^2 = x^3 + 7 over the prime p = 2^256 - 2^32 - 977,
 * and ECDSA on it (SEC 1 v2 sections 4.1.3, 4.1.4 and 4.1.6), for Ethereum sign-in.
 *
 * Representation. Field elements and scalars are four 64-bit limbs, least significant first,
 * fully reduced. Both moduli are just below 2^256, so a product is reduced by folding:
 * 2^256 = c (mod m) with c = 2^256 - m small (33 bits for p, 129 bits for n), so
 * hi 2^256 + lo = hi c + lo, repeated until the value fits four limbs, then one subtraction.
 * Points are Jacobian (X / Z^2, Y / Z^3; Z = 0 is the point at infinity).
 *
 * Timing. Everything here is variable-time (plain double-and-add, Fermat inversion with early
 * exits): it checks public signatures and signs only for the emulator's test wallets. p256.c
 * is the constant-time code in this module.
 */

#include "CAuthCrypto.h"
#include "limbs4.h"

#include <string.h>

/* p and 2^256 - p. */
static const uint64_t P[4] = {0xfffffffefffffc2f, 0xffffffffffffffff, 0xffffffffffffffff, 0xffffffffffffffff};
static const uint64_t P_FOLD[1] = {0x00000001000003d1};
/* n, the order of G, and 2^256 - n. */
static const uint64_t N[4] = {0xbfd25e8cd0364141, 0xbaaedce6af48a03b, 0xfffffffffffffffe, 0xffffffffffffffff};
static const uint64_t N_FOLD[3] = {0x402da1732fc9bebf, 0x4551231950b75fc4, 0x0000000000000001};
/* The base point G (SEC 2 section 2.4.1, uncompressed form). */
static const uint64_t GX[4] = {0x59f2815b16f81798, 0x029bfcdb2dce28d9, 0x55a06295ce870b07, 0x79be667ef9dcbbac};
static const uint64_t GY[4] = {0x9c47d08ffb10d4b8, 0xfd17b448a6855419, 0x5da4fbfc0e1108a8, 0x483ada7726a3c465};

typedef struct {
    const uint64_t *m;
    const uint64_t *fold;
    size_t fold_limbs;
} modulus;

static const modulus FIELD = {P, P_FOLD, 1};
static const modulus ORDER = {N, N_FOLD, 3};

/* ------------------------------------------------------------------------------------------
 * Four-limb helpers (limbs4.h has the conversions, add4 and sub4).
 * ---------------------------------------------------------------------------------------- */

/* -1, 0 or 1 as a < b, a == b, a > b. */
static int cmp4(const uint64_t a[4], const uint64_t b[4]) {
    for (int i = 3; i >= 0; i--) {
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return 0;
}

static int is_zero4(const uint64_t a[4]) { return (a[0] | a[1] | a[2] | a[3]) == 0; }

/* ------------------------------------------------------------------------------------------
 * Arithmetic modulo p or n.
 * ---------------------------------------------------------------------------------------- */

/* r = t mod m for t of `len` limbs (at most 8), by folding the limbs above the fourth. */
static void mod_reduce(uint64_t r[4], const uint64_t *t, size_t len, const modulus *m) {
    uint64_t cur[12] = {0};
    memcpy(cur, t, len * sizeof(uint64_t));
    while (len > 4 && cur[len - 1] == 0) len--;
    while (len > 4) {
        uint64_t next[12] = {0};
        memcpy(next, cur, 4 * sizeof(uint64_t));
        size_t high = len - 4;
        for (size_t i = 0; i < high; i++) {
            uint64_t carry = 0;
            size_t j = 0;
            for (; j < m->fold_limbs; j++) {
                u128 acc = (u128)cur[4 + i] * m->fold[j] + next[i + j] + carry;
                next[i + j] = (uint64_t)acc;
                carry = (uint64_t)(acc >> 64);
            }
            for (size_t k = i + j; carry != 0; k++) {
                u128 acc = (u128)next[k] + carry;
                next[k] = (uint64_t)acc;
                carry = (uint64_t)(acc >> 64);
            }
        }
        len = (high + m->fold_limbs > 4 ? high + m->fold_limbs : 4) + 1;
        memcpy(cur, next, sizeof(cur));
        while (len > 4 && cur[len - 1] == 0) len--;
    }
    /* Now cur < 2^256 < 2m: one subtraction at most. */
    memcpy(r, cur, 4 * sizeof(uint64_t));
    if (cmp4(r, m->m) >= 0) sub4(r, r, m->m);
}

static void mod_mul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const modulus *m) {
    uint64_t t[8] = {0};
    for (int i = 0; i < 4; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < 4; j++) {
            u128 acc = (u128)a[i] * b[j] + t[i + j] + carry;
            t[i + j] = (uint64_t)acc;
            carry = (uint64_t)(acc >> 64);
        }
        t[i + 4] = carry;
    }
    mod_reduce(r, t, 8, m);
}

static void mod_add(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const modulus *m) {
    uint64_t t[5];
    t[4] = add4(t, a, b);
    mod_reduce(r, t, 5, m);
}

static void mod_sub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const modulus *m) {
    if (sub4(r, a, b)) add4(r, r, m->m);
}

/* r = a^e mod m, square-and-multiply from the top bit (e public). */
static void mod_pow(uint64_t r[4], const uint64_t a[4], const uint64_t e[4], const modulus *m) {
    uint64_t acc[4] = {1, 0, 0, 0}, base[4];
    memcpy(base, a, sizeof(base));
    for (int bit = 255; bit >= 0; bit--) {
        mod_mul(acc, acc, acc, m);
        if ((e[bit / 64] >> (bit % 64)) & 1) mod_mul(acc, acc, base, m);
    }
    memcpy(r, acc, sizeof(acc));
}

/* r = a^-1 mod m (Fermat: a^(m - 2), m prime); 0 maps to 0. */
static void mod_inv(uint64_t r[4], const uint64_t a[4], const modulus *m) {
    uint64_t e[4], two[4] = {2, 0, 0, 0};
    sub4(e, m->m, two);
    mod_pow(r, a, e, m);
}

/* ------------------------------------------------------------------------------------------
 * Points.
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    uint64_t x[4], y[4], z[4];
} jacobian;

static void set_infinity(jacobian *r) { memset(r, 0, sizeof(*r)); }

static void set_affine(jacobian *r, const uint64_t x[4], const uint64_t y[4]) {
    memcpy(r->x, x, 32);
    memcpy(r->y, y, 32);
    memset(r->z, 0, 32);
    r->z[0] = 1;
}

/* "dbl-2009-l" (a = 0) from the Explicit-Formulas Database. */
static void point_double(jacobian *r, const jacobian *p) {
    if (is_zero4(p->z) || is_zero4(p->y)) {
        set_infinity(r);
        return;
    }
    const modulus *f = &FIELD;
    uint64_t a[4], b[4], c[4], d[4], e[4], t[4], x3[4], y3[4], z3[4];
    mod_mul(a, p->x, p->x, f);
    mod_mul(b, p->y, p->y, f);
    mod_mul(c, b, b, f);
    mod_add(t, p->x, b, f);
    mod_mul(t, t, t, f);
    mod_sub(t, t, a, f);
    mod_sub(t, t, c, f);
    mod_add(d, t, t, f);                 /* D = 2 ((X + B)^2 - A - C) */
    mod_add(e, a, a, f);
    mod_add(e, e, a, f);                 /* E = 3 A */
    mod_mul(t, e, e, f);                 /* F = E^2 */
    mod_sub(x3, t, d, f);
    mod_sub(x3, x3, d, f);               /* X3 = F - 2 D */
    mod_sub(t, d, x3, f);
    mod_mul(y3, e, t, f);
    mod_add(c, c, c, f);
    mod_add(c, c, c, f);
    mod_add(c, c, c, f);                 /* 8 C */
    mod_sub(y3, y3, c, f);               /* Y3 = E (D - X3) - 8 C */
    mod_mul(z3, p->y, p->z, f);
    mod_add(z3, z3, z3, f);              /* Z3 = 2 Y Z */
    memcpy(r->x, x3, 32);
    memcpy(r->y, y3, 32);
    memcpy(r->z, z3, 32);
}

/* General Jacobian addition, handling infinity and P = +-Q. */
static void point_add(jacobian *r, const jacobian *p, const jacobian *q) {
    if (is_zero4(p->z)) {
        *r = *q;
        return;
    }
    if (is_zero4(q->z)) {
        *r = *p;
        return;
    }
    const modulus *f = &FIELD;
    uint64_t z1z1[4], z2z2[4], u1[4], u2[4], s1[4], s2[4], h[4], rr[4], t[4], hh[4], hhh[4], v[4];
    mod_mul(z1z1, p->z, p->z, f);
    mod_mul(z2z2, q->z, q->z, f);
    mod_mul(u1, p->x, z2z2, f);
    mod_mul(u2, q->x, z1z1, f);
    mod_mul(t, q->z, z2z2, f);
    mod_mul(s1, p->y, t, f);
    mod_mul(t, p->z, z1z1, f);
    mod_mul(s2, q->y, t, f);
    mod_sub(h, u2, u1, f);
    mod_sub(rr, s2, s1, f);
    if (is_zero4(h)) {
        if (is_zero4(rr)) {
            point_double(r, p);
        } else {
            set_infinity(r);
        }
        return;
    }
    jacobian out;
    mod_mul(hh, h, h, f);
    mod_mul(hhh, hh, h, f);
    mod_mul(v, u1, hh, f);
    mod_mul(out.x, rr, rr, f);
    mod_sub(out.x, out.x, hhh, f);
    mod_sub(out.x, out.x, v, f);
    mod_sub(out.x, out.x, v, f);         /* X3 = R^2 - H^3 - 2 U1 H^2 */
    mod_sub(t, v, out.x, f);
    mod_mul(out.y, rr, t, f);
    mod_mul(t, s1, hhh, f);
    mod_sub(out.y, out.y, t, f);         /* Y3 = R (U1 H^2 - X3) - S1 H^3 */
    mod_mul(out.z, p->z, q->z, f);
    mod_mul(out.z, out.z, h, f);         /* Z3 = Z1 Z2 H */
    *r = out;
}

/* r = k P, double-and-add from the top bit. */
static void point_mul(jacobian *r, const uint64_t k[4], const jacobian *p) {
    jacobian acc;
    set_infinity(&acc);
    for (int bit = 255; bit >= 0; bit--) {
        point_double(&acc, &acc);
        if ((k[bit / 64] >> (bit % 64)) & 1) point_add(&acc, &acc, p);
    }
    *r = acc;
}

/* Affine coordinates of p; -1 for the point at infinity. */
static int to_affine(uint64_t x[4], uint64_t y[4], const jacobian *p) {
    if (is_zero4(p->z)) return -1;
    const modulus *f = &FIELD;
    uint64_t zi[4], zi2[4], zi3[4];
    mod_inv(zi, p->z, f);
    mod_mul(zi2, zi, zi, f);
    mod_mul(zi3, zi2, zi, f);
    mod_mul(x, p->x, zi2, f);
    mod_mul(y, p->y, zi3, f);
    return 0;
}

/* y^2 for a given x: x^3 + 7. */
static void curve_rhs(uint64_t r[4], const uint64_t x[4]) {
    uint64_t seven[4] = {7, 0, 0, 0};
    mod_mul(r, x, x, &FIELD);
    mod_mul(r, r, x, &FIELD);
    mod_add(r, r, seven, &FIELD);
}

/* (u1 G + u2 Q), affine; -1 for infinity. */
static int mul_double(uint64_t x[4], uint64_t y[4], const uint64_t u1[4], const uint64_t u2[4], const jacobian *q) {
    jacobian g, a, b;
    set_affine(&g, GX, GY);
    point_mul(&a, u1, &g);
    point_mul(&b, u2, q);
    point_add(&a, &a, &b);
    return to_affine(x, y, &a);
}

/* ------------------------------------------------------------------------------------------
 * Public interface.
 * ---------------------------------------------------------------------------------------- */

int cauth_secp256k1_scalar_is_valid(const uint8_t scalar[32]) {
    uint64_t s[4];
    limbs_from_bytes(s, scalar);
    return !is_zero4(s) && cmp4(s, N) < 0;
}

void cauth_secp256k1_scalar_reduce(uint8_t out[32], const uint8_t in[32]) {
    uint64_t s[4];
    limbs_from_bytes(s, in);
    mod_reduce(s, s, 4, &ORDER);
    limbs_to_bytes(out, s);
}

int cauth_secp256k1_check_point(const uint8_t x[32], const uint8_t y[32]) {
    uint64_t px[4], py[4], lhs[4], rhs[4];
    limbs_from_bytes(px, x);
    limbs_from_bytes(py, y);
    if (cmp4(px, P) >= 0 || cmp4(py, P) >= 0) return -1;
    mod_mul(lhs, py, py, &FIELD);
    curve_rhs(rhs, px);
    return cmp4(lhs, rhs) == 0 ? 0 : -1;
}

int cauth_secp256k1_mul_base(uint8_t x[32], uint8_t y[32], const uint8_t scalar[32]) {
    uint64_t k[4], ax[4], ay[4];
    limbs_from_bytes(k, scalar);
    mod_reduce(k, k, 4, &ORDER);
    jacobian g, r;
    set_affine(&g, GX, GY);
    point_mul(&r, k, &g);
    if (to_affine(ax, ay, &r) != 0) {
        memset(x, 0, 32);
        memset(y, 0, 32);
        return -1;
    }
    limbs_to_bytes(x, ax);
    limbs_to_bytes(y, ay);
    return 0;
}

int cauth_secp256k1_sign(uint8_t signature[64], int *recovery_id, const uint8_t private_key[32],
                         const uint8_t nonce[32], const uint8_t digest[32]) {
    if (!cauth_secp256k1_scalar_is_valid(private_key) || !cauth_secp256k1_scalar_is_valid(nonce)) return -1;
    uint64_t d[4], k[4], e[4], rx[4], ry[4], r[4], s[4], t[4];
    limbs_from_bytes(d, private_key);
    limbs_from_bytes(k, nonce);
    /* bits2int of a 256-bit digest is its value (SEC 1 section 4.1.3 step 5); reduce for use. */
    limbs_from_bytes(e, digest);
    mod_reduce(e, e, 4, &ORDER);
    jacobian g, point;
    set_affine(&g, GX, GY);
    point_mul(&point, k, &g);
    if (to_affine(rx, ry, &point) != 0) return -1;
    int id = (int)(ry[0] & 1) | (cmp4(rx, N) >= 0 ? 2 : 0);
    mod_reduce(r, rx, 4, &ORDER);
    if (is_zero4(r)) return -1;
    /* s = k^-1 (e + r d) mod n (step 6). */
    mod_mul(t, r, d, &ORDER);
    mod_add(t, t, e, &ORDER);
    mod_inv(s, k, &ORDER);
    mod_mul(s, s, t, &ORDER);
    if (is_zero4(s)) return -1;
    /* Low s (EIP-2): n - s is as valid; it is the signature of the point -R, whose y has the
       other parity. */
    uint64_t half[4];
    memcpy(half, N, sizeof(half));
    for (int i = 0; i < 4; i++) half[i] = (half[i] >> 1) | (i < 3 ? half[i + 1] << 63 : 0);
    if (cmp4(s, half) > 0) {
        sub4(s, N, s);
        id ^= 1;
    }
    limbs_to_bytes(signature, r);
    limbs_to_bytes(signature + 32, s);
    if (recovery_id) *recovery_id = id;
    return 0;
}

int cauth_secp256k1_verify(const uint8_t signature[64], const uint8_t digest[32], const uint8_t qx[32],
                           const uint8_t qy[32]) {
    if (!cauth_secp256k1_scalar_is_valid(signature) || !cauth_secp256k1_scalar_is_valid(signature + 32)) return 0;
    if (cauth_secp256k1_check_point(qx, qy) != 0) return 0;
    uint64_t r[4], s[4], e[4], w[4], u1[4], u2[4], x[4], y[4], px[4], py[4];
    limbs_from_bytes(r, signature);
    limbs_from_bytes(s, signature + 32);
    limbs_from_bytes(e, digest);
    mod_reduce(e, e, 4, &ORDER);
    limbs_from_bytes(px, qx);
    limbs_from_bytes(py, qy);
    mod_inv(w, s, &ORDER);
    mod_mul(u1, e, w, &ORDER);
    mod_mul(u2, r, w, &ORDER);
    jacobian q;
    set_affine(&q, px, py);
    if (mul_double(x, y, u1, u2, &q) != 0) return 0;
    mod_reduce(x, x, 4, &ORDER);
    return cmp4(x, r) == 0;
}

int cauth_secp256k1_recover(uint8_t x[32], uint8_t y[32], const uint8_t signature[64], int recovery_id,
                            const uint8_t digest[32]) {
    memset(x, 0, 32);
    memset(y, 0, 32);
    if (recovery_id < 0 || recovery_id > 3) return -1;
    if (!cauth_secp256k1_scalar_is_valid(signature) || !cauth_secp256k1_scalar_is_valid(signature + 32)) return -1;
    uint64_t r[4], s[4], e[4], rx[4], ry[4], rhs[4], ri[4], u1[4], u2[4], qx[4], qy[4];
    limbs_from_bytes(r, signature);
    limbs_from_bytes(s, signature + 32);
    /* Step 1.1: x = r + j n for j = recovery_id / 2, which must stay below p. */
    memcpy(rx, r, sizeof(rx));
    if (recovery_id & 2) {
        if (add4(rx, rx, N) || cmp4(rx, P) >= 0) return -1;
    }
    /* Steps 1.2-1.3: R = (x, y) with y = sqrt(x^3 + 7) = (x^3 + 7)^((p + 1) / 4) (p = 3 mod 4),
       of the parity the recovery id names; no square root means no key. */
    curve_rhs(rhs, rx);
    uint64_t exponent[4] = {P[0], P[1], P[2], P[3]}, one[4] = {1, 0, 0, 0}, check[4];
    add4(exponent, exponent, one);
    for (int i = 0; i < 4; i++) exponent[i] = (exponent[i] >> 2) | (i < 3 ? exponent[i + 1] << 62 : 0);
    mod_pow(ry, rhs, exponent, &FIELD);
    mod_mul(check, ry, ry, &FIELD);
    if (cmp4(check, rhs) != 0) return -1;
    if ((ry[0] & 1) != (uint64_t)(recovery_id & 1)) {
        uint64_t zero[4] = {0, 0, 0, 0};
        mod_sub(ry, zero, ry, &FIELD);
    }
    /* Steps 1.5-1.6: Q = r^-1 (s R - e G) = (-e r^-1) G + (s r^-1) R. */
    limbs_from_bytes(e, digest);
    mod_reduce(e, e, 4, &ORDER);
    mod_inv(ri, r, &ORDER);
    mod_mul(u1, e, ri, &ORDER);
    if (!is_zero4(u1)) sub4(u1, N, u1);
    mod_mul(u2, s, ri, &ORDER);
    jacobian point;
    set_affine(&point, rx, ry);
    if (mul_double(qx, qy, u1, u2, &point) != 0) return -1;
    limbs_to_bytes(x, qx);
    limbs_to_bytes(y, qy);
    return 0;
}
