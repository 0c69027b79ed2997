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

// The largest figures one report may carry (RecordUsage, and the usage of
// an imported session or row): larger is not a measurement but a bug
// upstream (a cost in micro-dollars sent as dollars, an uninitialised
// float, the reference store's 1e179), and once added it would poison every
// total built on it, for good. A million dollars is more than any one model
// call or any one session costs; a trillion tokens (or calls) more than any
// session holds, and far from where an int64 sum could wrap.
const (
	MaxUsageCostUSD = 1e6
	MaxUsageCount   = 1_000_000_000_000
)

// Validate reports why RecordUsage would refuse u (an error matching
// ErrInvalidInput), or nil when it would accept it: a count that is
// negative or above MaxUsageCount, a cost that is negative, NaN, infinite
// or above MaxUsageCostUSD. The whole report is refused, its clean fields
// too (the reference store drops the bad field and keeps the rest): the
// caller learns its figures are wrong instead of a total that quietly
// misses a part.
func (u Usage) Validate() error {
	for _, c := range []struct {
		what string
		v    int64
	}{{"input tokens", u.InputTokens}, {"output tokens", u.OutputTokens},
		{"cache read tokens", u.CacheReadTokens}, {"cache write tokens", u.CacheWriteTokens},
		{"reasoning tokens", u.ReasoningTokens}, {"api calls", u.APICalls}} {
		if c.v < 0 {
			return invalid("negative %s (%d)", c.what, c.v)
		}
		if c.v > MaxUsageCount {
			return invalid("%s (%d) above the most one report may carry (%d)", c.what, c.v, int64(MaxUsageCount))
		}
	}
	for _, c := range []struct {
		what string
		v    float64
	}{{"estimated cost", u.EstimatedCostUSD}, {"actual cost", u.ActualCostUSD}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0 || c.v > MaxUsageCostUSD {
			return invalid("%s must be a finite number of dollars between 0 and %g, got %v", c.what, float64(MaxUsageCostUSD), c.v)
		}
	}
	return nil
}

// IsZero reports whether u counts nothing: no token, call or cost.
func (u Usage) IsZero() bool { return u == Usage{} }

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
	// Billing is the route this usage is billed under: provider, base URL
	// and mode name its row (one per model, task and route; all three empty:
	// the row of no route), so UsageByProvider can sum by provider. Cost
	// status and source are kept on the row; left empty, the row keeps
	// what it has. PricingVersion is a session's and is refused here.
	Billing Billing
}

// ModelUsage is usage broken down by model, task (Task "" = main loop) and
// billing route.
type ModelUsage struct {
	Model string
	Task  string
	Usage
	FirstSeen time.Time
	LastSeen  time.Time
	// Billing is the route the row's usage was accounted under (provider,
	// base URL, mode; SessionUsage adds the row's cost status and source).
	// UsageTotals sums a model's routes into one row and leaves it empty.
	Billing Billing
}

// route is b's billing route alone: provider, base URL and mode.
func (b Billing) route() Billing {
	return Billing{Provider: b.Provider, BaseURL: b.BaseURL, Mode: b.Mode}
}

// RecordUsage records token and cost usage on a session, in one
// transaction:
//
//   - a main-loop delta (Task "", Absolute false) is added to the session's
//     totals and to its (model, task, billing route) row: one model used
//     through two routes keeps a row per route, as the reference store
//     does; a report naming no route is counted under no route, never
//     under a route it did not name;
//   - an absolute report (Absolute true) sets the session's totals and
//     writes no per-model row: the totals of a provider that reports
//     cumulative figures cannot be split by model;
//   - an auxiliary task's delta (Task set) is added to its (model, task,
//     route) row only — the session's totals count the main loop alone;
//   - a main-loop report naming a Model gives a session that has no model
//     yet that model (Session.Model); a set model is never changed here
//     (SetModel changes it, and records the switch);
//   - the session's billing route (Session.Billing: provider, base URL,
//     mode) follows the latest main-loop report that carried usage and
//     named a route: all three fields replaced together, so a route is
//     never half one provider's and half another's. A report without
//     usage (every figure zero), or naming no route, or an auxiliary
//     task's, leaves it. SetBillingRoute sets it explicitly, until the
//     next such report. (The 2026-07 reference kept the first route; its
//     newest version follows the latest, and sessiondb with it.)
//
// An absolute report for an auxiliary task, and implausible figures (see
// Usage.Validate: negative, NaN or infinite, above MaxUsageCostUSD or
// MaxUsageCount) give ErrInvalidInput and record nothing; an unknown
// session gives ErrNotFound and records nothing.
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
		if r := u.Billing.route(); u.Task == "" && r != (Billing{}) && !u.Usage.IsZero() {
			if _, err := tx.SessionBillingRouteSet(ctx, billingRouteParams(id, r)); err != nil {
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
			BillingProvider: u.Billing.Provider, BillingBaseUrl: u.Billing.BaseURL, BillingMode: u.Billing.Mode,
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
			ReasoningTokens: u.ReasoningTokens, ApiCallCount: u.APICalls,
			EstimatedCostUsd: u.EstimatedCostUSD, ActualCostUsd: u.ActualCostUSD,
			CostStatus: rules.Ptr(u.Billing.CostStatus), CostSource: rules.Ptr(u.Billing.CostSource),
		})
	})
}

// billingRouteParams sets a session's route to r (an empty field: none).
func billingRouteParams(id string, r Billing) driver.SessionBillingRouteSetParams {
	return driver.SessionBillingRouteSetParams{ID: id, BillingProvider: rules.Ptr(r.Provider),
		BillingBaseUrl: rules.Ptr(r.BaseURL), BillingMode: rules.Ptr(r.Mode)}
}

// SetBillingRoute sets the session's billing route — provider, base URL
// and mode; an empty field clears it — as when the caller switches
// provider mid-session. The next main-loop report that carries usage and
// names a route sets it again (RecordUsage). Usage rows keep the routes
// they were accounted under. Cost status, cost source and pricing version are not part of the
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
		return mustHaveRow(tx.SessionBillingRouteSet(ctx, billingRouteParams(id, b)))
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

// SessionUsage returns the session's main-loop totals and its rows, one
// per (model, task, billing route), ordered by model, task, then route
// (provider, base URL, mode). An unknown session gives ErrNotFound.
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
		models = make([]ModelUsage, len(rows))
		for i, m := range rows {
			models[i] = modelUsageFromRow(driver.ModelUsageTotalsRow{Model: m.Model, Task: m.Task,
				InputTokens: m.InputTokens, OutputTokens: m.OutputTokens, CacheReadTokens: m.CacheReadTokens,
				CacheWriteTokens: m.CacheWriteTokens, ReasoningTokens: m.ReasoningTokens, ApiCallCount: m.ApiCallCount,
				EstimatedCostUsd: m.EstimatedCostUsd, ActualCostUsd: m.ActualCostUsd,
				FirstSeenAt: m.FirstSeenAt, LastSeenAt: m.LastSeenAt})
			models[i].Billing = Billing{Provider: m.BillingProvider, BaseURL: m.BillingBaseUrl, Mode: m.BillingMode,
				CostStatus: rules.Str(m.CostStatus), CostSource: rules.Str(m.CostSource)}
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
// totals, and one row per (model, task) ordered by model then task, each
// summing the model's billing routes (UsageByProvider splits by provider).
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
