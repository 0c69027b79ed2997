package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"

	"github.com/sessiondb/sessiondb/db/internal/backup"
	"github.com/sessiondb/sessiondb/db/internal/forensics"
	"github.com/sessiondb/sessiondb/internal/fsx"
)

// RepairOptions tunes Repair. The zero value is the recommended one.
type RepairOptions struct {
	// NoBackup skips the backup copy made before any surgery. Only for a
	// disk too full to hold one; without a backup a failed repair is final.
	NoBackup bool
	// Force runs even when the ledger says this exact file has already
	// failed to repair 3 times.
	Force bool
	// LockWait bounds the wait for another repair of the same file and for
	// other processes to let go of it. Default 30 s.
	LockWait time.Duration
	// Logger receives progress and warnings. Default slog.Default().
	Logger *slog.Logger
}

// RepairReport says what Repair did.
type RepairReport struct {
	Path string
	// Repaired is true when the file now verifies after surgery.
	Repaired bool
	// Strategy is the one that worked: "none" (nothing to repair),
	// "move-aside" (not a SQLite file: moved aside, fresh database
	// created), "fts-rebuild", "reindex", "dedupe-schema",
	// "drop-fts-vacuum", "salvage" (every readable row copied into a fresh
	// database); or "" when none worked.
	Strategy string
	// BackupPath is the copy made before surgery (or where a non-SQLite
	// file was moved).
	BackupPath string
	// Before and After are Verify's verdicts.
	Before, After Health
	// Tried lists each strategy attempted and what its re-probe said.
	Tried []string
	// Error says why the repair failed ("" when it did not).
	Error string
}

// repairStrategy is one surgery, run on a scratch copy (d, at path). It
// may return a note for the report.
type repairStrategy struct {
	name string
	run  func(ctx context.Context, d *sql.DB, path string) (note string, err error)
}

var repairStrategies = []repairStrategy{
	{"drop-foreign-schema", noNote(repairForeignSchema)},
	{"retype-cells", noNote(repairBadCells)},
	{"fts-rebuild", noNote(repairFTSRebuild)},
	{"reindex", noNote(func(ctx context.Context, d *sql.DB) error {
		_, err := d.ExecContext(ctx, "REINDEX")
		return err
	})},
	{"dedupe-schema", noNote(repairDedupeSchema)},
	{"drop-fts-vacuum", noNote(repairDropFTSVacuum)},
	{"salvage", repairSalvage},
}

// noNote adapts a strategy that needs only the connection.
func noNote(fn func(context.Context, *sql.DB) error) func(context.Context, *sql.DB, string) (string, error) {
	return func(ctx context.Context, d *sql.DB, _ string) (string, error) { return "", fn(ctx, d) }
}

