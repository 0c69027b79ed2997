package db

import (
	"strings"
	"testing"

	"github.com/pressly/goose/v3"
)

// Version 17 lets a message be a note (RoleNote) by widening the messages
// table's role check in place: the rows stay as they are, schema_version
// moves on, the file verifies, and a note appends. Its Down step refuses
// while a note is stored, and gives back exactly version 16's statement
// once none is.
func TestMigrate_Version17NoteRole(t *testing.T) {
	path := filledStore(t)
	migrateDownTo(t, path, 16)
	old := tableSQL(t, path, "messages")
	if strings.Contains(old, "'note'") {
		t.Fatalf("messages at version 16 already takes notes: %s", old)
	}
	before := schemaCookie(t, path)

	migrateUpTo(t, path, 17)
	if stmt := tableSQL(t, path, "messages"); !strings.Contains(stmt, "OR role = 'tool' OR role = 'note')") {
		t.Errorf("messages after version 17 takes no note: %s", stmt)
	}
	if after := schemaCookie(t, path); after != before+1 {
		t.Errorf("schema_version %d -> %d, want one more", before, after)
	}
	if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
		t.Fatalf("Verify after version 17 = %+v, %v", r, err)
	}
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleNote, Content: "a note"}); err != nil {
		t.Fatalf("append a note: %v", err)
	}
	s.Close()

	var downErr error
	withMigrations(t, path, func(p *goose.Provider) error {
		_, downErr = p.DownTo(t.Context(), 16)
		return nil
	})
	if downErr == nil || !strings.Contains(downErr.Error(), "1 messages are notes") {
		t.Errorf("Down with a note stored = %v, want it refused", downErr)
	}
	if stmt := tableSQL(t, path, "messages"); !strings.Contains(stmt, "'note'") {
		t.Errorf("a refused Down changed the statement: %s", stmt)
	}
	damage(t, path, "DELETE FROM messages WHERE role = 'note'")
	migrateDownTo(t, path, 16)
	if got := tableSQL(t, path, "messages"); got != old {
		t.Errorf("messages after Down:\n%s\nwant\n%s", got, old)
	}
}
