package store

import (
	"context"
	"math"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// Usage is token and cost accounting: a session's running totals, one
// model's share, or store-wide sums.
type Usage struct {
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	ReasoningTokens  int64
	APICalls         int64
	EstimatedCostUSD float64
	ActualCostUSD    float64
}

// Add adds v to u, field by field.
func (u *Usage) Add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CacheReadTokens += v.CacheReadTokens
	u.CacheWriteTokens += v.CacheWriteTokens
	u.ReasoningTokens += v.ReasoningTokens
	u.APICalls += v.APICalls
	u.EstimatedCostUSD += v.EstimatedCostUSD
	u.ActualCostUSD += v.ActualCostUSD
}

// check refuses negative counts and costs that are negative, NaN or
// infinite: one bad report would poison every total built on it.
// Validate reports why RecordUsage would refuse u (an error matching
// ErrInvalidInput), or nil when it would accept it.
func (u Usage) Validate() error {
	for what, v := range map[string]int64{"input tokens": u.InputTokens, "output tokens": u.OutputTokens,
		"cache read tokens": u.CacheReadTokens, "cache write tokens": u.CacheWriteTokens,
		"reasoning tokens": u.ReasoningTokens, "api calls": u.APICalls} {
		if v < 0 {
			return invalid("negative %s (%d)", what, v)
		}
	}
	for what, v := range map[string]float64{"estimated cost": u.EstimatedCostUSD, "actual cost": u.ActualCostUSD} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return invalid("%s must be a finite, non-negative number of dollars, got %v", what, v)
		}
	}
	return nil
}

// UsageUpdate is one report of usage for RecordUsage.
type UsageUpdate struct {
	// Model is the model that did the work ("" when unknown).
	Model string
	// Task is the auxiliary job that used it ("title", "compression",
	// "vision"); "" is the agent's main loop.
	Task string
	Usage
	// Absolute: Usage is the session's new main-loop totals, not a delta.
	Absolute bool
	// Billing is the route this usage is billed under (provider, base URL,
	// mode, cost status and source), kept on its (model, task) row so
	// UsageByProvider can sum by provider. A field left empty keeps what the
	// row already has. PricingVersion is a session's and is refused here.
	Billing Billing
}

// ModelUsage is usage broken down by model and task (Task "" = main loop).
type ModelUsage struct {
	Model string
	Task  string
	Usage
	FirstSeen time.Time
	LastSeen  time.Time
	// Billing is the route the row's cost was computed under, when known
	// (SessionUsage; UsageTotals sums across routes and leaves it empty).
	Billing Billing
}

// RecordUsage records token and cost usage on a session, in one
// transaction:
//
//   - a main-loop delta (Task "", Absolute false) is added to the session's
//     totals and to its (model, task) row;
//   - an absolute report (Absolute true) sets the session's totals and
//     writes no per-model row: the totals of a provider that reports
//     cumulative figures cannot be split by model;
//   - an auxiliary task's delta (Task set) is added to its (model, task)
//     row only — the session's totals count the main loop alone;
//   - a main-loop report naming a Model gives a session that has no model
//     yet that model (Session.Model); a set model is never changed here;
//   - likewise the first main-loop report with a billing route (provider,
//     base URL, mode) gives a session without one that route
//     (Session.Billing): the first-accounted rule. SetBillingRoute
//     changes it explicitly.
//
// An absolute report for an auxiliary task, negative counts and costs that
// are negative, NaN or infinite give ErrInvalidInput; an unknown session
// gives ErrNotFound and records nothing.
func (s *Store) RecordUsage(ctx context.Context, id string, u UsageUpdate) error {
	const op = "record usage"
	if err := rules.CheckID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	if err := rules.CheckLabel("model", u.Model); err != nil {
		return opErr(op, id, err)
	}
	if err := rules.CheckLabel("task", u.Task); err != nil {
		return opErr(op, id, err)
	}
	if err := u.Validate(); err != nil {
		return opErr(op, id, err)
	}
	if err := checkUsageBilling(u.Billing); err != nil {
		return opErr(op, id, err)
	}
	if u.Absolute && u.Task != "" {
		return opErr(op, id, invalid("absolute usage for auxiliary task %q: only the main loop has session totals", u.Task))
	}
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		if u.Task == "" && u.Model != "" {
			// As the reference store does: a session created before its
			// model was known then lists and exports with it.
			if _, err := tx.SessionModelFill(ctx, driver.SessionModelFillParams{ID: id, Model: &u.Model}); err != nil {
				return err
			}
		}
		if b := u.Billing; u.Task == "" && (b.Provider != "" || b.BaseURL != "" || b.Mode != "") {
			if _, err := tx.SessionBillingRouteFill(ctx, driver.SessionBillingRouteFillParams{ID: id,
				BillingProvider: rules.Ptr(b.Provider), BillingBaseUrl: rules.Ptr(b.BaseURL), BillingMode: rules.Ptr(b.Mode)}); err != nil {
				return err
			}
		}
		if u.Task == "" {
			var n int64
			var err error
			if u.Absolute {
				n, err = tx.SessionUsageSet(ctx, driver.SessionUsageSetParams(sessionUsageParams(id, u.Usage)))
			} else {
				n, err = tx.SessionUsageAdd(ctx, sessionUsageParams(id, u.Usage))
			}
			if err == nil && n == 0 {
				err = ErrNotFound
			}
			if err != nil || u.Absolute {
				return err
			}
		} else if err := sessionMustExist(ctx, tx, id); err != nil {
			return err
		}
		model := u.Model
		if model == "" {
			// Counted under the model of the moment, so a switch
			// (SetModel) shows in the usage rows.
			row, err := tx.SessionGet(ctx, id)
			if err != nil {
				return err
			}
			model = rules.Str(row.Model)
		}
		return tx.ModelUsageAdd(ctx, driver.ModelUsageAddParams{
			SessionID: id, Model: model, Task: u.Task, SeenAt: now(),
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
			ReasoningTokens: u.ReasoningTokens, ApiCallCount: u.APICalls,
			EstimatedCostUsd: u.EstimatedCostUSD, ActualCostUsd: u.ActualCostUSD,
			BillingProvider: rules.Ptr(u.Billing.Provider), BillingBaseUrl: rules.Ptr(u.Billing.BaseURL),
			BillingMode: rules.Ptr(u.Billing.Mode), CostStatus: rules.Ptr(u.Billing.CostStatus),
			CostSource: rules.Ptr(u.Billing.CostSource),
		})
	})
}