// Repair tries to make a damaged database usable again, and never leaves
// it less usable than it found it.
//
// A file that is not a store — another program's SQLite database, a text
// file, anything without sessiondb's schema in it — is refused with a
// NotAStoreError and left exactly as it was (no lock file, no backup, no
// side file). A store whose header is gone (zeroed, cut short, or
// overwritten while its schema is still in it) is moved aside, keeping
// its bytes, and a fresh database created with its mode; a WAL of another
// copy is retired. Otherwise, after a backup (a refused backup stops the repair),
// each strategy in turn — dropping foreign triggers, views and indexes
// (restoring sessiondb's own and id counters near their maximum), rewriting
// cells another program gave the wrong type (celltypes.go), FTS rebuild,
// REINDEX, duplicate schema row removal, drop FTS + VACUUM, salvage of
// every readable row into a fresh database — runs on a
// scratch copy, and the copy replaces the file only when it verifies.
// Repair holds a cross-process lock, refuses to replace a file another
// process has open, and keeps a ledger that stops after 3 failed attempts
// on the same damaged file. Every connection it opens carries the writer's
// durability barriers.
func Repair(ctx context.Context, path string, opts RepairOptions) (RepairReport, error) {
	if opts.LockWait == 0 {
		opts.LockWait = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return RepairReport{}, opErr("repair", "", err)
	}
	r := RepairReport{Path: abs}
	fail := func(err error) (RepairReport, error) {
		r.Error = err.Error()
		return r, opErr("repair", "", err)
	}
	// Before any lock file is made: a file that is not a store is not
	// repaired, moved or touched.
	switch state, err := inspectPath(ctx, abs, ""); {
	case err != nil:
		return fail(err)
	case state == pathAbsent:
		return fail(fmt.Errorf("%w: no database at %s", ErrNotFound, abs))
	case state == pathEmpty:
		r.Before, r.After, r.Strategy = HealthEmpty, HealthEmpty, "none"
		return r, nil
	}
	if err := refuseAliased(abs); err != nil {
		return fail(err)
	}
	if err := refuseForeignOwner(abs); err != nil {
		return fail(err)
	}

	lockCtx, cancel := context.WithTimeout(ctx, opts.LockWait)
	defer cancel()
	repairLock, err := acquireFileLock(lockCtx, abs+".repair.lock", abs)
	if err != nil {
		return fail(fmt.Errorf("another repair of %s is running: %w", abs, err))
	}
	defer repairLock.Release()
	// No sessiondb Open may start on the file while it is repaired.
	openLock, err := acquireFileLock(lockCtx, abs+".migrate.lock", abs)
	if err != nil {
		return fail(fmt.Errorf("wait for openers of %s: %w", abs, err))
	}
	defer openLock.Release()

	if err := refuseNewerFile(ctx, abs); err != nil {
		return fail(err)
	}
	// A foreign WAL is the damage itself: retired, the file is checked alone.
	if why, movedTo, err := forensics.RetireForeignWAL(abs, opts.Logger); err != nil {
		return fail(err)
	} else if why != "" {
		r.Strategy, r.BackupPath, r.Before = "retire-wal", movedTo, HealthCorrupt
		r.Tried = append(r.Tried, "retire-wal: "+why+"; moved to "+movedTo)
	}
	before, err := Verify(ctx, abs)
	if err != nil {
		return fail(err)
	}
	r.After = before.Health
	if r.Strategy == "" {
		r.Before = before.Health
	}
	switch before.Health {
	case HealthVerified, HealthEmpty:
		r.Repaired = r.Strategy == "retire-wal"
		r.Strategy = cmp.Or(r.Strategy, "none")
		return r, nil
	case HealthBusy:
		return fail(fmt.Errorf("%w: %s is busy; try again when other processes are idle", ErrLocked, abs))
	}

	if state, why, err := forensics.ReadHeader(abs); err != nil {
		return fail(err)
	} else if state != forensics.HeaderSQLite {
		return moveAsideAndRecreate(ctx, r, abs, state, why, opts.Logger)
	}

	// Hold the live file before hashing or copying it: a consistent backup,
	// and no process writing into a file about to be replaced.
	guardCtx, cancelGuard := context.WithTimeout(ctx, opts.LockWait)
	defer cancelGuard()
	guard, err := exclusiveGuard(guardCtx, abs)
	if err != nil {
		return fail(err)
	}
	defer guard.release()
	hash, err := backup.Hash(sideFiles{}, abs)
	if err != nil {
		return fail(err)
	}
	led, err := backup.LoadLedger(sideFiles{}, abs)
	if err != nil {
		return fail(err)
	}
	if err := led.Refusal(hash); err != nil && !opts.Force {
		return fail(err)
	}
	if !opts.NoBackup {
		if r.BackupPath, err = backup.ForRepair(sideFiles{}, abs, hash); err != nil {
			return fail(fmt.Errorf("backup refused, nothing changed: %w", err))
		}
	}
	scratchDir, err := os.MkdirTemp(filepath.Dir(abs), ".sessiondb-repair-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(scratchDir)

	for i, st := range repairStrategies {
		scratch := filepath.Join(scratchDir, fmt.Sprintf("%d.db", i))
		verdict, err := tryStrategy(ctx, abs, scratch, st)
		r.Tried = append(r.Tried, st.name+": "+verdict)
		if ctx.Err() != nil {
			return fail(ctx.Err()) // interrupted: not a failed repair
		}
		if err != nil {
			continue
		}
		if err := guard.swapIn(scratch); err != nil {
			return fail(fmt.Errorf("install the repaired copy: %w", err))
		}
		after, err := Verify(ctx, abs)
		if err != nil {
			return fail(err)
		}
		r.Repaired, r.Strategy, r.After = after.Health == HealthVerified, st.name, after.Health
		delete(led.Failures, hash)
		if err := led.Save(); err != nil {
			opts.Logger.Warn("sessiondb: could not update the repair ledger", "err", err)
		}
		opts.Logger.Warn("sessiondb: database repaired", "path", abs, "strategy", st.name, "backup", r.BackupPath)
		return r, nil
	}
	led.Failures[hash]++
	if err := led.Save(); err != nil {
		opts.Logger.Warn("sessiondb: could not update the repair ledger", "err", err)
	}
	return fail(fmt.Errorf("%w: no repair strategy produced a database that verifies (tried: %s); the file is unchanged%s",
		ErrCorrupt, strings.Join(r.Tried, "; "), backupNote(r.BackupPath)))
}

func backupNote(p string) string {
	if p == "" {
		return ""
	}
	return "; backup at " + p
}

// tryStrategy copies the database to scratch, runs one strategy on it and
// re-probes it. It returns the re-probe's verdict.
func tryStrategy(ctx context.Context, src, scratch string, st repairStrategy) (string, error) {
	if err := backup.CopyDatabase(sideFiles{}, src, scratch); err != nil {
		return "copy failed: " + err.Error(), err
	}
	d, err := openDB(scratch, kindRepair, 1, "")
	if err != nil {
		return err.Error(), err
	}
	note, err := st.run(ctx, d, scratch)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "failed: " + err.Error(), err
	}
	v, err := Verify(ctx, scratch)
	if err != nil {
		return err.Error(), err
	}
	if v.Health != HealthVerified {
		return string(v.Health) + ": " + strings.Join(v.Details[:min(2, len(v.Details))], "; "), errors.New(string(v.Health))
	}
	if note != "" {
		return "verified (" + note + ")", nil
	}
	return "verified", nil
}

