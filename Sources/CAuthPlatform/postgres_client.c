// PostgreSQL's client library, libpq, loaded with dlopen on first use.
//
// Why dlopen rather than linking: only Postgres mode (`--db postgres://...`) talks to a
// Postgres server, and most runs never do. Linked, libpq (and its TLS, Kerberos and LDAP
// dependencies) would have to exist on every machine the relocatable binary starts on; loaded
// on demand, a machine without it only fails when Postgres mode is asked for, with one message
// saying what to install. libpq gives every authentication method, TLS, `PG*` environment
// variables, `.pgpass` and service files for free.
//
// libpq's ABI is stable within soname 5 (PostgreSQL 8.0 onwards); the enum values this file and
// CAuthPostgres.h use are libpq-fe.h's documented values, spelled out because the headers
// (libpq-dev, libpq from Homebrew) need not be installed where this builds.

#include "CAuthPostgres.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct api {
    int (*lib_version)(void);
    void *(*connectdb)(const char *);
    int (*status)(const void *);
    char *(*error_message)(const void *);
    void (*finish)(void *);
    void (*reset)(void *);
    int (*transaction_status)(const void *);
    int (*server_version)(const void *);
    const char *(*parameter_status)(const void *, const char *);
    void *(*exec)(void *, const char *);
    void *(*exec_params)(void *, const char *, int, const unsigned int *, const char *const *, const int *, const int *, int);
    void *(*prepare)(void *, const char *, const char *, int, const unsigned int *);
    void *(*exec_prepared)(void *, const char *, int, const char *const *, const int *, const int *, int);
    int (*result_status)(const void *);
    char *(*result_error_message)(const void *);
    char *(*result_error_field)(const void *, int);
    int (*ntuples)(const void *);
    int (*nfields)(const void *);
    char *(*fname)(const void *, int);
    unsigned int (*ftype)(const void *, int);
    char *(*getvalue)(const void *, int, int);
    int (*getisnull)(const void *, int, int);
    int (*getlength)(const void *, int, int);
    char *(*cmd_tuples)(void *);
    void (*clear)(void *);
    void *(*set_notice_receiver)(void *, cauth_pq_notice_receiver, void *);
    // Pipeline mode (libpq 14+): optional, NULL on an older library.
    int (*enter_pipeline_mode)(void *);
    int (*exit_pipeline_mode)(void *);
    int (*pipeline_sync)(void *);
    int (*send_query_params)(void *, const char *, int, const unsigned int *, const char *const *, const int *, const int *, int);
    int (*send_query_prepared)(void *, const char *, int, const char *const *, const int *, const int *, int);
    void *(*get_result)(void *);
};

static struct api pq;
static void *library;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

// Where libpq lives when no path is given. Linux: the soname, found by the dynamic loader
// (Debian/Ubuntu `libpq5`, Fedora `libpq`, Alpine `libpq`). macOS has no libpq in the base
// system: Homebrew's keg-only `libpq` (Apple silicon, then Intel prefixes), Homebrew's
// `postgresql@NN` (lib/postgresql since 15, lib/postgresql@NN before), Postgres.app, then
// whatever DYLD_* paths find.
static size_t default_candidates(char names[][160], size_t capacity) {
    size_t count = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (count < capacity) snprintf(names[count++], sizeof names[0], __VA_ARGS__);              \
    } while (0)
#if defined(__APPLE__)
    static const char *const prefixes[] = {"/opt/homebrew/opt", "/usr/local/opt"};
    for (size_t p = 0; p < 2; p++) ADD("%s/libpq/lib/libpq.5.dylib", prefixes[p]);
    for (int version = 18; version >= 14; version--) {
        for (size_t p = 0; p < 2; p++) {
            ADD("%s/postgresql@%d/lib/postgresql/libpq.5.dylib", prefixes[p], version);
            ADD("%s/postgresql@%d/lib/postgresql@%d/libpq.5.dylib", prefixes[p], version, version);
        }
    }
    ADD("/Applications/Postgres.app/Contents/Versions/latest/lib/libpq.5.dylib");
    ADD("libpq.5.dylib");
#else
    ADD("libpq.so.5");
#endif
#undef ADD
    return count;
}

static const char *install_advice(void) {
#if defined(__APPLE__)
    return "Install it with `brew install libpq` (or Postgres.app, or Homebrew's postgresql@NN)";
#else
    return "Install it (Debian/Ubuntu: `apt install libpq5`; Fedora: `dnf install libpq`; Alpine: `apk add libpq`)";
#endif
}

