package pg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store"
)

// An append's new rows go to the server in MessageInsertMany statements
// (insertbatch.go): one for up to insertManyRows rows of up to
// insertManyBytes of text, a row of its own for text over that or that
// JSON cannot carry.

// statementCounter is a pgx tracer that counts the statements a pool
// sends, by their sqlc name, plain and pipelined (pgx.Batch) alike.
type statementCounter struct {
	mu sync.Mutex
	// +checklocks:mu
	n map[string]int
}

func (c *statementCounter) count(sql string) {
	name, ok := strings.CutPrefix(sql, "-- name: ")
	if !ok {
		return
	}
	name, _, _ = strings.Cut(name, " ")
	c.mu.Lock()
	c.n[name]++
	c.mu.Unlock()
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.count(d.SQL)
	return ctx
}
func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (c *statementCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.count(d.SQL)
}
func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// take returns the counts so far and starts again from none.
func (c *statementCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// countedStore opens a store on a fresh schema whose pool counts its
// statements, with a session "s".
func countedStore(t *testing.T) (*Store, *statementCounter) {
	t.Helper()
	c := &statementCounter{n: map[string]int{}}
	s := tracedStore(t, c)
	if _, err := s.CreateSession(t.Context(), store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return s, c
}

// tracedStore opens a store on a fresh schema whose pool reports every
// statement to tracer.
func tracedStore(t *testing.T, tracer pgx.QueryTracer) *Store {
	t.Helper()
	cfg, err := ParseConfig(testDSN(t), freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := OpenPool(t.Context(), pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAppendMessages_RowsInOneStatement(t *testing.T) {
	ctx := t.Context()
	s, counter := countedStore(t)
	msgs := func(n, size int, tag string) []store.NewMessage {
		ms := make([]store.NewMessage, n)
		for i := range ms {
			ms[i] = store.NewMessage{Role: store.RoleUser, Content: fmt.Sprintf("%s %d %s", tag, i, strings.Repeat("x", size))}
		}
		return ms
	}
	nul := store.NewMessage{Role: store.RoleUser, Content: "a\x00b"}
	tests := []struct {
		name       string
		batch      []store.NewMessage
		many, each int   // MessageInsertMany and MessageInsert statements
		err        error // the append's
	}{
		{"One", msgs(1, 10, "one"), 0, 1, nil},
		{"Hundred", msgs(100, 10, "hundred"), 1, 0, nil},
		{"PastTheRowBound", msgs(2*insertManyRows+5, 10, "rows"), 3, 0, nil},
		// 1.5 MB each: two share a statement, the third would pass 4 MB.
		{"PastTheByteBound", msgs(5, insertManyBytes*3/8, "bytes"), 2, 1, nil},
		{"OverTheByteBoundAlone", msgs(2, insertManyBytes+1, "huge"), 0, 2, nil},
		{"KeyedRepeatInBatch", []store.NewMessage{
			{Role: store.RoleUser, Content: "k", IdempotencyKey: "k1"}, {Role: store.RoleUser, Content: "p"},
			{Role: store.RoleUser, Content: "q"}, {Role: store.RoleUser, Content: "k", IdempotencyKey: "k1"},
			{Role: store.RoleUser, Content: "r"}, {Role: store.RoleUser, Content: "s"}}, 2, 0, nil},
		// JSON would carry the NUL as \u0000, which the server refuses
		// with an error of its own: the row goes alone and is refused as a
		// plain insert is.
		{"NULByteAlone", append(append(msgs(3, 10, "before"), nul), msgs(3, 10, "after")...), 1, 1, store.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := s.Session(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			counter.take()
			ids, appendErr := s.AppendMessages(ctx, "s", tt.batch)
			n := counter.take()
			if !errors.Is(appendErr, tt.err) || (tt.err == nil) != (appendErr == nil) {
				t.Fatalf("AppendMessages = %v, want %v", appendErr, tt.err)
			}
			if n["MessageInsertMany"] != tt.many || n["MessageInsert"] != tt.each {
				t.Errorf("statements: %d MessageInsertMany, %d MessageInsert; want %d and %d",
					n["MessageInsertMany"], n["MessageInsert"], tt.many, tt.each)
			}
			after, err := s.Session(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			if appendErr != nil {
				if after.MessageCount != before.MessageCount {
					t.Errorf("a refused append moved the count from %d to %d", before.MessageCount, after.MessageCount)
				}
				return
			}
			got, err := s.Messages(ctx, "s", store.MessageQuery{AfterID: ids[0] - 1, Limit: len(ids)})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int64]bool{}
			for i, id := range ids {
				if seen[id] { // a repeat: the earlier row's id
					continue
				}
				seen[id] = true
				if len(got) == 0 || got[0].ID != id || got[0].Content != tt.batch[i].Content {
					t.Fatalf("message %d (id %d) is not the next row stored", i, id)
				}
				got = got[1:]
			}
		})
	}
}
