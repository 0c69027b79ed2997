package db

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// searchFixture is a store with named messages.
type searchFixture struct {
	s   *Store
	ids map[string]int64
	key map[int64]string
}

// keyedMessage is a message the fixture names by key.
type keyedMessage struct {
	key string
	m   NewMessage
}

func newSearchFixture(t *testing.T, opts Options) *searchFixture {
	t.Helper()
	return &searchFixture{s: openTestStore(t, opts), ids: map[string]int64{}, key: map[int64]string{}}
}

func (f *searchFixture) session(t *testing.T, n NewSession, ms ...keyedMessage) {
	t.Helper()
	if _, err := f.s.CreateSession(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	batch := make([]NewMessage, len(ms))
	for i, km := range ms {
		batch[i] = km.m
	}
	ids, err := f.s.AppendMessages(t.Context(), n.ID, batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, km := range ms {
		f.ids[km.key], f.key[ids[i]] = ids[i], km.key
	}
}

// indexed indexes everything queued, so relevance ranks every hit (queued
// messages come first, unranked: see SortRelevance).
func (f *searchFixture) indexed(t *testing.T) {
	t.Helper()
	if err := f.s.IndexNow(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// keys names the hits, in order.
func (f *searchFixture) keys(hits []SearchHit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, f.key[h.MessageID])
	}
	return out
}

func user(key, content string) keyedMessage {
	return keyedMessage{key, NewMessage{Role: RoleUser, Content: content}}
}

func assistant(key, content string) keyedMessage {
	return keyedMessage{key, NewMessage{Role: RoleAssistant, Content: content}}
}

// setMessageState marks one message compacted or rewound directly, so a
// fixture holds every state side by side (CompactSession and RewindTo act
// on ranges of a conversation; TestSearch_FollowsTheDomain goes through
// them).
func setMessageState(t *testing.T, s *Store, id int64, state MessageState) {
	t.Helper()
	err := s.write(t.Context(), "test: set state", "", time.Second, func(ctx context.Context, tx genDBTX) error {
		_, err := tx.ExecContext(ctx, "UPDATE messages SET state = ? WHERE id = ?", string(state), id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hideSession hides a session's conversation.
func hideSession(t *testing.T, s *Store, id string) {
	t.Helper()
	if _, err := s.SetHidden(t.Context(), id, true); err != nil {
		t.Fatal(err)
	}
}

// conversationFixture: two visible sessions, one hidden, a compacted and a
// rewound message.
func conversationFixture(t *testing.T, opts Options) *searchFixture {
	f := newSearchFixture(t, opts)
	f.session(t, NewSession{ID: "s1", Source: "cli", Model: "gpt-4o"},
		assistant("deploy-x3", "deploy deploy deploy"),
		user("k8s-ask", "How do I deploy the kubernetes cluster? It has been failing since the upgrade, and the on-call team wants a plan."),
		keyedMessage{"k8s-answer", NewMessage{Role: RoleAssistant, Content: "Run kubectl apply; the gpt-4o model says foo.bar v1.2.3 is fine.",
			ToolCalls: []ToolCall{{ID: "c1", Name: "shell_exec", Arguments: `{"cmd":"kubectl apply"}`}}}},
		keyedMessage{"tool-out", NewMessage{Role: RoleTool, ToolName: "shell_exec", ToolCallID: "c1", Content: "deployment.apps/web configured"}},
		user("cjk", "日本語の文章を検索する"),
	)
	f.session(t, NewSession{ID: "s2", Source: "gateway", Model: "claude"},
		user("crash", "kubernetes pods are crashing again"),
		assistant("logs", "Check the logs of the crashing pods with kubectl logs"),
		user("compacted", "an old zanzibar conversation"),
		user("rewound", "a rewound zanzibar message"),
	)
	f.session(t, NewSession{ID: "s3", Source: "cli"}, user("hidden", "secret kubernetes zanzibar notes"))
	setMessageState(t, f.s, f.ids["compacted"], StateCompacted)
	setMessageState(t, f.s, f.ids["rewound"], StateRewound)
	hideSession(t, f.s, "s3")
	f.indexed(t)
	return f
}

func TestSearch(t *testing.T) {
	f := conversationFixture(t, Options{})
	oldest := SearchOptions{Sort: SortOldest}
	tests := []struct {
		name  string
		query string
		opts  SearchOptions
		want  []string // keys, in order
		route searchRoute
	}{
		{"ByContent", "kubectl", oldest, []string{"k8s-answer", "logs"}, routeWords},
		{"CaseFolded", "KUBECTL", oldest, []string{"k8s-answer", "logs"}, routeWords},
		{"ByToolName", "shell_exec", oldest, []string{"k8s-answer", "tool-out"}, routeWords},
		{"ByToolNameOfResult", "shell_exec", SearchOptions{Roles: []Role{RoleTool}}, []string{"tool-out"}, routeWords},
		{"ByToolCallArgument", "cmd", oldest, []string{"k8s-answer"}, routeWords},
		{"DottedTerm", "foo.bar", oldest, []string{"k8s-answer"}, routeWords},
		{"HyphenatedTerm", "gpt-4o", oldest, []string{"k8s-answer"}, routeWords},
		{"VersionTerm", "v1.2.3", oldest, []string{"k8s-answer"}, routeWords},
		{"Phrase", `"crashing pods"`, oldest, []string{"logs"}, routeWords},
		{"EveryTerm", "kubernetes crashing", oldest, []string{"crash"}, routeWords},
		{"SourceFilter", "kubernetes", SearchOptions{Source: "gateway"}, []string{"crash"}, routeWords},
		{"RoleFilter", "kubectl crashing", SearchOptions{Roles: []Role{RoleAssistant}}, []string{"logs"}, routeWords},
		{"RolesFilter", "kubernetes", SearchOptions{Roles: []Role{RoleUser, RoleTool}, Sort: SortOldest}, []string{"k8s-ask", "crash"}, routeWords},
		{"RoleFilterExcludes", "kubernetes", SearchOptions{Roles: []Role{RoleSystem}}, []string{}, routeTrigram},
		{"SessionFilter", "kubectl", SearchOptions{SessionID: "s2"}, []string{"logs"}, routeWords},
		{"SortRelevance", "deploy", SearchOptions{}, []string{"deploy-x3", "k8s-ask"}, routeWords},
		{"SortNewest", "deploy", SearchOptions{Sort: SortNewest}, []string{"k8s-ask", "deploy-x3"}, routeWords},
		{"SortOldest", "kubernetes", oldest, []string{"k8s-ask", "crash"}, routeWords},
		{"CompactedFoundRewoundAndHiddenNot", "zanzibar", SearchOptions{}, []string{"compacted"}, routeWords},
		{"LatinMissTriesTrigram", "ubernete", oldest, []string{"k8s-ask", "crash"}, routeTrigram},
		{"TrigramWithShortTerm", "ubernete ag", oldest, []string{"crash"}, routeTrigram},
		{"ShortMissScans", "ku", oldest, []string{"k8s-ask", "k8s-answer", "crash", "logs"}, routeScan},
		{"CJKTrigram", "文章を検索", SearchOptions{}, []string{"cjk"}, routeTrigram},
		{"CJKShortScans", "検索", SearchOptions{}, []string{"cjk"}, routeScan},
		{"CJKNoMatch", "中文", SearchOptions{}, []string{}, routeScan},
		{"Miss", "nonexistentword", SearchOptions{}, []string{}, routeTrigram},
		{"NoQuery", "?!", SearchOptions{}, []string{}, routeNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, route, err := f.s.search(t.Context(), tt.query, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, f.keys(hits)); diff != "" {
				t.Errorf("Search(%q) hits (-want +got):\n%s", tt.query, diff)
			}
			if route != tt.route {
				t.Errorf("route %d, want %d", route, tt.route)
			}
			for _, h := range hits {
				if !strings.Contains(h.Snippet, searchtext.MarkOpen) || !strings.Contains(h.Snippet, searchtext.MarkClose) {
					t.Errorf("hit %s: snippet %q has no match markers", f.key[h.MessageID], h.Snippet)
				}
			}
		})
	}
}

func TestSearch_HitFields(t *testing.T) {
	f := conversationFixture(t, Options{})
	hits, err := f.s.Search(t.Context(), "shell_exec", SearchOptions{Roles: []Role{RoleTool}})
	if err != nil || len(hits) != 1 {
		t.Fatalf("hits %v, %v", hits, err)
	}
	sess, _ := f.s.Session(t.Context(), "s1")
	msgs, _ := f.s.Messages(t.Context(), "s1", MessageQuery{AfterID: f.ids["tool-out"] - 1, Limit: 1})
	want := SearchHit{
		MessageID: f.ids["tool-out"], SessionID: "s1", Role: RoleTool, ToolName: "shell_exec",
		Snippet: ">>>shell_exec<<<", Marks: []Mark{{Start: 3, End: 13}}, CreatedAt: msgs[0].CreatedAt, Source: "cli", Model: "gpt-4o",
		SessionStartedAt: sess.StartedAt,
	}
	if diff := cmp.Diff(want, hits[0], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("hit (-want +got):\n%s", diff)
	}
}

func TestSearch_Paging(t *testing.T) {
	f := newSearchFixture(t, Options{})
	var ms []keyedMessage
	for i := range 7 {
		ms = append(ms, user(fmt.Sprint("p", i), fmt.Sprintf("page alpha %d", i)))
	}
	f.session(t, NewSession{ID: "p"}, ms...)
	tests := []struct {
		limit, offset int
		want          []string
	}{
		{3, 0, []string{"p0", "p1", "p2"}},
		{3, 3, []string{"p3", "p4", "p5"}},
		{3, 6, []string{"p6"}},
		{3, 9, []string{}},
		{0, 0, []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6"}}, // default 20
		{500, 5, []string{"p5", "p6"}},                             // cut to 200
	}
	for _, tt := range tests {
		hits, route, err := f.s.search(t.Context(), "alpha", SearchOptions{Sort: SortOldest, Limit: tt.limit, Offset: tt.offset})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, f.keys(hits)); diff != "" {
			t.Errorf("limit %d offset %d (-want +got):\n%s", tt.limit, tt.offset, diff)
		}
		// Past the last page is still the word index's answer, not a
		// fallback to substring search.
		if route != routeWords {
			t.Errorf("limit %d offset %d: route %d, want the word index", tt.limit, tt.offset, route)
		}
	}
}

func TestSearch_Context(t *testing.T) {
	f := newSearchFixture(t, Options{})
	long := strings.Repeat("é", 300)
	f.session(t, NewSession{ID: "c"},
		user("c0", "first"), assistant("c1", "second"), user("c2", "third"), assistant("c3", "the needle"),
		user("c4", long), assistant("c5", "sixth"), user("c6", "seventh"))
	f.session(t, NewSession{ID: "other"}, user("o0", "another session"))
	setMessageState(t, f.s, f.ids["c1"], StateCompacted)
	setMessageState(t, f.s, f.ids["c2"], StateRewound)
	msg := func(key string, role Role, content string) ContextMessage {
		return ContextMessage{ID: f.ids[key], Role: role, Content: content}
	}
	tests := []struct {
		n             int
		before, after []ContextMessage
	}{
		{0, nil, nil},
		{1, []ContextMessage{msg("c1", RoleAssistant, "second")}, []ContextMessage{msg("c4", RoleUser, long[:400])}},
		{2, []ContextMessage{msg("c0", RoleUser, "first"), msg("c1", RoleAssistant, "second")},
			[]ContextMessage{msg("c4", RoleUser, long[:400]), msg("c5", RoleAssistant, "sixth")}},
		{9, []ContextMessage{msg("c0", RoleUser, "first"), msg("c1", RoleAssistant, "second")}, // cut to 5
			[]ContextMessage{msg("c4", RoleUser, long[:400]), msg("c5", RoleAssistant, "sixth"), msg("c6", RoleUser, "seventh")}},
	}
	for _, tt := range tests {
		hits, err := f.s.Search(t.Context(), "needle", SearchOptions{Context: tt.n})
		if err != nil || len(hits) != 1 {
			t.Fatalf("context %d: %v, %v", tt.n, hits, err)
		}
		if diff := cmp.Diff(tt.before, hits[0].Before, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("context %d: before (-want +got):\n%s", tt.n, diff)
		}
		if diff := cmp.Diff(tt.after, hits[0].After, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("context %d: after (-want +got):\n%s", tt.n, diff)
		}
	}
}

func TestSearch_InvalidInput(t *testing.T) {
	s := openTestStore(t, Options{})
	tests := []struct {
		name  string
		query string
		opts  SearchOptions
	}{
		{"NegativeLimit", "x", SearchOptions{Limit: -1}},
		{"NegativeOffset", "x", SearchOptions{Offset: -1}},
		{"NegativeContext", "x", SearchOptions{Context: -1}},
		{"UnknownRole", "x", SearchOptions{Roles: []Role{RoleUser, "robot"}}},
		{"UnknownSort", "x", SearchOptions{Sort: 7}},
		{"NegativeSort", "x", SearchOptions{Sort: -1}},
		{"InvalidUTF8Query", "foo\xff", SearchOptions{}},
		{"BadSessionID", "x", SearchOptions{SessionID: "a\nb"}},
		{"InvalidUTF8Source", "x", SearchOptions{Source: "\xff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Search(t.Context(), tt.query, tt.opts); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Search = %v, want ErrInvalidInput", err)
			}
		})
	}
}

func TestSearch_Closed(t *testing.T) {
	s := openTestStore(t, Options{})
	s.Close()
	if _, err := s.Search(t.Context(), "x", SearchOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Search after Close = %v, want ErrClosed", err)
	}
}

// A search cut short by its context fails with the context's error (typed,
// wrapped in *Error), not with a scan's answer or a damage warning.
func TestSearch_Cancelled(t *testing.T) {
	var logs strings.Builder
	s := populatedFixture(t, Options{Logger: testLogger(&logs)})
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Search(cancelled, "kubernetes", SearchOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	expired, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-expired.Done()
	_, err := s.Search(expired, "zz", SearchOptions{})
	var e *Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &e) {
		t.Errorf("past the deadline: %v (%T), want an *Error wrapping DeadlineExceeded", err, err)
	}
	if logs.Len() > 0 {
		t.Errorf("a cancelled search logged %q", logs.String())
	}
}

// Offsets far past the last hit (up to the largest int) are empty pages on
// every route and sort, never an error or an overflow.
func TestSearch_HugeOffset(t *testing.T) {
	s := populatedFixture(t, Options{})
	for _, q := range []string{"kubernetes", "ubernete", "ab", "日本語の文章", "検索"} {
		for _, sort := range []SearchSort{SortRelevance, SortNewest, SortOldest} {
			for _, off := range []int{math.MaxInt64, math.MaxInt64 - 5, math.MaxInt32, rankWindow * 10} {
				hits, route, err := s.search(t.Context(), q, SearchOptions{Offset: off, Sort: sort})
				if err != nil || len(hits) != 0 {
					t.Errorf("Search(%q) sort %v offset %d: %d hits by route %d, %v", q, sort, off, len(hits), route, err)
				}
			}
		}
	}
}

// A search reads its hits, their snippets and their context in one
// snapshot: sessions deleted (and appended to) while it runs never leave a
// hit without its snippet or with a neighbour from after the hit was read.
func TestSearch_ReadsOneSnapshot(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	done := make(chan struct{})
	writerErr := make(chan error, 1)
	go func() {
		defer close(writerErr)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			id := fmt.Sprintf("churn-%d", i)
			if _, err := s.CreateSession(ctx, NewSession{ID: id}); err != nil {
				writerErr <- err
				return
			}
			ms := make([]NewMessage, 20)
			for k := range ms {
				ms[k] = NewMessage{Role: RoleUser, Content: fmt.Sprintf("zebra crossing %d of %s", k, id)}
			}
			if _, err := s.AppendMessages(ctx, id, ms); err != nil {
				writerErr <- err
				return
			}
			if _, err := s.DeleteSession(ctx, id, DeleteOptions{}); err != nil {
				writerErr <- err
				return
			}
		}
	}()
	deadline := time.Now().Add(time.Second)
	searches, seen := 0, 0
	for time.Now().Before(deadline) {
		for _, sort := range []SearchSort{SortRelevance, SortNewest} {
			hits, err := s.Search(ctx, "zebra", SearchOptions{Sort: sort, Limit: MaxSearchLimit, Context: 1})
			if err != nil {
				t.Fatal(err)
			}
			searches++
			seen += len(hits)
			for _, h := range hits {
				if !strings.Contains(h.Snippet, searchtext.MarkOpen+"zebra"+searchtext.MarkClose) {
					t.Fatalf("hit %d of %s: snippet %q, want the match marked", h.MessageID, h.SessionID, h.Snippet)
				}
				if len(h.Before)+len(h.After) == 0 {
					t.Fatalf("hit %d of %s: no neighbours in a 20-message session", h.MessageID, h.SessionID)
				}
			}
		}
	}
	close(done)
	if err := <-writerErr; err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatalf("%d searches saw no hit: the test raced nothing", searches)
	}
	t.Logf("%d searches, %d hits", searches, seen)
}
