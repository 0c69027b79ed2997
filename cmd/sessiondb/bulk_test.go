package main

import (
	"crypto/sha256"
	"os"
	"strings"
	"testing"
	"time"
)

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return [32]byte{} // no WAL: checkpointed and removed at close
	}
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestBulkCommand: a dry run lists what would go and leaves the file as it
// was; the run then does exactly that.
func TestBulkCommand(t *testing.T) {
	path := searchDB(t) // s1 with messages, s2 with one
	for _, args := range [][]string{
		{"session", "new", "--id", "ghost", "--source", "gateway"},
		{"session", "new", "--id", "pinned-ghost", "--source", "gateway"},
	} {
		if code, _, stderr := cli(t, path, args...); code != exitOK {
			t.Fatalf("%v: %s", args, stderr)
		}
	}
	before, wal := fileSum(t, path), fileSum(t, path+"-wal")
	code, out, stderr := cli(t, path, "bulk", "delete", "--source", "gateway", "--empty", "--dry-run")
	if code != exitOK || !strings.Contains(out, "would delete ghost\n") || !strings.Contains(out, "would delete pinned-ghost\n") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, stderr)
	}
	if fileSum(t, path) != before || fileSum(t, path+"-wal") != wal {
		t.Errorf("the dry run changed the database file or its WAL")
	}
	code, out, stderr = cli(t, path, "bulk", "delete", "--ids", "ghost")
	if code != exitOK || !strings.Contains(out, "deleted ghost\n") || !strings.Contains(out, "deleted 1 sessions") {
		t.Fatalf("delete: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, _ := cli(t, path, "session", "show", "ghost"); code == exitOK {
		t.Errorf("ghost still there")
	}
	if code, _, _ := cli(t, path, "bulk", "delete"); code == exitOK {
		t.Errorf("bulk delete without a filter succeeded")
	}
	if code, _, _ := cli(t, path, "bulk", "explode"); code != exitUsage {
		t.Errorf("unknown bulk operation: exit %d, want usage", code)
	}
}

// TestBulkPruneSparesLiveSessions: `bulk prune` takes ended sessions only;
// --include-live asks for idle live ones too; the session filters narrow
// what is taken (here by model, on a dry run).
func TestBulkPruneSparesLiveSessions(t *testing.T) {
	path := searchDB(t) // s1 and s2: live
	cli(t, path, "session", "new", "--id", "over", "--source", "cli")
	if code, _, stderr := cli(t, path, "session", "end", "--reason", "done", "over"); code != exitOK {
		t.Fatalf("end: %s", stderr)
	}
	code, out, stderr := cli(t, path, "bulk", "prune", "--older-than", "0s", "--dry-run")
	if code == exitOK {
		t.Fatalf("an age of 0s was accepted:\n%s", out)
	}
	time.Sleep(5 * time.Millisecond)
	code, out, stderr = cli(t, path, "bulk", "prune", "--older-than", "1ms", "--dry-run")
	if code != exitOK || !strings.Contains(out, "would delete over\n") || strings.Contains(out, "would delete s1") {
		t.Fatalf("prune without --include-live: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = cli(t, path, "bulk", "prune", "--older-than", "1ms", "--include-live", "--dry-run")
	if code != exitOK || !strings.Contains(out, "would delete s1\n") || !strings.Contains(out, "would delete over\n") {
		t.Fatalf("prune --include-live: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = cli(t, path, "bulk", "prune", "--older-than", "1ms", "--include-live", "--model", "no-such-model", "--dry-run")
	if code != exitOK || !strings.Contains(out, "would delete 0 sessions") {
		t.Fatalf("prune --model no-such-model: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, _ := cli(t, path, "bulk", "delete", "--include-live", "--source", "cli"); code != exitUsage {
		t.Errorf("bulk delete --include-live: exit %d, want usage", code)
	}
}

// TestBulkAutoArchive: the idle sweep needs its idle time, lists on a dry
// run, and archives nothing fresh.
func TestBulkAutoArchive(t *testing.T) {
	path := searchDB(t)
	if code, _, _ := cli(t, path, "bulk", "auto-archive"); code != exitUsage {
		t.Errorf("auto-archive without --older-than: exit %d, want usage", code)
	}
	code, out, stderr := cli(t, path, "--json", "bulk", "auto-archive", "--older-than", "30d", "--dry-run")
	if code != exitOK || !strings.Contains(out, `"dry_run": true`) || !strings.Contains(out, `"matched": 0`) {
		t.Errorf("dry run over fresh sessions: exit %d\n%s%s", code, out, stderr)
	}
}
