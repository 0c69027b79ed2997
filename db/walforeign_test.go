package db

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/db/internal/forensics"
)

// copyFileT copies src to dst (0600) for a test.
func copyFileT(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// fillStore writes n sessions with a few messages each.
func fillStore(t testing.TB, s *Store, prefix string, n int) {
	t.Helper()
	for i := range n {
		id := prefix + "-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		newTestSession(t, s, id)
		for j := range 3 {
			if _, err := s.AppendMessage(t.Context(), id, NewMessage{Role: RoleUser, Content: strings.Repeat(prefix, 40+j)}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// openAt opens a store at path with a logger into buf.
func openAt(t testing.TB, path string, buf *bytes.Buffer) *Store {
	t.Helper()
	s, err := Open(t.Context(), path, Options{Logger: testLogger(buf)})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// liveWAL returns a copy of the WAL of a store that is still open: its
// frames, committed and fsynced, are exactly what a crash would leave.
func liveWAL(t testing.TB, s *Store) []byte {
	t.Helper()
	b, err := os.ReadFile(s.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sessionIDs lists a store's sessions.
func sessionIDs(t testing.TB, s *Store) map[string]bool {
	t.Helper()
	list, err := s.ListSessions(t.Context(), SessionFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, x := range list {
		ids[x.ID] = true
	}
	return ids
}

// retiredWALs lists the WALs retired beside path.
func retiredWALs(t testing.TB, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".retired-*.bak-wal")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestForeignWALIsRetired restores a main file from another copy, with the
// WAL of the store that was there left beside it: Open must not apply it.
func TestForeignWALIsRetired(t *testing.T) {
	ctx := context.Background()
	type scenario struct {
		name string
		// build returns the main file to restore, the WAL left beside it,
		// the sessions the restored file holds and those only the WAL has.
		build   func(t *testing.T) (main string, wal []byte, want, foreign []string)
		noPage1 bool // the WAL carries no image of page 1
	}
	scenarios := []scenario{
		{name: "another database, WAL with page 1", build: func(t *testing.T) (string, []byte, []string, []string) {
			var logs bytes.Buffer
			b := openAt(t, filepath.Join(t.TempDir(), "b.db"), &logs)
			fillStore(t, b, "b", 5)
			b.Close()
			a := openAt(t, filepath.Join(t.TempDir(), "a.db"), &logs)
			fillStore(t, a, "a", 5)
			return b.Path(), liveWAL(t, a), []string{"b-a", "b-e"}, []string{"a-a", "a-e"}
		}},
		{name: "another database, WAL without page 1", noPage1: true, build: func(t *testing.T) (string, []byte, []string, []string) {
			var logs bytes.Buffer
			b := openAt(t, filepath.Join(t.TempDir(), "b.db"), &logs)
			fillStore(t, b, "b", 40)
			b.Close()
			a := openAt(t, filepath.Join(t.TempDir(), "a.db"), &logs)
			fillStore(t, a, "a", 3)
			a.Close()
			// Another tool (not sessiondb, whose WALs always hold page 1)
			// rewrites a row in place in a fresh WAL.
			other, err := openDB(a.Path(), kindRepair, 1, "")
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			//sessiondb:allow txonly -- plays another tool writing the file
			if _, err := other.ExecContext(ctx, "UPDATE sessions SET title = 'hijack' WHERE id = 'a-b'"); err != nil {
				t.Fatal(err)
			}
			b2, err := os.ReadFile(a.Path() + "-wal")
			if err != nil {
				t.Fatal(err)
			}
			return b.Path(), b2, []string{"b-a", "b-n"}, nil
		}},
		{name: "an older copy of the same database", build: func(t *testing.T) (string, []byte, []string, []string) {
			var logs bytes.Buffer
			dir := t.TempDir()
			a := openAt(t, filepath.Join(dir, "a.db"), &logs)
			fillStore(t, a, "a", 3)
			a.Close()
			copyFileT(t, a.Path(), filepath.Join(dir, "backup.db"))
			a = openAt(t, a.Path(), &logs)
			fillStore(t, a, "later", 20)
			a.Close()
			a = openAt(t, a.Path(), &logs)
			fillStore(t, a, "latest", 5)
			return filepath.Join(dir, "backup.db"), liveWAL(t, a), []string{"a-a", "a-c"}, []string{"later-a", "latest-a"}
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			main, wal, want, foreign := sc.build(t)
			path := filepath.Join(t.TempDir(), "state.db")
			copyFileT(t, main, path)
			if err := os.WriteFile(path+"-wal", wal, 0o600); err != nil {
				t.Fatal(err)
			}
			sum, err := forensics.ReadWAL(path + "-wal")
			if err != nil || sum.Frames == 0 {
				t.Fatalf("the WAL left beside the copy has no committed frames (%v): the scenario does not test anything", err)
			}
			if got := sum.Page1 == 0; got != sc.noPage1 {
				t.Fatalf("WAL without page 1 = %v, the scenario needs %v", got, sc.noPage1)
			}
			rep, err := Verify(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Health != HealthCorrupt || !strings.Contains(strings.Join(rep.Details, "\n"), "foreign WAL") {
				t.Errorf("Verify = %s %q, want corrupt naming the foreign WAL", rep.Health, rep.Details)
			}
			if _, err := os.Stat(path + "-wal"); err != nil {
				t.Errorf("Verify changed the files: %v", err)
			}

			var logs bytes.Buffer
			s := openAt(t, path, &logs)
			if got := retiredWALs(t, path); len(got) != 1 {
				t.Fatalf("retired WALs = %q, want one", got)
			}
			if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "NOT applied") {
				t.Errorf("no loud log of the retired WAL:\n%s", logs.String())
			}
			ids := sessionIDs(t, s)
			for _, id := range want {
				if !ids[id] {
					t.Errorf("session %s of the restored file is missing", id)
				}
			}
			for _, id := range foreign {
				if ids[id] {
					t.Errorf("session %s came from the foreign WAL", id)
				}
			}
			if sess, err := s.Session(ctx, "b-b"); err == nil && sess.Title == "hijack" {
				t.Errorf("the foreign WAL's page overwrote session b-b")
			}
			s.Close()
			if rep, err := Verify(ctx, path); err != nil || rep.Health != HealthVerified {
				t.Errorf("after the WAL was retired Verify = %s %q (%v), want verified", rep.Health, rep.Details, err)
			}
		})
	}
}

// TestOwnWALIsReplayed checks that the WAL of the file itself is never
// taken for a foreign one: a pair copied from a live store, before and
// after a checkpoint, and a backup that is exactly the state the WAL
// started from.
func TestOwnWALIsReplayed(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) (main string, wal []byte, want []string)
	}{
		{"live pair, nothing checkpointed", func(t *testing.T, dir string) (string, []byte, []string) {
			var logs bytes.Buffer
			a, err := Open(ctx, filepath.Join(dir, "a.db"), Options{Logger: testLogger(&logs), CheckpointEvery: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close() })
			fillStore(t, a, "a", 30)
			main := filepath.Join(dir, "copy.db")
			copyFileT(t, a.Path(), main)
			return main, liveWAL(t, a), []string{"a-a", "a-d"}
		}},
		{"live pair after checkpoints", func(t *testing.T, dir string) (string, []byte, []string) {
			var logs bytes.Buffer
			a, err := Open(ctx, filepath.Join(dir, "a.db"), Options{Logger: testLogger(&logs), CheckpointEvery: 1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close() })
			fillStore(t, a, "a", 30)
			if err := a.SetTitle(ctx, "a-c", "renamed"); err != nil {
				t.Fatal(err)
			}
			main := filepath.Join(dir, "copy.db")
			copyFileT(t, a.Path(), main)
			return main, liveWAL(t, a), []string{"a-a", "a-d"}
		}},
		{"backup equal to the WAL's starting point", func(t *testing.T, dir string) (string, []byte, []string) {
			var logs bytes.Buffer
			a := openAt(t, filepath.Join(dir, "a.db"), &logs)
			fillStore(t, a, "a", 3)
			a.Close()
			main := filepath.Join(dir, "backup.db")
			copyFileT(t, a.Path(), main)
			// No checkpoint while the WAL grows (none of the writer's own,
			// none after an indexer's batch): one would restart the log
			// from a later state, and the backup would no longer be its
			// starting point.
			a, err := Open(ctx, a.Path(), Options{Logger: testLogger(&logs), CheckpointEvery: -1, ManualIndexing: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close() })
			fillStore(t, a, "new", 10)
			if err := a.SetTitle(ctx, "a-a", "renamed"); err != nil {
				t.Fatal(err)
			}
			return main, liveWAL(t, a), []string{"a-a", "new-a", "new-j"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			main, wal, want := tc.setup(t, dir)
			path := filepath.Join(t.TempDir(), "state.db")
			copyFileT(t, main, path)
			if err := os.WriteFile(path+"-wal", wal, 0o600); err != nil {
				t.Fatal(err)
			}
			if why, err := forensics.ForeignWAL(path); why != "" || err != nil {
				t.Fatalf("foreignWAL = %q, %v; want the WAL accepted", why, err)
			}
			var logs bytes.Buffer
			s := openAt(t, path, &logs)
			if got := retiredWALs(t, path); len(got) != 0 {
				t.Fatalf("the file's own WAL was retired: %q\n%s", got, logs.String())
			}
			ids := sessionIDs(t, s)
			for _, id := range want {
				if !ids[id] {
					t.Errorf("session %s is missing: the WAL was not replayed", id)
				}
			}
			s.Close()
			if rep, err := Verify(ctx, path); err != nil || rep.Health != HealthVerified {
				t.Errorf("Verify = %s %q (%v), want verified", rep.Health, rep.Details, err)
			}
		})
	}
}

// TestRepairRetiresForeignWAL: repair retires a foreign WAL and reports it.
func TestRepairRetiresForeignWAL(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	b := openAt(t, filepath.Join(t.TempDir(), "b.db"), &logs)
	fillStore(t, b, "b", 5)
	b.Close()
	a := openAt(t, filepath.Join(t.TempDir(), "a.db"), &logs)
	fillStore(t, a, "a", 5)
	path := filepath.Join(t.TempDir(), "state.db")
	copyFileT(t, b.Path(), path)
	if err := os.WriteFile(path+"-wal", liveWAL(t, a), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Repair(ctx, path, RepairOptions{Logger: testLogger(&logs)})
	if err != nil {
		t.Fatalf("Repair: %v (%+v)", err, rep)
	}
	if rep.Strategy != "retire-wal" || !rep.Repaired || rep.After != HealthVerified || len(retiredWALs(t, path)) != 1 {
		t.Errorf("Repair = %+v, want the WAL retired and the file verified", rep)
	}
	if errors.Is(err, ErrCorrupt) {
		t.Error("unexpected corrupt")
	}
}

// TestForeignWALPageKinds: without page 1 in the WAL, a page the WAL
// rewrites must be a b-tree page of the same kind in the main file.
func TestForeignWALPageKinds(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	a := openAt(t, filepath.Join(t.TempDir(), "a.db"), &logs)
	fillStore(t, a, "a", 3)
	a.Close()
	main, err := os.ReadFile(a.Path())
	if err != nil {
		t.Fatal(err)
	}
	other, err := openDB(a.Path(), kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	//sessiondb:allow txonly -- plays another tool writing the file
	if _, err := other.ExecContext(ctx, "UPDATE sessions SET title = 'x' WHERE id = 'a-b'"); err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(a.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := forensics.ReadWAL(a.Path() + "-wal")
	if err != nil || sum.Page1 != 0 || len(sum.Kinds) == 0 {
		t.Fatalf("the WAL has %d page 1 images and %d other pages (%v): the test needs only others", sum.Page1, len(sum.Kinds), err)
	}
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, main, 0o600); err != nil {
		t.Fatal(err)
	}
	// Alone, without the -shm that indexes it, such a WAL is refused
	// whatever its pages (TestForeignWALWithoutPage1NeedsItsIndex); the
	// tool's -shm comes along here, as when the tool stopped beside it.
	copyFileT(t, a.Path()+"-shm", path+"-shm")
	if why, err := forensics.ForeignWAL(path); why != "" || err != nil {
		t.Fatalf("the WAL's own file: foreignWAL = %q, %v; want it accepted", why, err)
	}
	for pgno, kind := range sum.Kinds {
		changed := append([]byte(nil), main...)
		changed[int(pgno-1)*sum.PageSize] = kind ^ 0x08 // leaf <-> interior
		if err := os.WriteFile(path, changed, 0o600); err != nil {
			t.Fatal(err)
		}
		if why, err := forensics.ForeignWAL(path); err != nil || !strings.Contains(why, "kind") {
			t.Errorf("page %d of another kind: foreignWAL = %q, %v; want it refused", pgno, why, err)
		}
	}
}

// TestForeignWALWithoutPage1NeedsItsIndex is issue 38's regression: two
// stores made alike (same size, same page kinds), a row of one rewritten
// by another program (no page 1 in its WAL), and that WAL copied beside
// the other store. The size and kind rules cannot tell them apart, so the
// WAL was replayed: the other store's meta value changed and Verify said
// verified. Such a WAL is now accepted only with the -shm that indexes it
// (the program stopped beside its own file): copied alone it is retired,
// while the same WAL beside its own file with its -shm is replayed.
func TestForeignWALWithoutPage1NeedsItsIndex(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	dir := t.TempDir()
	mk := func(name, value string) string {
		s := openAt(t, filepath.Join(dir, name), &logs)
		if err := s.SetMeta(ctx, "k", value); err != nil {
			t.Fatal(err)
		}
		s.Close()
		return s.Path()
	}
	a, b := mk("a.db", "a's"), mk("b.db", "b's")
	other, err := openDB(b, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	//sessiondb:allow txonly -- plays another program writing b
	if _, err := other.ExecContext(ctx, "UPDATE meta SET value = 'hijack' WHERE key = 'k'"); err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(b + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := forensics.ReadWAL(b + "-wal"); err != nil || sum.Frames == 0 || sum.Page1 != 0 {
		t.Fatalf("b's WAL: %d frames, %d images of page 1 (%v); the test needs frames without page 1", sum.Frames, sum.Page1, err)
	}
	fa, _ := os.Stat(a)
	fb, _ := os.Stat(b)
	if fa.Size() != fb.Size() {
		t.Fatalf("the stores differ in size (%d, %d): the size rule alone would catch it", fa.Size(), fb.Size())
	}

	if err := os.WriteFile(a+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(ctx, a); err != nil || rep.Health != HealthCorrupt || !strings.Contains(strings.Join(rep.Details, " "), "no -shm") {
		t.Errorf("Verify with b's WAL beside a = %s %q (%v), want corrupt naming the missing -shm", rep.Health, rep.Details, err)
	}
	s := openAt(t, a, &logs)
	if v, err := s.Meta(ctx, "k"); err != nil || v != "a's" {
		t.Errorf("a's meta after open = %q, %v; want a's own value, the foreign WAL not applied", v, err)
	}
	if got := retiredWALs(t, a); len(got) != 1 {
		t.Errorf("retired WALs beside a = %q, want one", got)
	}
	s.Close()

	// The same WAL with its -shm, beside its own file (a copy of b's pair
	// while the program still has it open), is replayed.
	own := filepath.Join(t.TempDir(), "own.db")
	copyFileT(t, b, own)
	copyFileT(t, b+"-shm", own+"-shm")
	if err := os.WriteFile(own+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
	if why, err := forensics.ForeignWAL(own); why != "" || err != nil {
		t.Fatalf("b's WAL with its -shm beside b's file: foreignWAL = %q, %v; want it accepted", why, err)
	}
	s = openAt(t, own, &logs)
	if v, err := s.Meta(ctx, "k"); err != nil || v != "hijack" {
		t.Errorf("own meta after open = %q, %v; want the other program's write replayed", v, err)
	}
}
