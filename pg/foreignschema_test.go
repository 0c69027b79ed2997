package pg

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store"
)

// An object planted through psql on the store's tables that undoes each
// append: on 63b5fb9 the append was acknowledged and the row gone, and a
// retry with the same key acknowledged with a new id, gone too. Each is
// now refused with ErrForeignSchema naming it — by the next write when
// planted while the store is open, by Open, and listed by Verify — and
// nothing acknowledged is ever missing. Dropping the object ends it.
func TestForeignSchemaObjectsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plant  []string // run in the store's schema
		remove []string
		names  string // what the error must name
	}{
		{"trigger deleting each row", []string{
			`CREATE FUNCTION eat() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM messages WHERE id = NEW.id; RETURN NULL; END $$`,
			`CREATE TRIGGER eater AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION eat()`,
		}, []string{"DROP TRIGGER eater ON messages"}, `trigger "eater" on messages`},
		{"before trigger dropping each row", []string{
			`CREATE FUNCTION skip() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
			`CREATE TRIGGER skipper BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION skip()`,
		}, []string{"DROP TRIGGER skipper ON messages"}, `trigger "skipper" on messages`},
		{"trigger on sessions", []string{
			`CREATE FUNCTION nop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
			`CREATE TRIGGER watcher BEFORE UPDATE ON sessions FOR EACH ROW EXECUTE FUNCTION nop()`,
		}, []string{"DROP TRIGGER watcher ON sessions"}, `trigger "watcher" on sessions`},
		{"rule", []string{`CREATE RULE swallow AS ON INSERT TO messages DO INSTEAD NOTHING`},
			[]string{"DROP RULE swallow ON messages"}, `rule "swallow" on messages`},
		{"row level security policy", []string{
			`ALTER TABLE messages ENABLE ROW LEVEL SECURITY`, `ALTER TABLE messages FORCE ROW LEVEL SECURITY`,
			`CREATE POLICY hide ON messages USING (false) WITH CHECK (true)`,
		}, []string{"DROP POLICY hide ON messages", "ALTER TABLE messages NO FORCE ROW LEVEL SECURITY",
			"ALTER TABLE messages DISABLE ROW LEVEL SECURITY"}, `policy "hide" on messages`},
		{"sessiondb's trigger function replaced", []string{
			`CREATE OR REPLACE FUNCTION messages_last_message_at() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM messages WHERE id = NEW.id; RETURN NULL; END $$`,
		}, nil, "messages.messages_last_message_at was altered"},
		{"sessiondb's trigger disabled", []string{`ALTER TABLE messages DISABLE TRIGGER messages_last_message_at`},
			[]string{`ALTER TABLE messages ENABLE TRIGGER messages_last_message_at`}, "messages.messages_last_message_at was altered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := openTestStore(t, Options{})
			if _, err := s.CreateSession(ctx, store.NewSession{ID: "s"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: "user", Content: "before", IdempotencyKey: "k0"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateSession(ctx, store.NewSession{ID: "t"}); err != nil {
				t.Fatal(err)
			}
			warmOneRound(t, s, "s", "t")
			admin := openPool(t, testDSN(t), s.Schema())
			stored := contents(t, admin) // "before" and the warming batches' messages
			execAll(t, admin, tc.plant)

			// A batch of plain appends, sent in one round trip with the
			// guard's last clean read to compare on the server
			// (oneround.go): refused whole, nothing written.
			checked := s.eng.appends.oneRoundsChecked.Load()
			res, _ := ridingBatch(t, s, []string{"s", "t"})
			for i, r := range res {
				if !errors.Is(r.err, store.ErrForeignSchema) || !strings.Contains(r.err.Error(), tc.names) {
					t.Fatalf("batch caller %d through it: %v; want ErrForeignSchema naming %s", i, r.err, tc.names)
				}
			}
			if s.eng.appends.oneRoundsChecked.Load() == checked {
				t.Fatal("the batch was not refused by the server's check in one round trip")
			}

			// The open store: the next write is refused, twice with one key.
			for try := range 2 {
				id, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: "user", Content: "planted", IdempotencyKey: "k1"})
				if !errors.Is(err, store.ErrForeignSchema) || !strings.Contains(err.Error(), tc.names) {
					t.Fatalf("append %d through it = id %d, %v; want ErrForeignSchema naming %s", try+1, id, err, tc.names)
				}
			}
			assertContents(t, admin, stored...)

			// A new Open refuses it; Verify names it without opening.
			if o, err := Open(ctx, testDSN(t), Options{Schema: s.Schema()}); !errors.Is(err, store.ErrForeignSchema) || !strings.Contains(err.Error(), tc.names) {
				if err == nil {
					o.Close()
				}
				t.Errorf("Open = %v, want ErrForeignSchema naming %s", err, tc.names)
			}
			r, err := Verify(ctx, testDSN(t), Options{Schema: s.Schema()})
			if err != nil || r.OK() || !strings.Contains(strings.Join(r.Findings, "\n"), tc.names) {
				t.Errorf("Verify = %q, %v; want a finding naming %s", r.Findings, err, tc.names)
			}

			if tc.remove == nil {
				return // sessiondb's own object altered: put back by hand, not here
			}
			execAll(t, admin, tc.remove)
			if _, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: "user", Content: "after", IdempotencyKey: "k1"}); err != nil {
				t.Fatalf("append once it is gone: %v", err)
			}
			assertContents(t, admin, append(stored, "after")...)
		})
	}
}

