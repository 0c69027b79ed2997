package db

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sessiondb/sessiondb/db/internal/backup"
	"github.com/sessiondb/sessiondb/storetest"
)

// allMessages reads every message of every session, checking each
// session's counter against its rows.
func allMessages(t *testing.T, path string) map[int64]string {
	t.Helper()
	s, err := Open(t.Context(), path, Options{Logger: testLogger(new(bytes.Buffer))})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer s.Close()
	ss, err := s.ListSessions(t.Context(), SessionFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for _, sess := range ss {
		for _, m := range storetest.WholeSession(t, s.Store, sess.ID) {
			out[m.ID] = m.Content
		}
	}
	return out
}

func TestRepair(t *testing.T) {
	quiet := testLogger(new(bytes.Buffer))
	tests := []struct {
		name     string
		damage   func(t *testing.T, path string)
		before   Health
		strategy string
		keepData bool // the data readable before is readable after
	}{
		{"Healthy", func(t *testing.T, path string) {}, HealthVerified, "none", true},
		{"CorruptFTSShadowTable", func(t *testing.T, path string) {
			damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id > 10")
		}, HealthCorrupt, "fts-rebuild", true},
		{"IndexNeedsReindex", func(t *testing.T, path string) {
			// The index is built in another order than its (unchanged)
			// definition says: its entries, not the schema, are wrong.
			damage(t, path, "PRAGMA writable_schema=ON",
				"UPDATE sqlite_schema SET sql = replace(sql, '(session_id, id)', '(session_id DESC, id DESC)') WHERE name = 'messages_session_id'")
			damage(t, path, "REINDEX messages_session_id")
			damage(t, path, "PRAGMA writable_schema=ON",
				"UPDATE sqlite_schema SET sql = replace(sql, '(session_id DESC, id DESC)', '(session_id, id)') WHERE name = 'messages_session_id'")
		}, HealthCorrupt, "reindex", true},
		{"DuplicateSchemaRow", func(t *testing.T, path string) {
			damage(t, path, "PRAGMA writable_schema=ON",
				"INSERT INTO sqlite_schema (type, name, tbl_name, rootpage, sql) SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema WHERE name = 'meta'")
		}, HealthCorrupt, "dedupe-schema", true},
		{"ZeroedFile", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			os.WriteFile(path, make([]byte, fi.Size()), 0o600)
		}, HealthCorrupt, "move-aside", false},
		// A store whose header was overwritten still shows its schema: it
		// is ours, damaged. (A file of garbage with no sessiondb schema in
		// it is not ours: Repair refuses it, TestOpen_LeavesWhatIsNotAStoreAlone.)
		{"HeaderOverwritten", func(t *testing.T, path string) {
			f, _ := os.OpenFile(path, os.O_WRONLY, 0)
			f.WriteAt([]byte(strings.Repeat("not ours ", 11)), 0)
			f.Close()
		}, HealthCorrupt, "move-aside", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filledStore(t)
			want := allMessages(t, path)
			tt.damage(t, path)
			damaged, _ := os.ReadFile(path)

			v, err := Verify(t.Context(), path)
			if err != nil || v.Health != tt.before {
				t.Fatalf("Verify before = %s %v %v, want %s", v.Health, v.Details, err, tt.before)
			}
			r, err := Repair(t.Context(), path, RepairOptions{Logger: quiet})
			if err != nil {
				t.Fatalf("Repair: %v (tried %v)", err, r.Tried)
			}
			t.Logf("verify %s → repair %q (tried %v), backup %s", v.Health, r.Strategy, r.Tried, filepath.Base(r.BackupPath))
			if r.Strategy != tt.strategy {
				t.Errorf("strategy %q, want %q (tried %v)", r.Strategy, tt.strategy, r.Tried)
			}
			if tt.strategy == "none" {
				if r.Repaired || r.BackupPath != "" {
					t.Errorf("a healthy file was touched: %+v", r)
				}
				return
			}
			if !r.Repaired {
				t.Errorf("Repaired = false: %+v", r)
			}
			// The backup (or the moved-aside file) holds the damaged bytes.
			if got, err := os.ReadFile(r.BackupPath); err != nil || !bytes.Equal(got, damaged) {
				t.Errorf("backup %s: %v, same bytes as the damaged file: %v", r.BackupPath, err, bytes.Equal(got, damaged))
			}
			if after, _ := Verify(t.Context(), path); after.Health != HealthVerified && after.Health != HealthEmpty {
				t.Errorf("Verify after repair = %s %v", after.Health, after.Details)
			}
			if tt.keepData {
				if diff := cmp.Diff(want, allMessages(t, path)); diff != "" {
					t.Errorf("messages after repair (-before +after):\n%s", diff)
				}
				return
			}
			// Nothing was readable before: the fresh database works.
			s, err := Open(t.Context(), path, Options{Logger: quiet})
			if err != nil {
				t.Fatalf("open the fresh database: %v", err)
			}
			defer s.Close()
			if ss, err := s.ListSessions(t.Context(), SessionFilter{}); err != nil || len(ss) != 0 {
				t.Errorf("fresh database: %d sessions, %v", len(ss), err)
			}
		})
	}
}

