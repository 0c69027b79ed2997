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
// The WAL and shared-memory files are created 0600 before SQLite opens
// them, and no mode is ever widened. A file that is mode 0400, or that
// belongs to another user, opens for reading only: writes return
// [ErrReadOnly]. A file that has a second name refuses to open with
// [ErrAliased]. A second name is a hard link or, on Linux, another process
// holding it open under another path, such as a file bind mount. SQLite
// gives each path its own WAL, and two WALs corrupt the one file. Side
// files (locks, the repair ledger, backups) are never followed through a
// symlink. Anything but a regular file at such a path is refused with a
// [SideFileError] and never blocks the open.
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
// # Lineage, compression, leases and rewind
//
//   - A child session names its parent and its [ChildKind]. A conversation
//     continues through compression children: [Store.Lineage] walks it root
//     to tip, [Store.CompressionTip] finds where it goes on now.
//   - [Store.AcquireCompressionLock] and [Store.AcquireTurnLease] (turn
//     leases are keyed by the conversation's root) with refresh, release
//     and inspect; a live lease is reclaimed early only when its holder's
//     process is provably dead ([NewHolder] names this process).
//     [Store.AppendMessagesUnderLease] checks the turn lease in the append's
//     own transaction, so a worker whose turn was taken over writes nothing.
//   - Under the compression lock: [Store.ActiveWatermark], then
//     [Store.CompactSession] (active rows become compacted, the summary
//     replaces them) or [Store.PublishCompressionChild] (the conversation
//     continues in a child; the parent takes no more messages,
//     [ErrSessionClosed]). Appends never wait for the lock: rows that arrive
//     meanwhile sit above the watermark and are carried over.
//   - [Store.RewindTo] undoes back to before a user message (soft, guarded
//     by what the caller saw, refused under another's live lease);
//     [Store.Conversation] returns the live rows or the whole lineage with
//     each turn once.
//   - [Store.SetArchived], [Store.SetPinned], [Store.SetHidden],
//     [Store.MarkRead] apply to the whole lineage; [Store.DeleteSession]
//     cascades to delegate children only ([Store.DeletionSet] shows what
//     goes).
//
// # Operations
//
//   - [Store.Export] and [Store.Import]: versioned JSON Lines, streaming
//     both ways; an import is checked whole before anything is written, and
//     an export → import → export round trip is byte-identical.
//   - [Store.Prune] deletes conversations ended long ago (pinned,
//     continued or leased ones are spared); [Store.Vacuum] compacts the
//     file when no other process has it open.
//   - [Store.Stats] are cheap counters to poll; [Store.Info] reads what is
//     in the file.
//
// # Titles, handoffs, activity and usage
//
//   - [Store.SetTitle] (a user's title) and [Store.SetAutoTitle] (only over
//     a lower [TitleRank]); titles are unique across the store, and a
//     compression continuation takes its ancestor's title.
//   - [Store.RequestHandoff], [Store.ClaimHandoff], [Store.CompleteHandoff],
//     [Store.FailHandoff], [Store.ReclaimStaleHandoffs], [Store.Handoff]:
//     a compare-and-set state machine; a lost transition is [ErrConflict].
//   - [Store.TouchActivity] (monotonic) and [Store.ClearActivityLabels]
//     wait only [Options].ActivityPatience (500 ms): a heartbeat never
//     stalls a turn.
//   - [Store.RecordUsage], [Store.SessionUsage], [Store.UsageTotals]:
//     token and cost counters per session and per (model, task).
//
// # Concurrency and durability
//
// A Store has exactly one read-write connection. Every write is part of one
// BEGIN IMMEDIATE transaction on it, committed with synchronous=FULL (and
// F_FULLFSYNC on macOS), so an acknowledged write survives a power cut.
// Writes from many goroutines that arrive while a transaction commits are
// grouped into the next one (one fsync for all, and one full-text indexing
// step: new messages are indexed just before each COMMIT, in the same
// transaction, so a message is searchable once its append returns), each
// in its own SAVEPOINT, so one caller's failure never undoes another's
// write.
// Reads use a separate pool of read-only connections and never touch the
// writer.
//
// When another process holds the write lock, a write waits — for
// [Options].WritePatience (20 s) for routine writes and
// [Options].TranscriptPatience (60 s) for appends — and then fails with an
// error matching [ErrLocked] that says the database itself is healthy and,
// on Linux, which processes held the lock.
//
// A write is replayed only after it was rolled back through no fault of
// its own — by a lock error, by another write of its batch whose failure
// made SQLite undo the whole transaction, or once, with indexing off,
// when the full-text index turned out damaged. Its own failure — and a
// panic — rolls back and is returned (or re-panicked), never replayed; a COMMIT whose outcome is unknown returns
// [ErrCommitUnknown].
//
// # Errors
//
// Every error wraps at most one sentinel ([ErrNotFound], [ErrExists],
// [ErrConflict], [ErrInvalidInput], [ErrLocked], [ErrCommitUnknown],
// [ErrCorrupt], [ErrNotDatabase], [ErrReadOnly], [ErrReplaced],
// [ErrClosed], [ErrLeaseHeld], [ErrLeaseLost], [ErrSessionClosed],
// [ErrSchemaTooNew], [ErrAliased]) inside
// an [*Error] that names the operation and the session. Branch with
// errors.Is.
package db
