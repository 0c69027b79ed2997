package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/sessiondb/sessiondb/store"
)

func ids(t *testing.T, s *Store) []string {
	t.Helper()
	list, err := s.ListSessions(t.Context(), SessionFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range list {
		out = append(out, x.ID)
	}
	slices.Sort(out)
	return out
}

// backdate moves a session's start, end and messages ago into the past.
func backdate(t *testing.T, e Engine, s *Store, id string, ago time.Duration) {
	t.Helper()
	at := time.Now().Add(-ago).UnixMilli()
	// The casts give PostgreSQL one type for $1 in both places.
	e.Exec(t, s, `UPDATE sessions SET started_at = CAST($1 AS BIGINT),
		ended_at = CASE WHEN ended_at IS NULL THEN NULL ELSE CAST($1 AS BIGINT) END WHERE id = $2`, at, id)
	e.Exec(t, s, "UPDATE messages SET created_at = $1 WHERE session_id = $2", at, id)
}

func bulkStore(t *testing.T, e Engine, specs []bulkSpec) *Store {
	t.Helper()
	ctx := t.Context()
	s := e.Open(t, Options{})
	for _, sp := range specs {
		if sp.kind == ChildCompression {
			holder := NewHolder("test")
			if _, ok, err := s.AcquireCompressionLock(ctx, sp.parent, holder, 0); err != nil || !ok {
				t.Fatal(err)
			}
			wm, _ := s.ActiveWatermark(ctx, sp.parent)
			if _, err := s.PublishCompressionChild(ctx, sp.parent, Continuation{Holder: holder, Watermark: wm,
				Child:    NewSession{ID: sp.id},
				Messages: []NewMessage{{Role: RoleUser, Content: "summary", Summary: true}}}); err != nil {
				t.Fatal(err)
			}
			s.ReleaseCompressionLock(ctx, sp.parent, holder)
		} else if _, err := s.CreateSession(ctx, NewSession{ID: sp.id, Source: sp.source, ParentID: sp.parent, Kind: sp.kind}); err != nil {
			t.Fatal(err)
		}
		for i := range sp.messages {
			if _, err := s.AppendMessage(ctx, sp.id, NewMessage{Role: RoleUser, Content: fmt.Sprint("turn ", i)}); err != nil {
				t.Fatal(err)
			}
		}
		if sp.ended {
			s.EndSession(ctx, sp.id, "done")
		}
		if sp.archived {
			s.SetArchived(ctx, sp.id, true)
		}
		if sp.pinned {
			s.SetPinned(ctx, sp.id, true)
		}
		if sp.leased {
			if _, ok, err := s.AcquireTurnLease(ctx, sp.id, NewHolder("worker"), time.Hour); err != nil || !ok {
				t.Fatal(err)
			}
		}
	}
	for _, sp := range specs { // last: a continuation's publish stamps its parent's end
		if sp.ago > 0 {
			backdate(t, e, s, sp.id, sp.ago)
		}
	}
	return s
}

// runBulkBothWays runs op as a dry run (which must change no byte of the
// file or its WAL) and then for real, and checks both report the same.
func runBulkBothWays(t *testing.T, s *Store, op func(BulkOptions) (BulkResult, error)) BulkResult {
	t.Helper()
	before, sessions := exportAll(t, s), ids(t, s)
	dry, err := op(BulkOptions{DryRun: true, BatchSize: 3})
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if diff := cmp.Diff(string(before), string(exportAll(t, s))); diff != "" {
		t.Errorf("the dry run changed the store (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(sessions, ids(t, s)); diff != "" {
		t.Errorf("the dry run changed the sessions:\n%s", diff)
	}
	real, err := op(BulkOptions{BatchSize: 3})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if diff := cmp.Diff(dry.IDs, real.IDs); diff != "" || !slices.Equal(dry.Spared, real.Spared) {
		t.Errorf("dry run and run disagree (-dry +real):\n%s\nspared %v vs %v", diff, dry.Spared, real.Spared)
	}
	return real
}

func testPruneSessions(t *testing.T, e Engine) {
	spared := []Spared{{ID: "old-leased", Reason: SpareLeased}, {ID: "old-pinned", Reason: SparePinned}, {ID: "root", Reason: SpareContinued}}
	tests := []struct {
		name     string
		f        BulkFilter
		wantGone []string
		spared   []Spared
	}{
		// A live session is pruned only when asked for (issue 34, item 10).
		{"ByAge", BulkFilter{OlderThan: 30 * day},
			[]string{"old-archived", "old-cli", "old-empty", "old-gw"}, spared},
		{"IncludeLive", BulkFilter{OlderThan: 30 * day, IncludeLive: true},
			[]string{"old-archived", "old-cli", "old-empty", "old-gw", "old-live"}, spared},
		{"ExcludeArchived", BulkFilter{OlderThan: 30 * day, ExcludeArchived: true},
			[]string{"old-cli", "old-empty", "old-gw"}, spared},
		{"Source", BulkFilter{OlderThan: 30 * day, Source: "gateway"}, []string{"old-gw"}, nil},
		{"EndedOnly", BulkFilter{OlderThan: 30 * day, EndedOnly: true},
			[]string{"old-archived", "old-cli", "old-empty", "old-gw"}, spared}, // root ended by its compression
		{"EmptyOnly", BulkFilter{OlderThan: 30 * day, EmptyOnly: true}, []string{"old-empty"}, nil},
		{"ArchivedOnly", BulkFilter{OlderThan: 30 * day, ArchivedOnly: true}, []string{"old-archived"}, nil},
		{"NothingThatOld", BulkFilter{OlderThan: 400 * day}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := bulkStore(t, e, pruneSpecs)
			all := ids(t, s)
			res := runBulkBothWays(t, s, func(o BulkOptions) (BulkResult, error) {
				return s.PruneSessions(t.Context(), tt.f, o)
			})
			got := slices.Sorted(slices.Values(res.IDs))
			if diff := cmp.Diff(tt.wantGone, got); diff != "" {
				t.Errorf("pruned (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.spared, res.Spared); diff != "" {
				t.Errorf("spared (-want +got):\n%s", diff)
			}
			left := slices.DeleteFunc(all, func(id string) bool { return slices.Contains(tt.wantGone, id) })
			if diff := cmp.Diff(left, ids(t, s)); diff != "" {
				t.Errorf("sessions left (-want +got):\n%s", diff)
			}
		})
	}
	s := bulkStore(t, e, nil)
	if _, err := s.PruneSessions(t.Context(), BulkFilter{Source: "cli"}, BulkOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("prune without an age = %v, want ErrInvalidInput", err)
	}
	if _, err := s.PruneSessions(t.Context(), BulkFilter{OlderThan: day, ArchivedOnly: true, ExcludeArchived: true}, BulkOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("ArchivedOnly with ExcludeArchived = %v, want ErrInvalidInput", err)
	}
}

// testPruneSparesLiveConversations: a live session idle for longer than
// the age is not pruned by default, and neither is the rest of its
// conversation (issue 34, item 10).
func testPruneSparesLiveConversations(t *testing.T, e Engine) {
	s := bulkStore(t, e, []bulkSpec{
		{id: "idle-live", source: "cli", messages: 1, ago: 40 * day},
		{id: "old-root", source: "cli", messages: 1, ago: 40 * day},
		{id: "old-tip", parent: "old-root", kind: ChildCompression, ago: 40 * day}, // never ended
	})
	res := runBulkBothWays(t, s, func(o BulkOptions) (BulkResult, error) {
		return s.PruneSessions(t.Context(), BulkFilter{OlderThan: 30 * day}, o)
	})
	if len(res.IDs) != 0 || !slices.Equal(res.Spared, []Spared{{ID: "old-root", Reason: SpareContinued}}) {
		t.Errorf("prune = %+v; want nothing pruned, old-root spared for its live tip", res)
	}
	if diff := cmp.Diff([]string{"idle-live", "old-root", "old-tip"}, ids(t, s)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	res, err := s.PruneSessions(t.Context(), BulkFilter{OlderThan: 30 * day, IncludeLive: true}, BulkOptions{})
	if err != nil || res.Done() != 3 {
		t.Errorf("prune IncludeLive = %+v, %v; want all three", res, err)
	}
}

func testDeleteSessionsByIDs(t *testing.T, e Engine) {
	s := bulkStore(t, e, []bulkSpec{
		{id: "a", source: "cli", messages: 1},
		{id: "a-sub", source: "subagent", parent: "a", kind: ChildDelegate, messages: 1},
		{id: "a-branch", source: "cli", parent: "a", kind: ChildBranch},
		{id: "p", source: "cli", pinned: true},
		{id: "root", source: "cli", messages: 1},
		{id: "tip", parent: "root", kind: ChildCompression},
		{id: "keep", source: "cli"},
	})
	res := runBulkBothWays(t, s, func(o BulkOptions) (BulkResult, error) {
		return s.DeleteSessions(t.Context(), BulkFilter{IDs: []string{"a", "p", "root", "nope", "a"}}, o)
	})
	if diff := cmp.Diff([]string{"a", "a-sub"}, res.IDs); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Spared{{ID: "p", Reason: SparePinned}, {ID: "root", Reason: SpareContinued}}, res.Spared); diff != "" {
		t.Errorf("spared (-want +got):\n%s", diff)
	}
	if res.Matched != 3 || res.Orphaned != 1 {
		t.Errorf("matched %d, orphaned %d; want 3 and 1 (the branch)", res.Matched, res.Orphaned)
	}
	if b, err := s.Session(t.Context(), "a-branch"); err != nil || b.ParentID != "" {
		t.Errorf("branch child = %+v, %v; want kept and unlinked", b, err)
	}
	// The whole conversation, named in full, goes.
	res, err := s.DeleteSessions(t.Context(), BulkFilter{IDs: []string{"root", "tip"}}, BulkOptions{})
	if err != nil || len(res.IDs) != 2 {
		t.Errorf("delete root and tip = %+v, %v", res, err)
	}
	if _, err := s.DeleteSessions(t.Context(), BulkFilter{}, BulkOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("delete with no filter = %v, want ErrInvalidInput", err)
	}
	if diff := cmp.Diff([]string{"a-branch", "keep", "p"}, ids(t, s)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}

func testDeleteSessionsByFilter(t *testing.T, e Engine) {
	s := bulkStore(t, e, pruneSpecs)
	res := runBulkBothWays(t, s, func(o BulkOptions) (BulkResult, error) {
		return s.DeleteSessions(t.Context(), BulkFilter{Source: "cli", EndedOnly: true}, o)
	})
	want := []string{"old-archived", "old-cli", "old-empty", "recent"}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(res.IDs))); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
}

func testArchiveSessions(t *testing.T, e Engine) {
	s := bulkStore(t, e, pruneSpecs)
	res := runBulkBothWays(t, s, func(o BulkOptions) (BulkResult, error) {
		return s.ArchiveSessions(t.Context(), BulkFilter{OlderThan: 30 * day, Source: "cli"}, o)
	})
	if diff := cmp.Diff([]string{"old-cli", "old-empty", "old-live"}, slices.Sorted(slices.Values(res.IDs))); diff != "" {
		t.Errorf("archived (-want +got):\n%s", diff)
	}
	if res.Already != 1 || len(res.Spared) != 3 {
		t.Errorf("already %d, spared %v; want 1 (old-archived) and 3", res.Already, res.Spared)
	}
	for _, id := range res.IDs {
		if x, _ := s.Session(t.Context(), id); !x.Archived {
			t.Errorf("%s not archived", id)
		}
	}
	// By id, the whole conversation is archived, as SetArchived does.
	res, err := s.ArchiveSessions(t.Context(), BulkFilter{IDs: []string{"tip"}}, BulkOptions{})
	if err != nil || !slices.Equal(res.IDs, []string{"root", "tip"}) {
		t.Errorf("archive tip = %+v, %v; want root and tip", res, err)
	}
}

func testDeleteGhostSessions(t *testing.T, e Engine) {
	s := bulkStore(t, e, []bulkSpec{
		{id: "ghost", source: "gateway", ago: 2 * day},
		{id: "ghost-pinned", source: "gateway", pinned: true, ago: 2 * day},
		{id: "fresh-ghost", source: "gateway"},
		{id: "talked", source: "gateway", messages: 1, ago: 2 * day},
		// Archived: kept, however empty (issue 34, item 6).
		{id: "ghost-archived", source: "gateway", archived: true, ago: 2 * day},
	})
	res := runBulkBothWays(t, s, func(o BulkOptions) (BulkResult, error) {
		return s.DeleteGhostSessions(t.Context(), 0, o)
	})
	if !slices.Equal(res.IDs, []string{"ghost"}) || !slices.Equal(res.Spared, []Spared{{ID: "ghost-pinned", Reason: SparePinned}}) {
		t.Errorf("ghosts = %+v", res)
	}
	if diff := cmp.Diff([]string{"fresh-ghost", "ghost-archived", "ghost-pinned", "talked"}, ids(t, s)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	// The empty-session sweep by filter leaves archived sessions out when asked.
	res, err := s.DeleteSessions(t.Context(), BulkFilter{EmptyOnly: true, ExcludeArchived: true}, BulkOptions{})
	if err != nil || !slices.Equal(res.IDs, []string{"fresh-ghost"}) {
		t.Errorf("delete empty, not archived = %+v, %v; want fresh-ghost only", res, err)
	}
	if diff := cmp.Diff([]string{"ghost-archived", "ghost-pinned", "talked"}, ids(t, s)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}

// TestBulkResumable: a run stopped after its first batch has committed that
// batch; running it again finishes the rest.
func testBulkResumable(t *testing.T, e Engine) {
	var specs []bulkSpec
	for i := range 25 {
		specs = append(specs, bulkSpec{id: fmt.Sprintf("s%02d", i), source: "cli", ended: true, ago: 40 * day})
	}
	s := bulkStore(t, e, specs)
	ctx, cancel := context.WithCancel(t.Context())
	res, err := s.PruneSessions(ctx, BulkFilter{OlderThan: 30 * day}, BulkOptions{BatchSize: 10,
		OnBatch: func(BulkResult) { cancel() }})
	if !errors.Is(err, context.Canceled) || res.Done() != 10 || res.Batches != 1 {
		t.Fatalf("stopped run = %+v, %v; want 10 done in 1 batch and context.Canceled", res, err)
	}
	if n := len(ids(t, s)); n != 15 {
		t.Fatalf("%d sessions left after the stopped run, want 15", n)
	}
	res, err = s.PruneSessions(t.Context(), BulkFilter{OlderThan: 30 * day}, BulkOptions{BatchSize: 10})
	if err != nil || res.Done() != 15 || res.Batches != 2 {
		t.Fatalf("resumed run = %+v, %v; want the other 15 in 2 batches", res, err)
	}
	if n := len(ids(t, s)); n != 0 {
		t.Errorf("%d sessions left, want 0", n)
	}
}

// bulkSpec is one session of a bulk test's store.
type bulkSpec struct {
	id, source, parent string
	kind               ChildKind
	messages           int
	ended              bool
	ago                time.Duration
	archived, pinned   bool
	leased             bool
}

const day = 24 * time.Hour

var pruneSpecs = []bulkSpec{
	{id: "old-cli", source: "cli", messages: 2, ended: true, ago: 40 * day},
	{id: "old-gw", source: "gateway", messages: 2, ended: true, ago: 40 * day},
	{id: "old-live", source: "cli", messages: 1, ago: 40 * day},
	{id: "old-empty", source: "cli", ended: true, ago: 40 * day},
	{id: "old-archived", source: "cli", messages: 1, ended: true, archived: true, ago: 40 * day},
	{id: "old-pinned", source: "cli", messages: 1, ended: true, pinned: true, ago: 40 * day},
	{id: "old-leased", source: "cli", messages: 1, ended: true, leased: true, ago: 40 * day},
	{id: "recent", source: "cli", messages: 1, ended: true},
	{id: "root", source: "cli", messages: 2, ago: 40 * day},
	{id: "tip", parent: "root", kind: ChildCompression}, // live and recent: root's conversation goes on
}

// testBulkFilterBySession: every field of SessionMatch narrows a bulk
// operation to the sessions that hold it, and the dry run lists exactly
// what the run does (issue 34, "Prune and bulk filters").
func testBulkFilterBySession(t *testing.T, e Engine) {
	ctx := t.Context()
	setup := func(t *testing.T) *Store {
		s := e.Open(t, Options{})
		MustCreate(t, s, NewSession{ID: "a", Source: "cli", Model: "gpt-4o", Cwd: "/src/app", UserID: "ana", Title: "Fix the 100% [build]"})
		MustCreate(t, s, NewSession{ID: "b", Source: "cli", Model: "claude", Cwd: "/src/web", UserID: "bo", Title: "Fix the 100 build"})
		MustCreate(t, s, NewSession{ID: "c", Source: "cli", Model: "claude", UserID: "ana"})
		AppendTexts(t, s, "a", "one", "two", "three")
		if _, err := s.AppendMessage(ctx, "b", NewMessage{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "t1", Name: "ls", Arguments: "{}"}, {ID: "t2", Name: "cat", Arguments: "{}"}}}); err != nil {
			t.Fatal(err)
		}
		for id, u := range map[string]Usage{"a": {InputTokens: 100, OutputTokens: 50, EstimatedCostUSD: 0.5},
			"b": {InputTokens: 1000, OutputTokens: 500, EstimatedCostUSD: 2, ActualCostUSD: 3}} {
			if err := s.RecordUsage(ctx, id, UsageUpdate{Usage: u}); err != nil {
				t.Fatal(err)
			}
		}
		s.EndSession(ctx, "a", "user_exit")
		s.EndSession(ctx, "b", "idle")
		e.Exec(t, s, "UPDATE sessions SET billing_provider = 'openrouter', chat_id = 'chat-7' WHERE id = $1", "b")
		e.Exec(t, s, "UPDATE sessions SET started_at = $1 WHERE id = $2", time.Now().Add(-10*day).UnixMilli(), "a")
		return s
	}
	week := time.Now().Add(-7 * day)
	tests := []struct {
		name string
		m    SessionMatch
		want []string
	}{
		{"Model", SessionMatch{Model: "claude"}, []string{"b", "c"}},
		{"Provider", SessionMatch{Provider: "openrouter"}, []string{"b"}},
		{"TitleLiterally", SessionMatch{TitleContains: "100% [build]"}, []string{"a"}},
		{"TitleNoPattern", SessionMatch{TitleContains: "%"}, []string{"a"}},
		{"EndReason", SessionMatch{EndReason: "idle"}, []string{"b"}},
		{"Cwd", SessionMatch{Cwd: "/src/app"}, []string{"a"}},
		{"User", SessionMatch{UserID: "ana"}, []string{"a", "c"}},
		{"Chat", SessionMatch{ChatID: "chat-7"}, []string{"b"}},
		{"StartedBefore", SessionMatch{StartedBefore: week}, []string{"a"}},
		{"StartedAfter", SessionMatch{StartedAfter: week}, []string{"b", "c"}},
		{"Messages", SessionMatch{MinMessages: 2}, []string{"a"}},
		{"MessagesAtMost", SessionMatch{MinMessages: 1, MaxMessages: 1}, []string{"b"}},
		{"ToolCalls", SessionMatch{MinToolCalls: 2}, []string{"b"}},
		{"Tokens", SessionMatch{MinTokens: 100, MaxTokens: 200}, []string{"a"}},
		{"CostActualFirst", SessionMatch{MinCostUSD: 2.5}, []string{"b"}},
		{"CostAtMost", SessionMatch{MinCostUSD: 0.1, MaxCostUSD: 1}, []string{"a"}},
		{"Together", SessionMatch{UserID: "ana", Model: "claude"}, []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := setup(t)
			res := runBulkBothWays(t, s, func(o BulkOptions) (BulkResult, error) {
				return s.DeleteSessions(t.Context(), BulkFilter{Sessions: tt.m}, o)
			})
			if diff := cmp.Diff(tt.want, slices.Sorted(slices.Values(res.IDs))); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
		})
	}
	s := e.Open(t, Options{})
	for _, m := range []SessionMatch{{MinMessages: 3, MaxMessages: 2}, {MinTokens: -1}, {MaxCostUSD: -1},
		{StartedAfter: week, StartedBefore: week.Add(-time.Hour)}, {Model: "bad\xffmodel"}} {
		if _, err := s.PruneSessions(ctx, BulkFilter{OlderThan: day, Sessions: m}, BulkOptions{}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("PruneSessions with %+v = %v, want ErrInvalidInput", m, err)
		}
	}
}