// moveAsideAndRecreate handles a store whose SQLite header is gone
// (inspectPath found it ours, or nothing anyone could lose).
func moveAsideAndRecreate(ctx context.Context, r RepairReport, path string, state forensics.HeaderState, why string, log *slog.Logger) (RepairReport, error) {
	kind := map[forensics.HeaderState]string{forensics.HeaderZeroed: "zeroed", forensics.HeaderTruncated: "truncated", forensics.HeaderForeign: "overwritten", forensics.HeaderEmpty: "emptied"}[state]
	owner, known := fsx.FileOwner(path)
	dst, err := forensics.MoveAside(path, kind)
	if err != nil {
		r.Error = err.Error()
		return r, opErr("repair", "", err)
	}
	log.Error("sessiondb: the file was not a usable SQLite database ("+why+"); moved aside, a fresh database is created", "path", path, "moved_to", dst)
	r.BackupPath, r.Strategy = dst, "move-aside"
	// The caller holds the migration lock, so create the fresh file here
	// (prepareFile's way) and leave the schema to the next Open.
	f, err := fsx.CreateExclusive(path)
	if err != nil {
		r.Error = err.Error()
		return r, opErr("repair", "", err)
	}
	if known { // the fresh file keeps the mode the damaged one had
		fsx.GiveTo(f, owner)
	}
	f.Close()
	after, err := Verify(ctx, path)
	if err != nil {
		return r, err
	}
	r.After, r.Repaired = after.Health, after.Health == HealthEmpty
	return r, nil
}

