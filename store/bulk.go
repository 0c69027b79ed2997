package store

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/store/driver"
)

// defaultBulkBatch is how many candidate sessions one bulk transaction
// weighs: the write lock is given back between batches.
const defaultBulkBatch = 100

// DefaultGhostAge is how old a session without a single message must be
// before DeleteGhostSessions takes it: a gateway creates its session
// before the first turn, and a fresh one is only waiting for it.
const DefaultGhostAge = 24 * time.Hour

// BulkFilter selects the sessions of a bulk operation; each set field
// narrows the selection, and a session must pass all of them.
type BulkFilter struct {
	// IDs limits the operation to these sessions.
	IDs []string
	// OlderThan: the last sign of life (the end, the latest activity, the
	// newest message, or the start) is longer ago than this.
	OlderThan    time.Duration
	Source       string
	EndedOnly    bool // only ended sessions
	EmptyOnly    bool // only sessions without a single message
	ArchivedOnly bool // only archived sessions
	// ExcludeArchived leaves archived sessions out: a user archived them
	// to keep them, even empty ones. DeleteGhostSessions always sets it.
	ExcludeArchived bool
	// IncludeLive lets PruneSessions take sessions that never ended (idle
	// for OlderThan). Without it PruneSessions selects ended sessions only,
	// as Prune does: a live session is never pruned unless asked for.
	// DeleteSessions and ArchiveSessions ignore it (EndedOnly narrows them).
	IncludeLive bool
	// Sessions narrows by what each session holds: its model, provider,
	// title, counts, tokens, cost, end reason, place and start (see
	// SessionMatch). Every session of a conversation must match for it to
	// go, as with the other fields.
	Sessions SessionMatch
}

// SessionMatch narrows a bulk operation by what a session says of itself.
// A zero field is unset. Bounds are inclusive.
type SessionMatch struct {
	Model         string
	Provider      string // the session's billing provider
	TitleContains string // a literal substring of the title (no pattern syntax)
	EndReason     string
	Cwd           string
	UserID        string
	ChatID        string
	// StartedAfter / StartedBefore bound the session's start.
	StartedAfter, StartedBefore time.Time
	MinMessages, MaxMessages    int64 // Session.MessageCount (live rows)
	MinToolCalls, MaxToolCalls  int64
	// MinTokens / MaxTokens bound input plus output tokens.
	MinTokens, MaxTokens int64
	// MinCostUSD / MaxCostUSD bound the session's cost: its actual cost
	// when known, else its estimate.
	MinCostUSD, MaxCostUSD float64
}

func (m SessionMatch) set() bool { return m != SessionMatch{} }

// validate refuses bounds no session can meet and labels no session holds.
func (m SessionMatch) validate() error {
	for _, b := range []struct {
		what     string
		min, max int64
	}{{"messages", m.MinMessages, m.MaxMessages}, {"tool calls", m.MinToolCalls, m.MaxToolCalls}, {"tokens", m.MinTokens, m.MaxTokens}} {
		if b.min < 0 || b.max < 0 || (b.max > 0 && b.min > b.max) {
			return invalid("%s bounds %d..%d select nothing", b.what, b.min, b.max)
		}
	}
	if m.MinCostUSD < 0 || m.MaxCostUSD < 0 || (m.MaxCostUSD > 0 && m.MinCostUSD > m.MaxCostUSD) ||
		math.IsNaN(m.MinCostUSD) || math.IsNaN(m.MaxCostUSD) {
		return invalid("cost bounds %v..%v select nothing", m.MinCostUSD, m.MaxCostUSD)
	}
	if !m.StartedAfter.IsZero() && !m.StartedBefore.IsZero() && !m.StartedAfter.Before(m.StartedBefore) {
		return invalid("started after %v and before %v selects nothing", m.StartedAfter, m.StartedBefore)
	}
	return rules.CheckLabels([]rules.Field{{Name: "model", Value: m.Model}, {Name: "provider", Value: m.Provider},
		{Name: "title", Value: m.TitleContains}, {Name: "end reason", Value: m.EndReason}, {Name: "cwd", Value: m.Cwd},
		{Name: "user id", Value: m.UserID}, {Name: "chat id", Value: m.ChatID}})
}

