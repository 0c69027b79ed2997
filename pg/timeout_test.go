package pg

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiondb/sessiondb/store"
)

// holdLock takes lock on table in a transaction of its own, held until
// the test ends.
func holdLock(t *testing.T, stmt string) {
	t.Helper()
	conn := adminConn(t)
	tx, err := conn.Begin(context.Background()) //sessiondb:allow txonly -- plays another session holding a lock
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
}

// A role with statement_timeout or lock_timeout of 1 ms: on 63b5fb9 every
// failure was the raw "canceling statement due to statement timeout
// (SQLSTATE 57014)", inside Open too. Now it is ErrLocked, a
// *ServerTimeoutError naming the setting, its value and the role. A
// write sets its own limits from its patience, so the role's do not cut
// it short.
func TestRoleTimeoutsAreNamed(t *testing.T) {
	ctx := t.Context()
	for _, setting := range []string{"statement_timeout", "lock_timeout"} {
		t.Run(setting, func(t *testing.T) {
			role := newRole(t, "hasty", "GRANT CREATE ON DATABASE "+pgx.Identifier{currentDatabase(t)}.Sanitize()+" TO %s")
			schema := freshSchema(t)
			cfg, err := ParseConfig(dsnAs(t, role), schema)
			if err != nil {
				t.Fatal(err)
			}
			pool := openPoolConfig(t, cfg)
			s, err := OpenPool(ctx, pool, Options{WritePatience: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.CreateSession(ctx, store.NewSession{ID: "s"}); err != nil {
				t.Fatal(err)
			}
			if _, err := adminConn(t).Exec(ctx, "ALTER ROLE "+role+" SET "+setting+" = '1ms'"); err != nil {
				t.Fatal(err)
			}
			pool.Reset() // new connections take the role's setting
			holdLock(t, "LOCK TABLE "+schema+".sessions IN ACCESS EXCLUSIVE MODE")

			want := func(what string, err error) {
				t.Helper()
				var st *ServerTimeoutError
				if !errors.Is(err, store.ErrLocked) || !errors.As(err, &st) || st.Setting != setting || st.Value != "1ms" ||
					st.Origin != "role "+role || !strings.Contains(err.Error(), "ALTER ROLE "+role+" RESET "+setting) {
					t.Errorf("%s = %v, want ErrLocked naming %s = 1ms of role %s", what, err, setting, role)
				}
			}
			_, err = s.Session(ctx, "s")
			want("a read", err)

			// A write waits its own patience, whatever the role says.
			start := time.Now()
			_, err = s.CreateSession(ctx, store.NewSession{ID: "t"})
			var locked *LockedError
			if !errors.As(err, &locked) || time.Since(start) < 250*time.Millisecond {
				t.Errorf("a write under the role's %s = %v after %v, want a *LockedError after its 300ms patience", setting, err, time.Since(start))
			}

			// Open, waiting for the migration lock another opener holds.
			holdLock(t, "SELECT pg_advisory_lock("+strconv.FormatInt(migrationLockKey(schema), 10)+")")
			o, err := Open(ctx, dsnAs(t, role), Options{Schema: schema})
			if err == nil {
				o.Close()
			}
			want("Open", err) // pg_advisory_lock waits under lock_timeout too
		})
	}
}

// Patience is a budget for the whole call: a write whose table another
// session holds gives up after its patience, and so does Open waiting for
// a migration lock (on 63b5fb9 Open waited as long as its context let it).
func TestPatienceIsTheWholeCall(t *testing.T) {
	ctx := t.Context()
	const patience = time.Second
	s := openTestStore(t, Options{WritePatience: patience / 2, TranscriptPatience: patience})
	if _, err := s.CreateSession(ctx, store.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	holdLock(t, "LOCK TABLE "+s.Schema()+".messages IN ACCESS EXCLUSIVE MODE")
	start := time.Now()
	_, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: "user", Content: "x"})
	// The server's lock_timeout is the patience left in whole milliseconds,
	// so the call may end a millisecond short of it.
	if took := time.Since(start); !errors.Is(err, store.ErrLocked) || took < patience-10*time.Millisecond || took > patience+patience/2 {
		t.Errorf("append against a held lock = %v after %v, want ErrLocked after about %v", err, took, patience)
	}

	schema := freshSchema(t)
	holdLock(t, "SELECT pg_advisory_lock("+strconv.FormatInt(migrationLockKey(schema), 10)+")")
	start = time.Now()
	o, err := Open(ctx, testDSN(t), Options{Schema: schema, OpenPatience: patience})
	if err == nil {
		o.Close()
	}
	var locked *LockedError
	if took := time.Since(start); !errors.As(err, &locked) || !errors.Is(err, store.ErrLocked) || took < patience-10*time.Millisecond || took > patience+patience/2 {
		t.Errorf("Open against a held migration lock = %v after %v, want a *LockedError after about %v", err, took, patience)
	}
}
