package pg

import (
	"errors"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// A connection string's search_path chooses the store's schema, and a
// second store opened on that schema by option is the same store.
func TestOpen_SchemaFromTheConnectionString(t *testing.T) {
	ctx := t.Context()
	schema := freshSchema(t)
	a, err := Open(ctx, withSearchPath(t, testDSN(t), schema), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Schema() != schema {
		t.Errorf("Schema() = %q, want %q", a.Schema(), schema)
	}
	if _, err := a.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, testDSN(t), Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Session(ctx, "s"); err != nil {
		t.Errorf("the second store does not see the first's session: %v", err)
	}
	other := openTestStore(t, Options{})
	if _, err := other.Session(ctx, "s"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a store in another schema: Session = %v, want ErrNotFound", err)
	}
}

// OpenPool's pool stays its owner's: closing the store leaves it open,
// and the store then refuses calls with ErrClosed.
func TestOpenPool_LeavesThePoolOpen(t *testing.T) {
	ctx := t.Context()
	pool := openPool(t, testDSN(t), freshSchema(t))
	s, err := OpenPool(ctx, pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pool.Ping(ctx); err != nil {
		t.Errorf("the pool after the store closed: %v", err)
	}
	if _, err := s.Session(ctx, "s"); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Session after Close = %v, want ErrClosed", err)
	}
}

func TestOpenPool_RefusesAnotherSchema(t *testing.T) {
	pool := openPool(t, testDSN(t), freshSchema(t))
	if _, err := OpenPool(t.Context(), pool, Options{Schema: "elsewhere"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("OpenPool with a schema the pool does not use = %v, want ErrInvalidConfig", err)
	}
}

// TestWrite_PatienceBoundsThePoolWait: with every pool connection taken, a
// write waits its patience for one, then gives up with ErrLocked.
func TestWrite_PatienceBoundsThePoolWait(t *testing.T) {
	const patience = 300 * time.Millisecond
	ctx := t.Context()
	cfg, err := ParseConfig(testDSN(t), freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool := openPoolConfig(t, cfg)
	s, err := OpenPool(ctx, pool, Options{WritePatience: patience, TranscriptPatience: 2 * patience})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"})
	waited := time.Since(start)
	conn.Release()
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("CreateSession with the pool exhausted = %v, want ErrLocked", err)
	}
	if waited < patience*9/10 || waited > patience+10*time.Second {
		t.Errorf("gave up after %v, want about the patience %v", waited, patience)
	}
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s", Source: "test"}); err != nil {
		t.Errorf("CreateSession once the connection was back: %v", err)
	}
}
