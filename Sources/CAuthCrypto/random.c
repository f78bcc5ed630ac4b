/*
 * The operating system's secure random source, the one atomic the deterministic test
 * source needs, and a fallible allocation. Platform differences for randomness live only in
 * this file.
 */

#include "CAuthCrypto.h"

#include <stdlib.h>

void *cauth_calloc(size_t count, size_t size) { return calloc(count, size); }
void cauth_free(void *pointer) { free(pointer); }

#if defined(__APPLE__)
#include <stdlib.h>

int cauth_random_fill(void *buffer, size_t length) {
    /* arc4random_buf(3) cannot fail and never blocks once the kernel pool is seeded. */
    arc4random_buf(buffer, length);
    return 0;
}

#elif defined(__linux__)
#include <errno.h>
#include <sys/random.h>

int cauth_random_fill(void *buffer, size_t length) {
    /* getrandom(2) without flags draws from the urandom pool but blocks until it has been
       initialised. It may return fewer bytes than asked (requests over 256 bytes can be
       interrupted by a signal), and fails with EINTR if interrupted before any byte: loop. */
    unsigned char *p = (unsigned char *)buffer;
    while (length > 0) {
        ssize_t n = getrandom(p, length, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += (size_t)n;
        length -= (size_t)n;
    }
    return 0;
}

#else
#error "CAuthCrypto: no secure random source for this platform"
#endif

uint64_t cauth_atomic_fetch_add_u64(uint64_t *counter, uint64_t delta) {
    return __atomic_fetch_add(counter, delta, __ATOMIC_SEQ_CST);
}
