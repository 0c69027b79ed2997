package db

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Version 21 puts the billing route in session_model_usage's key. A file
// at version 20 keeps every row and figure: rows without a route read as
// rows of no route, rows with one keep it and their cost fields. The file
// verifies afterwards (the rebuilt table and its index are exactly the
// schema's), two routes of one model can then be recorded, and Down merges
// them back per (model, task) with the totals intact; Up again gives the
// same rows.
func TestMigrate_Version21UsagePerRoute(t *testing.T) {
	path := filledStore(t)
	migrateDownTo(t, path, 20)
	damage(t, path,
		"INSERT INTO sessions (id, source, started_at) VALUES ('u', 'cli', 1000)",
		`INSERT INTO session_model_usage (session_id, model, task, input_tokens, output_tokens, api_call_count,
			estimated_cost_usd, first_seen_at, last_seen_at) VALUES ('u', 'm', '', 10, 1, 1, 0.25, 1000, 1001)`,
		`INSERT INTO session_model_usage (session_id, model, task, input_tokens, api_call_count, actual_cost_usd,
			first_seen_at, last_seen_at, billing_provider, billing_base_url, billing_mode, cost_status, cost_source)
			VALUES ('u', 'm', 'title', 5, 1, 0.5, 1002, 1003, 'openrouter', 'https://openrouter.ai/api/v1', NULL, 'actual', 'provider_cost_api')`)
	want := []ModelUsage{
		{Model: "m", Usage: Usage{InputTokens: 10, OutputTokens: 1, APICalls: 1, EstimatedCostUSD: 0.25}},
		{Model: "m", Task: "title", Usage: Usage{InputTokens: 5, APICalls: 1, ActualCostUSD: 0.5},
			Billing: Billing{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", CostStatus: "actual", CostSource: "provider_cost_api"}},
	}
	ignoreSeen := cmpopts.IgnoreFields(ModelUsage{}, "FirstSeen", "LastSeen")
	for round := range 2 {
		migrateUpTo(t, path, 21)
		if r, err := Verify(t.Context(), path); err != nil || r.Health != HealthVerified {
			t.Fatalf("round %d: Verify after version 21 = %+v, %v", round, r, err)
		}
		s, err := Open(t.Context(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, rows, err := s.SessionUsage(t.Context(), "u")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, rows, ignoreSeen); diff != "" {
			t.Errorf("round %d: rows after version 21 (-want +got):\n%s", round, diff)
		}
		if round == 0 {
			// A second route of the main loop's model: its own row.
			if err := s.RecordUsage(t.Context(), "u", UsageUpdate{Model: "m", Usage: Usage{InputTokens: 7, APICalls: 1},
				Billing: Billing{Provider: "anthropic"}}); err != nil {
				t.Fatal(err)
			}
			_, rows, _ := s.SessionUsage(t.Context(), "u")
			if len(rows) != 3 {
				t.Errorf("rows after a second route: %+v, want three", rows)
			}
		}
		s.Close()
		migrateDownTo(t, path, 20)
		if round == 0 {
			// Down merged the main loop's two routes, the first seen's
			// billing fields kept (none): what Up gives back next round.
			want[0].Usage.InputTokens, want[0].Usage.APICalls = 17, 2
		}
	}
}
