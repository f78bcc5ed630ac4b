// One HTTP(S) POST through the system's libcurl, loaded with dlopen on first use.
//
// Why dlopen rather than linking: the emulator calls out over HTTP only for auth hooks, which most
// projects never configure. Linking an HTTP stack (libcurl and its TLS, IDN, Kerberos, LDAP...
// dependencies, or Foundation's URLSession, which links libcurl plus ICU) costs every start-up its
// load and relocation time and about 14 MiB of resident pages, whether a hook ever runs or not.
// Loaded on demand, that cost is paid by the first hook call only.
//
// libcurl's ABI is stable across 7.x and 8.x (https://curl.se/libcurl/abi.html); the option and
// info numbers below are its documented values (curl/curl.h), spelled out because the headers
// (libcurl-dev) need not be installed where this builds.

#include "CAuthPlatform.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

enum {
    OPT_WRITEDATA = 10001,
    OPT_URL = 10002,
    OPT_ERRORBUFFER = 10010,
    OPT_WRITEFUNCTION = 20011,
    OPT_POSTFIELDS = 10015,
    OPT_REFERER = 10016,
    OPT_HTTPHEADER = 10023,
    OPT_HEADERDATA = 10029,
    OPT_POST = 47,
    OPT_CAINFO = 10065,
    OPT_HTTPGET = 80,
    OPT_CUSTOMREQUEST = 10036,
    OPT_HEADERFUNCTION = 20079,
    OPT_CAPATH = 10097,
    OPT_NOSIGNAL = 99,
    OPT_POSTFIELDSIZE_LARGE = 30120,
    OPT_TIMEOUT_MS = 155,
    OPT_PROTOCOLS = 181,
    OPT_PROXY = 10004,
    OPT_OPENSOCKETFUNCTION = 20163,
    OPT_OPENSOCKETDATA = 10164,
    INFO_RESPONSE_CODE = 0x200002,
    INFO_REDIRECT_URL = 0x10001F,
    INFO_PRIMARY_IP = 0x100020,
    SOCKET_BAD = -1,
    CODE_OK = 0,
    CODE_WRITE_ERROR = 23,
    CODE_OPERATION_TIMEDOUT = 28,
    PROTO_HTTP_HTTPS = (1 << 0) | (1 << 1),
    GLOBAL_ALL = 3,
    ERROR_SIZE = 256,
};

struct slist;

static struct {
    int (*global_init)(long);
    void *(*easy_init)(void);
    int (*easy_setopt)(void *, int, ...);
    int (*easy_perform)(void *);
    int (*easy_getinfo)(void *, int, ...);
    void (*easy_cleanup)(void *);
    const char *(*easy_strerror)(int);
    struct slist *(*slist_append)(struct slist *, const char *);
    void (*slist_free_all)(struct slist *);
    int loaded;
    char problem[256];
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    static const char *const names[] = {
#if defined(__APPLE__)
        "/usr/lib/libcurl.4.dylib", "libcurl.4.dylib", "libcurl.dylib",
#else
        "libcurl.so.4", "libcurl-gnutls.so.4", "libcurl-nss.so.4", "libcurl.so",
#endif
    };
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(curl.problem, sizeof curl.problem, "libcurl is not installed (dlopen: %s)", reason ? reason : "not found");
        return;
    }
#define BIND(field, symbol)                                                                        \
    do {                                                                                           \
        *(void **)&curl.field = dlsym(library, symbol);                                            \
        if (curl.field == NULL) {                                                                  \
            snprintf(curl.problem, sizeof curl.problem, "libcurl lacks %s", symbol);               \
            return;                                                                                \
        }                                                                                          \
    } while (0)
    BIND(global_init, "curl_global_init");
    BIND(easy_init, "curl_easy_init");
    BIND(easy_setopt, "curl_easy_setopt");
    BIND(easy_perform, "curl_easy_perform");
    BIND(easy_getinfo, "curl_easy_getinfo");
    BIND(easy_cleanup, "curl_easy_cleanup");
    BIND(easy_strerror, "curl_easy_strerror");
    BIND(slist_append, "curl_slist_append");
    BIND(slist_free_all, "curl_slist_free_all");
#undef BIND
    // Not thread-safe before 7.84, hence once, before any handle exists.
    if (curl.global_init(GLOBAL_ALL) != CODE_OK) {
        snprintf(curl.problem, sizeof curl.problem, "curl_global_init failed");
        return;
    }
    curl.loaded = 1;
}

// 1 when libcurl could be loaded; otherwise 0 and the reason in `problem`.
static int available(char *problem, size_t problem_size) {
    pthread_once(&load_once, load);
    if (!curl.loaded && problem != NULL && problem_size > 0) {
        snprintf(problem, problem_size, "%s", curl.problem);
    }
    return curl.loaded;
}

