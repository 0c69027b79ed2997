// Package db is sessiondb's SQLite engine: an AI agent's conversation
// state — sessions, messages and tool calls, store-wide metadata — in one
// SQLite file shared by many goroutines and many processes, that never
// loses, duplicates or corrupts an acknowledged write.
//
// The domain — every verb below, its validation, counters, state machines,
// exactly-once keys and lineage walks — is package store's, the same on
// every engine (SQLite here, PostgreSQL in module pg); it reaches storage
// only through the driver interfaces of store/driver. [Open] builds this
// engine and puts the domain in front of it: every domain verb is a method
// of [Store] here, documented as in package store, and the domain's
// types, constants and errors have names here too, so a SQLite user
// imports only this package. What only a file has stays here and says so: [Verify], [Repair], [Store.Vacuum],
// [Backup], [Store.Info], [Store.Stats], [Store.IndexNow] (the background
// full-text indexer), [OpenForeign] (another program's SQLite file, read
// only: package hermes imports a Python store's file through it).
//
// # Opening
//
// [Open] creates the file (0600) and its directory when needed, switches
// it to WAL and applies pending migrations under a cross-process lock, and
// waits out another process's lock for up to [Options].OpenPatience.
// Errors that waiting cannot fix (a directory at the path, no permission, a
// file that is not a database, a trigger on sessiondb's tables that its
// migrations did not create: [ErrForeignSchema]) fail at once. A -wal
// that belongs to another copy of the file is retired, never replayed.
// [Store.Close] checkpoints (PASSIVE) and closes.
//
// Nothing is created, chmod-ed, locked or migrated at a path that holds
// something other than a store (another program's SQLite database, a text
// file, a directory, a device): [Open], [Verify] and [Repair] refuse it
// with a [NotAStoreError] ([ErrNotAStore]) and leave it as it was. A new
// store is created 0600; an existing file keeps its mode, and the WAL,
// shared-memory and lock files, created before SQLite opens them, get the
// database's mode and owner. A file that is mode 0400, or that
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
//   - [Store.RecentSessions] lists sessions for a picker or a sidebar: by
//     last activity (the newest message, else the start), with a preview,
//     filters (user, sources, archived, pinned first, working directory,
//     time), a conversation view that shows each compression lineage once
//     as its tip, and keyset cursor paging; [Store.AllRecentSessions]
//     streams them and [Store.CountSessions] gives the totals.
//   - [Store.AppendMessage] and [Store.AppendMessages] (all or nothing);
//     [NewMessage].IdempotencyKey makes an append safe to retry, and
//     [NewMessage].PlatformMessageID (unique per session) recognises a chat
//     platform's re-delivery. A message keeps the shape providers send:
//     ordered [Part]s, ReasoningDetails and Metadata byte-exact, a Model,
//     and the caller's CreatedAt.
//   - [Store.Messages] pages through a session, oldest or newest first.
//   - [Store.SetMeta] and [Store.Meta] keep store-wide key/values.
//
// # Search
//
// [Store.Search] finds messages by their words across sessions, filtered
// by source, role and session, ranked (bm25) or by time, with snippets
// and neighbouring messages. Any text is a valid query: it is sanitised,
// never parsed as FTS5 syntax. Scripts without spaces between words (CJK,
// Thai) are searched as substrings through a trigram index, which keeps
// no positions (migration 13: a fifth to a third of the size, and cheaper
// to write): it narrows the search to the messages holding every trigram of
// a term, and each candidate's text decides, folded as the index folds,
// so the matches are exact; they rank by how often the terms occur
// against the message's length. When the full-text index is damaged or
// stale, Search scans the messages table instead of failing.
//
// Content is any UTF-8 text, NUL bytes included, returned byte-exact;
// invalid UTF-8 is refused with [ErrInvalidInput]. Times are UTC.
//
// # Lineage, compression, leases and rewind
//
//   - A child session names its parent and its [ChildKind]. A conversation
//     continues through compression children: [Store.Lineage] walks it root
//     to tip, [Store.CompressionTip] finds where it goes on now.
//   - [Store.Resume] says where "resume X" goes on: the compression tip
//     (where new turns go) and the last session with real turns (what to
//     show, when the tip so far holds only its summary).
//     [Store.ResolveSessionID] accepts a unique id prefix (an
//     [AmbiguousIDError] lists the candidates) and [Store.SessionByTitle] a
//     title.
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
//     [ErrSessionClosed], as a [*ContinuedError] naming where it went on).
//     Appends never wait for the lock: rows that arrive meanwhile sit above
//     the watermark and are carried over. [Store.CompactKeepingLast] does
//     it all in one call: it keeps the last turns (or a token budget)
//     verbatim, never splitting a tool call from its results, and replaces
//     the rest with the summary the caller's [Summarizer] writes.
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
//     a lower [TitleRank]); [Store.SessionByTitle] finds a session by name.
//     A title is a name people pick a conversation by, so it is stored
//     sanitised and compared in that form: control characters (C0, DEL,
//     C1) and invisible format characters (zero-width spaces and joiners,
//     the byte-order mark, bidirectional controls and marks, the soft
//     hyphen) are removed, any run of whitespace becomes one space and the
//     ends are trimmed; a title empty after that clears the title. Titles
//     are unique per user (sessions without a user share one scope), so
//     "hello\u200bworld" cannot sit beside "helloworld" while two users may
//     both have "New chat". A compression continuation is titled as the
//     conversation's next numbered session ("Fix the build #2", "#3"; the
//     parent keeps its title), and the conversation's name resolves to its
//     newest numbered continuation. Setting a title a compression ancestor
//     holds moves it to the descendant.
//   - [Store.RequestHandoff], [Store.ClaimHandoff], [Store.CompleteHandoff],
//     [Store.FailHandoff], [Store.ReclaimStaleHandoffs], [Store.Handoff]:
//     a compare-and-set state machine; a lost transition is [ErrConflict].
//   - [Store.TouchActivity] (monotonic) and [Store.ClearActivityLabels]
//     wait only [Options].ActivityPatience (500 ms): a heartbeat never
//     stalls a turn.
//   - [Store.RecordUsage], [Store.SessionUsage], [Store.UsageTotals],
//     [Store.UsageByProvider], [Store.DelegationTreeUsage]: token and cost
//     counters per session and per (model, task, billing route); a
//     session's route follows its last accounted call; implausible figures
//     (above [MaxUsageCostUSD] or [MaxUsageCount], negative, NaN) are
//     refused with [ErrInvalidInput]; a delegation tree's usage is summed
//     from any of its sessions.
//
// # Concurrency and durability
//
// A Store has exactly one read-write connection. Every write is part of one
// BEGIN IMMEDIATE transaction on it, committed with synchronous=FULL (and
// F_FULLFSYNC on macOS), so an acknowledged write survives a power cut.
// Writes from many goroutines that arrive while a transaction commits are
// grouped into the next one (one fsync for all), and one caller's failure
// never undoes another's write: when a caller of a batch fails, the batch
// runs again with each caller in its own SAVEPOINT (it runs without them
// until then, and the next 64 transactions run with them).
// An append commits the message and nothing for the full-text indexes:
// they hold every message up to a mark (a message id, which only grows),
// and a background indexer indexes the messages past it in transactions
// of its own on the same connection, a fraction of a second later, moving
// the mark in the same transaction (committed with synchronous=NORMAL:
// they hold nothing a power cut could lose but index work, which the mark
// left behind keeps), and Search matches the messages
// past the mark by the same rules, so a message is
// searchable — from any process — once its append returns (see
// [Store.IndexNow], [Stats].IndexLag). Deletes and edits are queued too
// (the old text a contentless index must be told to forget, and the row
// to index again): a deleted message is never found, an edited one only
// by its new text, and the writer does no index work for either.
// Reads use a separate pool of read-only connections and never touch the
// writer. Both keep their statements prepared, planned once whatever
// values are bound to them: a read the process has run before compiles no
// SQL.
//
// When another process holds the write lock, a write waits — for
// [Options].WritePatience (20 s) for routine writes and
// [Options].TranscriptPatience (60 s) for appends — and then fails with an
// error matching [ErrLocked] that says the database itself is healthy and,
// on Linux, which processes held the lock.
//
// A write is replayed only after it was rolled back — by a lock error, by
// another write of its batch whose failure made SQLite undo the whole
// transaction, by any failure in a batch run without savepoints (every
// write of it runs again, the failing one too, each in its own savepoint),
// or once, with indexing off, when the full-text index turned out
// damaged. A write's own failure — and a panic — in the run whose outcome
// stands rolls back only its own changes and is returned (or
// re-panicked), never replayed; a COMMIT whose outcome is unknown returns
// [ErrCommitUnknown].
//
// A failed fsync halts the store's writes with [ErrIO] until it is
// reopened: after one, the kernel may have dropped data that no later
// fsync makes durable. A full disk fails the write with [ErrDiskFull];
// writes resume once there is room.
//
// # Errors
//
// Every error wraps at most one sentinel ([ErrNotFound], [ErrExists],
// [ErrConflict], [ErrInvalidInput], [ErrLocked], [ErrCommitUnknown],
// [ErrCorrupt], [ErrNotDatabase], [ErrReadOnly], [ErrReplaced],
// [ErrClosed], [ErrLeaseHeld], [ErrLeaseLost], [ErrSessionClosed],
// [ErrSchemaTooNew], [ErrIdempotencyConflict], [ErrCoolingDown], [ErrDiskFull],
// [ErrIO], [ErrTooManyOpenFiles], [ErrForeignSchema], [ErrAliased],
// [ErrTooLarge], [ErrInternal]) inside an
// [*Error] that names the operation and the session — except that a COMMIT
// cut short by a full disk matches both [ErrCommitUnknown] and
// [ErrDiskFull]. Branch with errors.Is. Some carry what the caller needs to
// go on, for errors.As: [*TitleInUseError] (who holds the title),
// [*ContinuedError] (where a compressed conversation continues),
// [*IdempotencyConflictError] (which message holds the key), [*LockedError]
// (who holds the write lock), [*AliasedFileError] (the other name and the
// process holding it).
//
// # Read-only media and files
//
// A store that cannot be written — a read-only mount, a directory this
// user cannot write — opens for reading with [Options].ReadOnly; a plain
// [Open] refuses it with [ErrReadOnly], saying so ([Options].ReadOnly
// says when the file is read as immutable and what that risks). A file made
// read-only on purpose (mode 0400) or owned by another user opens for
// reading by itself, and every write returns why.
package db
