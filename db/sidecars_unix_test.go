//go:build unix

package db

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessiondb/sessiondb/internal/needs"
)

// copyHot copies a live store's main file and WAL (not its -shm), as a
// crash would leave them: committed frames in a WAL nobody has indexed.
func copyHot(t *testing.T, s *Store) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.db")
	for _, side := range []string{"", "-wal"} {
		b, err := os.ReadFile(s.Path() + side)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+side, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// The -shm (and, for a WAL file, the -wal) that prepareSidecars creates
// empty are what SQLite reads correctly: read-only (Verify) and read-write
// (Open) connections see every committed row, including frames only in a
// WAL that no shared memory indexes yet.
func TestSidecars_EmptyPrecreatedFilesAreValid(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "a")
	for i := range 50 {
		if _, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: fmt.Sprint("turn ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"verify first", "open first"} {
		t.Run(name, func(t *testing.T) {
			path := copyHot(t, s)
			if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
				t.Fatalf("the copy's WAL holds no frames (%v); the test needs them", err)
			}
			if name == "verify first" {
				r, err := Verify(t.Context(), path)
				if err != nil || r.Health != HealthVerified {
					t.Fatalf("Verify through an empty -shm: %+v, %v", r, err)
				}
			}
			c, err := Open(t.Context(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if sess, err := c.Session(t.Context(), "a"); err != nil || sess.MessageCount != 50 {
				t.Fatalf("rows through an empty -shm: %+v, %v; want 50 messages", sess, err)
			}
		})
	}
	// A closed WAL file has neither sidecar: both are made empty, with
	// the database's mode (0600), and a read-only check reads through them.
	path := filepath.Join(t.TempDir(), "closed.db")
	c, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, c, "b")
	c.Close()
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + side); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s survived a clean close: %v", side, err)
		}
	}
	if err := prepareSidecars(path); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"-wal", "-shm"} {
		fi, err := os.Stat(path + side)
		if err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want an empty 0600 file", side, fi, err)
		}
	}
	if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
		t.Fatalf("Verify through empty sidecars: %+v, %v", r, err)
	}
}

// A -wal beside a rollback-journal file would switch it to WAL: it is
// never created for one.
func TestSidecars_NoWALForARollbackFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollback.db")
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecContext(t.Context(), "CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := prepareSidecars(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a -wal was made beside a rollback-journal file: %v", err)
	}
}

// Open never changes an existing file's mode, narrower or wider (it
// used to tighten 0644 and 0640 to 0600; issue 38 made an existing file's
// mode the owner's choice): the side files it makes while the store is
// open (-wal, -shm, the migration lock) get the database's mode instead.
func TestOpen_NeverChangesAMode(t *testing.T) {
	for _, have := range []os.FileMode{0o644, 0o640, 0o600, 0o400} {
		t.Run(have.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			s, err := Open(t.Context(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			os.Chmod(path, have)
			os.Chmod(path+".migrate.lock", 0o600) // as an older sessiondb left it
			s, err = Open(t.Context(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if have&0o200 != 0 {
				newTestSession(t, s, "a") // a write: the -wal holds frames
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != have {
				t.Fatalf("mode %v after Open, want %v", fi.Mode().Perm(), have)
			}
			sides := []string{"-wal", "-shm", ".migrate.lock"}
			if have&0o200 == 0 {
				sides = []string{"-shm"} // a read-only open takes no lock and needs no -wal
			}
			for _, side := range sides {
				// The owner can always write its side files (a 0400
				// store's -shm is 0600).
				if fi, err := os.Stat(path + side); err != nil || fi.Mode().Perm() != have|0o600 {
					t.Errorf("%s: %v %v, want mode %v like the database", side, fi, err, have|0o600)
				}
			}
		})
	}
}

// A 0400 file was made read-only on purpose: Open reads it (even as root,
// who could write it) and refuses every write with ErrReadOnly; its mode
// stays 0400.
func TestOpen_ReadOnlyModeFileOpensForReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "a")
	s.Close()
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(t.Context(), path, Options{Logger: testLogger(io.Discard)})
	if err != nil {
		t.Fatalf("Open of a 0400 file: %v", err)
	}
	defer ro.Close()
	if _, err := ro.Session(t.Context(), "a"); err != nil {
		t.Fatalf("read through a read-only store: %v", err)
	}
	_, err = ro.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: "x"})
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "0400") {
		t.Fatalf("append to a 0400 file = %v, want ErrReadOnly naming the mode", err)
	}
	if _, err := ro.Vacuum(t.Context()); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("vacuum of a 0400 file = %v, want ErrReadOnly", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o400 {
		t.Fatalf("mode %v, want it left 0400", fi.Mode().Perm())
	}
}

// A database another user owns is never written (the sidecars would be
// this user's, 0600, and lock the owner out): Open reads it and refuses
// writes with a ForeignOwnerError, Repair refuses it, Verify checks it,
// and any sidecar made for it belongs to the owner.
func TestOpen_RefusesToWriteAFileOwnedByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		if needs.InCI() {
			t.Fatal("CI=true but not root: cannot give a file to another user")
		}
		t.Skip("needs root to give a file to another user: run the tests as root (CI does)")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "a")
	s.Close()
	const nobody = 65534
	if err := os.Chown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o640) // its owner's choice, not ours to tighten
	ro, err := Open(t.Context(), path, Options{Logger: testLogger(io.Discard)})
	if err != nil {
		t.Fatalf("Open of another user's file: %v", err)
	}
	if _, err := ro.Session(t.Context(), "a"); err != nil {
		t.Fatalf("read another user's file: %v", err)
	}
	_, appendErr := ro.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: "x"})
	ro.Close()
	_, repairErr := Repair(t.Context(), path, RepairOptions{})
	for name, err := range map[string]error{"append": appendErr, "Repair": repairErr} {
		var fe *ForeignOwnerError
		if !errors.Is(err, ErrReadOnly) || !errors.As(err, &fe) || fe.Owner != nobody || !strings.Contains(err.Error(), "uid 65534") {
			t.Fatalf("%s of another user's file = %v, want a ForeignOwnerError naming uid %d", name, err, nobody)
		}
	}
	if err := prepareSidecars(path); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"-wal", "-shm"} {
		var st syscall.Stat_t
		if err := syscall.Stat(path+side, &st); err != nil || st.Uid != nobody {
			t.Fatalf("%s made for another user's file belongs to uid %d (%v), want %d", side, st.Uid, err, nobody)
		}
	}
	if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
		t.Fatalf("Verify of another user's file: %+v, %v", r, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("another user's file changed mode: %v", fi.Mode().Perm())
	}
}
