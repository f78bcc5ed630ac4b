// PostgreSQL's client library, libpq, loaded on first use (postgres_client.c says why). The
// connection and result handles are libpq's own `PGconn *` and `PGresult *`, opaque here; each
// function is libpq's function of the same name without the `cauth_` prefix, with libpq's
// documented behaviour (https://www.postgresql.org/docs/current/libpq.html).
#ifndef C_AUTH_POSTGRES_H
#define C_AUTH_POSTGRES_H

#include <stddef.h>

typedef struct cauth_pg_conn cauth_pg_conn;
typedef struct cauth_pg_result cauth_pg_result;

// libpq's enum values (libpq-fe.h), stable since PostgreSQL 7.4.
enum {
    CAUTH_PG_CONNECTION_OK = 0,
    CAUTH_PG_CONNECTION_BAD = 1,

    CAUTH_PGRES_EMPTY_QUERY = 0,
    CAUTH_PGRES_COMMAND_OK = 1,
    CAUTH_PGRES_TUPLES_OK = 2,
    CAUTH_PGRES_COPY_OUT = 3,
    CAUTH_PGRES_COPY_IN = 4,
    CAUTH_PGRES_BAD_RESPONSE = 5,
    CAUTH_PGRES_NONFATAL_ERROR = 6,
    CAUTH_PGRES_FATAL_ERROR = 7,

    CAUTH_PQTRANS_IDLE = 0,
    CAUTH_PQTRANS_ACTIVE = 1,
    CAUTH_PQTRANS_INTRANS = 2,
    CAUTH_PQTRANS_INERROR = 3,
    CAUTH_PQTRANS_UNKNOWN = 4,
};

// Error and notice field codes (postgres_ext.h: PG_DIAG_*), the protocol's field type bytes.
enum {
    CAUTH_PG_DIAG_SEVERITY_NONLOCALIZED = 'V',
    CAUTH_PG_DIAG_SQLSTATE = 'C',
    CAUTH_PG_DIAG_MESSAGE_PRIMARY = 'M',
    CAUTH_PG_DIAG_MESSAGE_DETAIL = 'D',
    CAUTH_PG_DIAG_MESSAGE_HINT = 'H',
    CAUTH_PG_DIAG_STATEMENT_POSITION = 'P',
    CAUTH_PG_DIAG_CONTEXT = 'W',
    CAUTH_PG_DIAG_SCHEMA_NAME = 's',
    CAUTH_PG_DIAG_TABLE_NAME = 't',
    CAUTH_PG_DIAG_COLUMN_NAME = 'c',
    CAUTH_PG_DIAG_CONSTRAINT_NAME = 'n',
};

// Loads libpq once per process. `library_path` (may be NULL: then the AUTH_EMULATOR_LIBPQ
// environment variable, then the platform's usual places) names the file to load. Returns 1
// when libpq is usable; otherwise 0 with the reason, the paths tried and what to install in
// `problem`. A failed attempt is not remembered: a later call tries again.
int cauth_pq_load(const char *library_path, char *problem, size_t problem_size);

// Tries to load libpq exactly as cauth_pq_load would with `library_path` (NULL: the usual
// places, not the environment), and unloads it again: the same answer and message, without
// touching the library the process uses.
int cauth_pq_probe(const char *library_path, char *problem, size_t problem_size);

// Everything below needs a successful cauth_pq_load first.
int cauth_pq_lib_version(void);
cauth_pg_conn *cauth_pq_connectdb(const char *conninfo);
int cauth_pq_status(const cauth_pg_conn *conn);
const char *cauth_pq_error_message(const cauth_pg_conn *conn);
void cauth_pq_finish(cauth_pg_conn *conn);
void cauth_pq_reset(cauth_pg_conn *conn);
int cauth_pq_transaction_status(const cauth_pg_conn *conn);
int cauth_pq_server_version(const cauth_pg_conn *conn);
const char *cauth_pq_parameter_status(const cauth_pg_conn *conn, const char *name);

cauth_pg_result *cauth_pq_exec(cauth_pg_conn *conn, const char *command);
// Parameters in text format (NULL for SQL NULL), types inferred by the server, text results.
cauth_pg_result *cauth_pq_exec_params(cauth_pg_conn *conn, const char *command, int count, const char *const *values);
cauth_pg_result *cauth_pq_prepare(cauth_pg_conn *conn, const char *name, const char *query);
cauth_pg_result *cauth_pq_exec_prepared(cauth_pg_conn *conn, const char *name, int count, const char *const *values);
// Runs `command` (no parameters: a BEGIN), then the prepared statement, in one round trip when
// libpq has pipeline mode (14+), else in two. `*command_result` gets the command's result (NULL
// when nothing came back); the statement's result is returned, NULL when the command failed (the
// statement then did not run) or nothing came back (the connection's error message says why).
cauth_pg_result *cauth_pq_exec_prepared_after(cauth_pg_conn *conn, const char *command, const char *name, int count,
                                              const char *const *values, cauth_pg_result **command_result);

int cauth_pq_result_status(const cauth_pg_result *result);
const char *cauth_pq_result_error_message(const cauth_pg_result *result);
// NULL when the result has no such field.
const char *cauth_pq_result_error_field(const cauth_pg_result *result, int field);
int cauth_pq_ntuples(const cauth_pg_result *result);
int cauth_pq_nfields(const cauth_pg_result *result);
const char *cauth_pq_fname(const cauth_pg_result *result, int column);
unsigned int cauth_pq_ftype(const cauth_pg_result *result, int column);
const char *cauth_pq_getvalue(const cauth_pg_result *result, int row, int column);
int cauth_pq_getisnull(const cauth_pg_result *result, int row, int column);
int cauth_pq_getlength(const cauth_pg_result *result, int row, int column);
const char *cauth_pq_cmd_tuples(cauth_pg_result *result);
void cauth_pq_clear(cauth_pg_result *result);

// Notices (RAISE NOTICE/WARNING in functions and triggers, server warnings) go to `receiver`
// with `context` instead of libpq's default, which prints them to stderr.
typedef void (*cauth_pq_notice_receiver)(void *context, const cauth_pg_result *notice);
void cauth_pq_set_notice_receiver(cauth_pg_conn *conn, cauth_pq_notice_receiver receiver, void *context);

#endif
