/*
 * The SQLite floor of an operation: replays, in one process and a tight loop, exactly the
 * statements the server ran (recorded with AUTH_EMULATOR_SQL_TRACE, see
 * Sources/AuthStore/StatementTrace.swift) against a copy of the database as it was before, and
 * reports the CPU time per operation. What the server spends above this is overhead it owns.
 *
 *   floor SNAPSHOT.db TRACE START END OPS [REPEAT]
 *
 * START and END are byte offsets into TRACE that delimit the measured operations; OPS is how many
 * operations the server answered in between. Every traced connection gets its own SQLite
 * connection with the PRAGMAs the server applied to it (read from anywhere in the trace; they are
 * setup, not timed), so a reader's BEGIN may interleave with the writer's transaction as it did in
 * the server. Statements are prepared once (as the server caches them) before the timed loop; each
 * execution binds, steps to the end reading every column, resets and clears its bindings, as the
 * server does. The database copy is restored before every repeat, so each repeat does the same
 * work. Prints key=value lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char kind; /* 'n', 'i', 'd', 't', 'b' */
    int64_t integer;
    double real;
    unsigned char *bytes;
    int length;
} Arg;

typedef struct {
    int conn;
    int stmt;
    int argc;
    Arg *args;
} Exec;

typedef struct {
    char *sql;
    int pragma;
} Statement;

static Statement *statements;
static int statement_capacity;

