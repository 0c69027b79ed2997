package pg

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

// As SQLite's version 21: a store from before the billing route joined
// session_model_usage's key (version 9) keeps every row and figure — a row
// without a route as the row of no route, one with a route with its cost
// fields — two routes of one model are then two rows, and Down merges them
// back per (model, task) with the totals intact. Hand-written SQL: the rows
// are planted below the store's API.
func TestMigrate_UsagePerRouteOfAnOlderStore(t *testing.T) {
	pool := migratedPool(t)
	ctx := context.Background()
	p := migrationProvider(t, pool)
	if _, err := p.DownTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO sessions (id, source, started_at) VALUES ('u', 'cli', 1000)",
		`INSERT INTO session_model_usage (session_id, model, task, input_tokens, api_call_count, estimated_cost_usd,
			first_seen_at, last_seen_at) VALUES ('u', 'm', '', 10, 1, 0.25, 1000, 1001)`,
		`INSERT INTO session_model_usage (session_id, model, task, input_tokens, api_call_count, actual_cost_usd,
			first_seen_at, last_seen_at, billing_provider, billing_base_url, cost_status)
			VALUES ('u', 'm', 'title', 5, 1, 0.5, 1002, 1003, 'openrouter', 'https://openrouter.ai/api/v1', 'actual')`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	type row struct {
		Model, Task, Provider, BaseURL, Mode string
		Status                               *string
		In, Calls                            int64
		Est, Act                             float64
	}
	read := func() []row {
		t.Helper()
		// The simple protocol: a statement cached before the migration
		// would describe the table's old column types.
		rs, err := pool.Query(ctx, `SELECT model, task, COALESCE(billing_provider, ''), COALESCE(billing_base_url, ''),
			COALESCE(billing_mode, ''), cost_status, input_tokens, api_call_count, estimated_cost_usd, actual_cost_usd
			FROM session_model_usage WHERE session_id = 'u' ORDER BY model, task, 3, 4, 5`, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []row
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.Model, &r.Task, &r.Provider, &r.BaseURL, &r.Mode, &r.Status, &r.In, &r.Calls, &r.Est, &r.Act); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	actual := "actual"
	want := []row{{Model: "m", In: 10, Calls: 1, Est: 0.25},
		{Model: "m", Task: "title", Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", Status: &actual, In: 5, Calls: 1, Act: 0.5}}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, read()); diff != "" {
		t.Errorf("rows after the migration (-want +got):\n%s", diff)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO session_model_usage (session_id, model, task, billing_provider, input_tokens,
		api_call_count, first_seen_at, last_seen_at) VALUES ('u', 'm', '', 'anthropic', 7, 1, 1004, 1004)`); err != nil {
		t.Fatalf("a second route of one model: %v", err)
	}
	if _, err := p.DownTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	want[0].In, want[0].Calls = 17, 2
	if diff := cmp.Diff(want, read()); diff != "" {
		t.Errorf("rows after Down (-want +got):\n%s", diff)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
}
