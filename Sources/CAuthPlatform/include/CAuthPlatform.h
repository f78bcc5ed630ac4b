// The Linux event-notification headers the Swift toolchain's Glibc module leaves out, so
// AuthHTTP's epoll poller calls epoll_create1/epoll_ctl/epoll_wait/eventfd through their real
// declarations (and uses the real `struct epoll_event` layout, packed on x86-64); Linux's
// accept4, which the module hides behind _GNU_SOURCE (accept.c); and the outbound HTTP(S) call
// of auth hooks (http_client.c).
#ifndef C_AUTH_PLATFORM_H
#define C_AUTH_PLATFORM_H

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

// accept4(listener, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC): the accepted socket is
// non-blocking and close-on-exec from its first instant, in one call instead of accept and
// three fcntl calls. Returns what accept4 returns (-1 with errno set on failure).
int cauth_accept_nonblocking(int listener, struct sockaddr *address, socklen_t *length);
#endif

#include <stddef.h>
#include <stdint.h>

// An HTTP(S) POST through the system's libcurl, loaded on first use (http_client.c says why).
enum {
    CAUTH_HTTP_RESPONSE = 0,
    CAUTH_HTTP_TIMED_OUT = 1,
    CAUTH_HTTP_FAILED = 2,
};

typedef struct {
    int status;
    // The last response's header block, status line first, as received (CRLF-separated).
    uint8_t *headers;
    size_t headers_count;
    uint8_t *body;
    size_t body_count;
    // Why there is no response (CAUTH_HTTP_TIMED_OUT, CAUTH_HTTP_FAILED).
    char error[256];
    // A loopback-only GET's redirect target (absolute), not followed; NULL for none.
    char *redirect_url;
} cauth_http_reply;

// POSTs `body` with `headers` ("Name: value" strings) to `url`, following redirects as Go's
// client does, within `timeout_ms` for the whole exchange. Reads at most `body_limit` bytes of
// the answer's body. `ca_file` / `ca_directory` (may be NULL) replace the default trust roots.
// Returns CAUTH_HTTP_*; on CAUTH_HTTP_RESPONSE release the reply with cauth_http_reply_free.
int cauth_http_post(const char *url, const char *const *headers, size_t header_count,
                    const uint8_t *body, size_t body_count, long timeout_ms, size_t body_limit,
                    const char *ca_file, const char *ca_directory, cauth_http_reply *reply);

// A GET, with the same redirect rules; no request headers. With `loopback_only`, no proxy is
// used, a connection to any address outside 127.0.0.0/8 and ::1 (IPv4-mapped too) is refused
// before it is made (CAUTH_HTTP_FAILED), and a redirect is not followed but answered, with its
// absolute target in `redirect_url`, for the caller to check.
int cauth_http_get(const char *url, long timeout_ms, size_t body_limit, const char *ca_file, const char *ca_directory,
                   int loopback_only, cauth_http_reply *reply);

void cauth_http_reply_free(cauth_http_reply *reply);

// libpq for Postgres mode, loaded on first use (postgres_client.c).
#include "CAuthPostgres.h"

#endif
