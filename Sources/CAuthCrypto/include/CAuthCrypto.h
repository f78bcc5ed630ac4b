#ifndef CAUTHCRYPTO_H
#define CAUTHCRYPTO_H
#include <stddef.h>
#include <stdint.h>
/* Placeholder; replaced by the crypto module's real accelerators. */
int cauth_placeholder(void);
#endif
