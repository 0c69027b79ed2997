package storetest

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// testUsage_OneRowPerBillingRoute: one model used through two billing
// routes keeps a row per (model, task, route), main loop and auxiliary
// task alike, as the reference store does (issue 34 item 8). The session's
// totals and UsageTotals' per-model rows are the sums, as before; an export
// carries each route, and the session's own, and an import into another
// store keeps them.
func testUsage_OneRowPerBillingRoute(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "r")
	direct := Billing{Provider: "anthropic", Mode: "api_key", CostStatus: "actual", CostSource: "provider_cost_api"}
	routed := Billing{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", Mode: "api_key"}
	subscribed := Billing{Provider: "anthropic", Mode: "subscription"} // one provider, another mode: another route
	for _, up := range []UsageUpdate{
		{Model: "sonnet", Usage: u(100, 10, 1, 0.5), Billing: direct},
		{Model: "sonnet", Usage: u(200, 20, 1, 0.75), Billing: routed},
		{Model: "sonnet", Usage: u(100, 10, 1, 0.25), Billing: direct},
		{Model: "sonnet", Usage: u(1, 1, 1, 0), Billing: subscribed},
		{Model: "haiku", Task: "title", Usage: u(5, 1, 1, 0.25), Billing: direct},
		{Model: "haiku", Task: "title", Usage: u(6, 1, 1, 0.25), Billing: routed},
	} {
		if err := s.RecordUsage(ctx, "r", up); err != nil {
			t.Fatal(err)
		}
	}
	wantRows := []ModelUsage{
		{Model: "haiku", Task: "title", Usage: u(5, 1, 1, 0.25), Billing: direct},
		{Model: "haiku", Task: "title", Usage: u(6, 1, 1, 0.25), Billing: routed},
		{Model: "sonnet", Usage: u(200, 20, 2, 0.75), Billing: direct},
		{Model: "sonnet", Usage: u(1, 1, 1, 0), Billing: subscribed},
		{Model: "sonnet", Usage: u(200, 20, 1, 0.75), Billing: routed},
	}
	total, rows := sessionUsage(t, s, "r")
	if diff := cmp.Diff(wantRows, rows, ignoreSeen); diff != "" {
		t.Errorf("rows per route (-want +got):\n%s", diff)
	}
	if want := u(401, 41, 4, 1.5); total != want {
		t.Errorf("session totals = %+v, want every main-loop route summed %+v", total, want)
	}
	_, byModel, err := s.UsageTotals(ctx, UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	wantByModel := []ModelUsage{{Model: "haiku", Task: "title", Usage: u(11, 2, 2, 0.5)}, {Model: "sonnet", Usage: u(401, 41, 4, 1.5)}}
	if diff := cmp.Diff(wantByModel, byModel, ignoreSeen); diff != "" {
		t.Errorf("UsageTotals sums a model's routes (-want +got):\n%s", diff)
	}

	var file bytes.Buffer
	if _, err := s.Export(ctx, &file, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(file.String(), `"type":"usage"`); n != len(wantRows) {
		t.Errorf("the export has %d usage records, want one per route (%d):\n%s", n, len(wantRows), file.String())
	}
	other := open(t, Options{})
	if res, err := other.Import(ctx, bytes.NewReader(file.Bytes()), ImportOptions{}); err != nil || res.Imported != 1 {
		t.Fatalf("Import = %+v, %v", res, err)
	}
	total2, rows2 := sessionUsage(t, other, "r")
	if diff := cmp.Diff(rows, rows2); diff != "" {
		t.Errorf("rows after export and import (-before +after):\n%s", diff)
	}
	if total2 != total {
		t.Errorf("totals after export and import = %+v, want %+v", total2, total)
	}
	// The session's own route (the last accounted call's) travels too.
	before, _ := s.Session(ctx, "r")
	after, err := other.Session(ctx, "r")
	if err != nil || after.Billing != before.Billing || before.Billing != (Billing{Provider: "anthropic", Mode: "subscription"}) {
		t.Errorf("session billing after export and import = %+v (%v), before %+v, want anthropic subscription", after.Billing, err, before.Billing)
	}

	// One route twice in one session's records is refused by name.
	usageLines := []string{
		`{"type":"usage","session_id":"d","model":"m","task":"","input_tokens":1,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"api_call_count":1,"estimated_cost_usd":0,"actual_cost_usd":0,"first_seen_at":1,"last_seen_at":1,"billing_provider":"p"}`,
		`{"type":"usage","session_id":"d","model":"m","task":"","input_tokens":2,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"api_call_count":1,"estimated_cost_usd":0,"actual_cost_usd":0,"first_seen_at":1,"last_seen_at":1,"billing_provider":"q"}`,
		`{"type":"usage","session_id":"d","model":"m","task":"","input_tokens":3,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"api_call_count":1,"estimated_cost_usd":0,"actual_cost_usd":0,"first_seen_at":1,"last_seen_at":1,"billing_provider":"p"}`,
	}
	file3 := ExportHeader + SessionLine("d", "", "") + strings.Join(usageLines, "\n") + "\n"
	if _, err := other.Import(ctx, strings.NewReader(file3), ImportOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Import of one route twice = %v, want ErrInvalidInput", err)
	}
	file2 := ExportHeader + SessionLine("d", "", "") + strings.Join(usageLines[:2], "\n") + "\n"
	if _, err := other.Import(ctx, strings.NewReader(file2), ImportOptions{}); err != nil {
		t.Errorf("Import of two routes of one model = %v", err)
	}
	if _, rows := sessionUsage(t, other, "d"); len(rows) != 2 {
		t.Errorf("imported rows of d = %+v, want two routes", rows)
	}
}

// testBillingRoute_FollowsTheLastAccountedCall: the session's billing route
// follows the latest main-loop report that carried usage and named a
// route, all three fields replaced together; a report without usage or
// without a route, and an auxiliary task's, leave it; SetBillingRoute sets
// it until the next such report (issue 35 §6, the newest reference's rule;
// the 2026-07 reference's first-accounted rule is superseded).
func testBillingRoute_FollowsTheLastAccountedCall(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "r")
	route := func() Billing {
		t.Helper()
		got, err := s.Session(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		return Billing{Provider: got.Billing.Provider, BaseURL: got.Billing.BaseURL, Mode: got.Billing.Mode}
	}
	record := func(task string, b Billing, usage Usage) {
		t.Helper()
		if err := s.RecordUsage(ctx, "r", UsageUpdate{Model: "m", Task: task, Usage: usage, Billing: b}); err != nil {
			t.Fatal(err)
		}
	}
	one := Usage{InputTokens: 1}
	first := Billing{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", Mode: "chat"}
	steps := []struct {
		name  string
		task  string
		b     Billing
		usage Usage
		want  Billing
	}{
		{"usage without a route", "", Billing{}, one, Billing{}},
		{"an auxiliary task's route", "vision", Billing{Provider: "aux-provider"}, one, Billing{}},
		{"the first accounted", "", first, one, first},
		{"a route without usage", "", Billing{Provider: "idle"}, Usage{}, first},
		{"usage without a route keeps it", "", Billing{CostStatus: "estimated"}, one, first},
		{"a later accounted route replaces all three", "", Billing{Provider: "openai"}, one, Billing{Provider: "openai"}},
		{"a cost alone is usage", "", Billing{Provider: "anthropic", Mode: "api_key"}, Usage{ActualCostUSD: 0.25}, Billing{Provider: "anthropic", Mode: "api_key"}},
		{"an absolute report carries usage too", "", first, Usage{InputTokens: 9}, first},
	}
	for _, st := range steps {
		if st.name == "an absolute report carries usage too" {
			if err := s.RecordUsage(ctx, "r", UsageUpdate{Model: "m", Absolute: true, Usage: st.usage, Billing: st.b}); err != nil {
				t.Fatal(err)
			}
		} else {
			record(st.task, st.b, st.usage)
		}
		if got := route(); got != st.want {
			t.Errorf("after %s: route %+v, want %+v", st.name, got, st.want)
		}
	}
	if err := s.SetBillingRoute(ctx, "r", Billing{Provider: "anthropic"}); err != nil {
		t.Fatal(err)
	}
	if got := route(); got != (Billing{Provider: "anthropic"}) {
		t.Errorf("route after SetBillingRoute = %+v, want anthropic alone", got)
	}
	record("", Billing{}, one)
	if got := route(); got != (Billing{Provider: "anthropic"}) {
		t.Errorf("usage without a route after SetBillingRoute: route %+v, want anthropic alone", got)
	}
	record("", first, one)
	if got := route(); got != first {
		t.Errorf("the next accounted route after SetBillingRoute: route %+v, want %+v", got, first)
	}
	if err := s.SetBillingRoute(ctx, "ghost", Billing{Provider: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetBillingRoute(ghost) = %v, want ErrNotFound", err)
	}
	if err := s.SetBillingRoute(ctx, "r", Billing{Provider: "x", PricingVersion: "v1"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("SetBillingRoute with a pricing version = %v, want ErrInvalidInput", err)
	}
}

// testRecordUsage_ImplausibleFiguresRefused: a cost that is negative, NaN,
// infinite or above MaxUsageCostUSD, or a count above MaxUsageCount, is
// refused at the write with ErrInvalidInput — the whole report, its clean
// figures too, main loop or auxiliary task, delta or absolute — and so is
// an import carrying one; the bounds themselves are accepted (issue 35 §6,
// the digest's cost honesty gate).
func testRecordUsage_ImplausibleFiguresRefused(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "r")
	clean := u(10, 10, 1, 0)
	with := func(f func(*Usage)) Usage { v := clean; f(&v); return v }
	bad := map[string]Usage{
		"Cost1e179":          with(func(v *Usage) { v.EstimatedCostUSD = 1e179 }),
		"ActualAboveMax":     with(func(v *Usage) { v.ActualCostUSD = MaxUsageCostUSD * 1.5 }),
		"NegativeActual":     with(func(v *Usage) { v.ActualCostUSD = -1 }),
		"NaNActual":          with(func(v *Usage) { v.ActualCostUSD = math.NaN() }),
		"InfEstimate":        with(func(v *Usage) { v.EstimatedCostUSD = math.Inf(1) }),
		"TokensAboveMax":     with(func(v *Usage) { v.InputTokens = MaxUsageCount + 1 }),
		"CallsAboveMax":      with(func(v *Usage) { v.APICalls = MaxUsageCount + 1 }),
		"ReasoningMaxInt":    with(func(v *Usage) { v.ReasoningTokens = math.MaxInt64 }),
		"CacheWriteNegative": with(func(v *Usage) { v.CacheWriteTokens = -5 }),
	}
	for name, usage := range bad {
		for _, up := range []UsageUpdate{{Model: "m", Usage: usage}, {Model: "m", Task: "title", Usage: usage},
			{Model: "m", Usage: usage, Absolute: true}} {
			if err := s.RecordUsage(ctx, "r", up); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("%s (task %q, absolute %v): RecordUsage = %v, want ErrInvalidInput", name, up.Task, up.Absolute, err)
			}
		}
		if err := usage.Validate(); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: Validate = %v, want ErrInvalidInput", name, err)
		}
	}
	if total, rows := sessionUsage(t, s, "r"); total != (Usage{}) || len(rows) != 0 {
		t.Errorf("a refused report left figures: %+v %+v", total, rows)
	}
	atMax := Usage{InputTokens: MaxUsageCount, APICalls: 1, EstimatedCostUSD: MaxUsageCostUSD, ActualCostUSD: MaxUsageCostUSD}
	if err := s.RecordUsage(ctx, "r", UsageUpdate{Model: "m", Usage: atMax}); err != nil {
		t.Errorf("RecordUsage at the bounds = %v, want accepted", err)
	}
	huge := ExportHeader + SessionLine("h", "", "") +
		`{"type":"usage","session_id":"h","model":"m","task":"","input_tokens":1,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"api_call_count":1,"estimated_cost_usd":1e179,"actual_cost_usd":0,"first_seen_at":1,"last_seen_at":1}` + "\n"
	if _, err := s.Import(ctx, strings.NewReader(huge), ImportOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Import of a 1e179 cost = %v, want ErrInvalidInput", err)
	}
	if _, err := s.Session(ctx, "h"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a refused import wrote its session: %v", err)
	}
}

// testDelegationTreeUsage: a session's usage plus its compression
// continuations' and delegates', recursively, from any member of the tree
// (the digest's delegation rollup); branches stay out; a cycle in the
// parent links counts each session once; refusals are typed.
func testDelegationTreeUsage(t *testing.T, e Engine) {
	ctx := t.Context()
	s := e.Open(t, Options{})
	MustCreate(t, s, NewSession{ID: "root"})
	continueAs(t, s, "root", "root-2")
	MustCreate(t, s, NewSession{ID: "sub", ParentID: "root-2", Kind: ChildDelegate})
	MustCreate(t, s, NewSession{ID: "subsub", ParentID: "sub", Kind: ChildDelegate})
	MustCreate(t, s, NewSession{ID: "sibling", ParentID: "root", Kind: ChildDelegate})
	MustCreate(t, s, NewSession{ID: "branch", ParentID: "root", Kind: ChildBranch})
	MustCreate(t, s, NewSession{ID: "branch-sub", ParentID: "branch", Kind: ChildDelegate})
	route := Billing{Provider: "p"}
	for _, r := range []struct {
		id string
		up UsageUpdate
	}{
		{"root", UsageUpdate{Model: "big", Usage: u(100, 10, 1, 1)}},
		{"root-2", UsageUpdate{Model: "big", Usage: u(50, 5, 1, 0.5)}},
		{"sub", UsageUpdate{Model: "small", Usage: u(10, 1, 1, 0.25), Billing: route}},
		{"subsub", UsageUpdate{Model: "small", Usage: u(20, 2, 1, 0.25), Billing: route}},
		{"subsub", UsageUpdate{Model: "small", Task: "title", Usage: u(3, 1, 1, 0.25)}},
		{"sibling", UsageUpdate{Model: "big", Usage: u(1, 1, 1, 0)}},
		{"branch", UsageUpdate{Model: "big", Usage: u(1000, 100, 1, 4)}},
		{"branch-sub", UsageUpdate{Model: "big", Usage: u(1000, 100, 1, 4)}},
	} {
		if err := s.RecordUsage(ctx, r.id, r.up); err != nil {
			t.Fatal(err)
		}
	}
	want := TreeUsage{RootID: "root", SessionIDs: []string{"root", "root-2", "sibling", "sub", "subsub"},
		Usage: u(181, 19, 5, 2), Auxiliary: u(3, 1, 1, 0.25),
		Models: []ModelUsage{{Model: "big", Usage: u(151, 16, 3, 1.5)}, {Model: "small", Usage: u(30, 3, 2, 0.5), Billing: route},
			{Model: "small", Task: "title", Usage: u(3, 1, 1, 0.25)}}}
	for _, from := range []string{"root", "root-2", "sub", "subsub", "sibling"} {
		got, err := s.DelegationTreeUsage(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, ignoreSeen); diff != "" {
			t.Errorf("DelegationTreeUsage(%s) (-want +got):\n%s", from, diff)
		}
	}
	got, err := s.DelegationTreeUsage(ctx, "branch-sub")
	if err != nil {
		t.Fatal(err)
	}
	if got.RootID != "branch" || !cmp.Equal(got.SessionIDs, []string{"branch", "branch-sub"}) || got.Usage != u(2000, 200, 2, 8) {
		t.Errorf("a branch is a tree of its own: %+v", got)
	}

	// A cycle of delegate links (planted below the API, which refuses
	// one): the walk ends and each session is counted once.
	MustCreate(t, s, NewSession{ID: "x"})
	MustCreate(t, s, NewSession{ID: "y", ParentID: "x", Kind: ChildDelegate})
	e.Exec(t, s, "UPDATE sessions SET parent_session_id = 'y', parent_kind = 'delegate' WHERE id = 'x'")
	for _, id := range []string{"x", "y"} {
		if err := s.RecordUsage(ctx, id, UsageUpdate{Model: "m", Usage: u(1, 1, 1, 0.25)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, from := range []string{"x", "y"} {
		got, err := s.DelegationTreeUsage(ctx, from)
		if err != nil {
			t.Fatalf("DelegationTreeUsage(%s) in a cycle: %v", from, err)
		}
		if !cmp.Equal(got.SessionIDs, []string{"x", "y"}) || got.Usage != u(2, 2, 2, 0.5) || (got.RootID != "x" && got.RootID != "y") {
			t.Errorf("DelegationTreeUsage(%s) in a cycle = %+v, want x and y once each", from, got)
		}
	}

	if _, err := s.DelegationTreeUsage(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DelegationTreeUsage(ghost) = %v, want ErrNotFound", err)
	}
	if _, err := s.DelegationTreeUsage(ctx, ""); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("DelegationTreeUsage(\"\") = %v, want ErrInvalidInput", err)
	}
}