// A table of the store renamed, moved to another schema, or dropped and
// made again while the store is open is not the one the store checked:
// writes reach tables by name, so whatever now bears the name could carry
// objects the guard never saw. The next write is refused at once with
// ErrForeignSchema (on 35c1f61 a renamed table went unnoticed and a missing
// one was rerun for the whole patience, then answered "database is
// locked"), and nothing is written.
func TestGuard_TableNoLongerTheOneOpened(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(schema string) []string
		names string // what the error must name
	}{
		{"renamed, another made in its place", func(string) []string {
			return []string{"ALTER TABLE session_activity RENAME TO old_activity",
				"CREATE TABLE session_activity (LIKE old_activity INCLUDING ALL)"}
		}, "1 of sessiondb's"},
		{"moved to another schema", func(schema string) []string {
			return []string{"CREATE SCHEMA " + schema + "_elsewhere", "ALTER TABLE session_activity SET SCHEMA " + schema + "_elsewhere"}
		}, `the store's schema changed under it`},
		{"dropped", func(string) []string { return []string{"DROP TABLE session_activity"} }, `the store's schema changed under it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s, admin := storeWithOneMessage(t)
			t.Cleanup(func() {
				_, _ = admin.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+s.Schema()+"_elsewhere CASCADE")
			})
			execAll(t, admin, tc.plant(s.Schema()))
			for _, write := range []func() error{
				func() error {
					_, err := s.AppendMessage(ctx, "s", store.NewMessage{Role: "user", Content: "after"})
					return err
				},
				func() error { _, err := s.CreateSession(ctx, store.NewSession{ID: "t"}); return err },
			} {
				if err := write(); !errors.Is(err, store.ErrForeignSchema) || !strings.Contains(err.Error(), tc.names) {
					t.Fatalf("write = %v; want ErrForeignSchema naming %q", err, tc.names)
				}
			}
			assertContents(t, admin, "before")
		})
	}
}

// A constraint a DBA adds to the store's tables, or a column or function
// of the store dropped, under an open store, refuses writes with an error:
// nothing is lost, but the answer must say so. On 35c1f61 a DBA's CHECK
// or NOT NULL reached the caller as ErrInvalidInput (a gateway drops such
// a message as its own fault), a unique index of theirs as ErrExists, a
// foreign key as ErrNotFound, a dropped column as the server's raw
// 42703. Each is now ErrForeignSchema naming what refused, on the single
// and the batched append path alike, with nothing written; a search over
// a dropped word column says the same. sessiondb's own constraints keep
// their answers (the conformance suite: ErrExists, ErrIdempotencyConflict,
// ErrNotFound).
func TestForeignConstraintsRefuseWithForeignSchema(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plant  []string
		msg    store.NewMessage
		names  string // what the error must name
		search bool   // the search fails too; appends go through
	}{
		{"check", []string{`ALTER TABLE messages ADD CONSTRAINT no_x CHECK (content <> 'x') NOT VALID`},
			store.NewMessage{Role: "user", Content: "x"}, `constraint "no_x" on messages`, false},
		{"unique index", []string{`CREATE UNIQUE INDEX one_each ON messages (content)`},
			store.NewMessage{Role: "user", Content: "before"}, `constraint "one_each" on messages`, false},
		{"not null", []string{`UPDATE messages SET model = 'm'`, `ALTER TABLE messages ALTER COLUMN model SET NOT NULL`},
			store.NewMessage{Role: "user", Content: "y"}, `NOT NULL on messages.model`, false},
		{"foreign key", []string{`ALTER TABLE messages ADD CONSTRAINT model_fk FOREIGN KEY (model) REFERENCES sessions(id) NOT VALID`},
			store.NewMessage{Role: "user", Content: "y", Model: "m"}, `constraint "model_fk" on messages`, false},
		{"column dropped", []string{`ALTER TABLE messages DROP COLUMN reasoning`},
			store.NewMessage{Role: "user", Content: "y"}, `the store's schema changed under it`, false},
		{"word function dropped", []string{`DROP FUNCTION sessiondb_words CASCADE`},
			store.NewMessage{Role: "user", Content: "y"}, `the store's schema changed under it`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s, admin := storeWithOneMessage(t)
			execAll(t, admin, tc.plant)
			refused := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, store.ErrForeignSchema) || !strings.Contains(err.Error(), tc.names) {
					t.Errorf("%s = %v; want ErrForeignSchema naming %s", what, err, tc.names)
				}
				for _, wrong := range []error{store.ErrInvalidInput, store.ErrExists, store.ErrNotFound, store.ErrLocked} {
					if errors.Is(err, wrong) {
						t.Errorf("%s = %v; also %v, which would tell the caller the wrong thing", what, err, wrong)
					}
				}
			}
			if tc.search {
				_, err := s.Search(ctx, "before", store.SearchOptions{})
				refused("search", err)
				return
			}
			_, err := s.AppendMessage(ctx, "s", tc.msg)
			refused("append", err)
			_, err = s.AppendMessages(ctx, "s", []store.NewMessage{{Role: "user", Content: "z"}, tc.msg})
			refused("append of two", err)
			assertContents(t, admin, "before")
		})
	}
}

