package pg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestCheckLocaleRules(t *testing.T) {
	for _, tc := range []struct {
		ctype, encoding string
		ok              bool
	}{
		{"C.UTF-8", "UTF8", true},
		{"en_US.UTF-8", "UTF8", true},
		{"C", "UTF8", false},
		{"POSIX", "UTF8", false},
		{"en_US", "LATIN1", false},
		{"C.UTF-8", "SQL_ASCII", false},
	} {
		err := checkLocale("db", tc.ctype, tc.encoding)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrUnsupportedLocale)) {
			t.Errorf("checkLocale(%s, %s) = %v, want ok=%v", tc.ctype, tc.encoding, err, tc.ok)
		}
	}
}

// On a real database created with LC_CTYPE 'C' the check refuses, naming
// the fix; the test server's own database (C.UTF-8) passes.
func TestCheckLocaleOnServer(t *testing.T) {
	dsn := testDSN(t)
	ctx := context.Background()
	if err := CheckLocale(ctx, openPool(t, dsn, "")); err != nil {
		t.Fatalf("test database refused: %v", err)
	}

	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "t_ctype_c_" + hex.EncodeToString(b)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident+" TEMPLATE template0 ENCODING 'UTF8' LC_CTYPE 'C' LC_COLLATE 'C'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			defer conn.Close(context.Background())
			_, err = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
		}
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	cfg, err := ParseConfig(dsn, "store")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Database = name
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	err = CheckLocale(ctx, pool)
	if !errors.Is(err, ErrUnsupportedLocale) {
		t.Fatalf("CheckLocale on an LC_CTYPE C database = %v, want ErrUnsupportedLocale", err)
	}
	for _, want := range []string{name, `"C"`, "pg_trgm", "C.UTF-8"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}

	// Prepare refuses before it creates anything.
	if _, err := Prepare(ctx, pool); !errors.Is(err, ErrUnsupportedLocale) {
		t.Fatalf("Prepare on an LC_CTYPE C database = %v, want ErrUnsupportedLocale", err)
	}
	var schemas int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = 'store'").Scan(&schemas); err != nil {
		t.Fatal(err)
	}
	if schemas != 0 {
		t.Error("Prepare created the schema in a database it refused")
	}
}
