"""The Python peer for sessiondb's benchmarks.

It stores messages the way the Python store sessiondb succeeds does: one
shared sqlite3 connection behind a threading.Lock, WAL, synchronous=FULL,
BEGIN IMMEDIATE per append (session check, insert with FTS triggers,
counter update), on sessiondb's own schema (schema/schema.sql) — with the
Python store's insert trigger, which indexes each row as it is inserted
(sessiondb indexes the rows past its mark in transactions of its own,
which a writer that does not know the mark never does).

usage: python_peer.py SCHEMA DB_PATH APPENDS THREADS [CONTENT_BYTES]
CONTENT_BYTES pads each message as the Go benchmarks' -bench.content does.
prints one JSON object: {"msgs_per_s": ..., "p50_ms": ..., "p99_ms": ...}
"""
import json
import sqlite3
import sys
import threading
import time


# The Python store's pattern: the insert trigger writes both indexes
# (in place of sessiondb's, which marks when the indexes fell behind), and
# its trigram index keeps positions (sessiondb's has none since version 13).
INDEXING_INSERT_TRIGGER = """
DROP TABLE messages_fts_trigram;
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5 (content, tool_text, content = '', tokenize = 'trigram');
DROP TRIGGER messages_fts_behind;
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);
    INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id, new.content);
END;
"""


PAD_WORDS = ("the agent ran the tool search index message session lineage lease handoff compression "
             "title gateway postgres sqlite commit durable fsync writer reader cluster network request "
             "response error retry timeout function argument result file path directory build test "
             "deploy config").split()


def content(i, size):
    """The i-th message, padded to size bytes as bench_test.go's appendedMessage pads it."""
    text = "message %d: the quick brown fox jumps over the lazy dog" % i
    if size <= len(text):
        return text
    k = 0
    while len(text) < size:
        text += " %s call%d returned %d rows from table_%d;" % (
            PAD_WORDS[(i + k) % len(PAD_WORDS)], (i * 7 + k) % 997, (i + k * 13) % 10007, k % 41)
        k += 1
    return text[:size]


def main():
    schema, path, appends, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    size = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=1.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    with open(schema, encoding="utf-8") as f:
        conn.executescript(f.read())
    conn.executescript(INDEXING_INSERT_TRIGGER)
    conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('bench', 'bench', ?)",
                 (int(time.time() * 1000),))
    lock = threading.Lock()
    counter = iter(range(appends))
    counter_lock = threading.Lock()
    latencies = []

    def append(i):
        with lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("SELECT COUNT(*) FROM sessions WHERE id = 'bench'").fetchone()[0] != 1:
                    raise RuntimeError("no session")
                conn.execute(
                    "INSERT INTO messages (session_id, role, content, created_at) VALUES (?, ?, ?, ?)",
                    ("bench", "user", content(i, size),
                     int(time.time() * 1000)))
                conn.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = 'bench'")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def worker():
        mine = []
        while True:
            with counter_lock:
                i = next(counter, None)
            if i is None:
                break
            t0 = time.perf_counter()
            append(i)
            mine.append(time.perf_counter() - t0)
        with counter_lock:
            latencies.extend(mine)

    start = time.perf_counter()
    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    latencies.sort()
    print(json.dumps({
        "msgs_per_s": appends / elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[len(latencies) * 99 // 100] * 1000,
    }))


if __name__ == "__main__":
    main()
