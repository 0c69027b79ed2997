package db

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiondb/sessiondb/db/gen"
)

func TestOpen_FilesArePrivate(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "s1") // a write, so -wal and -shm exist
	for _, p := range []string{s.Path(), s.Path() + "-wal", s.Path() + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("stat %s: %v", p, err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s mode = %v, want 0600", filepath.Base(p), got)
		}
	}
}

// An existing file keeps its mode (issue 38: Open used to tighten a 0644
// file to 0600; the mode is its owner's choice). TestOpen_NeverChangesAMode
// covers the other modes and the side files.
func TestOpen_KeepsAnExistingFilesMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, _ := os.Stat(path)
	if got := fi.Mode().Perm(); got != 0o644 {
		t.Errorf("mode after reopen = %v, want 0644 kept", got)
	}
}

func TestOpen_WriterPragmas(t *testing.T) {
	s := openTestStore(t, Options{})
	want := map[string]string{
		"journal_mode":       "wal",
		"synchronous":        "2", // FULL
		"foreign_keys":       "1",
		"busy_timeout":       "5000",
		"journal_size_limit": "67108864",
	}
	if runtime.GOOS == "darwin" {
		want["fullfsync"] = "1"
		want["checkpoint_fullfsync"] = "1"
	}
	got := map[string]string{}
	err := s.w.read(t.Context(), func(q gen.DBTX) error {
		for name := range want {
			var v string
			if err := q.QueryRowContext(t.Context(), "PRAGMA "+name).Scan(&v); err != nil {
				return err
			}
			got[name] = strings.ToLower(v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("writer pragmas (-want +got):\n%s", diff)
	}
	if s.readers == nil {
		t.Error("WAL is confirmed but the read pool is off")
	}
}

func TestConnPragmas(t *testing.T) {
	tests := []struct {
		goos string
		kind connKind
		want []string
	}{
		{"linux", kindWriter, []string{"busy_timeout(5000)", "synchronous(FULL)", "foreign_keys(1)", "journal_size_limit(67108864)"}},
		{"darwin", kindWriter, []string{"busy_timeout(5000)", "synchronous(FULL)", "foreign_keys(1)", "journal_size_limit(67108864)", "fullfsync(1)", "checkpoint_fullfsync(1)"}},
		{"darwin", kindRepair, []string{"busy_timeout(5000)", "writable_schema(1)", "synchronous(FULL)", "foreign_keys(1)", "journal_size_limit(67108864)", "fullfsync(1)", "checkpoint_fullfsync(1)"}},
		{"windows", kindRepair, []string{"busy_timeout(5000)", "writable_schema(1)", "synchronous(FULL)", "foreign_keys(1)", "journal_size_limit(67108864)"}},
		{"linux", kindReader, []string{"busy_timeout(5000)", "cache_size(-16384)", "query_only(1)"}},
		{"darwin", kindProbe, []string{"busy_timeout(1000)", "query_only(1)"}},
		{"linux", kindForeign, []string{"busy_timeout(20000)", "query_only(1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.goos+"/"+tt.kind.String(), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, connPragmas(tt.goos, tt.kind)); diff != "" {
				t.Errorf("pragmas (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDSN_EscapesAnyPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%chars&x=1")
	s, err := Open(t.Context(), filepath.Join(dir, "state.db"), Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	newTestSession(t, s, "s1")
	if _, err := os.Stat(filepath.Join(dir, "state.db")); err != nil {
		t.Errorf("database not at the escaped path: %v", err)
	}
	d := dsn("/x/state.db", kindWriter, "")
	if i, j := strings.Index(d, "busy_timeout"), strings.Index(d, "synchronous"); i < 0 || i > j {
		t.Errorf("busy_timeout must be the first pragma: %s", d)
	}
	if !strings.Contains(d, "_txlock=immediate") {
		t.Errorf("writer DSN lacks _txlock=immediate: %s", d)
	}
	if strings.Contains(d, "journal_mode") {
		t.Errorf("journal_mode belongs to the migration lock, not the DSN: %s", d)
	}
	// A foreign source is read live: read-only, never immutable (that
	// would ignore its WAL).
	if f := dsn("/x/state.db", kindForeign, ""); !strings.Contains(f, "mode=ro") || strings.Contains(f, "immutable") {
		t.Errorf("foreign source DSN must be mode=ro and not immutable: %s", f)
	}
}

func TestOpen_BadPaths(t *testing.T) {
	dir := t.TempDir()
	isDir := filepath.Join(dir, "isdir.db")
	os.Mkdir(isDir, 0o700)
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, []byte(strings.Repeat("this is not sqlite ", 100)), 0o600)
	target := filepath.Join(dir, "target.db")
	os.WriteFile(target, nil, 0o600)
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		path     string
		want     error
		mentions []string
	}{
		{"EmptyPath", "", ErrInvalidInput, nil},
		{"DirectoryAtPath", isDir, ErrNotAStore, []string{isDir, "a directory"}},
		{"SymlinkAtPath", link, ErrInvalidInput, []string{link, "symbolic link"}},
		// Not "run repair": the file may not be ours (issue 38).
		{"GarbageFile", garbage, ErrNotAStore, []string{garbage, "not a SQLite file", "nothing was changed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, tt.path)
			start := time.Now()
			s, err := Open(t.Context(), tt.path, Options{OpenPatience: 20 * time.Second})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Open error = %v, want %v", err, tt.want)
			}
			if errors.Is(err, ErrLocked) {
				t.Errorf("a non-lock error sat in the patience loop: %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v: non-lock errors must fail at once", d)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if after := snapshot(t, tt.path); after != before {
				t.Errorf("the refused path was changed: before %q, after %q", before, after)
			}
		})
	}
}

// snapshot describes what is at path, to prove a refused open left it alone.
func snapshot(t *testing.T, path string) string {
	if path == "" {
		return ""
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	return fi.Mode().String() + string(b)
}

func TestOpen_ReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions; tests/readonly_unix_test.go covers this as an unprivileged process")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(dir, 0o500)
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	_, err := Open(t.Context(), filepath.Join(dir, "state.db"), Options{})
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "chmod") {
		t.Errorf("Open in a read-only directory = %v, want ErrReadOnly naming the fix", err)
	}
}

func TestSchemaFileIsCurrent(t *testing.T) {
	want, err := SchemaSQL(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../schema/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("schema/schema.sql is stale; run `go generate ./...` (-want +got):\n%s", diff)
	}
}

func TestClosedStore(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "s1")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	ctx := t.Context()
	calls := map[string]func() error{
		"CreateSession": func() error { _, err := s.CreateSession(ctx, NewSession{ID: "x"}); return err },
		"EnsureSession": func() error { _, _, err := s.EnsureSession(ctx, NewSession{ID: "x"}); return err },
		"Session":       func() error { _, err := s.Session(ctx, "s1"); return err },
		"EndSession":    func() error { _, err := s.EndSession(ctx, "s1", "done"); return err },
		"ListSessions":  func() error { _, err := s.ListSessions(ctx, SessionFilter{}); return err },
		"AppendMessage": func() error {
			_, err := s.AppendMessage(ctx, "s1", NewMessage{Role: RoleUser, Content: "x"})
			return err
		},
		"AppendMessages": func() error {
			_, err := s.AppendMessages(ctx, "s1", []NewMessage{{Role: RoleUser}})
			return err
		},
		"Messages": func() error { _, err := s.Messages(ctx, "s1", MessageQuery{}); return err },
		"SetMeta":  func() error { return s.SetMeta(ctx, "k", "v") },
		"Meta":     func() error { _, err := s.Meta(ctx, "k"); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func TestOpen_CancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		in   Options
		ok   bool
	}{
		{"ZeroIsDefaults", Options{}, true},
		{"TranscriptFollowsLongWritePatience", Options{WritePatience: 2 * time.Minute}, true},
		{"TranscriptNotLargerThanWrite", Options{WritePatience: time.Second, TranscriptPatience: time.Second}, false},
		{"NegativePatience", Options{OpenPatience: -1}, false},
		{"NegativePool", Options{ReadPoolSize: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.withDefaults()
			if (err == nil) != tt.ok {
				t.Fatalf("withDefaults() error = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidInput) {
				t.Errorf("error %v is not ErrInvalidInput", err)
			}
			if tt.ok && got.TranscriptPatience <= got.WritePatience {
				t.Errorf("transcript patience %v not above write patience %v", got.TranscriptPatience, got.WritePatience)
			}
		})
	}
	d, _ := Options{}.withDefaults()
	if d.WritePatience != 20*time.Second || d.TranscriptPatience != 60*time.Second || d.OpenPatience != 20*time.Second || d.ReadPoolSize != 8 {
		t.Errorf("defaults = %+v", d)
	}
}

// The repair connection carries the writer's durability barriers and runs
// VACUUM (autocommit) through them: a repair that rewrites the file
// without synchronous=FULL can lose its pages to a power cut.
func TestRepairConnectionCarriesTheBarriers(t *testing.T) {
	path := filledStore(t)
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want := map[string]int{"synchronous": 2, "foreign_keys": 1}
	if runtime.GOOS == "darwin" {
		want["fullfsync"], want["checkpoint_fullfsync"] = 1, 1
	}
	for name, v := range want {
		var got int
		if err := d.QueryRow("PRAGMA " + name).Scan(&got); err != nil || got != v {
			t.Errorf("repair connection: %s = %d (%v), want %d", name, got, err, v)
		}
	}
	if _, err := d.Exec("VACUUM"); err != nil {
		t.Errorf("VACUUM through the repair connection: %v", err)
	}
}
