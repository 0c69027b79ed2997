//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// export -o writes a temporary file and renames it into place: the rename
// would replace a symlink, FIFO or device node, so each is refused (exit
// 2) and left as it was.
func TestExport_RefusesToReplaceANonRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	if code, _, errOut := runCLI(t, path, "init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	target := filepath.Join(dir, "precious")
	os.WriteFile(target, []byte("keep"), 0o600)
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink(target, link)
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(dir, "null.jsonl")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o600, 1<<8|3); err != nil { // /dev/null's 1:3
		dev = "" // needs root; the symlink and FIFO cases still run
	}
	for _, c := range []struct{ out, what string }{
		{link, "symbolic link"}, {fifo, "named pipe"}, {dev, "device"},
	} {
		if c.out == "" {
			continue
		}
		before, _ := os.Lstat(c.out)
		done := make(chan struct{})
		var code int
		var errOut string
		go func() { code, _, errOut = runCLI(t, path, "export", "-o", c.out); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("export -o %s still blocked after 20s", c.out)
		}
		if code != exitUsage || !strings.Contains(errOut, c.what) || !strings.Contains(errOut, c.out) {
			t.Errorf("export -o %s: exit %d, %q; want exit 2 naming %s", c.out, code, errOut, c.what)
		}
		after, err := os.Lstat(c.out)
		if err != nil || !os.SameFile(before, after) || after.Mode() != before.Mode() {
			t.Errorf("%s was replaced: %v", c.out, err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Errorf("the symlink's target changed: %q", got)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.jsonl.*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	// A regular file is still replaced.
	regular := filepath.Join(dir, "out.jsonl")
	os.WriteFile(regular, []byte("old"), 0o600)
	if code, _, errOut := runCLI(t, path, "export", "-o", regular); code != 0 {
		t.Fatalf("export -o a regular file: %s", errOut)
	}
	if _, err := os.Stat(regular); errors.Is(err, os.ErrNotExist) {
		t.Fatal("export did not write its file")
	}
}
