package db

import (
	"context"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db/gen"
)

func TestAppendMessages_Atomic(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	// A trigger that fails the insert of one row stands for any database
	// error in the middle of a batch.
	err := s.write(ctx, "test setup", "", time.Second, func(ctx context.Context, tx gen.DBTX) error {
		_, err := tx.ExecContext(ctx, `CREATE TEMP TRIGGER boom BEFORE INSERT ON messages
			WHEN new.content = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.AppendMessages(ctx, "s1", []NewMessage{
		{Role: RoleUser, Content: "one"}, {Role: RoleAssistant, Content: "boom"}, {Role: RoleUser, Content: "three"},
	})
	if err == nil {
		t.Fatal("AppendMessages with a failing row succeeded")
	}
	msgs, _ := s.Messages(ctx, "s1", MessageQuery{})
	sess, _ := s.Session(ctx, "s1")
	if len(msgs) != 0 || sess.MessageCount != 0 {
		t.Errorf("after a failed batch: %d rows, MessageCount %d; want none", len(msgs), sess.MessageCount)
	}
}
