package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// KeepPolicy says how much of the recent conversation a compaction keeps
// verbatim. Set Turns, TokenBudget or both (then both limits hold: the
// shorter tail is kept); the zero value is refused.
type KeepPolicy struct {
	// Turns keeps the last Turns turns. A turn starts at a user message and
	// runs to the next one (the assistant's replies, its tool calls and
	// their results included).
	Turns int
	// TokenBudget keeps the longest recent tail whose token counts add up
	// to at most TokenBudget. A row's stored TokenCount is used; a row
	// stored without one counts a quarter of its text's bytes (at least 1),
	// so unknown counts cannot make the tail unbounded. The newest group of
	// rows is kept even when it alone is over the budget: a conversation
	// compacted down to its summary would leave the model nothing to answer.
	TokenBudget int64
}

// Summarizer writes the summary of the rows a compaction replaces, oldest
// first. It runs while the caller holds the compression lock and no
// transaction is open: appends go on meanwhile and are carried over.
type Summarizer func(ctx context.Context, replaced []Message) (string, error)

// CompactKeepingLast compacts the session in one call: it takes the
// compression lock for holder (see NewHolder; a lock the caller already
// holds is used and kept), reads the active conversation, keeps the tail
// chosen by keep verbatim, asks summarize for a summary of everything
// before it, and replaces that with the summary (an assistant message
// marked Summary) by CompactSession. The kept rows and any appended while
// summarize ran follow the summary (CompactResult.Carried), in order:
// only the rows it read and summarised are compacted (Compaction.Held).
//
// A cut never falls between an assistant message with tool calls and the
// tool results that answer them, and the kept tail never starts with a
// tool result. When there is nothing to replace (the policy keeps the
// whole conversation), summarize is not called and the result is zero.
//
// A lock held by another is ErrLeaseHeld; a lock lost while summarize ran
// (it took longer than DefaultLeaseTTL and another compressor took over)
// is ErrLeaseLost and nothing is written; an error from summarize is
// returned as it is, and nothing is written either.
func (s *Store) CompactKeepingLast(ctx context.Context, sessionID, holder string, keep KeepPolicy, summarize Summarizer) (CompactResult, error) {
	const op = "compact keeping last"
	if err := firstErr(rules.CheckID("session id", sessionID), checkLease(holder, 0), keep.check()); err != nil {
		return CompactResult{}, opErr(op, sessionID, err)
	}
	if summarize == nil {
		return CompactResult{}, opErr(op, sessionID, invalid("nil summarizer"))
	}
	release, err := s.holdCompressionLock(ctx, sessionID, holder)
	if err != nil {
		return CompactResult{}, opErr(op, sessionID, err)
	}
	defer release()

	all, err := s.Conversation(ctx, sessionID, ConversationOptions{IncludeNotes: true})
	if err != nil {
		return CompactResult{}, err
	}
	rows := slices.DeleteFunc(slices.Clone(all), func(m Message) bool { return m.Role == RoleNote })
	cut := keep.cut(rows)
	if cut == 0 {
		return CompactResult{}, nil
	}
	summary, err := summarize(ctx, slices.Clone(rows[:cut]))
	if err != nil {
		return CompactResult{}, err
	}
	if summary == "" {
		return CompactResult{}, opErr(op, sessionID, invalid("the summarizer returned an empty summary"))
	}
	// Exactly the rows read up to the cut (notes among them) are replaced;
	// every other active row — the kept tail, rows appended while
	// summarize ran, a row committed late below the cut — is carried
	// after the summary as a copy of the same turn (Compaction.Held).
	var held []int64
	for _, m := range all {
		if m.ID <= rows[cut-1].ID {
			held = append(held, m.ID)
		}
	}
	return s.CompactSession(ctx, sessionID, Compaction{Holder: holder, Held: held,
		Messages: []NewMessage{{Role: RoleAssistant, Content: summary, Summary: true}}})
}

