/*
 * The Postgres floor of an operation: replays, through libpq and in one process, exactly the
 * statements the emulator ran in Postgres mode (recorded with AUTH_EMULATOR_SQL_TRACE, see
 * Sources/AuthStore/StatementTrace.swift) against a copy of the database as it was before, and
 * reports the CPU per operation: this process's (libpq) and the Postgres backends' serving it.
 * What the emulator spends above its own share of this is overhead it owns.
 *
 *   pgfloor SERVER_CONNINFO TEMPLATE TRACE START END OPS [REPEAT]
 *
 * SERVER_CONNINFO reaches the server as a superuser, without a dbname (libpq key=value form);
 * TEMPLATE names a database holding the state before the measured operations (nobody connected
 * to it). Each repeat creates a fresh database from it, so every repeat does the same work. START
 * and END are byte offsets into TRACE that delimit the measured operations; OPS is how many the
 * emulator answered in between. Every traced connection gets its own libpq connection, set up
 * with the `SET ...` scripts the emulator ran on it (read from anywhere in the trace: setup, not
 * timed); statements are prepared once before the timed loop (as the emulator caches them);
 * scripts (transaction control) run unprepared, as the emulator runs them. Prints key=value lines.
 *
 * Build: cc -O2 -I"$(pg_config --includedir)" -o pgfloor pgfloor.c -lpq   (Debian: libpq-dev)
 */
#define _GNU_SOURCE
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64
#define MAX_ARGS 64

typedef struct {
    char *sql;
    int prepared[MAX_CONNS]; /* prepared on that connection in this repeat */
} Statement;

typedef struct {
    char kind;  /* 'X' statement, 'S' script */
    int conn;
    int stmt;   /* 'X' */
    char *sql;  /* 'S' */
    int nargs;
    char *args[MAX_ARGS]; /* NULL for SQL NULL */
} Record;

static Statement *statements;
static int statement_capacity;
static char *setup[MAX_CONNS];

static void die(const char *message, const char *detail) {
    fprintf(stderr, "pgfloor: %s%s%s\n", message, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* A NUL-terminated copy of hex-encoded text. */
static char *unhex(const char *text, size_t length) {
    char *out = malloc(length / 2 + 1);
    if (!out) die("out of memory", NULL);
    for (size_t i = 0; i + 1 < length; i += 2) {
        int high = hexval(text[i]), low = hexval(text[i + 1]);
        if (high < 0 || low < 0) die("bad hex in trace", NULL);
        out[i / 2] = (char)(high * 16 + low);
    }
    out[length / 2] = 0;
    return out;
}

static int split(char *line, char **out, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        out[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = 0;
        p = tab + 1;
    }
    return n;
}

static void define_statement(int id, char *sql) {
    if (id >= statement_capacity) {
        int capacity = statement_capacity ? statement_capacity * 2 : 256;
        while (capacity <= id) capacity *= 2;
        statements = realloc(statements, sizeof(Statement) * capacity);
        if (!statements) die("out of memory", NULL);
        memset(statements + statement_capacity, 0, sizeof(Statement) * (capacity - statement_capacity));
        statement_capacity = capacity;
    }
    statements[id].sql = sql;
}

static double own_cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* User + system CPU of a process, from /proc/PID/stat. */
static double process_cpu(int pid) {
    char path[64], buffer[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buffer, 1, sizeof buffer - 1, f);
    fclose(f);
    buffer[n] = 0;
    char *p = strrchr(buffer, ')');
    if (!p) return 0;
    long utime = 0, stime = 0;
    int field = 2;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
        field++;
        if (field == 14) utime = atol(tok);
        if (field == 15) { stime = atol(tok); break; }
    }
    return (double)(utime + stime) / sysconf(_SC_CLK_TCK);
}

static void command(PGconn *conn, const char *sql) {
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) die(sql, PQerrorMessage(conn));
    PQclear(r);
}