// matches reports whether the session row meets every set field.
func (m SessionMatch) matches(r driver.Session) bool {
	cost := r.ActualCostUsd
	if cost == 0 {
		cost = r.EstimatedCostUsd
	}
	tokens := r.InputTokens + r.OutputTokens
	eq := func(want string, got *string) bool { return want == "" || want == rules.Str(got) }
	within := func(v, lo, hi int64) bool { return v >= lo && (hi == 0 || v <= hi) }
	switch {
	case !eq(m.Model, r.Model), !eq(m.Provider, r.BillingProvider), !eq(m.EndReason, r.EndReason),
		!eq(m.Cwd, r.Cwd), !eq(m.UserID, r.UserID), !eq(m.ChatID, r.ChatID),
		m.TitleContains != "" && !strings.Contains(rules.Str(r.Title), m.TitleContains),
		!m.StartedAfter.IsZero() && r.StartedAt <= m.StartedAfter.UnixMilli(),
		!m.StartedBefore.IsZero() && r.StartedAt >= m.StartedBefore.UnixMilli(),
		!within(r.MessageCount, m.MinMessages, m.MaxMessages),
		!within(r.ToolCallCount, m.MinToolCalls, m.MaxToolCalls),
		!within(tokens, m.MinTokens, m.MaxTokens),
		cost < m.MinCostUSD, m.MaxCostUSD > 0 && cost > m.MaxCostUSD:
		return false
	}
	return true
}

func (f BulkFilter) empty() bool {
	return f.IDs == nil && f.OlderThan == 0 && f.Source == "" && !f.EndedOnly && !f.EmptyOnly && !f.ArchivedOnly &&
		!f.Sessions.set()
}

// BulkOptions tune a bulk operation.
type BulkOptions struct {
	// DryRun lists what would be done and changes nothing.
	DryRun bool
	// BatchSize caps the candidates weighed per transaction (default 100).
	BatchSize int
	// OnBatch, when set, is told the running result after each batch.
	OnBatch func(BulkResult)
}

// SpareReason says why a selected session was kept.
type SpareReason string

// Why a bulk operation keeps a session it selected.
const (
	// SparePinned: the conversation is pinned.
	SparePinned SpareReason = "pinned"
	// SpareLeased: a live turn lease or compression lock: someone is working on it.
	SpareLeased SpareReason = "leased"
	// SpareContinued: the conversation goes on in a session the operation
	// does not take (a compression continuation that is live, recent or
	// outside the selection): a conversation goes only as a whole.
	SpareContinued SpareReason = "continued"
)

// Spared is a selected session that was kept, and why.
type Spared struct {
	ID     string
	Reason SpareReason
}

// BulkResult says what a bulk operation did (or, in a dry run, would do).
type BulkResult struct {
	Matched int      // sessions the filter selected
	IDs     []string // sessions deleted or archived (or that would be), in order
	// Already counts selected sessions already in the requested state
	// (archiving an archived conversation).
	Already  int
	Spared   []Spared
	Orphaned int // children of deleted sessions that were kept and unlinked
	Batches  int // transactions committed (snapshots read, in a dry run)
	DryRun   bool
}

// Done is how many sessions were deleted or archived (or would be).
func (r BulkResult) Done() int { return len(r.IDs) }

// pruneOp records meta "last_prune" when it completes, as Prune does.
const pruneOp = "prune sessions"

type bulkAction int

const (
	bulkDelete bulkAction = iota
	bulkArchive
	bulkAutoArchive
)

// archives reports whether the action archives (a person's or the sweep's).
func (a bulkAction) archives() bool { return a == bulkArchive || a == bulkAutoArchive }

