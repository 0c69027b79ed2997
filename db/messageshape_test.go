package db

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/storetest"

	"github.com/google/go-cmp/cmp"
)

// idList is ids as a SQL list.
func idList(ids ...int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

// shapeRow is what a migration must keep of a message.
type shapeRow struct {
	Session, Content, PlatformID, Metadata string
}

func shapeRows(t *testing.T, s *Store, sessions ...string) []shapeRow {
	t.Helper()
	var out []shapeRow
	for _, id := range sessions {
		ms, err := s.Messages(t.Context(), id, MessageQuery{IncludeRewound: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			out = append(out, shapeRow{m.SessionID, m.Content, m.PlatformMessageID, m.Metadata})
		}
	}
	return out
}

// A file from before the message shape (version 8) whose sessions repeat
// a platform message id — Hermes imports copied them as the source had
// them — migrates with its data intact: the first row keeps the id, each
// later one keeps it in its metadata, and ids in other sessions stay.
func TestOpen_MigratesDuplicatePlatformIDs(t *testing.T) {
	path := t.TempDir() + "/state.db"
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newTestSession(t, s, "a")
	newTestSession(t, s, "b")
	a := storetest.AppendTexts(t, s.Store, "a", "first", "again", "other", "third <&>", "none")
	b := storetest.AppendTexts(t, s.Store, "b", "elsewhere")
	s.Close()
	migrateDownTo(t, path, 8)
	damage(t, path,
		"UPDATE messages SET platform_message_id = 'tg-1' WHERE id IN ("+idList(a[0], a[1], a[3], b[0])+")",
		"UPDATE messages SET platform_message_id = 'tg-<2>' WHERE id = "+idList(a[2]),
		"UPDATE messages SET reasoning_details = '{\"k\": 1}' WHERE id = "+idList(a[1]))

	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatalf("open a version-8 file with duplicate platform ids: %v", err)
	}
	defer s.Close()
	want := []shapeRow{
		{"a", "first", "tg-1", ""},
		{"a", "again", "", `{"duplicate_platform_message_id":"tg-1"}`},
		{"a", "other", "tg-<2>", ""},
		{"a", "third <&>", "", `{"duplicate_platform_message_id":"tg-1"}`},
		{"a", "none", "", ""},
		{"b", "elsewhere", "tg-1", ""},
	}
	if diff := cmp.Diff(want, shapeRows(t, s, "a", "b")); diff != "" {
		t.Errorf("after the migration (-want +got):\n%s", diff)
	}
	if m, _ := s.Message(t.Context(), a[1]); m.ReasoningDetails != `{"k": 1}` {
		t.Errorf("reasoning details %q did not survive", m.ReasoningDetails)
	}
	// From now on the first row holds the id: a re-delivery of it is
	// answered with its id.
	if id, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: "first", PlatformMessageID: "tg-1"}); err != nil || id != a[0] {
		t.Errorf("re-delivery after the migration = %d, %v; want %d", id, err, a[0])
	}
	if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
		t.Errorf("Verify after the migration: %+v, %v", r, err)
	}
	// And back: version 8 gets its ids where they were.
	s.Close()
	migrateDownTo(t, path, 8)
	d, err := openDB(path, kindRepair, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var n int
	if err := d.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM messages WHERE platform_message_id = 'tg-1'").Scan(&n); err != nil || n != 4 {
		t.Errorf("after the down migration %d rows hold tg-1 (%v), want 4", n, err)
	}
}