static PGconn *connect_to(const char *server, const char *database) {
    char conninfo[4096];
    snprintf(conninfo, sizeof conninfo, "%s dbname=%s", server, database);
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) die("connect", PQerrorMessage(conn));
    return conn;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: pgfloor SERVER_CONNINFO TEMPLATE TRACE START END OPS [REPEAT]\n");
        return 2;
    }
    const char *server = argv[1], *template_name = argv[2], *trace = argv[3];
    long start = atol(argv[4]), end = atol(argv[5]), ops = atol(argv[6]);
    int repeat = argc > 7 ? atoi(argv[7]) : 5;
    if (ops <= 0 || repeat <= 0 || end <= start) die("bad arguments", NULL);

    FILE *f = fopen(trace, "r");
    if (!f) die("cannot open trace", trace);
    Record *records = NULL;
    long record_count = 0, record_capacity = 0, statement_executions = 0;
    int max_conn = 0;
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    long offset = 0;
    while ((length = getline(&line, &capacity, f)) > 0) {
        long here = offset;
        offset += length;
        if (line[length - 1] == '\n') line[--length] = 0;
        char *field[MAX_ARGS + 4];
        int n = split(line, field, MAX_ARGS + 4);
        if (n < 3) continue;
        int conn = atoi(field[1]);
        if (conn <= 0 || conn >= MAX_CONNS) die("too many traced connections", NULL);
        if (conn > max_conn) max_conn = conn;
        if (line[0] == 'P') {
            define_statement(atoi(field[2]), unhex(field[3], strlen(field[3])));
            continue;
        }
        if (line[0] == 'S') {
            char *sql = unhex(field[2], strlen(field[2]));
            if (strncmp(sql, "SET ", 4) == 0) {
                /* Session setup (search path, role, formats): applied when the replay connects. */
                size_t old = setup[conn] ? strlen(setup[conn]) : 0;
                setup[conn] = realloc(setup[conn], old + strlen(sql) + 3);
                if (old == 0) setup[conn][0] = 0;
                strcat(setup[conn], sql);
                strcat(setup[conn], "; ");
            }
            if (here < start || here >= end) { if (strncmp(sql, "SET ", 4) != 0) free(sql); continue; }
            if (record_count == record_capacity) {
                record_capacity = record_capacity ? record_capacity * 2 : 4096;
                records = realloc(records, sizeof(Record) * record_capacity);
            }
            records[record_count++] = (Record){.kind = 'S', .conn = conn, .sql = sql};
            continue;
        }
        if (line[0] != 'X' || here < start || here >= end) continue;
        if (record_count == record_capacity) {
            record_capacity = record_capacity ? record_capacity * 2 : 4096;
            records = realloc(records, sizeof(Record) * record_capacity);
        }
        Record *r = &records[record_count++];
        memset(r, 0, sizeof *r);
        r->kind = 'X';
        r->conn = conn;
        r->stmt = atoi(field[2]);
        r->nargs = n - 3;
        for (int i = 0; i < r->nargs; i++) {
            char *a = field[3 + i];
            if (a[0] == 'n') r->args[i] = NULL;
            else if (a[0] == 't') r->args[i] = unhex(a + 1, strlen(a + 1));
            else die("a Postgres trace has only text and NULL arguments", a);
        }
        statement_executions++;
    }
    fclose(f);
    if (record_count == 0) die("no records between START and END", NULL);

    PGconn *admin = connect_to(server, "postgres");
    double per_op[64], own_per_op[64], backend_per_op[64];
    if (repeat > 64) repeat = 64;
    long errors = 0;
    char first_error[512] = "";
    for (int round = 0; round < repeat; round++) {
        command(admin, "DROP DATABASE IF EXISTS auth_emulator_floor");
        char create[512];
        snprintf(create, sizeof create, "CREATE DATABASE auth_emulator_floor TEMPLATE %s", template_name);
        command(admin, create);
        PGconn *conns[MAX_CONNS] = {0};
        int pids[MAX_CONNS] = {0};
        for (int c = 1; c <= max_conn; c++) {
            conns[c] = connect_to(server, "auth_emulator_floor");
            if (setup[c]) command(conns[c], setup[c]);
            pids[c] = PQbackendPID(conns[c]);
        }
        /* Prepared once per connection, outside the timed loop. */
        for (long i = 0; i < record_count; i++) {
            Record *r = &records[i];
            if (r->kind != 'X' || statements[r->stmt].prepared[r->conn]) continue;
            char name[32];
            snprintf(name, sizeof name, "s%d", r->stmt);
            PGresult *p = PQprepare(conns[r->conn], name, statements[r->stmt].sql, 0, NULL);
            if (PQresultStatus(p) != PGRES_COMMAND_OK) die("prepare", PQerrorMessage(conns[r->conn]));
            PQclear(p);
            statements[r->stmt].prepared[r->conn] = 1;
        }
        double backends_before = 0;
        for (int c = 1; c <= max_conn; c++) backends_before += process_cpu(pids[c]);
        double own_before = own_cpu();
        for (long i = 0; i < record_count; i++) {
            Record *r = &records[i];
            PGresult *res;
            if (r->kind == 'S') {
                res = PQexec(conns[r->conn], r->sql);
            } else {
                char name[32];
                snprintf(name, sizeof name, "s%d", r->stmt);
                res = PQexecPrepared(conns[r->conn], name, r->nargs, (const char *const *)r->args, NULL, NULL, 0);
            }
            ExecStatusType status = PQresultStatus(res);
            if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
                errors++;
                if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", PQerrorMessage(conns[r->conn]));
                if (!first_error[0]) snprintf(first_error, sizeof first_error, "status %d", (int)status);
                for (char *p = first_error; *p; p++) if (*p == '\n') *p = ' ';
            } else if (status == PGRES_TUPLES_OK) {
                /* Every value read, as the emulator reads every column. */
                volatile size_t sum = 0;
                int rows = PQntuples(res), cols = PQnfields(res);
                for (int row = 0; row < rows; row++)
                    for (int col = 0; col < cols; col++) sum += (size_t)PQgetlength(res, row, col) + (size_t)PQgetvalue(res, row, col)[0];
                (void)sum;
            }
            PQclear(res);
        }
        double own = own_cpu() - own_before;
        double backends = 0;
        for (int c = 1; c <= max_conn; c++) backends += process_cpu(pids[c]);
        backends -= backends_before;
        own_per_op[round] = own / ops;
        backend_per_op[round] = backends / ops;
        per_op[round] = (own + backends) / ops;
        for (int c = 1; c <= max_conn; c++) {
            PQfinish(conns[c]);
            for (int s = 0; s < statement_capacity; s++) statements[s].prepared[c] = 0;
        }
    }
    command(admin, "DROP DATABASE IF EXISTS auth_emulator_floor");
    PQfinish(admin);
    qsort(per_op, repeat, sizeof(double), compare_doubles);
    qsort(own_per_op, repeat, sizeof(double), compare_doubles);
    qsort(backend_per_op, repeat, sizeof(double), compare_doubles);
    printf("ops=%ld\n", ops);
    printf("statements_per_op=%.2f\n", (double)statement_executions / (double)ops);
    printf("round_trips_per_op=%.2f\n", (double)record_count / (double)ops);
    printf("floor_us_per_op_median=%.1f\n", per_op[repeat / 2] * 1e6);
    printf("libpq_us_per_op_median=%.1f\n", own_per_op[repeat / 2] * 1e6);
    printf("backend_us_per_op_median=%.1f\n", backend_per_op[repeat / 2] * 1e6);
    printf("errors=%ld\n", errors / repeat);
    printf("first_error=%s\n", first_error);
    return 0;
}
