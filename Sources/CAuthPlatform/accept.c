// accept4(2) is a GNU extension: <sys/socket.h> declares it only under _GNU_SOURCE, which the
// Swift toolchain's Glibc module is not built with, so it is reached through this one function.
#if defined(__linux__)
#define _GNU_SOURCE
#include <sys/socket.h>

#include "CAuthPlatform.h"

int cauth_accept_nonblocking(int listener, struct sockaddr *address, socklen_t *length) {
    return accept4(listener, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
#endif
