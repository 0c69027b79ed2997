package tests

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// TestBadInputs is the table of what each bad input gets. Every row runs
// against a real file and says its outcome: the typed error (or nil when
// the input is accepted as it is), and what must hold afterwards — above
// all, that nothing acknowledged was lost. A read-only directory is
// TestCLI_ReadOnlyDirectory (it needs an unprivileged user); hostile search
// queries are TestSearch_HostileQueries in db/.
func TestBadInputs(t *testing.T) {
	ctx := t.Context()
	// fresh opens a store with one session "s" holding one message.
	fresh := func(t *testing.T) (string, *db.Store) {
		path := filepath.Join(t.TempDir(), "state.db")
		s := openStore(t, path, db.Options{})
		if _, err := s.CreateSession(ctx, db.NewSession{ID: "s", Source: "test"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(ctx, "s", db.NewMessage{Role: db.RoleUser, Content: "kept"}); err != nil {
			t.Fatal(err)
		}
		return path, s
	}
	// damaged writes a database with 500 messages, closes it, and lets
	// damage change the file.
	damaged := func(t *testing.T, damage func(path string, size int64)) string {
		path, s := fresh(t)
		big := make([]db.NewMessage, 500)
		for i := range big {
			big[i] = db.NewMessage{Role: db.RoleUser, Content: strings.Repeat("payload ", 40)}
		}
		if _, err := s.AppendMessages(ctx, "s", big); err != nil {
			t.Fatal(err)
		}
		s.Close()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		damage(path, fi.Size())
		return path
	}
	openErr := func(path string) error {
		s, err := db.Open(ctx, path, db.Options{OpenPatience: 5 * time.Second})
		if err == nil {
			defer s.Close()
			_, err = s.Messages(ctx, "s", db.MessageQuery{})
		}
		return err
	}
	kept := func(t *testing.T, s *db.Store, n int) {
		t.Helper()
		ms, err := s.Messages(ctx, "s", db.MessageQuery{})
		if err != nil || len(ms) != n {
			t.Errorf("session s holds %d messages (%v), want %d", len(ms), err, n)
		}
	}
	huge := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB

	cases := []struct {
		name    string
		outcome string // what the input gets, in words
		want    error  // nil: accepted
		run     func(t *testing.T) error
	}{
		{"NUL bytes in content", "stored and returned byte-exact", nil, func(t *testing.T) error {
			_, s := fresh(t)
			if _, err := s.AppendMessage(ctx, "s", db.NewMessage{Role: db.RoleUser, Content: "a\x00b\x00"}); err != nil {
				return err
			}
			ms, _ := s.Messages(ctx, "s", db.MessageQuery{})
			if ms[1].Content != "a\x00b\x00" {
				t.Errorf("content %q", ms[1].Content)
			}
			return nil
		}},
		{"invalid UTF-8 content", "ErrInvalidInput; nothing written", db.ErrInvalidInput, func(t *testing.T) error {
			_, s := fresh(t)
			_, err := s.AppendMessage(ctx, "s", db.NewMessage{Role: db.RoleUser, Content: "bad \xff\xfe"})
			kept(t, s, 1)
			return err
		}},
		{"16 MiB content", "stored and returned whole", nil, func(t *testing.T) error {
			_, s := fresh(t)
			if _, err := s.AppendMessage(ctx, "s", db.NewMessage{Role: db.RoleAssistant, Content: huge}); err != nil {
				return err
			}
			ms, _ := s.Messages(ctx, "s", db.MessageQuery{})
			if len(ms) != 2 || ms[1].Content != huge {
				t.Errorf("the 16 MiB message did not round-trip")
			}
			return nil
		}},
		{"unknown session", "ErrNotFound; no session created", db.ErrNotFound, func(t *testing.T) error {
			_, s := fresh(t)
			_, err := s.AppendMessage(ctx, "ghost", db.NewMessage{Role: db.RoleUser, Content: "x"})
			if _, gerr := s.Session(ctx, "ghost"); !errors.Is(gerr, db.ErrNotFound) {
				t.Errorf("the append created the session: %v", gerr)
			}
			return err
		}},
		{"directory at the path", "ErrNotAStore at once, naming the path", db.ErrNotAStore, func(t *testing.T) error {
			path := filepath.Join(t.TempDir(), "state.db")
			os.Mkdir(path, 0o700)
			start := time.Now()
			err := openErr(path)
			if time.Since(start) > 2*time.Second {
				t.Errorf("took %v: it must fail at once", time.Since(start))
			}
			return err
		}},
		{"symlink at the path", "ErrInvalidInput (refused, never followed)", db.ErrInvalidInput, func(t *testing.T) error {
			dir := t.TempDir()
			target := filepath.Join(dir, "elsewhere.db")
			os.WriteFile(target, nil, 0o600)
			link := filepath.Join(dir, "state.db")
			os.Symlink(target, link)
			err := openErr(link)
			if fi, _ := os.Stat(target); fi.Size() != 0 {
				t.Errorf("the link's target was written")
			}
			return err
		}},
		{"zeroed file", "moved aside (kept as a .bak) and a fresh database made", nil, func(t *testing.T) error {
			path := damaged(t, func(path string, size int64) { os.WriteFile(path, make([]byte, size), 0o600) })
			err := openErr(path)
			if baks, _ := filepath.Glob(path + ".*.bak"); len(baks) == 0 {
				t.Errorf("the zeroed file was not kept aside")
			}
			if errors.Is(err, db.ErrNotFound) { // the fresh database has no session s
				return nil
			}
			return err
		}},
		{"garbage file", "ErrNotAStore (not ErrCorrupt: it may not be ours); the file is left untouched and Repair refuses it", db.ErrNotAStore, func(t *testing.T) error {
			path := filepath.Join(t.TempDir(), "state.db")
			garbage := bytes.Repeat([]byte("not a database "), 500)
			os.WriteFile(path, garbage, 0o600)
			err := openErr(path)
			if _, rerr := db.Repair(ctx, path, db.RepairOptions{}); !errors.Is(rerr, db.ErrNotAStore) {
				t.Errorf("repair of a garbage file = %v, want ErrNotAStore", rerr)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, garbage) {
				t.Errorf("the garbage file was changed")
			}
			if side, _ := filepath.Glob(path + "?*"); len(side) != 0 {
				t.Errorf("files left beside it: %v", side)
			}
			return err
		}},
		{"truncated file", "ErrCorrupt when read; Verify says corrupt; Repair salvages what is left", db.ErrCorrupt, func(t *testing.T) error {
			path := damaged(t, func(path string, size int64) { os.Truncate(path, size/2) })
			err := openErr(path)
			if r, _ := db.Verify(ctx, path); r.Health != db.HealthCorrupt {
				t.Errorf("verify = %s, want corrupt", r.Health)
			}
			rep, rerr := db.Repair(ctx, path, db.RepairOptions{})
			if rerr != nil || !rep.Repaired {
				t.Errorf("repair: %+v %v", rep, rerr)
			}
			return err
		}},
		{"malformed JSONL lines", "ErrInvalidInput naming each line; nothing imported", db.ErrInvalidInput, func(t *testing.T) error {
			_, s := fresh(t)
			file := `{"type":"header","format":"sessiondb-export","version":1}` + "\n{not json\n" + `{"type":"gizmo"}` + "\n"
			res, err := s.Import(ctx, strings.NewReader(file), db.ImportOptions{})
			if len(res.Errors) != 2 || res.Errors[0].Line != 2 || res.Errors[1].Line != 3 {
				t.Errorf("problems %v, want lines 2 and 3", res.Errors)
			}
			kept(t, s, 1)
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(t)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("%s: got %v; want %v (%s)", c.name, err, c.want, c.outcome)
			}
		})
	}
}
