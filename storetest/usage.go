package storetest

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignoreSeen = cmpopts.IgnoreFields(ModelUsage{}, "FirstSeen", "LastSeen")

// u builds a Usage; costs are multiples of 1/4 so float sums are exact.
func u(in, out, calls int64, cost float64) Usage {
	return Usage{InputTokens: in, OutputTokens: out, APICalls: calls, EstimatedCostUSD: cost}
}

func sessionUsage(t *testing.T, s *Store, id string) (Usage, []ModelUsage) {
	t.Helper()
	total, models, err := s.SessionUsage(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return total, models
}

func testUsage_Add(t *testing.T, open Opener) {
	a := Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, ReasoningTokens: 5, APICalls: 6, EstimatedCostUSD: 0.5, ActualCostUSD: 0.25}
	a.Add(Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 40, ReasoningTokens: 50, APICalls: 60, EstimatedCostUSD: 1, ActualCostUSD: 2})
	if want := (Usage{InputTokens: 11, OutputTokens: 22, CacheReadTokens: 33, CacheWriteTokens: 44, ReasoningTokens: 55, APICalls: 66, EstimatedCostUSD: 1.5, ActualCostUSD: 2.25}); a != want {
		t.Errorf("Add = %+v, want %+v", a, want)
	}
}

func testRecordUsage_Delta(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	full := Usage{InputTokens: 100, OutputTokens: 50, CacheReadTokens: 7, CacheWriteTokens: 3,
		ReasoningTokens: 11, APICalls: 1, EstimatedCostUSD: 0.5, ActualCostUSD: 0.25}
	start := time.Now().Add(-time.Second)
	for _, up := range []UsageUpdate{
		{Model: "gpt-5", Usage: full},
		{Model: "gpt-5", Usage: full},
		{Model: "claude", Usage: u(10, 1, 1, 0.25)},
	} {
		if err := s.RecordUsage(ctx, "s1", up); err != nil {
			t.Fatal(err)
		}
	}
	twice := full
	twice.Add(full)
	wantTotal := twice
	wantTotal.Add(u(10, 1, 1, 0.25))
	total, models := sessionUsage(t, s, "s1")
	if diff := cmp.Diff(wantTotal, total); diff != "" {
		t.Errorf("session totals (-want +got):\n%s", diff)
	}
	wantModels := []ModelUsage{{Model: "claude", Usage: u(10, 1, 1, 0.25)}, {Model: "gpt-5", Usage: twice}}
	if diff := cmp.Diff(wantModels, models, ignoreSeen); diff != "" {
		t.Errorf("per-model rows (-want +got):\n%s", diff)
	}
	for _, m := range models {
		if m.FirstSeen.Before(start) || m.LastSeen.Before(m.FirstSeen) || m.LastSeen.After(time.Now()) {
			t.Errorf("%s: first seen %v, last seen %v", m.Model, m.FirstSeen, m.LastSeen)
		}
	}
	sess, err := s.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Usage != wantTotal {
		t.Errorf("Session.Usage = %+v, want %+v", sess.Usage, wantTotal)
	}
}

// §7.11: an absolute report sets the session totals and writes no
// per-model row.
func testRecordUsage_Absolute(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	if err := s.RecordUsage(ctx, "s1", UsageUpdate{Model: "m", Usage: u(100, 10, 2, 1)}); err != nil {
		t.Fatal(err)
	}
	abs := Usage{InputTokens: 40, OutputTokens: 4, ReasoningTokens: 9, APICalls: 5, ActualCostUSD: 0.75}
	if err := s.RecordUsage(ctx, "s1", UsageUpdate{Model: "m", Usage: abs, Absolute: true}); err != nil {
		t.Fatal(err)
	}
	total, models := sessionUsage(t, s, "s1")
	if total != abs {
		t.Errorf("totals after an absolute report = %+v, want %+v", total, abs)
	}
	if diff := cmp.Diff([]ModelUsage{{Model: "m", Usage: u(100, 10, 2, 1)}}, models, ignoreSeen); diff != "" {
		t.Errorf("an absolute report touched per-model rows (-want +got):\n%s", diff)
	}
	// Absolute on a fresh session writes totals only.
	newTestSession(t, s, "s2")
	if err := s.RecordUsage(ctx, "s2", UsageUpdate{Model: "m", Usage: abs, Absolute: true}); err != nil {
		t.Fatal(err)
	}
	if total, models := sessionUsage(t, s, "s2"); total != abs || len(models) != 0 {
		t.Errorf("s2: totals %+v, %d model rows; want %+v and none", total, len(models), abs)
	}
}

