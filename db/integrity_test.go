package db

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// filledStore makes a closed database with a few sessions and messages,
// for damage fixtures. It returns its path.
func filledStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The index is built by IndexNow alone, in slices of a fixed size, so
	// that its segments are laid out the same on every run: the background
	// indexer's slices follow the machine's load, and tests that damage a
	// segment or the structure record need to know which segments exist.
	s.w.ix.paused.Store(true)
	for i := range 3 {
		id := string(rune('a' + i))
		newTestSession(t, s, id)
		var batch []NewMessage
		for j := range 200 {
			batch = append(batch, NewMessage{Role: RoleUser, Content: strings.Repeat("tram alfama fado ", 1+j%7)})
		}
		if _, err := s.AppendMessages(t.Context(), id, batch); err != nil {
			t.Fatal(err)
		}
	}
	// Fully indexed: the damage tests start from an index that holds
	// every row.
	if err := s.IndexNow(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyStore copies a closed store's file (and its WAL, if one is left) to
// a new directory, for a test to damage its own copy.
func copyStore(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err == nil {
			err = os.WriteFile(path+suffix, b, 0o600)
		}
		if err != nil {
			t.Fatalf("copy the store: %v", err)
		}
	}
	return path
}

// damage runs SQL on a closed database through a repair-kind connection,
// the way a buggy tool would.
func damage(t *testing.T, path string, stmts ...string) {
	t.Helper()
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, q := range stmts {
		if _, err := d.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestVerify(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		setup  func(t *testing.T) string
		health Health
		detail string // substring of the first detail line
		fts    string // substring of the FTS line; "" means "ok" when verified
	}{
		{"Absent", func(t *testing.T) string { return filepath.Join(dir, "absent.db") }, HealthAbsent, "", ""},
		{"Empty", func(t *testing.T) string {
			p := filepath.Join(dir, "empty.db")
			os.WriteFile(p, nil, 0o600)
			return p
		}, HealthEmpty, "", ""},
		{"Verified", filledStore, HealthVerified, "", ""},
		{"Zeroed", func(t *testing.T) string {
			p := filledStore(t)
			fi, _ := os.Stat(p)
			os.WriteFile(p, make([]byte, fi.Size()), 0o600)
			return p
		}, HealthCorrupt, "zeroed", ""},
		{"Garbage", func(t *testing.T) string {
			p := filepath.Join(dir, "garbage.db")
			os.WriteFile(p, []byte(strings.Repeat("hello world ", 1000)), 0o600)
			return p
		}, HealthNotAStore, "not a SQLite file", ""},
		{"TruncatedHeader", func(t *testing.T) string {
			p := filledStore(t)
			os.Truncate(p, 50)
			return p
		}, HealthCorrupt, "truncated", ""},
		{"TruncatedPages", func(t *testing.T) string {
			p := filledStore(t)
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()/2)
			return p
		}, HealthCorrupt, "", ""},
		{"CorruptFTSShadowTable", func(t *testing.T) string {
			p := filledStore(t)
			damage(t, p, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id > 10")
			return p
		}, HealthCorrupt, "", ""},
		{"FTSEntryWithoutMessage", func(t *testing.T) string {
			p := filledStore(t)
			damage(t, p, "INSERT INTO messages_fts (rowid, content, tool_name) VALUES (99999, 'phantom', NULL)")
			return p
		}, HealthCorrupt, "", "1 index entries without a message"},
		{"MessageNeverIndexed", func(t *testing.T) string {
			p := filledStore(t)
			damage(t, p, "INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'unindexed', 0)",
				"UPDATE fts_mark SET indexed_through = (SELECT MAX(id) FROM messages)")
			return p
		}, HealthCorrupt, "", "1 messages not indexed"},
		{"IndexEntryPastTheMark", func(t *testing.T) string {
			p := filledStore(t)
			damage(t, p, "UPDATE fts_mark SET indexed_through = indexed_through - 1")
			return p
		}, HealthCorrupt, "", "1 index entries past the mark"},
		{"MarkPastTheLastID", func(t *testing.T) string {
			p := filledStore(t)
			damage(t, p, "UPDATE fts_mark SET indexed_through = indexed_through + 1000")
			return p
		}, HealthCorrupt, "", "past the last id given"},
		{"MarkMissing", func(t *testing.T) string {
			p := filledStore(t)
			damage(t, p, "DELETE FROM fts_mark")
			return p
		}, HealthCorrupt, "", "fts_mark holds 0 rows"},
		{"QueuedByAnotherWriter", func(t *testing.T) string {
			p := filledStore(t)
			damage(t, p, "INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'queued', 0)")
			return p
		}, HealthVerified, "", ""},
		{"MarkedStale", func(t *testing.T) string {
			p := filledStore(t)
			damage(t, p, "INSERT INTO meta (key, value, updated_at) VALUES ('fts_stale', '1', 0)",
				"INSERT INTO messages (session_id, role, content, created_at) VALUES ('a', 'user', 'while stale', 0)")
			return p
		}, HealthVerified, "", "stale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t)
			before, _ := os.ReadFile(path)
			r, err := Verify(t.Context(), path)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if r.Health != tt.health {
				t.Fatalf("Health = %s, want %s (details %q, fts %q)", r.Health, tt.health, r.Details, r.FTS)
			}
			if tt.detail != "" && (len(r.Details) == 0 || !strings.Contains(r.Details[0], tt.detail)) {
				t.Errorf("details %q lack %q", r.Details, tt.detail)
			}
			if tt.health == HealthVerified && ((tt.fts == "" && r.FTS != "ok") || len(r.Details) != 0) {
				t.Errorf("verified report carries fts %q details %q", r.FTS, r.Details)
			}
			if !strings.Contains(r.FTS, tt.fts) {
				t.Errorf("fts %q lacks %q", r.FTS, tt.fts)
			}
			after, _ := os.ReadFile(path)
			if diff := cmp.Diff(before, after); diff != "" && tt.health != HealthAbsent {
				t.Error("Verify changed the file")
			}
		})
	}
}