static void die(const char *message, const char *detail) {
    fprintf(stderr, "floor: %s%s%s\n", message, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static unsigned char *unhex(const char *text, size_t length, int *out_length) {
    if (length % 2) die("odd hex length in trace", NULL);
    unsigned char *bytes = malloc(length / 2 + 1);
    for (size_t i = 0; i < length / 2; i++) {
        int hi = hexval(text[2 * i]), lo = hexval(text[2 * i + 1]);
        if (hi < 0 || lo < 0) die("bad hex in trace", NULL);
        bytes[i] = (unsigned char)(hi << 4 | lo);
    }
    bytes[length / 2] = 0;
    *out_length = (int)(length / 2);
    return bytes;
}

static void define_statement(int id, unsigned char *sql) {
    if (id >= statement_capacity) {
        int capacity = statement_capacity ? statement_capacity * 2 : 256;
        while (capacity <= id) capacity *= 2;
        statements = realloc(statements, sizeof(Statement) * capacity);
        memset(statements + statement_capacity, 0, sizeof(Statement) * (capacity - statement_capacity));
        statement_capacity = capacity;
    }
    statements[id].sql = (char *)sql;
    const char *p = (const char *)sql;
    while (*p == ' ' || *p == '\n' || *p == '\t') p++;
    statements[id].pragma = strncasecmp(p, "PRAGMA", 6) == 0;
}

/* Splits one line into tab-separated fields in place; returns the count. */
static int fields(char *line, char **out, int max) {
    int count = 0;
    char *p = line;
    while (count < max) {
        out[count++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = 0;
        p = tab + 1;
    }
    return count;
}

static void parse_exec(char **f, int n, Exec *exec) {
    exec->conn = atoi(f[1]);
    exec->stmt = atoi(f[2]);
    exec->argc = n - 3;
    exec->args = exec->argc ? calloc((size_t)exec->argc, sizeof(Arg)) : NULL;
    for (int i = 0; i < exec->argc; i++) {
        const char *value = f[3 + i];
        Arg *arg = &exec->args[i];
        arg->kind = value[0];
        switch (value[0]) {
        case 'n': break;
        case 'i': arg->integer = strtoll(value + 1, NULL, 10); break;
        case 'd': {
            uint64_t bits = strtoull(value + 1, NULL, 16);
            memcpy(&arg->real, &bits, sizeof bits);
            break;
        }
        case 't':
        case 'b': arg->bytes = unhex(value + 1, strlen(value + 1), &arg->length); break;
        default: die("unknown argument kind in trace", value);
        }
    }
}

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void copy_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY);
    if (in < 0) die("cannot open snapshot", from);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0) die("cannot create work copy", to);
    char buffer[1 << 16];
    ssize_t n;
    while ((n = read(in, buffer, sizeof buffer)) > 0) {
        if (write(out, buffer, (size_t)n) != n) die("short write", to);
    }
    close(in);
    close(out);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAX_CONNS 64

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: floor SNAPSHOT.db TRACE START END OPS [REPEAT]\n");
        return 2;
    }
    const char *snapshot = argv[1], *trace_path = argv[2];
    long start = atol(argv[3]), end = atol(argv[4]);
    long ops = atol(argv[5]);
    int repeat = argc > 6 ? atoi(argv[6]) : 5;
    if (ops <= 0 || repeat <= 0 || end < start) die("bad arguments", NULL);

    FILE *trace = fopen(trace_path, "r");
    if (!trace) die("cannot open trace", trace_path);
    Exec *execs = NULL;
    long exec_count = 0, exec_capacity = 0;
    Exec *pragmas = NULL;
    long pragma_count = 0, pragma_capacity = 0;
    char *line = NULL;
    size_t line_capacity = 0;
    ssize_t length;
    long offset = 0;
    char *f[4096];
    while ((length = getline(&line, &line_capacity, trace)) > 0) {
        long at = offset;
        offset += length;
        if (line[length - 1] == '\n') line[length - 1] = 0;
        int n = fields(line, f, 4096);
        if (line[0] == 'P' && n == 4) {
            int sql_length;
            define_statement(atoi(f[2]), unhex(f[3], strlen(f[3]), &sql_length));
        } else if (line[0] == 'X' && n >= 3) {
            int id = atoi(f[2]);
            if (id >= statement_capacity || !statements[id].sql) die("execution of an undefined statement", NULL);
            if (statements[id].pragma) {
                if (pragma_count == pragma_capacity) {
                    pragma_capacity = pragma_capacity ? pragma_capacity * 2 : 64;
                    pragmas = realloc(pragmas, sizeof(Exec) * (size_t)pragma_capacity);
                }
                parse_exec(f, n, &pragmas[pragma_count++]);
            } else if (at >= start && at < end) {
                if (exec_count == exec_capacity) {
                    exec_capacity = exec_capacity ? exec_capacity * 2 : 4096;
                    execs = realloc(execs, sizeof(Exec) * (size_t)exec_capacity);
                }
                parse_exec(f, n, &execs[exec_count++]);
            }
        }
    }
    fclose(trace);
    if (exec_count == 0) die("no statement in the given range of the trace", NULL);

    char work[4096];
    snprintf(work, sizeof work, "%s.floor", snapshot);
    double *per_op = calloc((size_t)repeat, sizeof(double));
    long errors = 0;
    char first_error[512] = "";

    for (int r = 0; r < repeat; r++) {
        char path[4200];
        unlink(work);
        snprintf(path, sizeof path, "%s-wal", work); unlink(path);
        snprintf(path, sizeof path, "%s-shm", work); unlink(path);
        copy_file(snapshot, work);

        sqlite3 *conns[MAX_CONNS] = {0};
        sqlite3_stmt **prepared = calloc((size_t)MAX_CONNS * (size_t)statement_capacity, sizeof(sqlite3_stmt *));
        /* Open the connections the slice uses, oldest first (the writer opened first in the
         * server, so it is the one that switches the file to WAL). */
        for (int c = 1; c < MAX_CONNS; c++) {
            int used = 0;
            for (long i = 0; i < exec_count && !used; i++) used = execs[i].conn == c;
            if (!used) continue;
            if (sqlite3_open_v2(work, &conns[c], SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
                die("cannot open work copy", sqlite3_errmsg(conns[c]));
            sqlite3_busy_timeout(conns[c], 5000);
            /* The server checkpoints at 4,000 WAL pages, partly on a thread of its own
             * (Sources/AuthStore/Checkpointer.swift), with no PRAGMA to trace. The floor does what
             * SQLite alone does at that threshold: one automatic checkpoint inside the COMMIT that
             * crosses it, which copies each page once per 4,000 frames. */
            sqlite3_exec(conns[c], "PRAGMA wal_autocheckpoint = 4000", NULL, NULL, NULL);
            for (long i = 0; i < pragma_count; i++) {
                if (pragmas[i].conn != c) continue;
                sqlite3_exec(conns[c], statements[pragmas[i].stmt].sql, NULL, NULL, NULL);
            }
        }
        for (long i = 0; i < exec_count; i++) {
            Exec *e = &execs[i];
            if (e->conn <= 0 || e->conn >= MAX_CONNS) die("connection number out of range", NULL);
            sqlite3_stmt **slot = &prepared[(size_t)e->conn * (size_t)statement_capacity + (size_t)e->stmt];
            if (*slot) continue;
            if (sqlite3_prepare_v3(conns[e->conn], statements[e->stmt].sql, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL) != SQLITE_OK)
                die("prepare failed", sqlite3_errmsg(conns[e->conn]));
        }

        double began = cpu_seconds();
        for (long i = 0; i < exec_count; i++) {
            Exec *e = &execs[i];
            sqlite3_stmt *s = prepared[(size_t)e->conn * (size_t)statement_capacity + (size_t)e->stmt];
            for (int a = 0; a < e->argc; a++) {
                Arg *arg = &e->args[a];
                switch (arg->kind) {
                case 'n': sqlite3_bind_null(s, a + 1); break;
                case 'i': sqlite3_bind_int64(s, a + 1, arg->integer); break;
                case 'd': sqlite3_bind_double(s, a + 1, arg->real); break;
                case 't': sqlite3_bind_text64(s, a + 1, (const char *)arg->bytes, (sqlite3_uint64)arg->length, SQLITE_TRANSIENT, SQLITE_UTF8); break;
                case 'b': sqlite3_bind_blob64(s, a + 1, arg->bytes, (sqlite3_uint64)arg->length, SQLITE_TRANSIENT); break;
                }
            }
            int status;
            while ((status = sqlite3_step(s)) == SQLITE_ROW) {
                int columns = sqlite3_column_count(s);
                for (int k = 0; k < columns; k++) {
                    switch (sqlite3_column_type(s, k)) {
                    case SQLITE_INTEGER: (void)sqlite3_column_int64(s, k); break;
                    case SQLITE_FLOAT: (void)sqlite3_column_double(s, k); break;
                    case SQLITE_TEXT: (void)sqlite3_column_text(s, k); (void)sqlite3_column_bytes(s, k); break;
                    case SQLITE_BLOB: (void)sqlite3_column_blob(s, k); (void)sqlite3_column_bytes(s, k); break;
                    default: break;
                    }
                }
            }
            if (status != SQLITE_DONE) {
                if (errors++ == 0) {
                    snprintf(first_error, sizeof first_error, "%s (statement: %.200s)", sqlite3_errmsg(conns[e->conn]), statements[e->stmt].sql);
                }
            }
            sqlite3_reset(s);
            sqlite3_clear_bindings(s);
        }
        per_op[r] = (cpu_seconds() - began) / (double)ops;

        for (size_t i = 0; i < (size_t)MAX_CONNS * (size_t)statement_capacity; i++) {
            if (prepared[i]) sqlite3_finalize(prepared[i]);
        }
        free(prepared);
        for (int c = 0; c < MAX_CONNS; c++) {
            if (conns[c]) sqlite3_close_v2(conns[c]);
        }
    }
    unlink(work);
    {
        char path[4200];
        snprintf(path, sizeof path, "%s-wal", work); unlink(path);
        snprintf(path, sizeof path, "%s-shm", work); unlink(path);
    }

    qsort(per_op, (size_t)repeat, sizeof(double), compare_doubles);
    printf("ops=%ld\n", ops);
    printf("statements=%ld\n", exec_count);
    printf("statements_per_op=%.2f\n", (double)exec_count / (double)ops);
    printf("floor_us_per_op_best=%.2f\n", per_op[0] * 1e6);
    printf("floor_us_per_op_median=%.2f\n", per_op[repeat / 2] * 1e6);
    printf("errors=%ld\n", errors / repeat);
    printf("first_error=%s\n", first_error);
    printf("sqlite_version=%s\n", sqlite3_libversion());
    return 0;
}
