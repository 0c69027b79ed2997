package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/internal/fsx"
)

// Meta keys sessiondb keeps for itself.
const (
	// metaGeneration is a random id minted when the file is created; the
	// file's application_id is derived from it, so a different file put
	// in place (even by cp, which keeps the inode) is recognised.
	metaGeneration = "db_file_generation"
	// metaFTSStale marks the full-text index as damaged: the FTS triggers
	// stand down (migration 2) and the next writable open rebuilds it.
	metaFTSStale = "fts_stale"
)

// identity is what a Store recorded about its file at open.
type identity struct {
	file  os.FileInfo // device and inode, for os.SameFile
	appID int64       // PRAGMA application_id
	// header stays open for the Store's life to read the on-disk
	// application_id (byte 68) without SQLite's page cache, which would not
	// see a file copied over this one. It is never closed while the Store
	// is open: closing a descriptor can drop the process's POSIX locks.
	header *os.File
	// wal is this store's WAL file: if the database is replaced, the WAL
	// left at <path>-wal belongs to the old file and must never meet the
	// new one (SQLite cannot tell whose WAL it is: it would corrupt it).
	wal os.FileInfo
	// schema is the PRAGMA schema_version last found free of foreign
	// triggers (guardCommit checks again when it changes).
	schema int64
}

// retireWAL moves this store's WAL and shared memory away from a path
// that now holds another database (or none), to
// <path>.retired-<UTC time>-<pid>.bak-wal: evidence kept, never applied to
// the wrong file. A WAL that is not ours (it came with the replacement) is
// left alone.
func (id identity) retireWAL(path string, log *slog.Logger) {
	fi, err := os.Stat(path + "-wal")
	if err != nil || id.wal == nil || !os.SameFile(fi, id.wal) {
		return
	}
	dst := retiredBase(path)
	for _, side := range []string{"-wal", "-shm"} {
		if err := os.Rename(path+side, dst+side); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Error("sessiondb: could not retire the old WAL of a replaced database", "path", path+side, "err", err)
			return
		}
	}
	log.Error("sessiondb: the database was replaced; this store's WAL was retired so it cannot corrupt the new file", "path", path, "moved_to", dst+"-wal")
}

// checkFile returns ErrReplaced when the path no longer holds the file
// this Store opened: another inode (renamed over, deleted) or another
// application_id (copied over in place).
func (id identity) checkFile(ctx context.Context, path string, q gen.DBTX) error {
	fi, err := os.Stat(path)
	if err != nil || !os.SameFile(fi, id.file) {
		return fmt.Errorf("%w: %s is no longer the file this store opened (renamed, deleted or replaced)", ErrReplaced, path)
	}
	var b [4]byte
	if _, err := id.header.ReadAt(b[:], 68); err != nil {
		return fmt.Errorf("read the header of %s: %w", path, err)
	}
	onDisk := int64(binary.BigEndian.Uint32(b[:]))
	if onDisk == 0 { // stamped, but not yet checkpointed into the main file
		if onDisk, err = applicationID(ctx, q); err != nil {
			return err
		}
	}
	if onDisk != id.appID {
		return fmt.Errorf("%w: %s now holds another database (application_id %d, opened as %d)", ErrReplaced, path, onDisk, id.appID)
	}
	return nil
}

// stampGeneration gives a new file its generation id and application_id
// (the first opener wins) and returns the file's application_id. It runs
// under the migration lock, right after the migrations.
func stampGeneration(ctx context.Context, c *sql.Conn) (int64, error) {
	// Read first: a stamped file needs no write lock at open.
	generation, err := queries.MetaGet(ctx, c, metaGeneration)
	if errors.Is(err, sql.ErrNoRows) {
		var b [16]byte
		_, _ = rand.Read(b[:])
		if err := queries.MetaInsertIfAbsent(ctx, c, gen.MetaInsertIfAbsentParams{
			Key: metaGeneration, Value: hex.EncodeToString(b[:]), UpdatedAt: now()}); err != nil {
			return 0, fmt.Errorf("stamp generation: %w", err)
		}
		generation, err = queries.MetaGet(ctx, c, metaGeneration)
	}
	if err != nil {
		return 0, fmt.Errorf("read generation: %w", err)
	}
	id, err := applicationID(ctx, c)
	if err != nil || id != 0 {
		return id, err
	}
	h := fnv.New32a()
	h.Write([]byte(generation))
	id = int64(h.Sum32() & 0x7fffffff)
	if id == 0 {
		id = 1
	}
	// Hand-written: sqlc cannot express PRAGMA; the value is our integer.
	if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", id)); err != nil {
		return 0, fmt.Errorf("stamp application_id: %w", err)
	}
	// Put the stamp in the main file now, where checkFile reads it.
	if err := checkpointPassive(ctx, c); isSyncFailure(err) {
		return 0, fmt.Errorf("checkpoint the stamp: %w", err) // a failed fsync is never shrugged off (syncfailure.go)
	}
	return id, nil
}

// applicationID reads the file header's application_id.
func applicationID(ctx context.Context, q gen.DBTX) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id) // sqlc cannot express PRAGMA
	return id, err
}