/// A growable byte buffer that stops accepting bytes past `limit`.
struct sink {
    uint8_t *bytes;
    size_t count;
    size_t capacity;
    size_t limit;
    int truncated;
};

static int sink_append(struct sink *sink, const void *data, size_t count) {
    if (count > sink->limit - sink->count) {
        count = sink->limit - sink->count;
        sink->truncated = 1;
    }
    if (sink->count + count > sink->capacity) {
        size_t capacity = sink->capacity ? sink->capacity : 1024;
        while (capacity < sink->count + count) capacity *= 2;
        uint8_t *grown = realloc(sink->bytes, capacity);
        if (grown == NULL) return 0;
        sink->bytes = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->bytes + sink->count, data, count);
    sink->count += count;
    return !sink->truncated;
}

static size_t on_body(char *data, size_t size, size_t count, void *context) {
    // Returning less than was offered ends the transfer (CURLE_WRITE_ERROR): past the limit
    // nothing more is read, as a limited reader would stop.
    return sink_append(context, data, size * count) ? size * count : 0;
}

static size_t on_header(char *data, size_t size, size_t count, void *context) {
    struct sink *sink = context;
    size_t length = size * count;
    // Each response of a redirect chain (and any 1xx) starts with its status line: keep only
    // the headers of the last one, the response the caller gets.
    if (length >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        sink->count = 0;
        sink->truncated = 0;
    }
    return sink_append(sink, data, length) ? length : 0;
}

static int64_t monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// The Referer Go's client sends on a redirect (net/http refererForURL): the previous request's
// URL without its user information, and none when going from https to http. Returns NULL for
// none; otherwise a string to free.
static char *referer_for(const char *previous, const char *next) {
    if (strncasecmp(previous, "https:", 6) == 0 && strncasecmp(next, "http:", 5) == 0) return NULL;
    char *referer = strdup(previous);
    if (referer == NULL) return NULL;
    char *authority = strstr(referer, "://");
    if (authority == NULL) return referer;
    authority += 3;
    size_t length = strcspn(authority, "/?#");
    char *at = NULL;
    for (size_t i = 0; i < length; i++) {
        if (authority[i] == '@') at = authority + i;
    }
    if (at != NULL) memmove(authority, at + 1, strlen(at + 1) + 1);
    return referer;
}

// libcurl's `struct curl_sockaddr` (curl/curl.h), the address it is about to connect to.
struct curl_sockaddr {
    int family;
    int socktype;
    int protocol;
    unsigned int addrlen;
    struct sockaddr addr;
};

// What the loopback guard saw: the first address it refused, as text.
struct loopback_guard {
    int refused;
    char address[INET6_ADDRSTRLEN];
};

// 127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104: `bytes` holds 4 (AF_INET) or 16 (AF_INET6) bytes.
static int is_loopback_bytes(int family, const uint8_t *bytes) {
    static const uint8_t loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    if (family == AF_INET) return bytes[0] == 127;
    if (family == AF_INET6) return memcmp(bytes, loopback, 16) == 0 || (memcmp(bytes, mapped, 12) == 0 && bytes[12] == 127);
    return 0;
}

static int is_loopback_address(const struct curl_sockaddr *address) {
    // libcurl's `addr` is followed by room for the whole address (its curl_sockaddr_ex).
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        return is_loopback_bytes(AF_INET, (const uint8_t *)&((const struct sockaddr_in *)&address->addr)->sin_addr);
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        return is_loopback_bytes(AF_INET6, ((const struct sockaddr_in6 *)&address->addr)->sin6_addr.s6_addr);
    }
    return 0;
}

// CURLOPT_OPENSOCKETFUNCTION: called with the address libcurl resolved and is about to connect
// to, for every connection of every hop (and whatever a name resolves to at that moment, so a
// name that changes its answer after the emulator's own check still cannot lead elsewhere).
// Anything but a loopback address gets no socket (CURL_SOCKET_BAD): nothing is sent to it.
static int open_loopback_socket(void *context, int purpose, struct curl_sockaddr *address) {
    (void)purpose;
    struct loopback_guard *guard = context;
    if (!is_loopback_address(address)) {
        if (!guard->refused) {
            guard->refused = 1;
            const void *raw = address->family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)&address->addr)->sin6_addr
                                                          : (const void *)&((struct sockaddr_in *)&address->addr)->sin_addr;
            if (inet_ntop(address->family, raw, guard->address, sizeof guard->address) == NULL) {
                snprintf(guard->address, sizeof guard->address, "an address of family %d", address->family);
            }
        }
        return SOCKET_BAD;
    }
    return socket(address->family, address->socktype, address->protocol);
}

