package pg

import (
	"context"
	"errors"
	"fmt"
)

// A schema's owner can read, change and drop everything in it, whatever
// was granted: a store in a schema another role created is that role's to
// read and to destroy. Role mallory creates a store in schema trap and
// grants alice; alice, pointed at search_path=trap, writes her
// conversations where mallory reads them; or alice builds her own store
// in a schema mallory made, and mallory drops her tables as the schema's
// owner. So Open refuses a schema, or a table, sequence or function in
// it, owned by a role the connecting role neither is nor belongs to,
// unless the caller names that role in Options.TrustedOwners.

// ErrUntrustedOwner reports a store's schema, or an object in it, owned by
// a role the caller did not trust (see OwnerError).
var ErrUntrustedOwner = errors.New("schema owned by another role")

// OwnerError names who owns what. It matches ErrUntrustedOwner.
type OwnerError struct {
	Schema string
	Kind   string // "schema", "table", "sequence", "function", …
	Name   string
	Owner  string // the owning role
	User   string // the role the store connects as
}

func (e *OwnerError) String() string {
	if e.Kind == "schema" {
		return fmt.Sprintf("schema %s is owned by role %s, not by %s", e.Schema, e.Owner, e.User)
	}
	return fmt.Sprintf("%s %s in schema %s is owned by role %s, not by %s", e.Kind, e.Name, e.Schema, e.Owner, e.User)
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("%v: %s: its owner can read, change and drop the store's data whatever is granted, so sessiondb "+
		"will not keep %s's conversations there; use a schema %s owns (a new name is created), or trust %s with "+
		"Options.TrustedOwners", ErrUntrustedOwner, e.String(), e.User, e.User, e.Owner)
}

func (e *OwnerError) Is(target error) bool { return target == ErrUntrustedOwner }

// ownersQuery lists the schema $1, and each table, view, sequence and
// function in it, whose owner is not trusted: the connecting role, a role
// it is a member of (directly or through others), the database's owner
// role pg_database_owner when it owns the database, or a role in $2.
// A superuser is trusted only as itself: it may act as any role, but a
// role it does not own is still someone else's. Hand-written: a catalog
// read before any store exists.
const ownersQuery = `
WITH RECURSIVE me(oid) AS (
    SELECT oid FROM pg_roles WHERE rolname = current_user
  UNION
    SELECT m.roleid FROM pg_auth_members m JOIN me ON m.member = me.oid
), trusted(oid) AS (
    SELECT oid FROM me
  UNION
    SELECT r.oid FROM pg_roles r, pg_database d
    WHERE r.rolname = 'pg_database_owner' AND d.datname = current_database() AND d.datdba IN (SELECT oid FROM me)
  UNION
    SELECT oid FROM pg_roles WHERE rolname = ANY($2::text[])
), objects(kind, name, owner) AS (
    SELECT 'schema', nspname, nspowner FROM pg_namespace WHERE nspname = $1
  UNION ALL
    SELECT CASE c.relkind WHEN 'S' THEN 'sequence' WHEN 'v' THEN 'view' WHEN 'm' THEN 'view' ELSE 'table' END, c.relname, c.relowner
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
  UNION ALL
    SELECT 'function', p.proname, p.proowner
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
)
SELECT o.kind, o.name, pg_get_userbyid(o.owner), current_user
FROM objects o WHERE o.owner NOT IN (SELECT oid FROM trusted)
ORDER BY o.kind <> 'schema', o.kind, o.name`

// untrustedOwners returns each object of schema owned by a role not
// trusted, the schema itself first.
func untrustedOwners(ctx context.Context, q querier, schema string, trusted []string) ([]*OwnerError, error) {
	rows, err := q.Query(ctx, ownersQuery, schema, trusted)
	if err != nil {
		return nil, fmt.Errorf("read the schema's owners: %w", err)
	}
	defer rows.Close()
	var out []*OwnerError
	for rows.Next() {
		e := &OwnerError{Schema: schema}
		if err := rows.Scan(&e.Kind, &e.Name, &e.Owner, &e.User); err != nil {
			return nil, fmt.Errorf("read the schema's owners: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// checkOwners refuses a schema (or an object in it) an untrusted role
// owns, naming the first such owner.
func checkOwners(ctx context.Context, q querier, schema string, trusted []string) error {
	found, err := untrustedOwners(ctx, q, schema, trusted)
	if err != nil || len(found) == 0 {
		return err
	}
	return found[0]
}