// holdCompressionLock takes sessionID's compression lock for holder and
// returns the function that gives it back — a no-op when holder already
// held it (its owner releases it), and never cancelled with ctx, so a
// cancelled call does not leave the lock standing until it expires. A
// session already continued elsewhere is refused here, before any work.
func (s *Store) holdCompressionLock(ctx context.Context, sessionID, holder string) (release func(), err error) {
	before, err := s.CompressionLock(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	err = s.read(ctx, "check session", sessionID, func(q driver.Executor) error {
		reason, err := q.SessionEndReason(ctx, sessionID)
		if err != nil || rules.Str(reason) != compressionEndReason {
			return err
		}
		return continuedError(ctx, q, sessionID)
	})
	if err != nil {
		return nil, err
	}
	cur, got, err := s.AcquireCompressionLock(ctx, sessionID, holder, 0)
	if err != nil {
		return nil, err
	}
	if !got {
		return nil, fmt.Errorf("%w: the compression lock of %q is held by %q until %s", ErrLeaseHeld, sessionID,
			cur.Holder, cur.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if before.Holder == holder && before.Live(time.Now()) {
		return func() {}, nil
	}
	return func() {
		if _, err := s.ReleaseCompressionLock(context.WithoutCancel(ctx), sessionID, holder); err != nil {
			s.opts.Logger.Warn("release compression lock", "session", sessionID, "err", err)
		}
	}, nil
}

func (k KeepPolicy) check() error {
	switch {
	case k.Turns < 0 || k.TokenBudget < 0:
		return invalid("negative keep policy")
	case k.Turns == 0 && k.TokenBudget == 0:
		return invalid("keep policy sets neither turns nor a token budget")
	}
	return nil
}

// cut returns the index of the first row kept: rows[:cut] are replaced.
func (k KeepPolicy) cut(rows []Message) int {
	cuts := cutPoints(rows)
	cut := 0
	if k.Turns > 0 {
		starts := slices.DeleteFunc(slices.Clone(cuts), func(c int) bool { return rows[c].Role != RoleUser })
		if len(starts) >= k.Turns {
			cut = starts[len(starts)-k.Turns]
		}
	}
	if k.TokenBudget > 0 && len(cuts) > 0 {
		fit := cuts[len(cuts)-1] // the newest group, kept even over budget
		total := int64(0)
		for i, next := len(cuts)-1, len(rows); i >= 0; i-- {
			for _, m := range rows[cuts[i]:next] {
				total += m.tokens()
			}
			if total > k.TokenBudget {
				break
			}
			fit, next = cuts[i], cuts[i]
		}
		cut = max(cut, fit)
	}
	return cut
}

// cutPoints returns, in order, the indexes where rows may be cut (rows[c:]
// kept): never inside a tool exchange — from an assistant message with
// tool calls to the first tool result answering each call, and the run of
// tool results right after it — and never at a tool result.
func cutPoints(rows []Message) []int {
	answers := map[string][]int{} // tool call id -> indexes of its results, ascending
	for i, m := range rows {
		if m.Role == RoleTool && m.ToolCallID != "" {
			answers[m.ToolCallID] = append(answers[m.ToolCallID], i)
		}
	}
	var cuts []int
	reach := -1 // the furthest row an exchange started before here extends to
	for c := range rows {
		if c > reach && rows[c].Role != RoleTool {
			cuts = append(cuts, c)
		}
		reach = max(reach, exchangeEnd(rows, c, answers))
	}
	return cuts
}

// exchangeEnd is the index of the last row of the tool exchange rows[i]
// opens (i itself when it opens none). A call's answer is the first result
// after i with its id (providers may reuse ids in later exchanges).
func exchangeEnd(rows []Message, i int, answers map[string][]int) int {
	m := rows[i]
	if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
		return i
	}
	end := i
	for end+1 < len(rows) && rows[end+1].Role == RoleTool {
		end++
	}
	for _, c := range m.ToolCalls {
		at := answers[c.ID]
		if j, _ := slices.BinarySearch(at, i+1); j < len(at) {
			end = max(end, at[j])
		}
	}
	return end
}

// tokens is the row's stored token count, or an estimate from its size.
func (m *Message) tokens() int64 {
	if m.TokenCount > 0 {
		return m.TokenCount
	}
	n := len(m.Content) + len(m.Reasoning)
	for _, c := range m.ToolCalls {
		n += len(c.Name) + len(c.Arguments)
	}
	return max(1, int64(n+3)/4)
}

// AsNew returns the message as a NewMessage that appends it again verbatim
// (to keep it across a compaction or a continuation): role, content, parts,
// tool fields, reasoning and its details, finish reason, token count, the
// summary mark, model and metadata, display kind, and identity: the
// message's UID, its calls' UIDs and a result's CallUID, so the new row is
// the same turn, still paired with its call (a
// rebuilt transcript written back by ReplaceMessages keeps them). The
// idempotency key and the platform
// message id are left out: the original row keeps answering retries and
// re-deliveries of the append it came from, and compaction messages take
// none. The creation time is the new append's.
func (m Message) AsNew() NewMessage {
	return NewMessage{
		Role: m.Role, Content: m.Content, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
		ToolCalls: slices.Clone(m.ToolCalls), Reasoning: m.Reasoning, FinishReason: m.FinishReason,
		TokenCount: m.TokenCount, Summary: m.Summary, Parts: slices.Clone(m.Parts),
		ReasoningDetails: m.ReasoningDetails, Model: m.Model, Metadata: m.Metadata,
		Observed: m.Observed, EffectDisposition: m.EffectDisposition, ReasoningContent: m.ReasoningContent,
		DisplayKind: m.DisplayKind, UID: m.UID, CallUID: m.CallUID,
	}
}