// DeleteSessions deletes the sessions f selects, a whole conversation at a
// time, sparing what Prune spares: a conversation goes only when every
// session of its compression lineage is selected (the ancestors of a live
// continuation stay), none is pinned and none is under a live lease.
// Sessions selected by IDs alone are deleted as DeleteSession deletes
// them — with their delegate children — and spared when pinned, leased,
// or continued by a compression child the list does not name. Children
// that are not deleted are kept and unlinked (Orphaned).
//
// It works in batches (BulkOptions.BatchSize candidates per transaction,
// other writers get the lock between them); a run stopped half-way has
// committed whole batches, and running it again finishes the job. An
// empty filter is refused: it would select every session.
func (s *Store) DeleteSessions(ctx context.Context, f BulkFilter, o BulkOptions) (BulkResult, error) {
	return s.bulk(ctx, "delete sessions", bulkDelete, f, o)
}

// PruneSessions is DeleteSessions by age: f.OlderThan is required. It
// takes ended sessions only — a session that never ended is someone's
// conversation, however idle — unless f.IncludeLive asks for idle live
// ones too; a conversation with a live session that is not selected is
// spared whole (SpareContinued).
func (s *Store) PruneSessions(ctx context.Context, f BulkFilter, o BulkOptions) (BulkResult, error) {
	if f.OlderThan <= 0 {
		return BulkResult{}, opErr(pruneOp, "", invalid("prune age must be positive, got %v", f.OlderThan))
	}
	if !f.IncludeLive {
		f.EndedOnly = true
	}
	return s.bulk(ctx, pruneOp, bulkDelete, f, o)
}

// DeleteGhostSessions deletes sessions that never got a message and are
// older than olderThan (0: DefaultGhostAge), with DeleteSessions' rules.
// Archived sessions are kept: archiving one is a wish to keep it.
func (s *Store) DeleteGhostSessions(ctx context.Context, olderThan time.Duration, o BulkOptions) (BulkResult, error) {
	if olderThan <= 0 {
		olderThan = DefaultGhostAge
	}
	return s.bulk(ctx, "delete ghost sessions", bulkDelete,
		BulkFilter{EmptyOnly: true, OlderThan: olderThan, ExcludeArchived: true}, o)
}

// ArchiveSessions archives the conversations f selects: every session of
// a compression lineage, when all of them are selected, none is pinned
// and none is leased (as DeleteSessions). Batched and resumable likewise;
// a conversation already archived counts in Already. It is a person's
// archive, as SetArchived's: one the idle sweep made becomes theirs (new
// activity no longer takes it back) and is done again.
func (s *Store) ArchiveSessions(ctx context.Context, f BulkFilter, o BulkOptions) (BulkResult, error) {
	return s.bulk(ctx, "archive sessions", bulkArchive, f, o)
}

// autoArchiveOp names the idle sweep.
const autoArchiveOp = "auto-archive sessions"

// AutoArchiveSessions is the idle sweep: it archives the conversations
// whose every session shows no sign of life for f.OlderThan (required),
// with ArchiveSessions' rules — a pinned or leased conversation is spared,
// an archived session left as it is (Already), a lineage archived whole —
// and marks the archive as the sweep's (Session.AutoArchived). New activity
// on such a conversation (an append, a batch, a compression continuation)
// takes the archive back; a person's archive (SetArchived,
// ArchiveSessions) is never taken back. f narrows it further; o.DryRun
// lists what it would archive. It records meta "last_auto_archive".
func (s *Store) AutoArchiveSessions(ctx context.Context, f BulkFilter, o BulkOptions) (BulkResult, error) {
	if f.OlderThan <= 0 {
		return BulkResult{DryRun: o.DryRun}, opErr(autoArchiveOp, "", invalid("auto-archive idle time must be positive, got %v", f.OlderThan))
	}
	return s.bulk(ctx, autoArchiveOp, bulkAutoArchive, f, o)
}

