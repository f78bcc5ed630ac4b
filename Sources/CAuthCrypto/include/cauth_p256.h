#ifndef CAUTH_P256_H
#define CAUTH_P256_H

/* NIST P-256 (ECDSA) field and group arithmetic. */

#include <stddef.h>
#include <stdint.h>

#endif /* CAUTH_P256_H */
