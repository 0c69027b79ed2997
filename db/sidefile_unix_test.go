//go:build unix

package db

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// unrepairableStore returns a store whose schema page is torn past the
// header, which no repair strategy can mend.
func unrepairableStore(t *testing.T) string {
	t.Helper()
	path := filledStore(t)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(bytes.Repeat([]byte{0x5A}, 4096-100), 100)
	f.Close()
	return path
}

// within runs fn and fails the test if it has not returned after limit: a
// side file that blocks must fail the test, not hang it.
func within(t *testing.T, limit time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("still blocked after %v", limit)
		return nil
	}
}

// A symlink planted at the repair ledger's temporary path must not
// redirect the ledger's write: the failed repair leaves its target as it
// was.
func TestRepair_LedgerTempSymlinkIsNotFollowed(t *testing.T) {
	path := unrepairableStore(t)
	target := filepath.Join(t.TempDir(), "precious")
	const precious = "not the ledger's to overwrite\n"
	if err := os.WriteFile(target, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path+".repair-attempts.json.tmp"); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	_, err := Repair(t.Context(), path, RepairOptions{Logger: testLogger(&logs)})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Repair = %v, want ErrCorrupt (nothing could repair it)", err)
	}
	if got, _ := os.ReadFile(target); string(got) != precious {
		t.Fatalf("the symlink's target was overwritten: %q", got)
	}
	if !strings.Contains(logs.String(), "symbolic link") {
		t.Errorf("the refused ledger write was not reported: %s", logs.String())
	}
}

// A FIFO at a side file's path fails the call at once with a clear error
// instead of blocking it (a blocked open of the ledger would hold repair's
// exclusive lock forever).
func TestSideFiles_FIFOFailsFast(t *testing.T) {
	open := func(p string) error {
		s, err := Open(t.Context(), p, Options{OpenPatience: time.Second})
		if err == nil {
			s.Close()
		}
		return err
	}
	verify := func(p string) error { _, err := Verify(t.Context(), p); return err }
	cases := []struct {
		name    string
		side    string
		call    func(path string) error
		healthy bool // the store is not damaged
	}{
		{"WAL on open", "-wal", open, true},
		{"shared memory on verify", "-shm", verify, true},
		{"repair ledger", ".repair-attempts.json", func(p string) error {
			_, err := Repair(t.Context(), p, RepairOptions{Logger: testLogger(new(bytes.Buffer))})
			return err
		}, false},
		{"repair lock", ".repair.lock", func(p string) error {
			_, err := Repair(t.Context(), p, RepairOptions{Logger: testLogger(new(bytes.Buffer)), LockWait: time.Second})
			return err
		}, false},
		{"migration lock on open", ".migrate.lock", open, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var path string
			if c.healthy {
				path = filledStore(t)
			} else {
				path = unrepairableStore(t)
			}
			os.Remove(path + c.side) // a lock file left by the store's last open
			if err := syscall.Mkfifo(path+c.side, 0o600); err != nil {
				t.Fatal(err)
			}
			err := within(t, 20*time.Second, func() error { return c.call(path) })
			var se *SideFileError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidInput) || se.Path != path+c.side {
				t.Fatalf("err = %v, want a SideFileError for %s", err, path+c.side)
			}
			if !strings.Contains(err.Error(), "named pipe") {
				t.Errorf("error %q does not say what stands there", err)
			}
		})
	}
}