// quarantineTorn moves a torn database aside before SQLite opens it: a
// file whose header is all zero bytes, or a zero-length file whose WAL
// holds data. A plain zero-length file is a database never initialised
// (prepareFile makes one) and is initialised in place. The caller holds
// the migration lock, so no other opener is initialising the file.
func quarantineTorn(path string, log *slog.Logger) error {
	state, why, err := readHeader(path)
	if err != nil {
		return err
	}
	kind := ""
	switch {
	case state == headerZeroed:
		kind = "zeroed"
	case state == headerEmpty:
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
			kind, why = "emptied", "empty main file beside a non-empty WAL"
		}
	}
	if kind == "" {
		return nil
	}
	dst, err := moveAside(path, kind)
	if err != nil {
		return err
	}
	log.Error("sessiondb: the database file was damaged ("+why+") and has been moved aside; a fresh database is created in its place",
		"path", path, "moved_to", dst)
	f, err := fsx.CreateExclusive(path)
	if err != nil {
		return fmt.Errorf("create a fresh %s: %w", path, err)
	}
	return f.Close()
}

// isFTSDamage reports damage confined to a full-text index.
func isFTSDamage(err error) bool { return errors.Is(err, sqlite3.CORRUPT_VTAB) }

// isIndexFailure reports an error of an index slice that says the full-text
// index itself is damaged. Its statements only read messages and the queue
// and only write the indexes, so anything but a lock, an I/O or resource
// error, an interrupt or damage to the file proper — a constraint clash in
// the index's own tables when its structure record was lost, say — is the
// index's: the writes go through with indexing off (the data is fine) and
// the next open rebuilds it, rather than every append failing.
func isIndexFailure(err error) bool {
	var code sqlite3.ErrorCode // SQLite's own error, whichever form the driver gave it
	if !errors.As(err, &code) {
		return false
	}
	for _, transient := range []error{sqlite3.BUSY, sqlite3.LOCKED, sqlite3.IOERR, sqlite3.FULL,
		sqlite3.NOMEM, sqlite3.INTERRUPT, sqlite3.CANTOPEN, sqlite3.READONLY} {
		if errors.Is(err, transient) {
			return false
		}
	}
	return isFTSDamage(err) || !isStructuralDamage(err)
}

// isStructuralDamage reports damage to the database itself.
func isStructuralDamage(err error) bool {
	return (errors.Is(err, sqlite3.CORRUPT) && !isFTSDamage(err)) || errors.Is(err, sqlite3.NOTADB)
}

// reconcileFTS rebuilds the full-text indexes at open when a write
// marked them damaged, and indexes rows that a writer which does not know
// the index queue (the sqlite3 shell) or a process that ended before its
// indexer ran left in it. The common case costs two reads, no write lock.
func reconcileFTS(ctx context.Context, w *writer, patience time.Duration) error {
	stale, queued, err := ftsState(ctx, w)
	if err != nil {
		return err
	}
	if queued && !stale {
		// Index what was left, within part of Open's patience: a long
		// backlog is the background indexer's (Search finds queued rows
		// meanwhile), and must not make Open fail. The slices may find the
		// index damaged and mark it stale: look again.
		ictx, cancel := context.WithTimeout(ctx, min(patience/2, openIndexBudget))
		_, _ = w.indexAll(ictx) // what it could not do, the indexer does
		cancel()
		// A read of two rows: not bound by what is left of the patience,
		// which the indexing may have used up (a slow machine overruns).
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		stale, _, err = ftsState(sctx, w)
		cancel()
		if err != nil {
			return err
		}
	}
	if !stale {
		return nil
	}
	if err := w.write(ctx, patience, rebuildFTSIfStale); err != nil {
		return err
	}
	w.log.Warn("sessiondb: the full-text index was rebuilt after damage", "path", w.path)
	return nil
}

// ftsState reads whether the full-text index is marked stale and whether
// rows wait in its queue.
func ftsState(ctx context.Context, w *writer) (stale, queued bool, err error) {
	err = w.read(ctx, func(q gen.DBTX) error {
		_, err := queries.MetaGet(ctx, q, metaFTSStale)
		stale = err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		queued, err = queries.FTSPendingAny(ctx, q)
		return err
	})
	return stale, queued, err
}

// rebuildFTSIfStale rebuilds both full-text indexes from the messages table
// when a write marked them damaged, and clears the mark.
func rebuildFTSIfStale(ctx context.Context, tx gen.DBTX) error {
	if _, err := queries.MetaGet(ctx, tx, metaFTSStale); errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		return err
	}
	// Hand-written: sqlc's parser rejects FTS5's command column.
	for _, stmt := range []string{
		"INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
		"INSERT INTO messages_fts_trigram (messages_fts_trigram) VALUES ('rebuild')",
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("rebuild full-text index: %w", err)
		}
	}
	// The rebuild indexed every row: a queued one would be indexed twice.
	if queue, err := hasTable(ctx, tx, "fts_pending"); err != nil {
		return fmt.Errorf("rebuild full-text index: %w", err)
	} else if queue {
		if err := queries.FTSPendingClear(ctx, tx); err != nil {
			return fmt.Errorf("rebuild full-text index: %w", err)
		}
	}
	_, err := queries.MetaDelete(ctx, tx, metaFTSStale)
	return err
}

// markFTSStale is the write that switches indexing off after damage.
func markFTSStale(ctx context.Context, tx gen.DBTX) error {
	return queries.MetaUpsert(ctx, tx, gen.MetaUpsertParams{Key: metaFTSStale, Value: "1", UpdatedAt: now()})
}