// SetBillingRoute sets the session's billing route — provider, base URL
// and mode; an empty field clears it — as when the caller switches
// provider mid-session. Usage rows keep the routes they were accounted
// under. Cost status, cost source and pricing version are not part of the
// route and are refused here (ErrInvalidInput); an unknown session gives
// ErrNotFound.
func (s *Store) SetBillingRoute(ctx context.Context, id string, b Billing) error {
	const op = "set billing route"
	if err := rules.CheckID("session id", id); err != nil {
		return opErr(op, id, err)
	}
	if b.CostStatus != "" || b.CostSource != "" || b.PricingVersion != "" {
		return opErr(op, id, invalid("cost status, cost source and pricing version are not part of a billing route"))
	}
	if err := checkUsageBilling(b); err != nil {
		return opErr(op, id, err)
	}
	return s.write(ctx, op, id, s.opts.WritePatience, func(ctx context.Context, tx driver.Executor) error {
		return mustHaveRow(tx.SessionBillingRouteSet(ctx, driver.SessionBillingRouteSetParams{ID: id,
			BillingProvider: rules.Ptr(b.Provider), BillingBaseUrl: rules.Ptr(b.BaseURL), BillingMode: rules.Ptr(b.Mode)}))
	})
}

// checkUsageBilling refuses a billing route a usage row cannot hold.
func checkUsageBilling(b Billing) error {
	if b.PricingVersion != "" {
		return invalid("pricing version %q: a usage row has none (it is the session's)", b.PricingVersion)
	}
	return rules.CheckLabels([]rules.Field{
		{Name: "billing provider", Value: b.Provider},
		{Name: "billing base url", Value: b.BaseURL},
		{Name: "billing mode", Value: b.Mode},
		{Name: "cost status", Value: b.CostStatus},
		{Name: "cost source", Value: b.CostSource},
	})
}

func sessionUsageParams(id string, u Usage) driver.SessionUsageAddParams {
	return driver.SessionUsageAddParams{
		ID: id, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		ReasoningTokens: u.ReasoningTokens, ApiCallCount: u.APICalls,
		EstimatedCostUsd: u.EstimatedCostUSD, ActualCostUsd: u.ActualCostUSD,
	}
}

