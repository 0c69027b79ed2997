package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/sessiondb/sessiondb/db/gen"
)

// openTestStore opens a real store in a fresh temporary directory and
// closes it when the test ends.
func openTestStore(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "state.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newTestSession creates a session for a test.
func newTestSession(t testing.TB, s *Store, id string) Session {
	t.Helper()
	sess, err := s.CreateSession(t.Context(), NewSession{ID: id, Source: "test"})
	if err != nil {
		t.Fatalf("CreateSession(%q): %v", id, err)
	}
	return sess
}

// holdWriteLock takes the database's write lock from a second connection —
// which, with the driver's OFD locks, behaves exactly like another process
// — and releases it after hold (or when the test ends). It returns once the
// lock is held; the channel closes just before the lock is let go, so a
// write that succeeds afterwards can be shown to have waited for it.
func holdWriteLock(t testing.TB, path string, hold time.Duration) (releasing <-chan struct{}) {
	t.Helper()
	other, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	//sessiondb:allow txonly -- plays another process holding the write lock
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("holder BEGIN IMMEDIATE: %v", err)
	}
	letGo, done := make(chan struct{}), make(chan struct{})
	release := func() {
		close(letGo)
		//sessiondb:allow txonly -- ends the holder's transaction
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		other.Close()
		close(done)
	}
	timer := time.AfterFunc(hold, release)
	t.Cleanup(func() {
		if timer.Stop() {
			release()
		}
		<-done
	})
	return letGo
}

// testLogger writes the store's logs to w, as text.
func testLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// genDBTX shortens gen.DBTX in tests.
type genDBTX = gen.DBTX

// migrateDownTo takes the closed store at path back to an older schema
// version with the migrations' own Down steps, as a file written by an
// earlier sessiondb would be.
func migrateDownTo(t testing.TB, path string, version int64) {
	t.Helper()
	withMigrations(t, path, func(p *goose.Provider) error {
		_, err := p.DownTo(t.Context(), version)
		return err
	})
}

// migrateUpTo applies the migrations up to version to the closed store
// at path, and nothing else Open would do (its indexing of the queue
// included), so a test sees what the migration itself left.
func migrateUpTo(t testing.TB, path string, version int64) {
	t.Helper()
	withMigrations(t, path, func(p *goose.Provider) error {
		_, err := p.UpTo(t.Context(), version)
		return err
	})
}

// withMigrations runs fn with a goose provider of sessiondb's migrations
// over a repair connection to the closed store at path.
func withMigrations(t testing.TB, path string, fn func(*goose.Provider) error) {
	t.Helper()
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p, err := newMigrations(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := fn(p); err != nil {
		t.Fatalf("migrate %s: %v", path, err)
	}
}

// search is Search, also saying which way the engine answered it.
func (s *Store) search(ctx context.Context, query string, opts SearchOptions) ([]SearchHit, searchRoute, error) {
	var route searchRoute
	hits, err := s.Search(context.WithValue(ctx, routeSlot{}, &route), query, opts)
	return hits, route, err
}

// fileHashes hashes files, by base name, to show a call left them as they were.
func fileHashes(t *testing.T, paths ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		out[filepath.Base(p)] = hex.EncodeToString(sum[:])
	}
	return out
}
