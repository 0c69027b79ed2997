package pg

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A connection pooler between the store and the server (PgBouncer, and
// poolers like it) changes what a client connection is. The connection
// string says which kind it is with the parameter pool_mode, named as in
// pgbouncer.ini:
//
//	postgres://bouncer:6432/agents?search_path=team_a&pool_mode=session
//	postgres://bouncer:6432/agents?search_path=team_a&pool_mode=transaction
//
// Either way the search_path startup parameter is not sent: PgBouncer
// refuses it ("unsupported startup parameter"), and a pooler told to
// ignore it drops it without a word, which would put the store's tables
// in the server's default schema.
//
//   - session: the client keeps one server connection while it is
//     connected, so everything works as on a direct connection; the store
//     sets its search_path on each new connection instead (SET, which the
//     pooler's server_reset_query, DISCARD ALL, undoes when the client
//     leaves).
//   - transaction: the client gets a server connection for one
//     transaction at a time, so nothing of a session may be relied on
//     between transactions. Every transaction the store runs sets its
//     search_path with SET LOCAL, reads included (each Read is then one
//     transaction: two round trips more); queries go by the simple
//     protocol (no named prepared statements, which PgBouncer before 1.21
//     cannot carry between server connections); watchers poll instead of
//     LISTENing; the migration lock is a transaction's; and the holders
//     NewHolder makes keep their advisory locks in a transaction held
//     open on a connection of the store's own (holder.go).
//
// Open checks that current_schema() is the configured schema in every
// mode, a pooler or none: a mismatch is a *SchemaMismatchError, never a
// store silently made in another schema.

// poolModeParam is the connection-string parameter naming the pooler's
// mode. It never reaches the server: the pool's BeforeConnect removes it.
const poolModeParam = "pool_mode"

// The pooler modes pool_mode takes (PgBouncer's names).
const (
	poolSession     = "session"
	poolTransaction = "transaction"
)

// applyPoolMode configures cfg for the pooler its connection string's
// pool_mode names (nothing without one). execModeSet says whether the
// string chose default_query_exec_mode itself.
func applyPoolMode(cfg *pgxpool.Config, schema string, execModeSet bool) error {
	mode := cfg.ConnConfig.RuntimeParams[poolModeParam]
	switch mode {
	case "":
		return nil
	case poolSession:
	case poolTransaction:
		switch m := cfg.ConnConfig.DefaultQueryExecMode; {
		case !execModeSet:
			cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		case m != pgx.QueryExecModeSimpleProtocol && m != pgx.QueryExecModeExec:
			// The other modes describe or prepare a statement in a round
			// trip of its own, before the transaction that sets the
			// search_path: on another server connection, maybe.
			return fmt.Errorf("%w: pool_mode=transaction needs default_query_exec_mode simple_protocol "+
				"(its default) or exec, not %s", ErrInvalidConfig, m)
		}
	default:
		return fmt.Errorf("%w: pool_mode %q: want session or transaction (as in pgbouncer.ini), "+
			"or leave it out for a direct connection", ErrInvalidConfig, mode)
	}
	before := cfg.BeforeConnect
	cfg.BeforeConnect = func(ctx context.Context, cc *pgx.ConnConfig) error {
		stripPoolerParams(cc)
		if before != nil {
			return before(ctx, cc)
		}
		return nil
	}
	if mode == poolSession {
		after := cfg.AfterConnect
		set := "SET search_path TO " + pgx.Identifier{schema}.Sanitize()
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			if _, err := c.Exec(ctx, set); err != nil {
				return fmt.Errorf("set search_path: %w", err)
			}
			if after != nil {
				return after(ctx, c)
			}
			return nil
		}
	}
	return nil
}

// stripPoolerParams removes from a connection's startup parameters what
// a pooler must not get: pool_mode itself, and search_path, which the
// store sets otherwise.
func stripPoolerParams(cc *pgx.ConnConfig) {
	if _, ok := cc.RuntimeParams[poolModeParam]; !ok {
		return
	}
	delete(cc.RuntimeParams, poolModeParam)
	delete(cc.RuntimeParams, "search_path")
}

// poolModeOf is the pooler mode a pool was configured for ("" for none).
func poolModeOf(cfg *pgxpool.Config) string { return cfg.ConnConfig.RuntimeParams[poolModeParam] }

// pinSchema is the statement that sets a transaction's search_path to
// schema behind a transaction-pooling proxy, "" otherwise. SET is no
// query, so it takes no snapshot: it may come before the LOCK TABLE that
// must precede a write's snapshot (guard.go).
func pinSchema(cfg *pgxpool.Config, schema string) string {
	if poolModeOf(cfg) != poolTransaction {
		return ""
	}
	return "SET LOCAL search_path TO " + pgx.Identifier{schema}.Sanitize()
}

// connectAside opens a connection beside the pool (a LISTEN's, the
// holders' keeper), configured as the pool's are.
func connectAside(ctx context.Context, pool *pgxpool.Pool) (*pgx.Conn, error) {
	cc := pool.Config().ConnConfig.Copy()
	stripPoolerParams(cc)
	return pgx.ConnectConfig(ctx, cc)
}

// SchemaMismatchError reports connections whose current_schema() is not
// the schema the store was told: a pooler that dropped the search_path
// startup parameter, a role's or database's own search_path, or a schema
// the role may not use. Nothing was created or written. It is an
// ErrInvalidConfig.
type SchemaMismatchError struct {
	Configured string // the schema the store was told
	Current    string // current_schema(), "" when none
	PoolMode   string // the connection string's pool_mode, "" for none
}

func (e *SchemaMismatchError) Error() string {
	got := e.Current
	if got == "" {
		got = "none (no schema of the search_path exists or may be used)"
	}
	msg := fmt.Sprintf("%v: the server's connections work in schema %s (current_schema()), not %s as configured",
		ErrInvalidConfig, got, e.Configured)
	if e.PoolMode == "" {
		msg += "; behind a connection pooler such as PgBouncer, which drops or refuses the search_path parameter, " +
			"add pool_mode=session or pool_mode=transaction to the connection string (docs/POSTGRES.md, \"Behind PgBouncer\")"
	}
	return msg
}

// Is makes a SchemaMismatchError an ErrInvalidConfig.
func (e *SchemaMismatchError) Is(target error) bool { return target == ErrInvalidConfig }

// checkCurrentSchema refuses connections that do not work in the schema
// the store was configured with (see SchemaMismatchError). Run once the
// schema exists (current_schema() skips a schema that does not).
func checkCurrentSchema(current *string, err error, schema, poolMode string) error {
	if err != nil {
		return fmt.Errorf("read current_schema(): %w", err)
	}
	if current == nil || *current != schema {
		got := ""
		if current != nil {
			got = *current
		}
		return &SchemaMismatchError{Configured: schema, Current: got, PoolMode: poolMode}
	}
	return nil
}

// execModeSet says whether connString sets default_query_exec_mode.
func execModeSet(connString string) bool {
	return strings.Contains(connString, "default_query_exec_mode")
}