func (s *Store) bulk(ctx context.Context, op string, action bulkAction, f BulkFilter, o BulkOptions) (BulkResult, error) {
	res := BulkResult{DryRun: o.DryRun}
	switch {
	case f.empty():
		return res, opErr(op, "", invalid("no filter: give ids or at least one filter (refusing to select every session)"))
	case f.OlderThan < 0:
		return res, opErr(op, "", invalid("negative age %v", f.OlderThan))
	case o.BatchSize < 0:
		return res, opErr(op, "", invalid("negative batch size"))
	case f.ArchivedOnly && f.ExcludeArchived:
		return res, opErr(op, "", invalid("ArchivedOnly and ExcludeArchived select nothing together"))
	}
	for _, id := range f.IDs {
		if err := rules.CheckID("session id", id); err != nil {
			return res, opErr(op, id, err)
		}
	}
	if err := rules.CheckLabel("source", f.Source); err != nil {
		return res, opErr(op, "", err)
	}
	if err := f.Sessions.validate(); err != nil {
		return res, opErr(op, "", err)
	}
	if o.BatchSize == 0 {
		o.BatchSize = defaultBulkBatch
	}
	b := bulkRun{f: f, action: action, dry: o.DryRun, handled: map[string]bool{}, orphans: map[string]bool{}}
	if f.OlderThan > 0 {
		b.cutoff = now() - f.OlderThan.Milliseconds()
	}
	if f.IDs != nil {
		b.ids = slices.Clone(f.IDs)
		slices.Sort(b.ids)
		b.ids = slices.Compact(b.ids)
		b.wanted = set(b.ids...)
	}
	for {
		var step bulkStep
		fn := func(ctx context.Context, tx driver.Executor) error {
			var err error
			step, err = b.batch(ctx, tx, o.BatchSize) // fresh on every (re)play
			return err
		}
		var err error
		if o.DryRun {
			err = s.snapshot(ctx, op, "", func(q driver.Executor) error { return fn(ctx, q) })
		} else {
			err = s.write(ctx, op, "", s.opts.WritePatience, fn)
		}
		if err != nil {
			return res, err
		}
		b.commit(step, &res)
		res.Batches++
		if o.OnBatch != nil {
			o.OnBatch(res)
		}
		if step.done {
			break
		}
	}
	if action == bulkDelete && !o.DryRun && len(b.orphans) > 0 {
		err := s.read(ctx, op, "", func(q driver.Executor) error {
			for id := range b.orphans {
				if err := sessionMustExist(ctx, q, id); err == nil {
					res.Orphaned++
				} else if !errors.Is(err, ErrNotFound) {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return res, err
		}
	}
	if op == pruneOp && !o.DryRun {
		return res, s.SetMeta(ctx, "last_prune", time.Now().UTC().Format(time.RFC3339))
	}
	if op == autoArchiveOp && !o.DryRun {
		return res, s.SetMeta(ctx, "last_auto_archive", time.Now().UTC().Format(time.RFC3339))
	}
	return res, nil
}

// bulkRun is one bulk operation's state between batches.
type bulkRun struct {
	f      BulkFilter
	action bulkAction
	dry    bool
	cutoff int64
	ids    []string        // IDs mode: the sorted ids, consumed a batch at a time
	wanted map[string]bool // IDs mode: the ids asked for
	cursor string          // filter mode: the last candidate id weighed
	// handled are sessions dealt with in an earlier batch (done, spared or
	// counted with their lineage): a lineage is weighed once.
	handled map[string]bool
	orphans map[string]bool
}

// bulkStep is one batch's outcome, applied to the run once committed
// (a replayed batch starts from a fresh step).
type bulkStep struct {
	matched, already int
	doneIDs          []string
	spared           []Spared
	handled          []string
	unlinked         []string
	cursor           string
	ids              []string // IDs mode: the ids left after this batch
	done             bool     // nothing left to weigh
}

func (b *bulkRun) commit(st bulkStep, res *BulkResult) {
	res.Matched += st.matched
	res.Already += st.already
	res.IDs = append(res.IDs, st.doneIDs...)
	res.Spared = append(res.Spared, st.spared...)
	for _, id := range st.handled {
		b.handled[id] = true
	}
	for _, id := range st.unlinked {
		b.orphans[id] = true
	}
	b.cursor, b.ids = st.cursor, st.ids
}

// bulkFacts are what the filter and the sparing rules weigh of a session.
type bulkFacts struct {
	id           string
	pinned       bool
	archived     bool
	autoArchived bool
	ended        bool
	lastAlive    int64
	hasMessages  bool
	source       string
	// matched: the session meets the filter's SessionMatch (true when
	// none is set).
	matched bool
}

func (b *bulkRun) matches(f bulkFacts) bool {
	switch {
	case b.wanted != nil && !b.wanted[f.id],
		b.f.Source != "" && f.source != b.f.Source,
		b.f.EndedOnly && !f.ended,
		b.f.EmptyOnly && f.hasMessages,
		b.f.ArchivedOnly && !f.archived,
		b.f.ExcludeArchived && f.archived,
		!f.matched,
		b.cutoff != 0 && f.lastAlive >= b.cutoff:
		return false
	}
	return true
}

func (b *bulkRun) matchesBesidesIDs(f bulkFacts) bool {
	without := *b
	without.wanted = nil
	return without.matches(f)
}

func (b *bulkRun) loadBulkFacts(ctx context.Context, q driver.Executor, id string) (bulkFacts, error) {
	r, err := q.SessionBulkFacts(ctx, id)
	if err != nil {
		return bulkFacts{}, err
	}
	f := bulkFacts{id: r.ID, pinned: r.Pinned != 0, archived: r.Archived != 0, autoArchived: r.AutoArchived != 0, ended: r.EndedAt != nil,
		lastAlive: r.LastAlive, hasMessages: r.HasMessages != 0, source: r.Source, matched: true}
	if b.f.Sessions.set() {
		row, err := q.SessionGet(ctx, id)
		if err != nil {
			return bulkFacts{}, err
		}
		f.matched = b.f.Sessions.matches(row)
	}
	return f, nil
}

// batch weighs the next candidates, and (unless a dry run) acts on those
// that go, inside the caller's transaction.
func (b *bulkRun) batch(ctx context.Context, tx driver.Executor, size int) (bulkStep, error) {
	st := bulkStep{cursor: b.cursor, ids: b.ids}
	var candidates []string
	if b.wanted != nil {
		n := min(size, len(b.ids))
		candidates, st.ids = b.ids[:n], b.ids[n:]
		st.done = len(st.ids) == 0
	} else {
		rows, err := tx.SessionBulkCandidates(ctx, driver.SessionBulkCandidatesParams{
			AfterID: b.cursor, Source: rules.Ptr(b.f.Source), EndedOnly: rules.B2I(b.f.EndedOnly),
			ArchivedOnly: rules.B2I(b.f.ArchivedOnly), EmptyOnly: rules.B2I(b.f.EmptyOnly), RowLimit: int64(size)})
		if err != nil {
			return st, err
		}
		for _, r := range rows {
			candidates = append(candidates, r.ID)
		}
		if len(rows) > 0 {
			st.cursor = rows[len(rows)-1].ID
		}
		st.done = len(rows) < size
	}
	inStep := map[string]bool{}
	for _, id := range candidates {
		if b.handled[id] || inStep[id] {
			continue
		}
		facts, err := b.loadBulkFacts(ctx, tx, id)
		if errors.Is(err, ErrNotFound) {
			continue // gone (an id that names no session, or deleted with its lineage)
		}
		if err != nil {
			return st, err
		}
		if !b.matches(facts) {
			continue
		}
		st.matched++
		unit, reason, err := b.unit(ctx, tx, id)
		if err != nil {
			return st, err
		}
		for _, u := range unit {
			inStep[u] = true
			st.handled = append(st.handled, u)
		}
		if reason != "" {
			st.spared = append(st.spared, Spared{ID: id, Reason: reason})
			continue
		}
		if err := b.act(ctx, tx, unit, &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// unit is what goes with id — its lineage (filter mode, archive) or its
// deletion set (IDs mode) — or why it is spared.
func (b *bulkRun) unit(ctx context.Context, tx driver.Executor, id string) ([]string, SpareReason, error) {
	var unit []string
	var err error
	if b.action == bulkDelete && b.wanted != nil {
		unit, err = deletionSet(ctx, tx, id)
	} else {
		unit, err = lineageIDs(ctx, tx, id)
	}
	if err != nil {
		return nil, "", err
	}
	member := set(unit...)
	for _, sid := range unit {
		f, err := b.loadBulkFacts(ctx, tx, sid)
		if err != nil {
			return nil, "", err
		}
		if f.pinned {
			return unit, SparePinned, nil
		}
		if err := leasesAllow(ctx, tx, sid, ""); errors.Is(err, ErrLeaseHeld) {
			return unit, SpareLeased, nil
		} else if err != nil {
			return nil, "", err
		}
		if b.action == bulkDelete && b.wanted != nil {
			// A deletion set is the session and its delegates; a
			// compression child outside it continues the conversation.
			children, err := tx.SessionChildren(ctx, &sid)
			if err != nil {
				return nil, "", err
			}
			for _, c := range children {
				if ChildKind(rules.Str(c.ParentKind)).Continues() && !member[c.ID] && !b.wanted[c.ID] {
					return unit, SpareContinued, nil
				}
			}
			continue
		}
		// The rest of the lineage must be selected too; archiving by id
		// takes the whole conversation, as SetArchived does.
		if sid != id && !b.matches(f) && !(b.action.archives() && b.wanted != nil && b.matchesBesidesIDs(f)) {
			return unit, SpareContinued, nil
		}
	}
	return unit, "", nil
}

// act deletes or archives a unit; in a dry run it only records it.
func (b *bulkRun) act(ctx context.Context, tx driver.Executor, unit []string, st *bulkStep) error {
	if b.action.archives() {
		var todo []string
		for _, sid := range unit {
			f, err := b.loadBulkFacts(ctx, tx, sid)
			if err != nil {
				return err
			}
			// The sweep leaves any archive as it is; a person's archive
			// makes the sweep's theirs.
			if !f.archived || (b.action == bulkArchive && f.autoArchived) {
				todo = append(todo, sid)
			}
		}
		if len(todo) == 0 {
			st.already += len(unit)
			return nil
		}
		if !b.dry {
			for _, sid := range todo {
				var err error
				if b.action == bulkAutoArchive {
					_, err = tx.SessionAutoArchive(ctx, sid)
				} else {
					_, err = tx.SessionSetFlags(ctx, driver.SessionSetFlagsParams{ID: sid, Archived: flag(true)})
				}
				if err != nil {
					return err
				}
			}
		}
		st.doneIDs = append(st.doneIDs, todo...)
		st.already += len(unit) - len(todo)
		return nil
	}
	member := set(unit...)
	for _, sid := range slices.Backward(unit) { // children before parents
		children, err := tx.SessionChildren(ctx, &sid)
		if err != nil {
			return err
		}
		for _, c := range children {
			if !member[c.ID] {
				st.unlinked = append(st.unlinked, c.ID)
			}
		}
		if !b.dry {
			if err := removeSession(ctx, tx, sid); err != nil {
				return err
			}
		}
	}
	st.doneIDs = append(st.doneIDs, unit...)
	return nil
}

// set is a set of strings.
func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
