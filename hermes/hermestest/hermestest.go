// Package hermestest is the Hermes importer's test suite, written once and
// run on every engine: package hermes runs it on SQLite stores, the CLI's
// tests (the module that links both engines) on PostgreSQL ones. The
// Hermes files are real SQLite files — the fixture in
// ../shared/fixtures/hermes (read in place, never copied into the repo),
// copies of it a test plays the Hermes process on, and legacy files of
// older schema versions the tests build themselves.
package hermestest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/internal/needs"
	"github.com/sessiondb/sessiondb/store"
)

// Engine is what the suite needs of an engine.
type Engine struct {
	// Open opens a fresh, empty store, closed when the test ends.
	Open func(t *testing.T) *store.Store
	// FixtureDir is the directory of the Hermes fixture (state.db, its
	// -wal and -shm, schema.sql, reference-report.json), relative to the
	// calling package's directory; SESSIONDB_HERMES_FIXTURE overrides it.
	FixtureDir string
}

// Run runs the whole suite, each test a subtest.
func Run(t *testing.T, e Engine) {
	if e.Open == nil {
		t.Fatal("hermestest: the engine needs Open")
	}
	for _, c := range []struct {
		name string
		test func(*testing.T, Engine)
	}{
		{"Fixture", testImportHermesFixture},
		{"LiveWAL", testImportHermesLiveWAL},
		{"SkipsForeignIDs", testImportHermesSkipsForeignIDs},
		{"RefusesOtherFiles", testImportHermesRefusesOtherFiles},
		{"Resumes", testImportHermesResumes},
		{"DuplicatePlatformIDs", testImportHermes_DuplicatePlatformIDs},
		{"LegacyVersions", testLegacyVersions},
		{"UnsupportedVersion", testUnsupportedVersion},
		{"LeavesTheFileAlone", testLeavesTheFileAlone},
		{"OwnParent", testOwnParent},
		{"ReferenceFields", testReferenceFields},
		{"UsagePerRoute", testUsagePerRoute},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, e) })
	}
}

// fixtureDir finds the fixture; a test skips only when it is absent, and
// fails instead when CI=true.
func (e Engine) fixtureDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SESSIONDB_HERMES_FIXTURE")
	if dir == "" {
		dir = e.FixtureDir
	}
	if _, err := os.Stat(filepath.Join(dir, "state.db")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Hermes fixture missing at %s (%v): CI must run the fixture test", dir, err)
		}
		t.Skipf("Hermes fixture not found at %s (%v): run from a checkout beside shared/, or set SESSIONDB_HERMES_FIXTURE", dir, err)
	}
	return dir
}

// fixtureInPlace is the fixture's directory for a test that imports it
// where it lies. SQLite reads a WAL file through its -shm, so this user
// must be able to open that for writing (nothing is written to it); where
// not (a shared, root-owned fixture under another user), the import
// refuses with ErrReadOnly, which the CLI's tests pin, and these tests
// cannot run.
func (e Engine) fixtureInPlace(t *testing.T) string {
	t.Helper()
	dir := e.fixtureDir(t)
	f, err := os.OpenFile(filepath.Join(dir, "state.db-shm"), os.O_WRONLY, 0)
	switch {
	case err == nil:
		f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		needs.Missing(t, "write access to the Hermes fixture's -shm ("+err.Error()+")",
			"run as the fixture's owner (CI runs as root), or point SESSIONDB_HERMES_FIXTURE at a copy you own")
	}
	return dir
}

// copyFixture copies the fixture (with its -wal and -shm) into a
// temporary directory, to be written by a test playing the Hermes process.
func (e Engine) copyFixture(t *testing.T) string {
	t.Helper()
	dir := e.fixtureDir(t)
	dst := t.TempDir()
	for _, n := range []string{"state.db", "state.db-wal", "state.db-shm"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dst, "state.db")
}

// row is one source row by column name.
type row map[string]any

func (r row) str(k string) string {
	switch v := r[k].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// query reads the Hermes file at path read-only, as the importer does.
func query(t *testing.T, path, q string, args ...any) []row {
	t.Helper()
	f, err := db.OpenForeign(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.Query(t.Context(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out := make([]row, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

// count runs a COUNT query on the Hermes file at path.
func count(t *testing.T, path, q string, args ...any) int64 {
	t.Helper()
	for _, v := range query(t, path, q, args...)[0] {
		n, _ := v.(int64)
		return n
	}
	return 0
}

// openHermesWriter plays a live Hermes process on path: a plain read-write
// connection that never checkpoints, so what it writes stays in the WAL.
// It stays open until the test ends.
func openHermesWriter(t *testing.T, path string) *sql.Conn {
	t.Helper()
	registerSQLite(t, path)
	//sessiondb:allow rawopen -- plays the Hermes process that owns the file being imported
	d, err := sql.Open("sqlite3", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); d.Close() })
	if _, err := c.ExecContext(context.Background(), "PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	return c
}

// registerSQLite makes the SQLite engine register its driver's extensions
// (FTS5, which Hermes's triggers write to) before a test opens a Hermes
// file for writing: the engine does so on its first connection, here a
// read-only one to path.
func registerSQLite(t *testing.T, path string) {
	t.Helper()
	f, err := db.OpenForeign(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func execAll(t *testing.T, c *sql.Conn, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// fileHashes hashes files by base name, to show they were left as they were.
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

// sessiondbFile is a sessiondb SQLite store's file: SQLite, but not
// Hermes's schema.
func sessiondbFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessiondb.db")
	s, err := db.Open(t.Context(), path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return path
}
