package db

// The file a Store opened, and how it tells that file from another put in
// its place: device and inode, and a generation minted at creation that
// the file's application_id is derived from.

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

	"github.com/sessiondb/sessiondb/db/gen"
	"github.com/sessiondb/sessiondb/db/internal/forensics"
)

// metaGeneration is a random id minted when the file is created; the
// file's application_id is derived from it, so a different file put in
// place (even by cp, which keeps the inode) is recognised.
const metaGeneration = "db_file_generation"

// identity is what a Store recorded about its file at open.
type identity struct {
	file  os.FileInfo // device and inode, for os.SameFile
	appID int64       // PRAGMA application_id
	// header stays open for the Store's life to read the on-disk
	// application_id (byte 68) without SQLite's page cache, which would not
	// see a file copied over this one. It is never closed while the Store
	// is open: closing a descriptor can drop the process's POSIX locks.
	header *os.File
	// shm is the -shm file, opened at the first commit to read the
	// wal-index (stampDue) and, like header, kept open. stampedSalts name
	// the WAL generation this writer's last committed stamp went into;
	// pendingSalts the one the transaction in progress stamps.
	shm                        *os.File
	shmTried                   bool
	stampedSalts, pendingSalts string
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
	dst := forensics.RetiredBase(path)
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