// An altered column (a default that hides every new message) changes what
// a write stores: Open refuses it and Verify names it.
func TestAlteredColumnIsRefusedAtOpen(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	admin := openPool(t, testDSN(t), s.Schema())
	execAll(t, admin, []string{`ALTER TABLE messages ALTER COLUMN state SET DEFAULT 'rewound'`})
	const names = "column messages.state was altered"
	if o, err := Open(ctx, testDSN(t), Options{Schema: s.Schema()}); !errors.Is(err, store.ErrForeignSchema) || !strings.Contains(err.Error(), names) {
		if err == nil {
			o.Close()
		}
		t.Errorf("Open = %v, want ErrForeignSchema naming %s", err, names)
	}
	r, err := s.Verify(ctx)
	if err != nil || !strings.Contains(strings.Join(r.Findings, "\n"), names) {
		t.Errorf("Verify = %q, %v; want a finding naming %s", r.Findings, err, names)
	}
}

// Verify on a store as sessiondb made it finds nothing; an index or table
// a DBA added is listed (and does not stop Open: it runs inside no write).
func TestVerifyListsForeignObjects(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{})
	if r, err := s.Verify(ctx); err != nil || !r.OK() {
		t.Fatalf("Verify of a fresh store = %q, %v", r.Findings, err)
	}
	admin := openPool(t, testDSN(t), s.Schema())
	execAll(t, admin, []string{"CREATE INDEX extra ON messages (created_at)", "CREATE TABLE notes (x int)"})
	r, err := s.Verify(ctx)
	all := strings.Join(r.Findings, "\n")
	if err != nil || !strings.Contains(all, "index extra") || !strings.Contains(all, "table notes") {
		t.Errorf("Verify = %q, %v; want the index extra and the table notes", r.Findings, err)
	}
	o, err := Open(ctx, testDSN(t), Options{Schema: s.Schema()})
	if err != nil {
		t.Fatalf("Open with a foreign index and table: %v", err)
	}
	o.Close()
}

// storeWithOneMessage opens a store holding session "s" with one message,
// "before", and a pool on its schema for what a DBA does to it.
func storeWithOneMessage(t *testing.T) (*Store, *pgxpool.Pool) {
	t.Helper()
	s := openTestStore(t, Options{})
	if _, err := s.CreateSession(t.Context(), store.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(t.Context(), "s", store.NewMessage{Role: "user", Content: "before"}); err != nil {
		t.Fatal(err)
	}
	return s, openPool(t, testDSN(t), s.Schema())
}

func execAll(t *testing.T, pool *pgxpool.Pool, stmts []string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := pool.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// assertContents checks the messages table holds exactly want, in order
// (read as the server's superuser, so no policy hides a row).
func assertContents(t *testing.T, pool *pgxpool.Pool, want ...string) {
	t.Helper()
	if got := contents(t, pool); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("messages = %q, want %q", got, want)
	}
}

// contents is every message's content, in id order.
func contents(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT content FROM messages ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}
