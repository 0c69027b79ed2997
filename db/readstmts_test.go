package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/db/gen"
)

// lookup returns the kept statement for query without noting it.
func (c *readStmts) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[query]
}

const idsOfSession = "SELECT id FROM messages WHERE session_id = ? ORDER BY id"

// appendToNew appends n messages to a new session id and returns their ids.
func appendToNew(t *testing.T, s *Store, id string, n int) []int64 {
	t.Helper()
	newTestSession(t, s, id)
	var ids []int64
	for i := range n {
		mid, err := s.AppendMessage(t.Context(), id, NewMessage{Role: RoleUser, Content: fmt.Sprint("m", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, mid)
	}
	return ids
}

// A text a read ran is kept after that read, and the reads after it run
// the kept statement, inside snapshots and outside them, with the same
// answers.
func TestReadStmts_KeepsWhatReadsRun(t *testing.T) {
	s := openTestStore(t, Options{})
	want := appendToNew(t, s, "a", 5)
	if s.readStmts.lookup(idsOfSession) != nil {
		t.Fatal("a text no read ran is kept")
	}
	reads := []struct {
		name string
		run  func(context.Context, func(gen.DBTX) error) error
	}{
		{"a snapshot", s.snapshotTx},
		{"a read outside a snapshot", s.readTx},
	}
	for i := range 3 {
		runs := s.readStmts.runs.Load()
		for _, r := range reads {
			var got []int64
			if err := r.run(t.Context(), func(q gen.DBTX) error {
				got = queryIDs(t, q, idsOfSession, "a")
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("round %d, %s (-want +got):\n%s", i, r.name, diff)
			}
			if s.readStmts.lookup(idsOfSession) == nil {
				t.Fatalf("round %d: after %s the text is not kept", i, r.name)
			}
		}
		// The first snapshot ran the text uncached, every read after it kept.
		if got, want := s.readStmts.runs.Load()-runs, uint64(min(i, 1)+1); got < want {
			t.Errorf("round %d: %d reads ran a kept statement, want %d", i, got, want)
		}
	}
}

// The same text run again while the rows it returned are still being read
// gets a statement of its own: the outer rows are not rebound under it.
func TestReadStmts_SameTextInsideItsOwnRows(t *testing.T) {
	s := openTestStore(t, Options{})
	a := appendToNew(t, s, "a", 4)
	b := appendToNew(t, s, "b", 3)
	for range 2 { // the first uncached, the second kept
		var outer []int64
		var inner [][]int64
		err := s.snapshotTx(t.Context(), func(q gen.DBTX) error {
			rows, err := q.QueryContext(t.Context(), idsOfSession, "a")
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return err
				}
				outer = append(outer, id)
				inner = append(inner, queryIDs(t, q, idsOfSession, "b"))
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, outer); diff != "" {
			t.Errorf("outer rows (-want +got):\n%s", diff)
		}
		for i, got := range inner {
			if diff := cmp.Diff(b, got); diff != "" {
				t.Errorf("inner query %d (-want +got):\n%s", i, diff)
			}
		}
	}
}

// With one read connection, a snapshot that runs a text for the first
// time does not wait for a second connection to prepare it: it is
// prepared after the snapshot gives its connection back.
func TestReadStmts_PoolOfOne(t *testing.T) {
	s := openTestStore(t, Options{ReadPoolSize: 1})
	want := appendToNew(t, s, "a", 3)
	for i := range 3 {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		var got []int64
		err := s.snapshotTx(ctx, func(q gen.DBTX) error {
			queryIDs(t, q, fmt.Sprintf("SELECT %d", i))
			got = queryIDs(t, q, idsOfSession, "a")
			return nil
		})
		cancel()
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("snapshot %d (-want +got):\n%s", i, diff)
		}
	}
}

// A kept statement still answers after the schema changed under it
// (SQLite prepares it again), and a text that does not prepare as one
// statement runs uncached and reports its own error.
func TestReadStmts_SchemaChangesAndBadTexts(t *testing.T) {
	s := openTestStore(t, Options{})
	want := appendToNew(t, s, "a", 3)
	read := func() []int64 {
		t.Helper()
		var got []int64
		if err := s.snapshotTx(t.Context(), func(q gen.DBTX) (err error) {
			got = queryIDs(t, q, idsOfSession, "a")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	read()
	// Hand-written: a schema change no query file holds, for this test only.
	if err := s.w.write(t.Context(), 10*time.Second, func(ctx context.Context, tx gen.DBTX) error {
		_, err := tx.ExecContext(ctx, "CREATE INDEX test_messages_role ON messages (role, session_id)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	runs := s.readStmts.runs.Load()
	if diff := cmp.Diff(want, read()); diff != "" {
		t.Errorf("after the schema changed (-want +got):\n%s", diff)
	}
	if s.readStmts.runs.Load() == runs {
		t.Error("the read after the schema change did not run the kept statement")
	}
	for range 2 {
		err := s.snapshotTx(t.Context(), func(q gen.DBTX) error {
			rows, err := q.QueryContext(t.Context(), "SELECT 1; SELECT 2")
			if err == nil {
				rows.Close()
			}
			return err
		})
		if err == nil {
			t.Error("two statements in one query ran")
		}
	}
}

// Past stmtCacheSize texts, the rest run uncached, and answer all the same.
func TestReadStmts_Bounded(t *testing.T) {
	s := openTestStore(t, Options{})
	for i := range stmtCacheSize + 20 {
		query := fmt.Sprintf("SELECT ? + %d", i)
		for range 2 {
			var got []int64
			err := s.snapshotTx(t.Context(), func(q gen.DBTX) (err error) {
				got = queryIDs(t, q, query, int64(1000))
				return nil
			})
			if err != nil || len(got) != 1 || got[0] != int64(1000+i) {
				t.Fatalf("%q = %v, %v", query, got, err)
			}
		}
	}
	s.readStmts.mu.Lock()
	kept := len(s.readStmts.stmts)
	s.readStmts.mu.Unlock()
	if kept != stmtCacheSize {
		t.Errorf("%d statements kept, want the bound %d", kept, stmtCacheSize)
	}
}

// After Close a read is ErrClosed, kept statements or not.
func TestReadStmts_AfterClose(t *testing.T) {
	s, err := Open(t.Context(), t.TempDir()+"/state.db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	appendToNew(t, s, "a", 1)
	if _, err := s.Messages(t.Context(), "a", MessageQuery{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close with kept statements: %v", err)
	}
	if _, err := s.Messages(t.Context(), "a", MessageQuery{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Messages after Close = %v, want ErrClosed", err)
	}
}

// A statement run again with new values is not compiled again
// (stablePlans): before, a bound LIMIT marked it for recompiling on every
// run, and keeping it saved nothing.
func TestReadStmts_RebindingDoesNotRecompile(t *testing.T) {
	s := openTestStore(t, Options{})
	appendToNew(t, s, "a", 3)
	conn, err := s.readers.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c := dc.(interface{ Raw() *sqlite3.Conn }).Raw()
		st, _, err := c.Prepare("SELECT id FROM messages WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?")
		if err != nil {
			return err
		}
		defer st.Close()
		for limit := range 4 {
			if err := errors.Join(st.BindText(1, "a"), st.BindInt64(2, 0), st.BindInt(3, limit+1)); err != nil {
				return err
			}
			rows := 0
			for st.Step() {
				rows++
			}
			if err := st.Reset(); err != nil {
				return err
			}
			if want := min(limit+1, 3); rows != want {
				t.Errorf("LIMIT %d: %d rows, want %d", limit+1, rows, want)
			}
		}
		if n := st.Status(sqlite3.STMTSTATUS_REPREPARE, false); n != 0 {
			t.Errorf("the statement was compiled again %d times for 4 runs", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The store's connections plan stably; a connection the host program opens
// itself through the same driver keeps SQLite's default.
func TestStablePlans_OnlyOnTheStoresConnections(t *testing.T) {
	s := openTestStore(t, Options{})
	qpsg := func(d *sql.DB) bool {
		t.Helper()
		conn, err := d.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var on bool
		if err := conn.Raw(func(dc any) (err error) {
			on, err = dc.(interface{ Raw() *sqlite3.Conn }).Raw().Config(sqlite3.DBCONFIG_ENABLE_QPSG)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return on
	}
	if !qpsg(s.readers) {
		t.Error("a read connection of the store plans by bound values")
	}
	//sessiondb:allow rawopen -- plays the host program opening its own database through the same driver
	host, err := sql.Open("sqlite3", "file:"+t.TempDir()+"/host.db")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	if qpsg(host) {
		t.Error("the host program's own connection had its planning changed")
	}
}