// repairGuard holds the live file exclusively while it is replaced.
type repairGuard struct {
	path string
	d    *sql.DB
	c    *sql.Conn
}

// exclusiveGuard takes an exclusive lock on the live file, so no other
// process writes while its copy is repaired and swapped in. A file too
// damaged to lock has no other sane user, and is repaired without one.
func exclusiveGuard(ctx context.Context, path string) (*repairGuard, error) {
	g := &repairGuard{path: path}
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		return nil, err
	}
	inUse := fmt.Errorf("%w: %s is open in another process; stop it and run repair again", ErrLocked, path)
	c, err := d.Conn(ctx)
	if err != nil {
		d.Close()
		if isStructuralDamage(err) {
			return g, nil // too damaged to connect to, let alone lock
		}
		if isLockError(err) || ctx.Err() != nil {
			return nil, inUse
		}
		return nil, err
	}
	// locking_mode=EXCLUSIVE makes SQLite keep the file's exclusive lock
	// once taken, which it cannot take while another connection (any
	// process) has the database open.
	_, err = c.ExecContext(ctx, "PRAGMA locking_mode=EXCLUSIVE")
	if err == nil {
		//sessiondb:allow txonly -- the repair guard's exclusive lock, not a write
		_, err = c.ExecContext(ctx, "BEGIN EXCLUSIVE")
	}
	if err == nil {
		g.d, g.c = d, c
		return g, nil
	}
	c.Close()
	d.Close()
	if isStructuralDamage(err) {
		return g, nil // too damaged to lock: no other sane user
	}
	if isLockError(err) || errors.Is(err, sqlite3.INTERRUPT) || ctx.Err() != nil {
		return nil, inUse
	}
	return nil, err
}

// swapIn replaces the live file with the verified scratch copy. The old
// WAL, shared memory and journal belong to the old file: they are moved
// aside (never deleted) before the copy is renamed in, so a crash at any
// point never leaves them beside the new file, where SQLite would replay
// them into it. The directory is synced after the rename.
func (g *repairGuard) swapIn(scratch string) error {
	for _, side := range []string{"-wal", "-journal"} {
		if fi, err := os.Stat(scratch + side); err == nil && fi.Size() > 0 {
			return fmt.Errorf("the repaired copy still has a %s file", side)
		}
	}
	g.release()
	aside := fmt.Sprintf("%s.pre-repair-%s-%d.bak", g.path, time.Now().UTC().Format("20060102T150405.000Z"), os.Getpid())
	for _, side := range forensics.Sidecars {
		if err := os.Rename(g.path+side, aside+side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	owner, known := fsx.FileOwner(g.path)
	if err := os.Rename(scratch, g.path); err != nil {
		return err
	}
	backup.SyncDir(filepath.Dir(g.path))
	if known { // the repaired file keeps the mode (and owner) of the one it replaced
		if f, err := openSideFile(g.path, os.O_RDONLY, 0); err == nil {
			fsx.GiveTo(f, owner)
			f.Close()
		}
	}
	alignSidecars(g.path)
	return nil
}

// release lets go of the live file without checkpointing it on close: a
// file about to be replaced must not be touched, and one that could not be
// repaired is left exactly as it was found.
func (g *repairGuard) release() {
	if g.c == nil {
		return
	}
	_ = g.c.Raw(func(dc any) error {
		if c, ok := dc.(driver.Conn); ok {
			_, err := c.Raw().Config(sqlite3.DBCONFIG_NO_CKPT_ON_CLOSE, true)
			return err
		}
		return nil
	})
	//sessiondb:allow txonly -- ends the repair guard's lock transaction
	g.c.ExecContext(context.Background(), "ROLLBACK")
	g.c.Close()
	g.d.Close()
	g.c, g.d = nil, nil
}

// The strategies. Each runs on a scratch copy through a repair connection.

func repairFTSRebuild(ctx context.Context, d *sql.DB) error {
	c, err := d.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return rebuildFTSIfStaleOrForced(ctx, c)
}

func repairDedupeSchema(ctx context.Context, d *sql.DB) error {
	c, err := d.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	// Hand-written: schema surgery is not expressible in sqlc.
	for _, stmt := range []string{
		"PRAGMA writable_schema=ON",
		`DELETE FROM sqlite_schema WHERE rowid NOT IN (
			SELECT MIN(rowid) FROM sqlite_schema GROUP BY type, name)`,
		"PRAGMA writable_schema=OFF",
	} {
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(stmt)[0], err)
		}
	}
	return nil
}

