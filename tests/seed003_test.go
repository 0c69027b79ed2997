package tests

// Seed 003 in Go: write-lock patience against a real second process
// (Python's sqlite3, the peer the seeds were written against).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

func TestSeed003_AppendRidesOutAThreeSecondHold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	if _, err := s.CreateSession(t.Context(), db.NewSession{ID: "s1", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	_, wait := holdWriteLock(t, path, 3*time.Second)
	start := time.Now()
	id, err := s.AppendMessage(t.Context(), "s1", db.NewMessage{Role: db.RoleUser, Content: "survived the lock"})
	if err != nil {
		t.Fatalf("AppendMessage under a 3 s hold: %v", err)
	}
	waited := time.Since(start)
	if err := wait(); err != nil {
		t.Fatalf("lock holder: %v", err)
	}
	if waited < 2*time.Second {
		t.Errorf("append returned after %v: it cannot have waited for the 3 s hold", waited)
	}
	msgs, err := s.Messages(t.Context(), "s1", db.MessageQuery{})
	if err != nil || len(msgs) != 1 || msgs[0].ID != id || msgs[0].Content != "survived the lock" {
		t.Errorf("messages after the hold = %+v, %v", msgs, err)
	}
}

func TestSeed003_OpenRidesOutAThreeSecondHold(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprint("FreshFile=", fresh), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			if !fresh {
				s, err := db.Open(t.Context(), path, db.Options{})
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			// On a fresh file the holder's lock blocks the WAL switch and the
			// migrations, so Open really has to wait.
			_, wait := holdWriteLock(t, path, 3*time.Second)
			start := time.Now()
			s := openStore(t, path, db.Options{})
			waited := time.Since(start)
			if err := wait(); err != nil {
				t.Fatalf("lock holder: %v", err)
			}
			if fresh && waited < 2*time.Second {
				t.Errorf("Open of a fresh, locked file returned after %v", waited)
			}
			if _, err := s.CreateSession(t.Context(), db.NewSession{ID: "s-open", Source: "cli"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessage(t.Context(), "s-open", db.NewMessage{Role: db.RoleUser, Content: "ok"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSeed003_ExhaustedPatienceNamesTheRealCause(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{WritePatience: 200 * time.Millisecond, TranscriptPatience: time.Second})
	pid, wait := holdWriteLock(t, path, 2*time.Second)
	err := s.SetMeta(t.Context(), "k", "v") // a routine write: short patience
	if !errors.Is(err, db.ErrLocked) {
		t.Fatalf("SetMeta = %v, want ErrLocked", err)
	}
	text := err.Error()
	for _, want := range []string{"another process", "healthy", fmt.Sprintf("pid %d (", pid), "python"} {
		if !strings.Contains(text, want) {
			t.Errorf("error %q does not mention %q", text, want)
		}
	}
	if err := wait(); err != nil {
		t.Fatalf("lock holder: %v", err)
	}
	// Once the holder is gone the same write goes through.
	if err := s.SetMeta(t.Context(), "k", "v"); err != nil {
		t.Errorf("SetMeta after the hold: %v", err)
	}
}

func TestSeed003_TranscriptPatienceOutlastsRoutinePatience(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{WritePatience: 500 * time.Millisecond, TranscriptPatience: 10 * time.Second})
	if _, err := s.CreateSession(t.Context(), db.NewSession{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	_, wait := holdWriteLock(t, path, 2*time.Second)
	if err := s.SetMeta(t.Context(), "k", "v"); !errors.Is(err, db.ErrLocked) {
		t.Errorf("routine write under a 2 s hold with 0.5 s patience = %v, want ErrLocked", err)
	}
	if _, err := s.AppendMessage(t.Context(), "s1", db.NewMessage{Role: db.RoleUser, Content: "turn"}); err != nil {
		t.Errorf("transcript write under the same hold = %v, want success", err)
	}
	wait()
}

func TestSeed003_UncontendedWriteDoesNotWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, db.Options{})
	if _, err := s.CreateSession(t.Context(), db.NewSession{ID: "s2"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := s.AppendMessage(t.Context(), "s2", db.NewMessage{Role: db.RoleUser, Content: "fast"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second { // loose: no patience-length stall
		t.Errorf("uncontended append took %v", d)
	}
	// LockWait counts a BEGIN that took over 1 ms (SQLite's busy handler
	// sleeps 1 ms first); a loaded machine can be that slow without any
	// lock, so the bound is loose: no retry, no patience-scale wait.
	if st := s.Stats(); st.LockRetries != 0 || st.LockWait > time.Second {
		t.Errorf("uncontended writes waited: %+v", st)
	}
}

func TestSeed003_NonLockOpenErrorFailsFast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := db.Open(t.Context(), path, db.Options{OpenPatience: 20 * time.Second})
	if err == nil || errors.Is(err, db.ErrLocked) {
		t.Fatalf("Open(directory) = %v, want an immediate non-lock error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Open(directory) took %v: it sat in the patience loop", d)
	}
}