func TestRepair_TruncatedFileIsSalvaged(t *testing.T) {
	path := filledStore(t)
	want := allMessages(t, path)
	// filledStore's messages sit in the middle of the file, after the
	// schema and before the index pages IndexNow writes last: three fifths
	// keep some of them and cut the rest.
	fi, _ := os.Stat(path)
	os.Truncate(path, fi.Size()*3/5)
	r, err := Repair(t.Context(), path, RepairOptions{Logger: testLogger(new(bytes.Buffer))})
	if err != nil || !r.Repaired || r.Strategy != "salvage" {
		t.Fatalf("Repair = %+v, %v; want salvage", r, err)
	}
	t.Logf("truncated file: %v", r.Tried)
	got := allMessages(t, path)
	if len(got) == 0 {
		t.Fatal("salvage kept no message")
	}
	for id, content := range got {
		if want[id] != content {
			t.Errorf("message %d after salvage = %q, before = %q", id, content, want[id])
		}
	}
	t.Logf("salvaged %d of %d messages from a file cut to three fifths", len(got), len(want))
}

func TestRepair_UnrepairableFileIsLeftAsItWasAndTheLedgerStopsRetries(t *testing.T) {
	quiet := testLogger(new(bytes.Buffer))
	path := filledStore(t)
	// The schema page torn past the header: nothing is readable.
	f, _ := os.OpenFile(path, os.O_WRONLY, 0)
	f.WriteAt(bytes.Repeat([]byte{0x5A}, 4096-100), 100)
	f.Close()
	damaged, _ := os.ReadFile(path)

	for attempt := 1; attempt <= 3; attempt++ {
		r, err := Repair(t.Context(), path, RepairOptions{Logger: quiet})
		if r.Repaired || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("attempt %d: %+v, %v; want ErrCorrupt naming the strategies tried", attempt, r, err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
			t.Fatalf("attempt %d changed the file it could not repair", attempt)
		}
		if attempt == 1 {
			t.Logf("unrepairable file: %v", r.Tried)
		}
	}
	_, err := Repair(t.Context(), path, RepairOptions{Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "already failed 3 times") || !strings.Contains(err.Error(), "repair-attempts.json") {
		t.Errorf("4th attempt = %v, want the ledger's refusal naming the override", err)
	}
	if _, err := Repair(t.Context(), path, RepairOptions{Logger: quiet, Force: true}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("forced attempt = %v, want it to run (and fail) again", err)
	}
	backups, _ := filepath.Glob(path + ".repair-*.bak")
	if len(backups) != 1 {
		t.Errorf("%d backups of the same damaged content, want 1 (deduplicated)", len(backups))
	}
}

func TestRepair_RefusesAFileInUse(t *testing.T) {
	path := filledStore(t)
	damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id > 10")
	s, err := Open(t.Context(), path, Options{Logger: testLogger(new(bytes.Buffer))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, _ := backup.Hash(sideFiles{}, path)
	_, err = Repair(t.Context(), path, RepairOptions{Logger: testLogger(new(bytes.Buffer)), LockWait: time.Second})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "another process") {
		t.Errorf("Repair of an open database = %v, want ErrLocked", err)
	}
	if after, _ := backup.Hash(sideFiles{}, path); after != before {
		t.Error("a refused repair changed the file")
	}
}

func TestRepair_KeepsAtMostThreeBackups(t *testing.T) {
	path := filledStore(t)
	for i := range 5 {
		os.WriteFile(path, []byte(strings.Repeat("x", 100+i)), 0o600) // distinct content
		if _, err := backup.ForRepair(sideFiles{}, path, string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct timestamps
	}
	backups, _ := filepath.Glob(path + ".repair-*.bak")
	if len(backups) != backup.MaxKept {
		t.Errorf("%d backups kept, want %d", len(backups), backup.MaxKept)
	}
}

// A repair whose lock wait ran out must not go ahead without its guard:
// it would swap the file from under a live store.
func TestRepair_ExpiredLockWaitDoesNotSkipTheGuard(t *testing.T) {
	path := filledStore(t)
	damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id > 10")
	s, err := Open(t.Context(), path, Options{Logger: testLogger(new(bytes.Buffer))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := Repair(t.Context(), path, RepairOptions{Logger: testLogger(new(bytes.Buffer)), LockWait: time.Millisecond})
	if !errors.Is(err, ErrLocked) || r.Repaired {
		t.Errorf("Repair of a file open in another store = %+v, %v; want ErrLocked", r, err)
	}
	if err := s.SetMeta(t.Context(), "k", "v"); err != nil {
		t.Errorf("the live store lost its file: %v", err)
	}
}

// A crash right after the repaired copy is renamed in must not leave the
// old file's WAL beside it.
func TestRepair_CrashAfterTheRenameLeavesNoForeignWAL(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	s, err := Open(t.Context(), live, Options{CheckpointEvery: -1, Logger: testLogger(new(bytes.Buffer))})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "a")
	var batch []NewMessage
	for j := range 300 {
		batch = append(batch, NewMessage{Role: RoleUser, Content: strings.Repeat("tram alfama fado ", 1+j%7)})
	}
	if _, err := s.AppendMessages(t.Context(), "a", batch); err != nil {
		t.Fatal(err)
	}
	// A kill -9 image: the main file and a WAL of uncheckpointed commits.
	path := filepath.Join(dir, "state.db")
	backup.CopyFile(sideFiles{}, live, path)
	backup.CopyFile(sideFiles{}, live+"-wal", path+"-wal")
	s.Close()

	scratch := filepath.Join(dir, "scratch.db")
	if verdict, err := tryStrategy(t.Context(), path, scratch, repairStrategy{"drop-fts-vacuum", noNote(repairDropFTSVacuum)}); err != nil {
		t.Fatalf("strategy: %s %v", verdict, err)
	}
	g := &repairGuard{path: path}
	if err := g.swapIn(scratch); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Error("the old WAL is still beside the repaired file")
	}
	if aside, _ := filepath.Glob(path + ".pre-repair-*.bak-wal"); len(aside) != 1 {
		t.Errorf("old WAL kept aside: %v, want one", aside)
	}
	if v, _ := Verify(t.Context(), path); v.Health != HealthVerified {
		t.Errorf("repaired file: %s %v", v.Health, v.Details)
	}
}

// An index that holds an entry without a message (Verify's coverage
// check calls it corrupt; integrity_check does not see it) is mended by
// rebuilding the index.
func TestRepair_MendsIndexCoverage(t *testing.T) {
	path := filledStore(t)
	damage(t, path, "INSERT INTO messages_fts (rowid, content, tool_name) VALUES (99999, 'phantom', NULL)")
	r, err := Repair(t.Context(), path, RepairOptions{Logger: testLogger(new(bytes.Buffer))})
	if err != nil {
		t.Fatal(err)
	}
	if r.Before != HealthCorrupt || r.After != HealthVerified || r.Strategy != "fts-rebuild" {
		t.Errorf("Repair = %+v; want corrupt → verified by fts-rebuild", r)
	}
}

// Salvage's scan of a table ends near its last row whatever the id
// counter says: an exhausted or hostile counter near 2^63 had it walk
// empty ranges for ever (65,536 ids a read).
func TestSalvage_HugeIDCounterDoesNotStretchTheScan(t *testing.T) {
	path := filledStore(t)
	damage(t, path, "UPDATE sqlite_sequence SET seq = 9223372036854775000 WHERE name = 'messages'")
	freshPath := filepath.Join(t.TempDir(), "fresh.db")
	fresh, err := Open(t.Context(), freshPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fresh.Close()
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c, err := d.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "ATTACH DATABASE ? AS fresh", freshPath); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "INSERT INTO fresh.sessions SELECT * FROM main.sessions"); err != nil {
		t.Fatal(err)
	}
	copied, skipped := salvageTable(ctx, c, "messages")
	if ctx.Err() != nil || copied != 600 || skipped != 0 {
		t.Errorf("salvage of messages: %d copied, %d skipped, %v; want all 600 well within 20 s", copied, skipped, ctx.Err())
	}
}
