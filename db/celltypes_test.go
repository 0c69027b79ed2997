package db

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBadCells: another program writes a value of the wrong type
// into an INTEGER column of the store (the tables are not STRICT, so
// SQLite keeps it). What each gets: a read that meets the row fails with
// ErrCorrupt naming verify and repair, never raw driver text; Verify says
// corrupt and names the column; Repair rewrites exactly those cells (NULL
// where allowed, else SQLite's CAST) and the store reads again, every
// other row as it was.
func TestBadCells(t *testing.T) {
	tests := []struct {
		name   string
		write  string // the foreign write
		read   func(s *Store) error
		detail string // in Verify's details
		want   func(t *testing.T, s *Store)
	}{
		{"TextTimestampOfASession", `UPDATE sessions SET started_at = 'yesterday' WHERE id = 'b'`,
			func(s *Store) error { _, err := s.ListSessions(t.Context(), SessionFilter{}); return err },
			"bad cells: sessions.started_at holds text where an integer belongs, in 1 row(s)",
			func(t *testing.T, s *Store) {
				got, err := s.Session(t.Context(), "b")
				if err != nil || got.StartedAt.Unix() != 0 {
					t.Errorf("session b after repair: %v, %v; want started at the epoch (CAST of text is 0)", got.StartedAt, err)
				}
			}},
		// (A number written as text is stored as a number: INTEGER affinity.)
		{"TextAndRealTimestampsOfMessages", `UPDATE messages SET created_at = CASE WHEN id = 5 THEN 'soon' ELSE 1733000000000.5 END WHERE id IN (5, 6)`,
			func(s *Store) error { _, err := s.Messages(t.Context(), "a", MessageQuery{}); return err },
			"bad cells: messages.created_at holds text, real where an integer belongs, in 2 row(s) (first rowid 5)",
			func(t *testing.T, s *Store) {
				m, err := s.Message(t.Context(), 6)
				if err != nil || m.CreatedAt.UnixMilli() != 1733000000000 {
					t.Errorf("message 6 after repair: %v, %v; want the real's integer part", m.CreatedAt, err)
				}
			}},
		{"JSONThatDoesNotParse", `UPDATE messages SET tool_calls_json = '[{"id":' WHERE id = 7`,
			func(s *Store) error { _, err := s.Message(t.Context(), 7); return err },
			"bad cells: messages.tool_calls_json holds JSON that does not parse, in 1 row(s) (first rowid 7)",
			func(t *testing.T, s *Store) {
				if m, err := s.Message(t.Context(), 7); err != nil || m.ToolCalls != nil {
					t.Errorf("message 7 after repair: tool calls %v, %v; want none (the backup keeps what it held)", m.ToolCalls, err)
				}
			}},
		{"BlobInANullableColumn", `UPDATE sessions SET last_message_at = x'00ff' WHERE id = 'c'`,
			func(s *Store) error { _, err := s.Session(t.Context(), "c"); return err },
			"sessions.last_message_at holds blob",
			func(t *testing.T, s *Store) {
				if _, err := s.Session(t.Context(), "c"); err != nil {
					t.Errorf("session c after repair: %v", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filledStore(t)
			before := exportOf(t, path)
			damage(t, path, tt.write)

			s, err := Open(t.Context(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			err = tt.read(s)
			s.Close()
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "another program wrote") {
				t.Errorf("a read meeting the cell: %v; want ErrCorrupt saying another program wrote it", err)
			}

			v, err := Verify(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			if v.Health != HealthCorrupt || !strings.Contains(strings.Join(v.Details, "\n"), tt.detail) {
				t.Errorf("Verify = %s %q; want corrupt with %q", v.Health, v.Details, tt.detail)
			}

			r, err := Repair(t.Context(), path, RepairOptions{Logger: testLogger(new(bytes.Buffer))})
			if err != nil {
				t.Fatal(err)
			}
			if r.Before != HealthCorrupt || r.After != HealthVerified || r.Strategy != "retype-cells" {
				t.Errorf("Repair = %+v; want corrupt → verified by retype-cells", r)
			}
			s, err = Open(t.Context(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := tt.read(s); err != nil {
				t.Errorf("the read after repair: %v", err)
			}
			tt.want(t, s)
			s.Close()
			// Every session and message the write did not touch is as it
			// was: only the touched rows' records differ.
			after := exportOf(t, path)
			if gone := missingFrom(after, before); len(gone) > 2 {
				t.Errorf("repair changed more than the mistyped rows; records gone:\n%s", strings.Join(gone, "\n"))
			}
			if diff := cmp.Diff(len(before), len(after)); diff != "" {
				t.Errorf("records before and after (-before +after): %s", diff)
			}
		})
	}
}

// missingFrom lists the lines of want that got does not hold.
func missingFrom(got, want []string) []string {
	have := map[string]bool{}
	for _, l := range got {
		have[l] = true
	}
	var gone []string
	for _, l := range want {
		if !have[l] {
			gone = append(gone, l)
		}
	}
	return gone
}

// exportOf is the store's export, one line a record.
func exportOf(t *testing.T, path string) []string {
	t.Helper()
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b bytes.Buffer
	if _, err := s.Export(t.Context(), &b, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return strings.Split(b.String(), "\n")
}
