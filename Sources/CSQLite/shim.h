#include <sqlite3.h>

/* sqlite3_config is variadic, which Swift cannot call. Turns SQLite's memory statistics on or
   off; only possible before the library initializes (the first connection), otherwise it
   returns SQLITE_MISUSE and changes nothing (https://sqlite.org/c3ref/config.html). */
static inline int auth_sqlite3_config_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
