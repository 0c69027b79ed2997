package pg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrUnsupportedLocale reports a database whose character settings would
// make the store silently wrong: a C or POSIX LC_CTYPE, under which
// pg_trgm treats every non-ASCII letter as a separator (Chinese or
// Japanese text would never be found), or an encoding other than UTF-8.
var ErrUnsupportedLocale = errors.New("unsupported database locale")

// CheckLocale refuses a database this engine cannot search correctly. It
// reads the current database's settings, so it runs once at open.
func CheckLocale(ctx context.Context, pool *pgxpool.Pool) error {
	var name, ctype, encoding string
	// Hand-written: a catalog read, not part of the store's schema.
	err := pool.QueryRow(ctx, `SELECT datname, datctype, pg_encoding_to_char(encoding)
		FROM pg_database WHERE datname = current_database()`).Scan(&name, &ctype, &encoding)
	if err != nil {
		return fmt.Errorf("read database locale: %w", err)
	}
	return checkLocale(name, ctype, encoding)
}

func checkLocale(database, ctype, encoding string) error {
	const fix = "create the database with CREATE DATABASE … TEMPLATE template0 ENCODING 'UTF8' " +
		"LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8' (or another UTF-8 locale), or initdb --locale=C.UTF-8"
	if encoding != "UTF8" {
		return fmt.Errorf("%w: database %q has encoding %s, sessiondb stores UTF-8 text; %s",
			ErrUnsupportedLocale, database, encoding, fix)
	}
	if ctype == "C" || ctype == "POSIX" {
		return fmt.Errorf("%w: database %q has LC_CTYPE %q, under which pg_trgm ignores every "+
			"non-ASCII letter (CJK search would find nothing); %s", ErrUnsupportedLocale, database, ctype, fix)
	}
	return nil
}