// §7.11: auxiliary usage (titles, compression) goes to its own (model,
// task) row and never into the session's main-loop totals.
func testRecordUsage_AuxiliaryTask(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	main := u(100, 10, 1, 0.5)
	for _, up := range []UsageUpdate{
		{Model: "big", Usage: main},
		{Model: "small", Task: "title", Usage: u(20, 5, 1, 0.25)},
		{Model: "small", Task: "title", Usage: u(20, 5, 1, 0.25)},
		{Model: "big", Task: "compression", Usage: u(300, 30, 1, 0.75)},
	} {
		if err := s.RecordUsage(ctx, "s1", up); err != nil {
			t.Fatal(err)
		}
	}
	total, models := sessionUsage(t, s, "s1")
	if total != main {
		t.Errorf("session totals = %+v, want the main loop only %+v", total, main)
	}
	want := []ModelUsage{
		{Model: "big", Usage: main},
		{Model: "big", Task: "compression", Usage: u(300, 30, 1, 0.75)},
		{Model: "small", Task: "title", Usage: u(40, 10, 2, 0.5)},
	}
	if diff := cmp.Diff(want, models, ignoreSeen); diff != "" {
		t.Errorf("per-model rows (-want +got):\n%s", diff)
	}
}

func testRecordUsage_Refusals(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	newTestSession(t, s, "s1")
	tests := []struct {
		name string
		id   string
		up   UsageUpdate
		want error
	}{
		{"NegativeInput", "s1", UsageUpdate{Usage: Usage{InputTokens: -1}}, ErrInvalidInput},
		{"NegativeOutput", "s1", UsageUpdate{Usage: Usage{OutputTokens: -1}}, ErrInvalidInput},
		{"NegativeCacheRead", "s1", UsageUpdate{Usage: Usage{CacheReadTokens: -1}}, ErrInvalidInput},
		{"NegativeCacheWrite", "s1", UsageUpdate{Usage: Usage{CacheWriteTokens: -1}}, ErrInvalidInput},
		{"NegativeReasoning", "s1", UsageUpdate{Usage: Usage{ReasoningTokens: -1}}, ErrInvalidInput},
		{"NegativeCalls", "s1", UsageUpdate{Usage: Usage{APICalls: -1}}, ErrInvalidInput},
		{"NegativeCost", "s1", UsageUpdate{Usage: Usage{EstimatedCostUSD: -0.01}}, ErrInvalidInput},
		{"NaNCost", "s1", UsageUpdate{Usage: Usage{EstimatedCostUSD: math.NaN()}}, ErrInvalidInput},
		{"InfCost", "s1", UsageUpdate{Usage: Usage{ActualCostUSD: math.Inf(1)}}, ErrInvalidInput},
		{"NegativeInfCost", "s1", UsageUpdate{Usage: Usage{ActualCostUSD: math.Inf(-1)}}, ErrInvalidInput},
		{"AbsoluteAuxiliary", "s1", UsageUpdate{Task: "title", Absolute: true, Usage: u(1, 1, 1, 0)}, ErrInvalidInput},
		{"InvalidUTF8Model", "s1", UsageUpdate{Model: "\xff", Usage: u(1, 1, 1, 0)}, ErrInvalidInput},
		{"InvalidUTF8Task", "s1", UsageUpdate{Task: "\xff", Usage: u(1, 1, 1, 0)}, ErrInvalidInput},
		{"EmptyID", "", UsageUpdate{Usage: u(1, 1, 1, 0)}, ErrInvalidInput},
		{"UnknownSession", "ghost", UsageUpdate{Usage: u(1, 1, 1, 0)}, ErrNotFound},
		{"UnknownSessionAbsolute", "ghost", UsageUpdate{Absolute: true, Usage: u(1, 1, 1, 0)}, ErrNotFound},
		{"UnknownSessionAuxiliary", "ghost", UsageUpdate{Task: "title", Usage: u(1, 1, 1, 0)}, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.RecordUsage(ctx, tt.id, tt.up); !errors.Is(err, tt.want) {
				t.Fatalf("RecordUsage(%+v) = %v, want %v", tt.up, err, tt.want)
			}
			total, models, err := s.UsageTotals(ctx, UsageFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if total != (Usage{}) || len(models) != 0 {
				t.Errorf("a refused report was recorded: %+v %+v", total, models)
			}
		})
	}
	if _, _, err := s.SessionUsage(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SessionUsage(unknown) = %v, want ErrNotFound", err)
	}
	if _, _, err := s.UsageTotals(ctx, UsageFilter{Source: "\xff"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("UsageTotals(invalid source) = %v, want ErrInvalidInput", err)
	}
}

// 16 writers × 50 deltas each: nothing lost, nothing counted twice.
func testRecordUsage_Concurrent(t *testing.T, open Opener) {
	s := open(t, Options{})
	newTestSession(t, s, "s1")
	const writers, each = 16, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			model := fmt.Sprintf("m%d", w%2)
			for range each {
				if err := s.RecordUsage(t.Context(), "s1", UsageUpdate{Model: model, Usage: u(3, 2, 1, 0.25)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	const n = writers * each
	total, models := sessionUsage(t, s, "s1")
	if want := u(3*n, 2*n, n, 0.25*n); total != want {
		t.Errorf("totals = %+v, want %+v", total, want)
	}
	half := int64(n / 2)
	want := []ModelUsage{{Model: "m0", Usage: u(3*half, 2*half, half, 0.25*float64(half))},
		{Model: "m1", Usage: u(3*half, 2*half, half, 0.25*float64(half))}}
	if diff := cmp.Diff(want, models, ignoreSeen); diff != "" {
		t.Errorf("per-model rows (-want +got):\n%s", diff)
	}
}

func testUsageTotals(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, NewSession{ID: "cli-old", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(5 * time.Millisecond)
	for _, n := range []NewSession{{ID: "cli-new", Source: "cli"}, {ID: "gw", Source: "gateway"}} {
		if _, err := s.CreateSession(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	record := []struct {
		id string
		up UsageUpdate
	}{
		{"cli-old", UsageUpdate{Model: "a", Usage: u(1, 0, 1, 0.25)}},
		{"cli-new", UsageUpdate{Model: "a", Usage: u(10, 0, 1, 0.5)}},
		{"cli-new", UsageUpdate{Model: "b", Task: "title", Usage: u(20, 0, 1, 0.25)}},
		{"gw", UsageUpdate{Model: "a", Usage: u(100, 0, 1, 1)}},
	}
	for _, r := range record {
		if err := s.RecordUsage(ctx, r.id, r.up); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		f          UsageFilter
		wantTotal  Usage
		wantModels []ModelUsage
	}{
		{"All", UsageFilter{}, u(111, 0, 3, 1.75), []ModelUsage{
			{Model: "a", Usage: u(111, 0, 3, 1.75)}, {Model: "b", Task: "title", Usage: u(20, 0, 1, 0.25)}}},
		{"Source", UsageFilter{Source: "cli"}, u(11, 0, 2, 0.75), []ModelUsage{
			{Model: "a", Usage: u(11, 0, 2, 0.75)}, {Model: "b", Task: "title", Usage: u(20, 0, 1, 0.25)}}},
		{"Since", UsageFilter{Since: cutoff}, u(110, 0, 2, 1.5), []ModelUsage{
			{Model: "a", Usage: u(110, 0, 2, 1.5)}, {Model: "b", Task: "title", Usage: u(20, 0, 1, 0.25)}}},
		{"SourceAndSince", UsageFilter{Source: "gateway", Since: cutoff}, u(100, 0, 1, 1), []ModelUsage{
			{Model: "a", Usage: u(100, 0, 1, 1)}}},
		{"Nothing", UsageFilter{Source: "nowhere"}, Usage{}, []ModelUsage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total, models, err := s.UsageTotals(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if total != tt.wantTotal {
				t.Errorf("total = %+v, want %+v", total, tt.wantTotal)
			}
			if diff := cmp.Diff(tt.wantModels, models, ignoreSeen); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
		})
	}
}

// The billing route a report names lands on its (model, task, route) row; a
// later report without one is counted under no route; UsageByProvider sums
// every row (auxiliary tasks included) by provider, filtered like
// UsageTotals.
func testUsageByProvider(t *testing.T, open Opener) {
	s := open(t, Options{})
	ctx := t.Context()
	for _, n := range []NewSession{{ID: "cli", Source: "cli"}, {ID: "gw", Source: "gateway"}} {
		if _, err := s.CreateSession(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	openrouter := Billing{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", Mode: "api_key", CostStatus: "estimated", CostSource: "pricing_table"}
	anthropic := Billing{Provider: "anthropic", Mode: "subscription"}
	record := []struct {
		id string
		up UsageUpdate
	}{
		{"cli", UsageUpdate{Model: "gpt-5", Usage: u(10, 1, 1, 0.25), Billing: openrouter}},
		{"cli", UsageUpdate{Model: "gpt-5", Usage: u(20, 2, 1, 0.25)}}, // no route named: the row of none
		{"cli", UsageUpdate{Model: "haiku", Task: "title", Usage: u(5, 1, 1, 0.25), Billing: anthropic}},
		{"gw", UsageUpdate{Model: "sonnet", Usage: u(100, 10, 1, 1), Billing: anthropic}},
		{"gw", UsageUpdate{Model: "local", Usage: u(7, 7, 1, 0)}}, // no route ever
		{"gw", UsageUpdate{Model: "sonnet", Usage: u(1, 1, 1, 1), Absolute: true}},
	}
	for _, r := range record {
		if err := s.RecordUsage(ctx, r.id, r.up); err != nil {
			t.Fatal(err)
		}
	}
	_, rows := sessionUsage(t, s, "cli")
	wantRows := []ModelUsage{{Model: "gpt-5", Usage: u(20, 2, 1, 0.25)}, {Model: "gpt-5", Usage: u(10, 1, 1, 0.25), Billing: openrouter},
		{Model: "haiku", Task: "title", Usage: u(5, 1, 1, 0.25), Billing: anthropic}}
	if diff := cmp.Diff(wantRows, rows, ignoreSeen); diff != "" {
		t.Errorf("session rows' billing (-want +got):\n%s", diff)
	}
	ignoreProviderSeen := cmpopts.IgnoreFields(ProviderUsage{}, "FirstSeen", "LastSeen")
	tests := []struct {
		name string
		f    UsageFilter
		want []ProviderUsage
	}{
		{"All", UsageFilter{}, []ProviderUsage{{Provider: "", Usage: u(27, 9, 2, 0.25)},
			{Provider: "anthropic", Usage: u(105, 11, 2, 1.25)}, {Provider: "openrouter", Usage: u(10, 1, 1, 0.25)}}},
		{"Source", UsageFilter{Source: "cli"}, []ProviderUsage{{Provider: "", Usage: u(20, 2, 1, 0.25)},
			{Provider: "anthropic", Usage: u(5, 1, 1, 0.25)}, {Provider: "openrouter", Usage: u(10, 1, 1, 0.25)}}},
		{"SinceFuture", UsageFilter{Since: time.Now().Add(time.Hour)}, []ProviderUsage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.UsageByProvider(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, ignoreProviderSeen); diff != "" {
				t.Errorf("UsageByProvider(%+v) (-want +got):\n%s", tt.f, diff)
			}
			for _, p := range got {
				if p.FirstSeen.IsZero() || p.LastSeen.Before(p.FirstSeen) {
					t.Errorf("%q: first seen %v, last seen %v", p.Provider, p.FirstSeen, p.LastSeen)
				}
			}
		})
	}
	for name, b := range map[string]Billing{"PricingVersion": {PricingVersion: "2026-01"}, "InvalidUTF8Provider": {Provider: "\xff"}} {
		if err := s.RecordUsage(ctx, "cli", UsageUpdate{Model: "m", Usage: u(1, 1, 1, 0), Billing: b}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: RecordUsage = %v, want ErrInvalidInput", name, err)
		}
	}
	if _, err := s.UsageByProvider(ctx, UsageFilter{Source: "\xff"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("UsageByProvider(invalid source) = %v, want ErrInvalidInput", err)
	}
}

// testRecordUsage_FillsTheSessionModel: a main-loop report naming a model
// gives a session without one that model; a set model stays, and an
// auxiliary task's model never becomes the session's (issue 34, item 7).
func testRecordUsage_FillsTheSessionModel(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	for _, id := range []string{"bare", "bare-absolute", "bare-aux"} {
		newTestSession(t, s, id)
	}
	MustCreate(t, s, NewSession{ID: "set", Source: "cli", Model: "m-own"})
	for id, u := range map[string]UsageUpdate{
		"bare":          {Model: "m1", Usage: Usage{InputTokens: 1}},
		"bare-absolute": {Model: "m2", Absolute: true, Usage: Usage{InputTokens: 5}},
		"bare-aux":      {Model: "m3", Task: "title", Usage: Usage{InputTokens: 1}},
		"set":           {Model: "m4", Usage: Usage{InputTokens: 1}},
	} {
		if err := s.RecordUsage(ctx, id, u); err != nil {
			t.Fatalf("RecordUsage(%s): %v", id, err)
		}
	}
	for id, want := range map[string]string{"bare": "m1", "bare-absolute": "m2", "bare-aux": "", "set": "m-own"} {
		if got, err := s.Session(ctx, id); err != nil || got.Model != want {
			t.Errorf("%s: model %q, %v; want %q", id, got.Model, err, want)
		}
	}
}
