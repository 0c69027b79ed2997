package store

import (
	"context"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// TreeUsage is the usage of a delegation tree: a session, its compression
// continuations and its delegates, recursively (a delegate's own
// continuations and delegates too). Branches, resets and tool sessions are
// conversations of their own and are not in it.
type TreeUsage struct {
	// RootID is the tree's top: reached from the session asked for up
	// through delegate and compression links. In a cycle of such links it
	// is the member where the walk up closed.
	RootID string
	// SessionIDs is every session of the tree, the root included, by id.
	SessionIDs []string
	// Usage is the sum of the sessions' main-loop totals (Session.Usage).
	Usage Usage
	// Auxiliary is the sum of the tree's auxiliary-task rows (titles,
	// compression, vision), which session totals never count: Usage plus
	// Auxiliary is everything the tree used.
	Auxiliary Usage
	// Models is the tree's rows summed per (model, task, billing route),
	// ordered as SessionUsage orders them; Billing has the route alone.
	Models []ModelUsage
}

// DelegationTreeUsage sums the usage of the delegation tree id belongs to,
// from any of its sessions: a sub-agent's spending counts toward the
// conversation that delegated to it, as the reference store's delegation
// rollup does. One snapshot, so the sums and the member list agree. A
// cycle in the parent links ends the walk (each session counted once); an
// unknown session gives ErrNotFound.
func (s *Store) DelegationTreeUsage(ctx context.Context, id string) (TreeUsage, error) {
	const op = "get delegation tree usage"
	if err := rules.CheckID("session id", id); err != nil {
		return TreeUsage{}, opErr(op, id, err)
	}
	var out TreeUsage
	err := s.snapshot(ctx, op, id, func(q driver.Executor) error {
		if err := sessionMustExist(ctx, q, id); err != nil {
			return err
		}
		root, err := q.DelegationTreeRoot(ctx, id)
		if err != nil {
			return err
		}
		members, err := q.DelegationTreeMembers(ctx, root)
		if err != nil {
			return err
		}
		total, err := q.DelegationTreeUsage(ctx, root)
		if err != nil {
			return err
		}
		rows, err := q.DelegationTreeModelUsage(ctx, root)
		if err != nil {
			return err
		}
		out = TreeUsage{RootID: root, SessionIDs: members, Usage: usageFromRow(driver.SessionUsageGetRow(total)),
			Models: make([]ModelUsage, len(rows))}
		for i, m := range rows {
			out.Models[i] = modelUsageFromRow(driver.ModelUsageTotalsRow{Model: m.Model, Task: m.Task,
				InputTokens: m.InputTokens, OutputTokens: m.OutputTokens, CacheReadTokens: m.CacheReadTokens,
				CacheWriteTokens: m.CacheWriteTokens, ReasoningTokens: m.ReasoningTokens, ApiCallCount: m.ApiCallCount,
				EstimatedCostUsd: m.EstimatedCostUsd, ActualCostUsd: m.ActualCostUsd,
				FirstSeenAt: m.FirstSeenAt, LastSeenAt: m.LastSeenAt})
			out.Models[i].Billing = Billing{Provider: m.BillingProvider, BaseURL: m.BillingBaseUrl, Mode: m.BillingMode}
			if m.Task != "" {
				out.Auxiliary.Add(out.Models[i].Usage)
			}
		}
		return nil
	})
	return out, err
}
