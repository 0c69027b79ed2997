package db

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/internal/needs"
	"github.com/sessiondb/sessiondb/storetest"
)

// mountTmpfs mounts a fresh tmpfs of size (mount's syntax, e.g. "2m") on a
// temporary directory and unmounts it when the test ends. Mounting needs
// root: elsewhere the test skips, except under CI=true, where it fails.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if needs.InCI() {
			t.Fatal("this test mounts a tmpfs and must run as root in CI")
		}
		t.Skip("mounting a tmpfs needs root: run as root (sudo go test) to exercise real filesystem limits")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// remount changes a mount's options (e.g. "ro", "rw").
func remount(t *testing.T, dir, opt string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+opt, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", dir, opt, err, out)
	}
}

// fillDisk writes a file in dir until the filesystem refuses more, and
// returns a function that removes it.
func fillDisk(t *testing.T, dir string) (free func()) {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			break
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
}

// A store on a read-only mount opens for reading: every read works, a
// write says read-only, Verify calls the healthy file verified. A plain
// Open refuses with ErrReadOnly and says how to read it.
func TestReadOnlyMount(t *testing.T) {
	dir := mountTmpfs(t, "16m")
	path := filepath.Join(dir, "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "s1")
	for _, c := range []string{"the first turn", "the second turn"} {
		if _, err := s.AppendMessage(t.Context(), "s1", NewMessage{Role: RoleUser, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	remount(t, dir, "ro")
	defer remount(t, dir, "rw") // let the cleanup unmount

	_, err = Open(t.Context(), path, Options{})
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "Options.ReadOnly") {
		t.Fatalf("writable Open on a read-only mount = %v, want ErrReadOnly naming Options.ReadOnly", err)
	}
	ro, err := Open(t.Context(), path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open on a read-only mount: %v", err)
	}
	defer ro.Close()
	msgs, err := ro.Messages(t.Context(), "s1", MessageQuery{})
	if err != nil || len(msgs) != 2 {
		t.Fatalf("Messages = %d, %v; want 2", len(msgs), err)
	}
	if hits, err := ro.Search(t.Context(), "second", SearchOptions{}); err != nil || len(hits) != 1 {
		t.Errorf("Search = %v, %v; want one hit", hits, err)
	}
	if conv, err := ro.Conversation(t.Context(), "s1", ConversationOptions{Lineage: true}); err != nil || len(conv) != 2 {
		t.Errorf("Conversation = %d, %v; want 2", len(conv), err)
	}
	var export strings.Builder
	if res, err := ro.Export(t.Context(), &export, ExportOptions{}); err != nil || res.Messages != 2 {
		t.Errorf("Export = %+v, %v", res, err)
	}
	if _, err := ro.AppendMessage(t.Context(), "s1", NewMessage{Role: RoleUser, Content: "x"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("append on a read-only store = %v, want ErrReadOnly", err)
	}
	if _, err := ro.Vacuum(t.Context()); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Vacuum on a read-only store = %v, want ErrReadOnly", err)
	}
	r, err := Verify(t.Context(), path)
	if err != nil || r.Health != HealthVerified {
		t.Errorf("Verify on a read-only mount = %s %v, %v; want verified", r.Health, r.Details, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // state.db and its migration lock
		t.Errorf("the read-only mount holds %v", entries)
	}
}

// On a read-only mount a WAL still holding committed writes cannot be
// replayed: the read-only open and Verify refuse it with ErrReadOnly (the
// check could not run), never show the store without those writes, and
// never call it corrupt.
func TestReadOnlyMount_UnreplayedWAL(t *testing.T) {
	dir := mountTmpfs(t, "16m")
	path := filepath.Join(dir, "state.db")
	s, err := Open(t.Context(), path, Options{CheckpointEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "s1")
	if _, err := s.AppendMessage(t.Context(), "s1", NewMessage{Role: RoleUser, Content: "in the WAL only"}); err != nil {
		t.Fatal(err)
	}
	// A crash: the files as they are while the store is open.
	saved := map[string][]byte{}
	for _, suffix := range []string{"", "-wal"} {
		if saved[suffix], err = os.ReadFile(path + suffix); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	for suffix, b := range saved {
		if err := os.WriteFile(path+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(path + "-shm")
	remount(t, dir, "ro")
	defer remount(t, dir, "rw")

	if _, err := Open(t.Context(), path, Options{ReadOnly: true}); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "-wal") {
		t.Errorf("read-only Open beside an unreplayed WAL = %v, want ErrReadOnly naming the WAL", err)
	}
	if r, err := Verify(t.Context(), path); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Verify beside an unreplayed WAL on a read-only mount = %s %v, %v; want ErrReadOnly (could not check)", r.Health, r.Details, err)
	}
}

// A disk that fills during appends gives ErrDiskFull ("disk is full"),
// never ErrClosed; nothing acknowledged is lost, and once space is freed
// the same Store writes again and the file verifies. The space freed goes
// to the append first: the background indexer, behind by up to ~50 of
// these 32 KiB messages, stands aside until a write commits (without
// that, one catch-up slice took the whole megabyte in 6 of 20 runs on a
// loaded machine).
func TestDiskFull_Append(t *testing.T) {
	dir := mountTmpfs(t, "4m")
	path := filepath.Join(dir, "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	newTestSession(t, s, "s1")
	// Room to free later: a user frees space by deleting other files.
	ballast := filepath.Join(dir, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 32<<10)
	acked := 0
	for ; acked < 1000; acked++ {
		_, err = s.AppendMessage(t.Context(), "s1", NewMessage{Role: RoleUser, Content: big})
		if err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("1000 appends of 32 KiB fit a 4 MiB tmpfs")
	}
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "disk is full") || errors.Is(err, ErrClosed) {
		t.Fatalf("append on a full disk = %v; want ErrDiskFull, not ErrClosed", err)
	}
	t.Logf("%d appends acknowledged, then: %v", acked, err)
	indexed := s.Stats().MessagesIndexed
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * indexPoll) // the indexer would have started on the backlog
	if st := s.Stats(); st.MessagesIndexed != indexed {
		t.Errorf("the indexer indexed %d messages between the full disk and the next write, want none", st.MessagesIndexed-indexed)
	}
	if msgs := storetest.WholeSession(t, s.Store, "s1"); len(msgs) < acked {
		t.Fatalf("after the disk filled: %d messages; %d were acknowledged", len(msgs), acked)
	}
	if _, err := s.AppendMessage(t.Context(), "s1", NewMessage{Role: RoleUser, Content: "after"}); err != nil {
		t.Fatalf("append after freeing space: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
		t.Errorf("Verify after the disk filled = %s %v, %v", r.Health, r.Details, err)
	}
}

// Opening (creating) a store on a disk that fills on the way — before
// the first page, during the migrations — says the disk is full, never
// that the store is closed (a failed migration's rollback reports "the
// transaction has already been committed or rolled back" too) or
// read-only. Verify of a healthy file on a full disk is verified or could
// not check, never corrupt.
func TestDiskFull_Open(t *testing.T) {
	for _, freeKiB := range []int{0, 48, 96, 160} {
		t.Run(strconv.Itoa(freeKiB)+"KiB", func(t *testing.T) {
			// Room for a fresh store's migrations and their WAL (23
			// migrations outgrew 1 MiB), then filled to freeKiB.
			const size = 4 << 20
			dir := mountTmpfs(t, "4m")
			existing := filepath.Join(dir, "existing.db")
			if freeKiB == 0 {
				s, err := Open(t.Context(), existing, Options{})
				if err != nil {
					t.Fatal(err)
				}
				newTestSession(t, s, "s1")
				s.Close()
				fillDisk(t, dir)
			} else {
				if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, size-freeKiB<<10), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Open(t.Context(), filepath.Join(dir, "new.db"), Options{})
			t.Logf("Open with %d KiB free: %v", freeKiB, err)
			if !errors.Is(err, ErrDiskFull) || errors.Is(err, ErrClosed) || errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "disk is full") {
				t.Errorf("Open with %d KiB free = %v; want ErrDiskFull only", freeKiB, err)
			}
			if freeKiB == 0 {
				if r, err := Verify(t.Context(), existing); r.Health == HealthCorrupt || (err != nil && !errors.Is(err, ErrDiskFull)) {
					t.Errorf("Verify on a full disk = %s %v, %v; want verified or ErrDiskFull", r.Health, r.Details, err)
				}
			}
		})
	}
}
