// The Linux event-notification headers the Swift toolchain's Glibc module leaves out, so
// AuthHTTP's epoll poller calls epoll_create1/epoll_ctl/epoll_wait/eventfd through their real
// declarations (and uses the real `struct epoll_event` layout, packed on x86-64).
#ifndef C_AUTH_PLATFORM_H
#define C_AUTH_PLATFORM_H

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

#endif
