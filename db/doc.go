// Package db is sessiondb's store: an AI agent's conversation state —
// sessions, messages and tool calls, store-wide metadata — in one SQLite
// file shared by many goroutines and many processes, that never loses,
// duplicates or corrupts an acknowledged write.
//
// # Opening
//
// [Open] creates the file (0600) and its directory when needed, switches
// it to WAL and applies pending migrations under a cross-process lock, and
// waits out another process's lock for up to [Options].OpenPatience.
// Errors that waiting cannot fix (a directory at the path, no permission, a
// file that is not a database) fail at once. [Store.Close] checkpoints
// (PASSIVE) and closes.
//
// # Sessions and messages
//
//   - [Store.CreateSession], [Store.EnsureSession], [Store.Session],
//     [Store.EndSession] (the first reason wins), [Store.ListSessions].
//   - [Store.AppendMessage] and [Store.AppendMessages] (all or nothing);
//     [NewMessage].IdempotencyKey makes an append safe to retry.
//   - [Store.Messages] pages through a session, oldest or newest first.
//   - [Store.SetMeta] and [Store.Meta] keep store-wide key/values.
//
// # Search
//
// [Store.Search] finds messages by their words across sessions, filtered
// by source, role and session, ranked (bm25) or by time, with snippets
// and neighbouring messages. Any text is a valid query: it is sanitised,
// never parsed as FTS5 syntax. Scripts without spaces between words (CJK,
// Thai) are searched as substrings through a trigram index. When the
// full-text index is damaged or stale, Search scans the messages table
// instead of failing.
//
// Content is any UTF-8 text, NUL bytes included, returned byte-exact;
// invalid UTF-8 is refused with [ErrInvalidInput]. Times are UTC.
//
// # Concurrency and durability
//
// A Store has exactly one read-write connection. Every write is part of one
// BEGIN IMMEDIATE transaction on it, committed with synchronous=FULL (and
// F_FULLFSYNC on macOS), so an acknowledged write survives a power cut.
// Writes from many goroutines that arrive while a transaction commits are
// grouped into the next one (one fsync for all), each in its own SAVEPOINT,
// so one caller's failure never undoes another's write.
// Reads use a separate pool of read-only connections and never touch the
// writer.
//
// When another process holds the write lock, a write waits — for
// [Options].WritePatience (20 s) for routine writes and
// [Options].TranscriptPatience (60 s) for appends — and then fails with an
// error matching [ErrLocked] that says the database itself is healthy and,
// on Linux, which processes held the lock.
//
// A write is replayed only after a lock error rolled it back. Any other
// failure — and a panic — rolls back and is returned (or re-panicked),
// never replayed; a COMMIT whose outcome is unknown returns
// [ErrCommitUnknown].
//
// # Errors
//
// Every error wraps at most one sentinel ([ErrNotFound], [ErrExists],
// [ErrInvalidInput], [ErrLocked], [ErrCommitUnknown], [ErrCorrupt],
// [ErrNotDatabase], [ErrReadOnly], [ErrClosed]) inside an [*Error] that
// names the operation and the session. Branch with errors.Is.
package db
