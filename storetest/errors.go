package storetest

import (
	"errors"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"
)

// Errors speak the domain: a sentinel for errors.Is, the operation and the
// session in the text, and never an engine's own wording ("sql: no rows",
// "pgx", SQLSTATE codes).
func testErrors_SpeakTheDomain(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s1")
	tests := []struct {
		name string
		call func() error
		want error
		text string
	}{
		{"MissingSession", func() error { _, err := s.Session(ctx, "missing"); return err },
			ErrNotFound, `get session "missing": not found`},
		{"AppendToMissing", func() error {
			_, err := s.AppendMessage(ctx, "missing", NewMessage{Role: RoleUser, Content: "hi"})
			return err
		}, ErrNotFound, ""},
		{"MissingMeta", func() error { _, err := s.Meta(ctx, "no-such-key"); return err }, ErrNotFound, ""},
		{"MissingMessage", func() error { _, err := s.Message(ctx, 1<<40); return err }, ErrNotFound, ""},
		{"DuplicateSession", func() error { _, err := s.CreateSession(ctx, NewSession{ID: "s1", Source: "test"}); return err },
			ErrExists, ""},
		{"BadRole", func() error { _, err := s.AppendMessage(ctx, "s1", NewMessage{Role: "robot"}); return err },
			ErrInvalidInput, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Op == "" {
				t.Errorf("err = %#v, want an *Error naming the operation", err)
			}
			msg := err.Error()
			for _, driverText := range []string{"sql:", "no rows", "pgx", "SQLSTATE", "sqlite3:"} {
				if strings.Contains(msg, driverText) {
					t.Errorf("err = %q carries the driver's wording %q", msg, driverText)
				}
			}
			if tt.text != "" && msg != tt.text {
				t.Errorf("err = %q, want %q", msg, tt.text)
			}
		})
	}
}