func repairDropFTSVacuum(ctx context.Context, d *sql.DB) error {
	fresh, err := freshSchemaObjects(ctx)
	if err != nil {
		return err
	}
	c, err := d.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	isFTS := func(name string) bool { return strings.HasPrefix(name, "messages_fts") }
	// The file's own indexes and triggers come back, not the newest ones:
	// a file from before migration 4 has no index queue for its triggers to
	// fill, one from before migration 11 external-content indexes that its
	// triggers and its own build expect. The newest stand in for what the
	// file lacks.
	own, err := ftsSchema(ctx, c)
	if err != nil {
		own = nil
	}
	// pick returns the file's own objects of a kind when it has at least
	// want of them, else the newest.
	pick := func(kind string, want int) []schemaObject {
		var objs []schemaObject
		for _, o := range own {
			if o.kind == kind {
				objs = append(objs, o)
			}
		}
		if len(objs) >= want {
			return objs
		}
		objs = nil
		for _, o := range fresh {
			if isFTS(o.name) && o.kind == kind {
				objs = append(objs, o)
			}
		}
		return objs
	}
	tables, triggers := pick("table", len(ftsIndexes)), pick("trigger", 1)
	// Drop the indexes and their triggers; a vtable too damaged to drop is
	// removed from the schema with its shadow tables.
	for _, stmt := range []string{
		"DROP TRIGGER IF EXISTS messages_fts_insert", "DROP TRIGGER IF EXISTS messages_fts_delete",
		"DROP TRIGGER IF EXISTS messages_fts_update", "DROP TRIGGER IF EXISTS messages_fts_behind",
	} {
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	for _, t := range ftsIndexes {
		if _, err := c.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			if _, err := c.ExecContext(ctx, "PRAGMA writable_schema=ON"); err != nil {
				return err
			}
			if _, err := c.ExecContext(ctx, "DELETE FROM sqlite_schema WHERE name = ? OR name LIKE ? || '\\_%' ESCAPE '\\'", t, t); err != nil {
				return err
			}
			if _, err := c.ExecContext(ctx, "PRAGMA writable_schema=OFF"); err != nil {
				return err
			}
		}
	}
	if _, err := c.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	// Recreate them, and fill them.
	for _, o := range slices.Concat(tables, triggers) {
		if _, err := c.ExecContext(ctx, o.sql); err != nil {
			return fmt.Errorf("recreate %s: %w", o.name, err)
		}
	}
	return rebuildFTSIfStaleOrForced(ctx, c)
}

// ftsSchema reads the full-text indexes and triggers a file has.
func ftsSchema(ctx context.Context, c *sql.Conn) ([]schemaObject, error) {
	return querySchemaObjects(ctx, c, `SELECT type, name, sql FROM sqlite_schema
		WHERE ((type = 'trigger' AND name LIKE 'messages\_fts\_%' ESCAPE '\') OR (type = 'table' AND name IN ('messages_fts', 'messages_fts_trigram')))
		  AND sql IS NOT NULL ORDER BY type, name`)
}

// rebuildFTSIfStaleOrForced rebuilds both full-text indexes and clears
// the stale mark.
func rebuildFTSIfStaleOrForced(ctx context.Context, c *sql.Conn) error {
	if err := markFTSStale(ctx, c); err != nil {
		return err
	}
	return rebuildFTSIfStale(ctx, c)
}