// Binds every function into `into`; 0 with the missing symbol in `problem` when one is absent
// (a library that is not libpq, or one older than the functions used here).
static int bind_all(void *handle, struct api *into, char *problem, size_t problem_size, const char *path) {
#define BIND(field, symbol)                                                                        \
    do {                                                                                           \
        *(void **)&into->field = dlsym(handle, symbol);                                            \
        if (into->field == NULL) {                                                                 \
            snprintf(problem, problem_size, "%s was loaded but lacks %s: it is not a usable libpq", path, symbol); \
            return 0;                                                                              \
        }                                                                                          \
    } while (0)
    BIND(lib_version, "PQlibVersion");
    BIND(connectdb, "PQconnectdb");
    BIND(status, "PQstatus");
    BIND(error_message, "PQerrorMessage");
    BIND(finish, "PQfinish");
    BIND(reset, "PQreset");
    BIND(transaction_status, "PQtransactionStatus");
    BIND(server_version, "PQserverVersion");
    BIND(parameter_status, "PQparameterStatus");
    BIND(exec, "PQexec");
    BIND(exec_params, "PQexecParams");
    BIND(prepare, "PQprepare");
    BIND(exec_prepared, "PQexecPrepared");
    BIND(result_status, "PQresultStatus");
    BIND(result_error_message, "PQresultErrorMessage");
    BIND(result_error_field, "PQresultErrorField");
    BIND(ntuples, "PQntuples");
    BIND(nfields, "PQnfields");
    BIND(fname, "PQfname");
    BIND(ftype, "PQftype");
    BIND(getvalue, "PQgetvalue");
    BIND(getisnull, "PQgetisnull");
    BIND(getlength, "PQgetlength");
    BIND(cmd_tuples, "PQcmdTuples");
    BIND(clear, "PQclear");
    BIND(set_notice_receiver, "PQsetNoticeReceiver");
#undef BIND
    // Optional: without them a transaction's BEGIN takes a round trip of its own.
    *(void **)&into->enter_pipeline_mode = dlsym(handle, "PQenterPipelineMode");
    *(void **)&into->exit_pipeline_mode = dlsym(handle, "PQexitPipelineMode");
    *(void **)&into->pipeline_sync = dlsym(handle, "PQpipelineSync");
    *(void **)&into->send_query_params = dlsym(handle, "PQsendQueryParams");
    *(void **)&into->send_query_prepared = dlsym(handle, "PQsendQueryPrepared");
    *(void **)&into->get_result = dlsym(handle, "PQgetResult");
    if (!into->enter_pipeline_mode || !into->exit_pipeline_mode || !into->pipeline_sync || !into->send_query_params
        || !into->send_query_prepared || !into->get_result) {
        into->enter_pipeline_mode = NULL;
    }
    return 1;
}

// Opens the first candidate that loads and binds. With `explicit_path` only that file is tried
// (someone who names a file means that one). On failure `problem` names every path tried, the
// loader's reason for the last one and what to install.
static void *open_library(const char *explicit_path, struct api *into, char *problem, size_t problem_size) {
    char names[32][160];
    size_t count;
    if (explicit_path != NULL && explicit_path[0] != 0) {
        snprintf(names[0], sizeof names[0], "%s", explicit_path);
        count = 1;
    } else {
        count = default_candidates(names, sizeof names / sizeof names[0]);
    }
    char reason[512] = "not found";
    for (size_t i = 0; i < count; i++) {
        void *handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) {
            const char *why = dlerror();
            snprintf(reason, sizeof reason, "%s", why != NULL ? why : "not found");
            continue;
        }
        if (bind_all(handle, into, reason, sizeof reason, names[i])) return handle;
        dlclose(handle);
    }
    size_t used = (size_t)snprintf(problem, problem_size, "libpq (PostgreSQL's client library, needed for a postgres:// database) could not be loaded; tried ");
    for (size_t i = 0; i < count && used < problem_size; i++) {
        used += (size_t)snprintf(problem + used, problem_size - used, "%s%s", i == 0 ? "" : ", ", names[i]);
    }
    if (used < problem_size) {
        snprintf(problem + used, problem_size - used, " (last error: %s). %s, or set AUTH_EMULATOR_LIBPQ to the library's path",
                 reason, install_advice());
    }
    return NULL;
}

int cauth_pq_load(const char *library_path, char *problem, size_t problem_size) {
    pthread_mutex_lock(&load_lock);
    if (library == NULL) {
        const char *path = library_path;
        if (path == NULL || path[0] == 0) path = getenv("AUTH_EMULATOR_LIBPQ");
        struct api loaded;
        void *handle = open_library(path, &loaded, problem, problem_size);
        if (handle != NULL) {
            pq = loaded;
            library = handle;  // never unloaded: connections may live until exit
        }
    }
    int ok = library != NULL;
    pthread_mutex_unlock(&load_lock);
    return ok;
}

int cauth_pq_probe(const char *library_path, char *problem, size_t problem_size) {
    struct api probed;
    void *handle = open_library(library_path, &probed, problem, problem_size);
    if (handle == NULL) return 0;
    dlclose(handle);
    return 1;
}

