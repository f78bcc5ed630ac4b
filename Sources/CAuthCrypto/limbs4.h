/*
 * 256-bit integers as four 64-bit limbs, least significant first: the conversions and the
 * carry/borrow chains that p256.c and secp256k1.c both build on. Each is constant time
 * (no branches or addresses depend on the values), so p256.c may use them on secrets.
 */

#ifndef CAUTH_LIMBS4_H
#define CAUTH_LIMBS4_H

#include <stdint.h>

typedef unsigned __int128 u128;

/* Big-endian 32 bytes to limbs (SEC 1 section 2.3.8, Octet-String-to-Integer). */
static inline void limbs_from_bytes(uint64_t r[4], const uint8_t b[32]) {
    for (int i = 0; i < 4; i++) {
        uint64_t v = 0;
        for (int j = 0; j < 8; j++) v = (v << 8) | b[8 * (3 - i) + j];
        r[i] = v;
    }
}

/* Limbs to big-endian 32 bytes (SEC 1 section 2.3.7, Integer-to-Octet-String). */
static inline void limbs_to_bytes(uint8_t b[32], const uint64_t r[4]) {
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 8; j++) b[8 * (3 - i) + j] = (uint8_t)(r[i] >> (56 - 8 * j));
    }
}

/* r = a - b; returns the borrow (1 when a < b). r may alias a or b. */
static inline uint64_t sub4(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t borrow = 0;
    for (int i = 0; i < 4; i++) {
        u128 d = (u128)a[i] - b[i] - borrow;
        r[i] = (uint64_t)d;
        borrow = (uint64_t)(d >> 64) & 1;
    }
    return borrow;
}

/* r = a + b; returns the carry. r may alias a or b. */
static inline uint64_t add4(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t carry = 0;
    for (int i = 0; i < 4; i++) {
        u128 s = (u128)a[i] + b[i] + carry;
        r[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
    return carry;
}

#endif
