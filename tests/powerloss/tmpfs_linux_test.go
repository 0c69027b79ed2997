package powerloss

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// mountTmpfs mounts a tmpfs of the given size on a fresh directory for
// the test. Without the privilege it skips, saying how to run it — except
// under CI=true, where it fails.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		msg := fmt.Sprintf("mount a tmpfs (needs root, or CAP_SYS_ADMIN; run the tests as root): %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestFaults_TmpfsFullDiskResumes fills a real tmpfs under a store on the
// operating system's VFS: appends fail with a clear error and are not
// acknowledged, the store does not halt (a full disk is not a failed
// fsync), and once space is freed the same store writes again — the
// refused keys retried exactly once — and the file verifies.
func TestFaults_TmpfsFullDiskResumes(t *testing.T) {
	ctx := t.Context()
	dir := mountTmpfs(t, "8m")
	path := filepath.Join(dir, "state.db")
	s, err := db.Open(ctx, path, db.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "p", Source: "tmpfs"}); err != nil {
		t.Fatal(err)
	}
	// Leave a little room, then fill it with appends.
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, int64(st.Bavail)*int64(st.Bsize)-512<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	acked := map[string]string{}
	var refused []string
	content := func(key string) string { return key + strings.Repeat(" "+key, 16_000/len(key)) }
	for i := 0; i < 400 && len(refused) < 5; i++ {
		key := fmt.Sprint("k", i)
		_, err := s.AppendMessage(ctx, "p", db.NewMessage{Role: db.RoleUser, Content: content(key), IdempotencyKey: key})
		switch {
		case err == nil: // room may come back between two appends (a checkpoint trimmed the WAL)
			acked[key] = content(key)
		case errors.Is(err, db.ErrDiskFull), errors.Is(err, db.ErrCommitUnknown):
			if len(refused) == 0 {
				t.Logf("after %d appends: %v", len(acked), err)
			}
			refused = append(refused, key)
		default:
			// ErrCommitUnknown until the OS VFS keeps ENOSPC through
			// SQLite's rollback (then ErrDiskFull): safe to retry by key.
			t.Fatalf("append %s on a full disk: %v, want ErrDiskFull (or ErrCommitUnknown)", key, err)
		}
	}
	if len(refused) == 0 {
		t.Fatal("the disk never filled")
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for _, key := range refused { // the same store, not reopened
		if _, err := s.AppendMessage(ctx, "p", db.NewMessage{Role: db.RoleUser, Content: content(key), IdempotencyKey: key}); err != nil {
			t.Fatalf("retry %s once space was freed: %v (a full disk must not halt the store)", key, err)
		}
		acked[key] = content(key)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if report, err := db.Verify(ctx, path); err != nil || report.Health != db.HealthVerified {
		t.Errorf("Verify = %v %v %v", report.Health, report.Details, err)
	}
	if c := checkAcked(ctx, path, acked, nil); c != (ackCheck{}) {
		t.Errorf("%d of %d acknowledged messages lost or damaged, %d doubled, %d counters wrong", c.lost, len(acked), c.dup, c.badCounters)
	}
}