int cauth_pq_lib_version(void) { return pq.lib_version(); }
cauth_pg_conn *cauth_pq_connectdb(const char *conninfo) { return pq.connectdb(conninfo); }
int cauth_pq_status(const cauth_pg_conn *conn) { return pq.status(conn); }
const char *cauth_pq_error_message(const cauth_pg_conn *conn) { return pq.error_message(conn); }
void cauth_pq_finish(cauth_pg_conn *conn) { pq.finish(conn); }
void cauth_pq_reset(cauth_pg_conn *conn) { pq.reset(conn); }
int cauth_pq_transaction_status(const cauth_pg_conn *conn) { return pq.transaction_status(conn); }
int cauth_pq_server_version(const cauth_pg_conn *conn) { return pq.server_version(conn); }
const char *cauth_pq_parameter_status(const cauth_pg_conn *conn, const char *name) { return pq.parameter_status(conn, name); }

cauth_pg_result *cauth_pq_exec(cauth_pg_conn *conn, const char *command) { return pq.exec(conn, command); }

cauth_pg_result *cauth_pq_exec_params(cauth_pg_conn *conn, const char *command, int count, const char *const *values) {
    // NULL types: the server infers each parameter's type; NULL lengths and formats: text.
    return pq.exec_params(conn, command, count, NULL, values, NULL, NULL, 0);
}

cauth_pg_result *cauth_pq_prepare(cauth_pg_conn *conn, const char *name, const char *query) {
    return pq.prepare(conn, name, query, 0, NULL);
}

cauth_pg_result *cauth_pq_exec_prepared(cauth_pg_conn *conn, const char *name, int count, const char *const *values) {
    return pq.exec_prepared(conn, name, count, values, NULL, NULL, 0);
}

// libpq's ExecStatusType values used below (stable since libpq 14 added the pipeline ones).
enum { PIPELINE_SYNC = 10, PIPELINE_ABORTED = 11 };

cauth_pg_result *cauth_pq_exec_prepared_after(cauth_pg_conn *conn, const char *command, const char *name, int count,
                                              const char *const *values, cauth_pg_result **command_result) {
    *command_result = NULL;
    if (pq.enter_pipeline_mode == NULL || !pq.enter_pipeline_mode(conn)) {
        *command_result = pq.exec(conn, command);
        int status = pq.result_status(*command_result);
        if (status != 1 /* PGRES_COMMAND_OK */) return NULL;
        return pq.exec_prepared(conn, name, count, values, NULL, NULL, 0);
    }
    // One round trip: both messages, then a Sync; the results come back in order, each followed
    // by a NULL, then the Sync's. A failed command makes the statement PGRES_PIPELINE_ABORTED.
    cauth_pg_result *result = NULL;
    if (pq.send_query_params(conn, command, 0, NULL, NULL, NULL, NULL, 0)
        && pq.send_query_prepared(conn, name, count, values, NULL, NULL, 0) && pq.pipeline_sync(conn)) {
        *command_result = pq.get_result(conn);
        if (*command_result != NULL) {
            while (1) {  // the NULL that ends the command's results
                void *extra = pq.get_result(conn);
                if (extra == NULL) break;
                pq.clear(extra);
            }
        }
        result = pq.get_result(conn);
        if (result != NULL && pq.result_status(result) != PIPELINE_SYNC) {
            while (1) {
                void *extra = pq.get_result(conn);
                if (extra == NULL) break;
                pq.clear(extra);
            }
            void *sync = pq.get_result(conn);
            if (sync != NULL) pq.clear(sync);
        }
    }
    pq.exit_pipeline_mode(conn);
    if (*command_result == NULL || pq.result_status(*command_result) != 1) {
        if (result != NULL) pq.clear(result);
        return NULL;
    }
    if (result != NULL && pq.result_status(result) == PIPELINE_ABORTED) {
        pq.clear(result);
        return NULL;
    }
    return result;
}

int cauth_pq_result_status(const cauth_pg_result *result) { return pq.result_status(result); }
const char *cauth_pq_result_error_message(const cauth_pg_result *result) { return pq.result_error_message(result); }
const char *cauth_pq_result_error_field(const cauth_pg_result *result, int field) { return pq.result_error_field(result, field); }
int cauth_pq_ntuples(const cauth_pg_result *result) { return pq.ntuples(result); }
int cauth_pq_nfields(const cauth_pg_result *result) { return pq.nfields(result); }
const char *cauth_pq_fname(const cauth_pg_result *result, int column) { return pq.fname(result, column); }
unsigned int cauth_pq_ftype(const cauth_pg_result *result, int column) { return pq.ftype(result, column); }
const char *cauth_pq_getvalue(const cauth_pg_result *result, int row, int column) { return pq.getvalue(result, row, column); }
int cauth_pq_getisnull(const cauth_pg_result *result, int row, int column) { return pq.getisnull(result, row, column); }
int cauth_pq_getlength(const cauth_pg_result *result, int row, int column) { return pq.getlength(result, row, column); }
const char *cauth_pq_cmd_tuples(cauth_pg_result *result) { return pq.cmd_tuples(result); }
void cauth_pq_clear(cauth_pg_result *result) { pq.clear(result); }

void cauth_pq_set_notice_receiver(cauth_pg_conn *conn, cauth_pq_notice_receiver receiver, void *context) {
    pq.set_notice_receiver(conn, receiver, context);
}
