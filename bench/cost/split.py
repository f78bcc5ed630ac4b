#!/usr/bin/env python3
"""Split a server's profile into where its CPU goes, in shares and in microseconds per operation.

    perf record -F 1999 -g -p PID -- sleep 4          # while a bench load runs
    perf script | python3 bench/flamegraph.py - --folded refresh.folded --svg refresh.svg
    python3 bench/cost/split.py refresh.folded 144.7   # the server CPU per operation of that run

Each stack of the folded file (`root;...;leaf count`, as bench/flamegraph.py writes it) goes to
the first group it matches, in this order:

- SQLite: any SQLite frame (its code, and the system calls it makes: WAL writes, reads, syncs,
  fcntl locks), and the file I/O calls themselves when the unwinder lost SQLite's frames (the
  system library has no frame pointers);
- sockets: the event loops' send, receive and epoll_wait calls;
- wake-ups: futex waits and wakes, condition variables, contended mutexes, and the eventfd
  writes that wake a loop;
- the program: everything else (its own code, the Swift runtime's reference counting, malloc).

The microseconds are the shares times the CPU per operation given, which should be the one
measured in the same run (cost.sh prints it; under perf it is higher than without).
"""
import collections
import sys

GROUPS = [
    ("SQLite (its code, I/O and locks)", lambda frames, text: "libsqlite3" in text
     or any(f.startswith("sqlite3") for f in frames)
     or any(k in text for k in ("pwrite", "pread", "fdatasync", "fcntl"))),
    ("sockets and epoll_wait", lambda frames, text: any(
        k in text for k in ("__send", "__libc_recv", "sendto", "recvfrom", "epoll_wait"))),
    ("wake-ups, waits, eventfd writes", lambda frames, text: any(
        k in text for k in ("futex", "pthread_cond", "condvar", "lll_lock", "libc_write"))),
]
PROGRAM = "the program (JSON, JWT, HTTP, rows, ARC, malloc)"


def split(lines):
    counts = collections.Counter()
    total = 0
    for line in lines:
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, n = line.rpartition(" ")
        n = int(n)
        total += n
        frames = stack.split(";")
        group = next((name for name, test in GROUPS if test(frames, stack)), PROGRAM)
        counts[group] += n
    return counts, total


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: split.py FOLDED CPU_US_PER_OP")
    with open(sys.argv[1]) as f:
        counts, total = split(f)
    if total == 0:
        sys.exit("no samples")
    cpu = float(sys.argv[2])
    for name, n in counts.most_common():
        print(f"{name:52s} {100 * n / total:5.1f} %  {cpu * n / total:6.1f} us/op")


if __name__ == "__main__":
    main()