// SessionUsage returns the session's main-loop totals and its per-(model,
// task) rows, ordered by model then task. An unknown session gives
// ErrNotFound.
func (s *Store) SessionUsage(ctx context.Context, id string) (Usage, []ModelUsage, error) {
	var total Usage
	var models []ModelUsage
	err := s.snapshot(ctx, "get session usage", id, func(q driver.Executor) error {
		r, err := q.SessionUsageGet(ctx, id)
		if err != nil {
			return err
		}
		total = usageFromRow(r)
		rows, err := q.ModelUsageBySession(ctx, id)
		if err != nil {
			return err
		}
		billing, err := q.ModelUsageBillingBySession(ctx, id)
		if err != nil {
			return err
		}
		route := make(map[[2]string]Billing, len(billing))
		for _, b := range billing {
			route[[2]string{b.Model, b.Task}] = Billing{Provider: rules.Str(b.BillingProvider), BaseURL: rules.Str(b.BillingBaseUrl),
				Mode: rules.Str(b.BillingMode), CostStatus: rules.Str(b.CostStatus), CostSource: rules.Str(b.CostSource)}
		}
		models = make([]ModelUsage, len(rows))
		for i, m := range rows {
			models[i] = modelUsageFromRow(driver.ModelUsageTotalsRow(m))
			models[i].Billing = route[[2]string{m.Model, m.Task}]
		}
		return nil
	})
	return total, models, err
}

// UsageFilter selects the sessions UsageTotals sums. The zero value
// selects every session.
type UsageFilter struct {
	Source string    // only sessions from this source
	Since  time.Time // only sessions started at or after this time
}

// UsageTotals sums usage across the sessions f selects: the main-loop
// totals, and one row per (model, task) ordered by model then task.
func (s *Store) UsageTotals(ctx context.Context, f UsageFilter) (Usage, []ModelUsage, error) {
	const op = "usage totals"
	if err := rules.CheckLabel("source", f.Source); err != nil {
		return Usage{}, nil, opErr(op, "", err)
	}
	since := f.sinceMillis()
	var total Usage
	var models []ModelUsage
	err := s.read(ctx, op, "", func(q driver.Executor) error {
		r, err := q.UsageTotals(ctx, driver.UsageTotalsParams{Source: rules.Ptr(f.Source), Since: since})
		if err != nil {
			return err
		}
		total = usageFromRow(driver.SessionUsageGetRow(r))
		rows, err := q.ModelUsageTotals(ctx, driver.ModelUsageTotalsParams{Source: rules.Ptr(f.Source), Since: since})
		models = make([]ModelUsage, len(rows))
		for i, m := range rows {
			models[i] = modelUsageFromRow(m)
		}
		return err
	})
	return total, models, err
}

// ProviderUsage is usage summed by billing provider (Provider "" for
// usage recorded without one).
type ProviderUsage struct {
	Provider string
	Usage
	FirstSeen time.Time
	LastSeen  time.Time
}

// UsageByProvider sums usage by billing provider across the sessions f
// selects, ordered by provider. It sums the per-(model, task) rows, so it
// counts auxiliary tasks too (a provider bills them like the main loop),
// and not absolute reports, which write no such row.
func (s *Store) UsageByProvider(ctx context.Context, f UsageFilter) ([]ProviderUsage, error) {
	const op = "usage by provider"
	if err := rules.CheckLabel("source", f.Source); err != nil {
		return nil, opErr(op, "", err)
	}
	var out []ProviderUsage
	err := s.read(ctx, op, "", func(q driver.Executor) error {
		rows, err := q.UsageByProvider(ctx, driver.UsageByProviderParams{Source: rules.Ptr(f.Source), Since: f.sinceMillis()})
		out = make([]ProviderUsage, len(rows))
		for i, r := range rows {
			m := modelUsageFromRow(driver.ModelUsageTotalsRow{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
				CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, ReasoningTokens: r.ReasoningTokens,
				ApiCallCount: r.ApiCallCount, EstimatedCostUsd: r.EstimatedCostUsd, ActualCostUsd: r.ActualCostUsd,
				FirstSeenAt: r.FirstSeenAt, LastSeenAt: r.LastSeenAt})
			out[i] = ProviderUsage{Provider: r.Provider, Usage: m.Usage, FirstSeen: m.FirstSeen, LastSeen: m.LastSeen}
		}
		return err
	})
	return out, err
}

// sinceMillis is f.Since in the store's milliseconds (0: no bound).
func (f UsageFilter) sinceMillis() int64 {
	if f.Since.IsZero() {
		return 0
	}
	return f.Since.UnixMilli()
}

func usageFromRow(r driver.SessionUsageGetRow) Usage {
	return Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens,
		ReasoningTokens: r.ReasoningTokens, APICalls: r.ApiCallCount,
		EstimatedCostUSD: r.EstimatedCostUsd, ActualCostUSD: r.ActualCostUsd}
}

func modelUsageFromRow(r driver.ModelUsageTotalsRow) ModelUsage {
	return ModelUsage{Model: r.Model, Task: r.Task,
		FirstSeen: fromMillis(r.FirstSeenAt), LastSeen: fromMillis(r.LastSeenAt),
		Usage: Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens,
			ReasoningTokens: r.ReasoningTokens, APICalls: r.ApiCallCount,
			EstimatedCostUSD: r.EstimatedCostUsd, ActualCostUSD: r.ActualCostUsd}}
}
