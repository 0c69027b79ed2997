//go:build unix

package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// CreateExclusive never follows a symlink planted at the path, nor
// replaces an existing file, and makes what it creates 0600.
func TestCreateExclusive(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := CreateExclusive(link); err == nil {
		f.Close()
		t.Fatal("CreateExclusive followed a dangling symlink")
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the symlink's target was created: %v", err)
	}
	p := filepath.Join(dir, "new")
	f, err := CreateExclusive(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := CreateExclusive(p); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second CreateExclusive = %v, want ErrExist", err)
	}
}

// LinkCount sees a second name; a file of this user is not foreign.
func TestLinkCountAndOwner(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "db")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if n := LinkCount(p); n != 1 {
		t.Errorf("LinkCount = %d, want 1", n)
	}
	if err := os.Link(p, filepath.Join(dir, "other")); err != nil {
		t.Fatal(err)
	}
	if n := LinkCount(p); n != 2 {
		t.Errorf("LinkCount after a hard link = %d, want 2", n)
	}
	if LinkCount(filepath.Join(dir, "absent")) != 0 {
		t.Error("an absent file has links")
	}
	if uid, foreign := ForeignOwner(p); foreign {
		t.Errorf("this user's own file is foreign (owner %d)", uid)
	}
	if o, ok := FileOwner(p); !ok || o.BelongsToAnotherUser() {
		t.Errorf("FileOwner = %+v, %v: this user's own file belongs to another", o, ok)
	}
}