// One request with Go's redirect rules: a POST of `body` (hooks), or a GET (`as_get`; email
// templates, as templatemailer fetches them with http.DefaultClient).
// `loopback_only` (email templates): no proxy, every connection checked by
// open_loopback_socket, and no redirect followed: the caller checks each hop's URL before asking
// for it, and gets a redirect as the answer, with its target in `redirect_url`.
static int perform(const char *url, const char *const *headers, size_t header_count, int as_get,
                   const uint8_t *body, size_t body_count, long timeout_ms, size_t body_limit,
                   const char *ca_file, const char *ca_directory, int loopback_only, cauth_http_reply *reply) {
    memset(reply, 0, sizeof *reply);
    if (!available(reply->error, sizeof reply->error)) return CAUTH_HTTP_FAILED;
    void *easy = curl.easy_init();
    if (easy == NULL) {
        snprintf(reply->error, sizeof reply->error, "curl_easy_init failed");
        return CAUTH_HTTP_FAILED;
    }
    struct slist *list = NULL;
    for (size_t i = 0; i < header_count; i++) {
        struct slist *grown = curl.slist_append(list, headers[i]);
        if (grown == NULL) break;
        list = grown;
    }
    // libcurl would add `Expect: 100-continue` to larger bodies; Go's client never sends it.
    struct slist *grown = curl.slist_append(list, "Expect:");
    if (grown != NULL) list = grown;

    char error[ERROR_SIZE] = {0};
    struct sink head = {.limit = 64 * 1024};
    struct sink content = {.limit = body_limit};
    curl.easy_setopt(easy, OPT_HTTPHEADER, list);
    curl.easy_setopt(easy, OPT_WRITEFUNCTION, on_body);
    curl.easy_setopt(easy, OPT_WRITEDATA, (void *)&content);
    curl.easy_setopt(easy, OPT_HEADERFUNCTION, on_header);
    curl.easy_setopt(easy, OPT_HEADERDATA, (void *)&head);
    curl.easy_setopt(easy, OPT_ERRORBUFFER, error);
    // Worker threads: no SIGALRM-based resolver timeouts.
    curl.easy_setopt(easy, OPT_NOSIGNAL, 1L);
    // Go's transport speaks http and https only, on the first request as after a redirect.
    curl.easy_setopt(easy, OPT_PROTOCOLS, (long)PROTO_HTTP_HTTPS);
    if (ca_file != NULL) curl.easy_setopt(easy, OPT_CAINFO, ca_file);
    if (ca_directory != NULL) curl.easy_setopt(easy, OPT_CAPATH, ca_directory);
    struct loopback_guard guard = {0};
    if (loopback_only) {
        // "" turns off the proxies the environment names: a proxy on loopback would connect
        // onwards to any host.
        curl.easy_setopt(easy, OPT_PROXY, "");
        curl.easy_setopt(easy, OPT_OPENSOCKETFUNCTION, open_loopback_socket);
        curl.easy_setopt(easy, OPT_OPENSOCKETDATA, (void *)&guard);
    }
    char *redirect_url = NULL;

    // Redirects are followed here, hop by hop, with the rules of Go's http.Client (net/http
    // client.go: redirectBehavior, defaultCheckRedirect, refererForURL), which GoTrue's hook
    // client uses unchanged (internal/hooks/hookshttp: an http.Client with only a Timeout):
    // 301/302/303 continue as a GET without the body, 307/308 repeat the request with it; every
    // hop carries the first request's headers (signature included) and a Referer; any host and
    // scheme is followed, https to http too, as Go does not re-check the hook URI rule; other 3xx
    // and a redirect without Location are the answer; the 11th redirect is an error. libcurl's
    // own FOLLOWLOCATION differs: it follows other 3xx with a Location too (300), and its
    // automatic Referer is sent from https to http as well.
    const int64_t deadline = monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 1);
    char *current = strdup(url);
    char *referer = NULL;
    int get = as_get, with_body = !as_get;
    int code = CODE_OK;
    long status = 0;
    for (int redirects = 0; current != NULL; redirects++) {
        int64_t remaining = deadline - monotonic_ms();
        if (remaining <= 0) {
            code = CODE_OPERATION_TIMEDOUT;
            status = 0;
            snprintf(error, sizeof error, "timed out after %ld ms", timeout_ms);
            break;
        }
        curl.easy_setopt(easy, OPT_URL, current);
        curl.easy_setopt(easy, OPT_REFERER, referer);
        if (with_body) {
            // Never NULL: with no POSTFIELDS data libcurl would read the body from stdin.
            curl.easy_setopt(easy, OPT_POSTFIELDS, body != NULL ? (const void *)body : (const void *)"");
            curl.easy_setopt(easy, OPT_POSTFIELDSIZE_LARGE, (int64_t)body_count);
            // A 307/308 after a 303 keeps the GET and, as Go does, attaches the first body.
            curl.easy_setopt(easy, OPT_CUSTOMREQUEST, get ? "GET" : NULL);
        } else {
            curl.easy_setopt(easy, OPT_CUSTOMREQUEST, (const char *)NULL);
            curl.easy_setopt(easy, OPT_HTTPGET, 1L);
        }
        curl.easy_setopt(easy, OPT_TIMEOUT_MS, (long)remaining);
        content.count = 0;
        content.truncated = 0;
        error[0] = 0;
        code = curl.easy_perform(easy);
        status = 0;
        curl.easy_getinfo(easy, INFO_RESPONSE_CODE, &status);
        if (loopback_only) {
            // The refusal, and libcurl's own word on the address it used (CURLINFO_PRIMARY_IP).
            const char *primary = NULL;
            curl.easy_getinfo(easy, INFO_PRIMARY_IP, (char **)&primary);
            if (!guard.refused && status > 0 && primary != NULL && primary[0] != 0) {
                uint8_t bytes[16] = {0};
                int family = strchr(primary, ':') != NULL ? AF_INET6 : AF_INET;
                if (inet_pton(family, primary, bytes) != 1 || !is_loopback_bytes(family, bytes)) {
                    guard.refused = 1;
                    snprintf(guard.address, sizeof guard.address, "%s", primary);
                }
            }
            if (guard.refused) {
                code = -1;
                status = 0;
                snprintf(error, sizeof error, "refused to connect to %s: not a loopback address", guard.address);
                break;
            }
        }
        int answered = code == CODE_OK || (code == CODE_WRITE_ERROR && content.truncated && status > 0);
        if (!answered) break;
        code = CODE_OK;
        int keeps_method = status == 307 || status == 308;
        if (!keeps_method && status != 301 && status != 302 && status != 303) break;
        const char *location = NULL;
        curl.easy_getinfo(easy, INFO_REDIRECT_URL, (char **)&location);
        if (location == NULL || location[0] == 0) break;
        if (loopback_only) {
            redirect_url = strdup(location);
            break;
        }
        if (redirects == 10) {
            code = -1;
            snprintf(error, sizeof error, "stopped after 10 redirects");
            break;
        }
        char *next = strdup(location);
        free(referer);
        referer = next != NULL ? referer_for(current, next) : NULL;
        free(current);
        current = next;
        if (!keeps_method) get = 1;
        with_body = keeps_method;
    }
    int lost = current == NULL;
    free(current);
    free(referer);
    curl.easy_cleanup(easy);
    curl.slist_free_all(list);

    if (code == CODE_OK && !lost) {
        reply->status = (int)status;
        reply->headers = head.bytes;
        reply->headers_count = head.count;
        reply->body = content.bytes;
        reply->body_count = content.count;
        reply->redirect_url = redirect_url;
        return CAUTH_HTTP_RESPONSE;
    }
    int outcome = code == CODE_OPERATION_TIMEDOUT ? CAUTH_HTTP_TIMED_OUT : CAUTH_HTTP_FAILED;
    if (lost) {
        snprintf(reply->error, sizeof reply->error, "out of memory");
    } else {
        snprintf(reply->error, sizeof reply->error, "%s", error[0] ? error : curl.easy_strerror(code));
    }
    free(head.bytes);
    free(content.bytes);
    free(redirect_url);
    return outcome;
}

int cauth_http_post(const char *url, const char *const *headers, size_t header_count,
                    const uint8_t *body, size_t body_count, long timeout_ms, size_t body_limit,
                    const char *ca_file, const char *ca_directory, cauth_http_reply *reply) {
    return perform(url, headers, header_count, 0, body, body_count, timeout_ms, body_limit, ca_file, ca_directory, 0, reply);
}

int cauth_http_get(const char *url, long timeout_ms, size_t body_limit, const char *ca_file, const char *ca_directory,
                   int loopback_only, cauth_http_reply *reply) {
    return perform(url, NULL, 0, 1, NULL, 0, timeout_ms, body_limit, ca_file, ca_directory, loopback_only, reply);
}

void cauth_http_reply_free(cauth_http_reply *reply) {
    free(reply->headers);
    free(reply->body);
    free(reply->redirect_url);
    reply->headers = NULL;
    reply->body = NULL;
    reply->redirect_url = NULL;
}
