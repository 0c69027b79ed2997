package db

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A callback may run a query text again while iterating that query's rows
// (a tree walk): the kept statements must not be rebound under the rows.
func TestStmtCache_SameQueryInsideItsOwnRows(t *testing.T) {
	s := openTestStore(t, Options{})
	for _, k := range []string{"a", "b", "c"} {
		if err := s.SetMeta(t.Context(), k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	const q = "SELECT key FROM meta WHERE key >= ? AND key IN ('a', 'b', 'c') ORDER BY key"
	var seen []string
	err := s.w.write(t.Context(), s.opts.WritePatience, func(ctx context.Context, tx genDBTX) error {
		seen = nil
		rows, err := tx.QueryContext(ctx, q, "")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				return err
			}
			seen = append(seen, k)
			var inner string
			if err := tx.QueryRowContext(ctx, q, k).Scan(&inner); err != nil {
				return fmt.Errorf("inner %q: %w", k, err)
			}
			inner2, err := tx.QueryContext(ctx, q, k)
			if err != nil {
				return fmt.Errorf("inner rows %q: %w", k, err)
			}
			inner2.Close()
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, seen); diff != "" {
		t.Errorf("outer rows (-want +got):\n%s", diff)
	}
}

// Past its bound the cache runs statements uncached, and closing it
// finalizes what it kept.
func TestStmtCache_BoundAndClose(t *testing.T) {
	s := openTestStore(t, Options{})
	for i := range stmtCacheSize + 10 {
		q := fmt.Sprintf("SELECT %d", i)
		err := s.w.read(t.Context(), func(tx genDBTX) error {
			var n int
			return tx.QueryRowContext(t.Context(), q).Scan(&n)
		})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.w.mu.Lock()
	c := s.w.tx
	s.w.mu.Unlock()
	c.mu.Lock()
	kept := len(c.stmts)
	c.mu.Unlock()
	if kept > stmtCacheSize {
		t.Errorf("%d statements kept, bound %d", kept, stmtCacheSize)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.stmts) != 0 {
		t.Errorf("%d statements still kept after Close", len(c.stmts))
	}
}
