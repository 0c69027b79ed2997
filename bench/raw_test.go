package bench

import (
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// The baseline is only a ceiling if it pays for the same durability as
// the store's writer: its connection must run with the writer's pragmas,
// and the loader's must be unable to write.
func TestRawConnections_HaveTheStoresPragmas(t *testing.T) {
	ra, path := newTestRawAppender(t)
	defer ra.close()
	for pragma, want := range map[string]string{
		"synchronous": "2", "foreign_keys": "1", "busy_timeout": "5000",
		"journal_mode": "wal", "journal_size_limit": "67108864",
	} {
		var got string
		if err := ra.c.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
			t.Errorf("writer PRAGMA %s = %q, %v; want %q", pragma, got, err, want)
		}
	}
	loader, err := openRawLoader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer loader.Close()
	if _, err := loader.ExecContext(t.Context(), "DELETE FROM sessions"); err == nil {
		t.Error("the raw loader could write")
	}
}

// The baseline is the ceiling of an append indexed at once only if it
// does index: each appended message is in both full-text indexes at its
// commit, with the mark past it, and Verify finds the file exact.
func TestRawAppender_IndexesWhatItAppends(t *testing.T) {
	ra, path := newTestRawAppender(t)
	const n = 50
	for i := range n {
		if err := ra.append(t.Context(), i); err != nil {
			t.Fatal(err)
		}
	}
	ra.close()
	loader, err := openRawLoader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer loader.Close()
	var words, trigrams, mark int
	if err := loader.QueryRowContext(t.Context(), `SELECT (SELECT COUNT(*) FROM messages_fts_docsize),
		(SELECT COUNT(*) FROM messages_fts_trigram_docsize), (SELECT indexed_through FROM fts_mark)`).Scan(&words, &trigrams, &mark); err != nil {
		t.Fatal(err)
	}
	if words != n || trigrams != n || mark != n {
		t.Errorf("after %d raw appends: %d in the word index, %d in the trigram index, mark %d; want %d each", n, words, trigrams, mark, n)
	}
	if r, err := db.Verify(t.Context(), path); err != nil || r.Health != db.HealthVerified || r.FTS != "ok" {
		t.Errorf("Verify after the raw appends = %s %q %v", r.Health, r.FTS, err)
	}
}

// newTestRawAppender opens the raw appender on a closed store made as the
// benchmarks make theirs (benchStore: its session "bench" included), and
// returns it with the file's path.
func newTestRawAppender(t *testing.T) (*rawAppender, string) {
	t.Helper()
	s := benchStore(t)
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ra, err := newRawAppender(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return ra, path
}
