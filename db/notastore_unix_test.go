//go:build unix

package db

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessiondb/sessiondb/internal/needs"
)

// dirState is every entry of a directory: its mode and, for a regular
// file, its bytes. Two equal states mean nothing was created, removed,
// chmod-ed or written there.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			v += " " + string(b)
		}
		state[e.Name()] = v
	}
	return state
}

// foreignSQLite makes another program's SQLite database at path: a table
// users with one row, in the rollback journal mode, mode 0644; with wal,
// in WAL mode with its tables still only in its -wal (copied from a live
// connection, as a crash leaves it).
func foreignSQLite(t *testing.T, path string, wal bool) {
	t.Helper()
	src := path
	if wal {
		src = filepath.Join(t.TempDir(), "live.db")
	}
	d, err := openDB(src, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	stmts := []string{"CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)", "INSERT INTO users VALUES (1, 'alice')"}
	if wal {
		stmts = append([]string{"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0"}, stmts...)
	}
	for _, s := range stmts {
		if _, err := d.ExecContext(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	if wal {
		for _, side := range []string{"", "-wal"} {
			b, err := os.ReadFile(src + side)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path+side, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	d.Close()
	os.Remove(path + "-shm") // prepareSidecars' own, made for this test's connection
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sqliteWith makes path a rollback-journal SQLite file (0644) holding
// what stmts make, as another program would.
func sqliteWith(t *testing.T, path string, stmts ...string) {
	t.Helper()
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := d.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	os.Remove(path + "-shm") // prepareSidecars' own, made for this test's connection
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue 38 item 1: a path that holds something other than a sessiondb
// store — another program's SQLite database, a text file, a directory, a
// FIFO, a device — is refused by every entry point with a NotAStoreError
// naming what is there, and its directory is left byte for byte and mode
// for mode as it was: no chmod, no migration, no journal switch, no -shm,
// no lock file. On 63b5fb9 a read chmod-ed /etc/passwd (a copy here) 0600
// and left -shm and .migrate.lock beside it, another program's database
// was migrated, switched to WAL and chmod-ed, and Repair moved a text file
// aside.
func TestOpen_LeavesWhatIsNotAStoreAlone(t *testing.T) {
	quiet := testLogger(io.Discard)
	cases := []struct {
		name  string
		make  func(t *testing.T, path string)
		found string // in the error's Found
	}{
		{"another program's SQLite database", func(t *testing.T, p string) { foreignSQLite(t, p, false) }, "a SQLite database of another program (tables: users)"},
		{"another program's database whose only table is named sessions", func(t *testing.T, p string) {
			sqliteWith(t, p, "CREATE TABLE sessions (id TEXT PRIMARY KEY, data BLOB)", "INSERT INTO sessions VALUES ('cookie', x'00')")
		}, "(tables: sessions, without sessiondb's goose_db_version)"},
		{"another program's database with no tables yet but its user_version", func(t *testing.T, p string) {
			sqliteWith(t, p, "PRAGMA user_version = 7")
		}, "no tables yet, user_version 7"},
		{"another program's WAL database, tables only in its -wal", func(t *testing.T, p string) { foreignSQLite(t, p, true) }, "still in its -wal"},
		{"a text file", func(t *testing.T, p string) {
			os.WriteFile(p, []byte("root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1::/:/usr/sbin/nologin\n"), 0o644)
		}, `not a SQLite file (it begins "root:x:0:0:root:/root:/b")`},
		{"a file with a zeroed header and other bytes", func(t *testing.T, p string) {
			os.WriteFile(p, append(make([]byte, 100), bytes.Repeat([]byte("somebody's data "), 300)...), 0o640)
		}, "first 100 bytes are zero"},
		{"a directory", func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, "a directory"},
		{"a FIFO", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "a named pipe (FIFO)"},
		{"a character device", func(t *testing.T, p string) {
			if os.Geteuid() != 0 {
				if needs.InCI() {
					t.Fatal("CI=true but not root: cannot make a device node")
				}
				t.Skip("needs root to make a device node (a copy of /dev/null): run the tests as root (CI does)")
			}
			if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // 1,3: null
				t.Fatal(err)
			}
		}, "a character device"},
	}
	entries := []struct {
		name string
		run  func(ctx context.Context, path string) error
	}{
		{"Open", func(ctx context.Context, p string) error { return openAndClose(ctx, p, Options{Logger: quiet}) }},
		{"Open ReadOnly", func(ctx context.Context, p string) error {
			return openAndClose(ctx, p, Options{Logger: quiet, ReadOnly: true})
		}},
		{"Open ExistingOnly", func(ctx context.Context, p string) error {
			return openAndClose(ctx, p, Options{Logger: quiet, ExistingOnly: true})
		}},
		{"Repair", func(ctx context.Context, p string) error {
			_, err := Repair(ctx, p, RepairOptions{Logger: quiet})
			return err
		}},
		{"Verify", func(ctx context.Context, p string) error {
			r, err := Verify(ctx, p)
			if err != nil {
				return err
			}
			if r.Health != HealthNotAStore || len(r.Details) != 1 {
				return errors.New("verify said " + string(r.Health) + ": " + strings.Join(r.Details, "; "))
			}
			return &NotAStoreError{Path: p, Found: r.Details[0]}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, e := range entries {
				t.Run(e.name, func(t *testing.T) {
					dir := t.TempDir()
					path := filepath.Join(dir, "state.db")
					c.make(t, path)
					before := dirState(t, dir)
					err := e.run(t.Context(), path)
					var nas *NotAStoreError
					if !errors.Is(err, ErrNotAStore) || !errors.As(err, &nas) || !strings.Contains(nas.Found, c.found) {
						t.Errorf("%s = %v, want a NotAStoreError finding %q", e.name, err, c.found)
					}
					if diff := cmp.Diff(before, dirState(t, dir)); diff != "" {
						t.Errorf("%s changed the directory (-before +after):\n%s", e.name, diff)
					}
				})
			}
		})
	}
}

// openAndClose opens the store at path and closes it at once.
func openAndClose(ctx context.Context, path string, o Options) error {
	s, err := Open(ctx, path, o)
	if err != nil {
		return err
	}
	return s.Close()
}

// Issue 38 item 1: an empty file — zero bytes, or a SQLite database
// without a single schema object — holds nothing to lose. A read
// (ReadOnly, ExistingOnly: the CLI's read commands), Verify and Repair
// leave it as it is, with no side file; a read-write Open makes a store
// of it in place, keeping the mode the file had. On 63b5fb9 a read turned
// an empty file into a 200 KB store, chmod-ed 0600.
func TestOpen_EmptyFileBecomesAStoreOnlyByAWrite(t *testing.T) {
	quiet := testLogger(io.Discard)
	for _, empty := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"zero bytes", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o644) }},
		{"a SQLite database without tables", func(t *testing.T, p string) {
			d, err := openDB(p, kindRepair, 1, "")
			if err != nil {
				t.Fatal(err)
			}
			// Page 1 written (a user_version set and reset), no objects:
			// nothing in it marks it as anyone's.
			for _, q := range []string{"PRAGMA user_version = 7", "PRAGMA user_version = 0"} {
				if _, err := d.ExecContext(t.Context(), q); err != nil {
					t.Fatal(err)
				}
			}
			d.Close()
			os.Remove(p + "-shm")
			os.Chmod(p, 0o644)
		}},
	} {
		t.Run(empty.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			empty.make(t, path)
			before := dirState(t, dir)
			for _, o := range []Options{{ReadOnly: true, Logger: quiet}, {ExistingOnly: true, Logger: quiet}} {
				if err := openAndClose(t.Context(), path, o); !errors.Is(err, ErrNotFound) {
					t.Errorf("read-only %v / existing-only %v open = %v, want ErrNotFound", o.ReadOnly, o.ExistingOnly, err)
				}
			}
			if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthEmpty {
				t.Errorf("Verify = %+v %v, want empty", r, err)
			}
			if r, err := Repair(t.Context(), path, RepairOptions{Logger: quiet}); err != nil || r.Strategy != "none" {
				t.Errorf("Repair = %+v %v, want nothing to repair", r, err)
			}
			if diff := cmp.Diff(before, dirState(t, dir)); diff != "" {
				t.Fatalf("a read changed the directory (-before +after):\n%s", diff)
			}
			s, err := Open(t.Context(), path, Options{Logger: quiet})
			if err != nil {
				t.Fatalf("a write's Open of an empty file: %v", err)
			}
			defer s.Close()
			newTestSession(t, s, "a")
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
				t.Errorf("the file's mode became %v, want its own 0644 kept", fi.Mode().Perm())
			}
		})
	}
}

// Issue 38 item 1: a new store is created 0600 with 0600 side files; an
// existing group-shared store (0640) stays 0640 through reads and writes,
// and its side files are 0640 too (on 63b5fb9 a read narrowed it to 0600).
func TestOpen_NewStoreIs0600AndAGroupSharedStoreStaysShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "a")
	for _, p := range []string{path, path + "-wal", path + "-shm", path + ".migrate.lock"} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s of a new store: %v %v, want 0600", filepath.Base(p), fi, err)
		}
	}
	s.Close()
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	for i, o := range []Options{{ExistingOnly: true}, {ReadOnly: true}, {}} {
		s, err := Open(t.Context(), path, o)
		if err != nil {
			t.Fatal(err)
		}
		sides := []string{"-shm"}
		if !o.ReadOnly {
			newTestSession(t, s, "b"+strconv.Itoa(i))
			sides = append(sides, "-wal", ".migrate.lock")
		}
		for _, side := range append(sides, "") {
			if fi, err := os.Stat(path + side); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("state.db%s after an open (read-only %v): %v %v, want 0640", side, o.ReadOnly, fi, err)
			}
		}
		s.Close()
	}
}
