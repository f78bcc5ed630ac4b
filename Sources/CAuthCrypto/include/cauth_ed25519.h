#ifndef CAUTH_ED25519_H
#define CAUTH_ED25519_H

/* Ed25519 (RFC 8032) field and group arithmetic. */

#include <stddef.h>
#include <stdint.h>

#endif /* CAUTH_ED25519_H */
