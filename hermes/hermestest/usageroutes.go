package hermestest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sessiondb/sessiondb/hermes"
	. "github.com/sessiondb/sessiondb/store"
)

// testUsagePerRoute: one model used through two billing routes, which
// Hermes keeps as two usage rows, is imported as two rows, each with its
// route and figures (issue 34 item 8) — nothing merged, nothing counted as
// not representable; the session's totals are Hermes's own; and a second
// import of the file sets the rows again, not adds to them.
func testUsagePerRoute(t *testing.T, e Engine) {
	ctx := t.Context()
	path := e.copyFixture(t)
	src := openHermesWriter(t, path)
	execAll(t, src,
		`INSERT INTO session_model_usage (session_id, model, billing_provider, billing_base_url, billing_mode,
			api_call_count, input_tokens, output_tokens, estimated_cost_usd, cost_status, cost_source, first_seen, last_seen)
			VALUES ('cli-20261101-a1', 'anthropic/claude-sonnet-4.5', 'anthropic', '', 'api_key',
			1, 300, 30, 0.0025, 'actual', 'provider_cost_api', 1796114412.5, 1796114412.5)`)
	s := e.Open(t)
	for range 2 {
		res, err := hermes.Import(ctx, s, path, hermes.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, merged := res.NotRepresentable["session_model_usage(billing route merged)"]; merged || len(res.NotRepresentable) != 0 {
			t.Errorf("not representable: %v, want nothing (each route is a row)", res.NotRepresentable)
		}
		_, rows, err := s.SessionUsage(ctx, "cli-20261101-a1")
		if err != nil {
			t.Fatal(err)
		}
		want := []ModelUsage{
			{Model: "anthropic/claude-sonnet-4.5", Usage: Usage{InputTokens: 300, OutputTokens: 30, APICalls: 1, EstimatedCostUSD: 0.0025},
				Billing: Billing{Provider: "anthropic", Mode: "api_key", CostStatus: "actual", CostSource: "provider_cost_api"}},
			{Model: "anthropic/claude-sonnet-4.5", Usage: Usage{InputTokens: 5200, OutputTokens: 410, CacheReadTokens: 4000,
				ReasoningTokens: 60, APICalls: 2, EstimatedCostUSD: 0.0213},
				Billing: Billing{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1"}},
		}
		if diff := cmp.Diff(want, rows, cmpopts.IgnoreFields(ModelUsage{}, "FirstSeen", "LastSeen")); diff != "" {
			t.Errorf("usage rows of a model with two routes (-want +got):\n%s", diff)
		}
	}
}
