package db

import (
	"log/slog"
	"time"
)

// Default patience budgets. Patience is time, not attempts: a shared
// state.db is legitimately held for seconds at a time by sibling processes
// (VACUUM, a large checkpoint), and a budget of N quick retries gives up
// in a second or two while the database is perfectly healthy.
const (
	DefaultOpenPatience    = 20 * time.Second
	DefaultReadPoolSize    = 8
	DefaultFTSMergeEvery   = 1000
	DefaultCheckpointEvery = 50
)

// Options tunes a Store. The zero value is the recommended configuration.
type Options struct {
	// WritePatience bounds how long a routine write (sessions, meta) waits
	// for another process's write lock. Default 20 s.
	WritePatience time.Duration
	// TranscriptPatience bounds how long AppendMessage and AppendMessages
	// wait. It must be larger than WritePatience: losing a turn costs more
	// than a late heartbeat. Default 60 s.
	TranscriptPatience time.Duration
	// OpenPatience bounds how long Open waits out another process's lock
	// (a migration, a VACUUM) before failing. Default 20 s.
	OpenPatience time.Duration
	// ActivityPatience bounds how long TouchActivity and
	// ClearActivityLabels wait for another process's write lock. It is
	// short on purpose: they are heartbeats sent during a turn, and a
	// heartbeat must never stall the turn — a missed one is replaced by the
	// next. Default 500 ms.
	ActivityPatience time.Duration
	// ReadPoolSize is the number of read-only connections. Default 8.
	ReadPoolSize int
	// FTSMergeEvery runs a bounded FTS merge after every N transactions
	// of the background indexer (each adds one segment to each full-text
	// index; appends write nothing to them). Default 1000; negative
	// disables it.
	FTSMergeEvery int
	// CheckpointEvery runs a PASSIVE WAL checkpoint after every N write
	// batches (a group commit, one AppendMessages call or one indexer
	// transaction). Default 50; negative disables it, and with
	// it the WAL's bound: when a checkpoint finds the WAL past 256 MiB it
	// starts a RESTART in the background (see Stats.WALRestarts).
	CheckpointEvery int
	// VFS names a registered SQLite VFS (package
	// github.com/ncruces/go-sqlite3/vfs) for every connection of the
	// store; empty means the operating system's. For test harnesses (the
	// power-loss disk in tests/powerloss) and special filesystems.
	VFS string
	// ReadOnly opens the store for reading only: no writer, no migration,
	// no database file created (only the shared-memory file SQLite needs
	// to read a WAL file, given the database's mode and owner, where the
	// directory allows it); every
	// write returns ErrReadOnly. It is how to read
	// a store on a read-only mount or in a directory this user cannot
	// write (a plain Open refuses those with ErrReadOnly). The file must
	// exist and be at this build's schema version. Where the directory
	// cannot hold SQLite's shared-memory file, the file is read as
	// immutable: safe on a read-only mount; in a read-only directory whose
	// owner may still write the file, a read can fail on a half-written
	// page, so Open logs a warning. A WAL still holding committed writes is
	// refused, not read without them.
	ReadOnly bool
	// NoMigrate opens the store without migrating it, for deployments
	// that migrate as a step of their own (Migrate, `sessiondb migrate`)
	// before the new build starts: a file at an older schema version is
	// refused with a *SchemaBehindError (errors.Is ErrSchemaBehind) naming
	// both versions, and a missing file with the same error, since
	// creating one is a migration. Nothing is written to a refused file.
	NoMigrate bool
	// ExistingOnly opens only a store that is already there: an absent
	// path, an empty file or an empty SQLite database gets ErrNotFound,
	// and a torn store (a zeroed header) ErrNotDatabase, with nothing
	// created or changed — no directory, file, lock or side file. For a
	// caller that only means to read (the CLI's read commands), which must
	// never turn a wrong path into a store. Without it a read-write Open
	// makes a store of an absent path, an empty file or an empty SQLite
	// database (keeping an existing file's mode), and moves a torn store
	// aside. Either way a path holding anything else — another program's
	// database, a text file, a directory — is refused with a
	// NotAStoreError and left as it was.
	ExistingOnly bool
	// ManualIndexing runs no background indexer: new messages stay
	// queued for the full-text index until IndexNow, the end of a
	// BulkLoad, Close or the next Open indexes them, and Search finds them
	// meanwhile all the same. For harnesses that count every write and
	// fsync a store makes (a bulk load wants BulkLoad instead: it indexes
	// as it goes, in large slices, so searches meanwhile read few queued
	// rows).
	ManualIndexing bool
	// Logger receives warnings (maintenance failures, lock holders). Default
	// slog.Default().
	Logger *slog.Logger

	// afterCommit, when set by tests in this package, replaces the
	// post-commit maintenance step.
	afterCommit func() error
	// walBound and gatherWait, when set by tests in this package, replace
	// walBoundBytes and the gatherWait constant.
	walBound   int64
	gatherWait time.Duration
}

// withDefaults fills zero fields and validates the result.
func (o Options) withDefaults() (Options, error) {
	if o.WritePatience == 0 {
		o.WritePatience = DefaultWritePatience
	}
	if o.TranscriptPatience == 0 {
		o.TranscriptPatience = max(DefaultTranscriptPatience, 3*o.WritePatience)
	}
	if o.OpenPatience == 0 {
		o.OpenPatience = DefaultOpenPatience
	}
	if o.ActivityPatience == 0 {
		o.ActivityPatience = DefaultActivityPatience
	}
	if o.ReadPoolSize == 0 {
		o.ReadPoolSize = DefaultReadPoolSize
	}
	if o.FTSMergeEvery == 0 {
		o.FTSMergeEvery = DefaultFTSMergeEvery
	}
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = DefaultCheckpointEvery
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.WritePatience < 0 || o.TranscriptPatience < 0 || o.OpenPatience < 0 || o.ActivityPatience < 0:
		return o, invalid("patience must not be negative")
	case o.TranscriptPatience <= o.WritePatience:
		return o, invalid("transcript patience (%v) must be larger than write patience (%v)",
			o.TranscriptPatience, o.WritePatience)
	case o.ReadPoolSize < 0:
		return o, invalid("read pool size must not be negative")
	}
	return o, nil
}
