package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestSearch_FollowsTheDomain: what search finds follows the domain's own
// operations — compaction keeps rows findable, a carried copy is found once
// (a compression child's copy in the child, its original in the ended
// parent), rewind and hide take rows out (unhide brings them back), delete and
// prune remove them from the index, and imported rows are indexed. The
// index stays consistent throughout (Verify).
func testSearch_FollowsTheDomain(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	find := func(q string) []string {
		t.Helper()
		hits, err := s.Search(ctx, q, SearchOptions{Sort: SortOldest})
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		out := []string{}
		for _, h := range hits {
			out = append(out, h.SessionID)
		}
		return out
	}
	check := func(what, q string, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if diff := cmp.Diff(want, find(q)); diff != "" {
			t.Errorf("%s: Search(%q) sessions (-want +got):\n%s", what, q, diff)
		}
	}

	newTestSession(t, s, "a")
	AppendTexts(t, s, "a", "alpha walrus", "bravo")
	h := LockFor(t, s, "a")
	w, _ := s.ActiveWatermark(ctx, "a")
	AppendTexts(t, s, "a", "late narwhal")
	if _, err := s.CompactSession(ctx, "a", Compaction{Holder: h, Watermark: w,
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary of walrus talk", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	check("compacted rows stay findable", "alpha", "a")
	check("a carried copy is found once (its retired original is not)", "narwhal", "a")

	ids := AppendTexts(t, s, "a", "rewind this platypus")
	if _, err := s.RewindTo(ctx, "a", ids[0], RewindOptions{LeaseHolder: h}); err != nil {
		t.Fatal(err)
	}
	check("rewound rows are not found", "platypus")

	s.SetHidden(ctx, "a", true)
	check("a hidden conversation is not found", "walrus")
	s.SetHidden(ctx, "a", false)
	check("unhidden, it is found again", "walrus", "a", "a")

	newTestSession(t, s, "gone")
	AppendTexts(t, s, "gone", "ephemeral walrus")
	var export bytes.Buffer
	if _, err := s.Export(ctx, &export, ExportOptions{SessionID: "gone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteSession(ctx, "gone", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	check("a deleted session's rows are gone from the index", "ephemeral")
	if _, err := s.Import(ctx, &export, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	check("imported rows are indexed", "ephemeral", "gone")

	newTestSession(t, s, "p")
	AppendTexts(t, s, "p", "early okapi")
	hp := LockFor(t, s, "p")
	wp, _ := s.ActiveWatermark(ctx, "p")
	AppendTexts(t, s, "p", "tardy okapi")
	if _, err := s.PublishCompressionChild(ctx, "p", Continuation{Holder: hp, Watermark: wp, Child: NewSession{ID: "c"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary of okapi talk", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	// Two conversations hold the row: the ended parent (its history is
	// kept) and the child that continues it.
	check("a compression child's carried copy is found, and the parent's original", "tardy", "p", "c")
	check("the parent's rows below the watermark stay only in the parent", "early", "p")
}

// Search's contract on every engine: which messages a query finds, in
// which order on planted data, with which marks and neighbours. Which
// index answers, and a relevance score, are each engine's own.

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

func newSearchFixture(t *testing.T, open Opener) *searchFixture {
	t.Helper()
	return &searchFixture{s: open(t, Options{}), ids: map[string]int64{}, key: map[int64]string{}}
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

// keys names the hits, in order.
func (f *searchFixture) keys(hits []SearchHit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, f.key[h.MessageID])
	}
	return out
}

func userSays(key, content string) keyedMessage {
	return keyedMessage{key, NewMessage{Role: RoleUser, Content: content}}
}

func assistantSays(key, content string) keyedMessage {
	return keyedMessage{key, NewMessage{Role: RoleAssistant, Content: content}}
}

// conversationFixture: two visible sessions, one hidden, and a rewound
// message.
func conversationFixture(t *testing.T, open Opener) *searchFixture {
	f := newSearchFixture(t, open)
	f.session(t, NewSession{ID: "s1", Source: "cli", Model: "gpt-4o"},
		assistantSays("deploy-x3", "deploy deploy deploy"),
		userSays("k8s-ask", "How do I deploy the kubernetes cluster? It has been failing since the upgrade, and the on-call team wants a plan."),
		keyedMessage{"k8s-answer", NewMessage{Role: RoleAssistant, Content: "Run kubectl apply; the gpt-4o model says foo.bar v1.2.3 is fine.",
			ToolCalls: []ToolCall{{ID: "c1", Name: "shell_exec", Arguments: `{"cmd":"kubectl apply"}`}}}},
		keyedMessage{"tool-out", NewMessage{Role: RoleTool, ToolName: "shell_exec", ToolCallID: "c1", Content: "deployment.apps/web configured"}},
		userSays("cjk", "日本語の文章を検索する"),
		userSays("cafe", "un café au lait"),
	)
	f.session(t, NewSession{ID: "s2", Source: "gateway", Model: "claude"},
		userSays("crash", "kubernetes pods are crashing again"),
		assistantSays("logs", "Check the logs of the crashing pods with kubectl logs"),
		userSays("kept", "an old zanzibar conversation"),
		userSays("rewound", "a rewound zanzibar message"),
	)
	f.session(t, NewSession{ID: "s3", Source: "cli"}, userSays("hidden", "secret kubernetes zanzibar notes"))
	if _, err := f.s.RewindTo(t.Context(), "s2", f.ids["rewound"], RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SetHidden(t.Context(), "s3", true); err != nil {
		t.Fatal(err)
	}
	return f
}

func testSearch_Finds(t *testing.T, open Opener) {
	f := conversationFixture(t, open)
	oldest := SearchOptions{Sort: SortOldest}
	tests := []struct {
		name  string
		query string
		opts  SearchOptions
		want  []string // keys, in order
	}{
		{"ByContent", "kubectl", oldest, []string{"k8s-answer", "logs"}},
		{"CaseFolded", "KUBECTL", oldest, []string{"k8s-answer", "logs"}},
		{"ByToolName", "shell_exec", oldest, []string{"k8s-answer", "tool-out"}},
		{"ByToolNameOfResult", "shell_exec", SearchOptions{Roles: []Role{RoleTool}}, []string{"tool-out"}},
		{"ByToolCallArgument", "cmd", oldest, []string{"k8s-answer"}},
		{"DottedTerm", "foo.bar", oldest, []string{"k8s-answer"}},
		{"HyphenatedTerm", "gpt-4o", oldest, []string{"k8s-answer"}},
		{"VersionTerm", "v1.2.3", oldest, []string{"k8s-answer"}},
		{"DiacriticsIgnored", "cafe", oldest, []string{"cafe"}},
		{"Phrase", `"crashing pods"`, oldest, []string{"logs"}},
		{"EveryTerm", "kubernetes crashing", oldest, []string{"crash"}},
		{"SourceFilter", "kubernetes", SearchOptions{Source: "gateway"}, []string{"crash"}},
		{"RoleFilter", "kubectl crashing", SearchOptions{Roles: []Role{RoleAssistant}}, []string{"logs"}},
		{"RolesFilter", "kubernetes", SearchOptions{Roles: []Role{RoleUser, RoleTool}, Sort: SortOldest}, []string{"k8s-ask", "crash"}},
		{"RoleFilterExcludes", "kubernetes", SearchOptions{Roles: []Role{RoleSystem}}, []string{}},
		{"SessionFilter", "kubectl", SearchOptions{SessionID: "s2"}, []string{"logs"}},
		// Planted: the older message holds the word three times in three
		// words, the newer once in twenty; every engine's ranking puts it
		// first, although newest first would not.
		{"SortRelevance", "deploy", SearchOptions{}, []string{"deploy-x3", "k8s-ask"}},
		{"SortNewest", "deploy", SearchOptions{Sort: SortNewest}, []string{"k8s-ask", "deploy-x3"}},
		{"SortOldest", "kubernetes", oldest, []string{"k8s-ask", "crash"}},
		{"RewoundAndHiddenNotFound", "zanzibar", SearchOptions{}, []string{"kept"}},
		{"WordMissFindsSubstrings", "ubernete", oldest, []string{"k8s-ask", "crash"}},
		{"SubstringWithShortTerm", "ubernete ag", oldest, []string{"crash"}},
		{"ShortSubstring", "ku", oldest, []string{"k8s-ask", "k8s-answer", "crash", "logs"}},
		{"CJK", "文章を検索", SearchOptions{}, []string{"cjk"}},
		{"CJKShort", "検索", SearchOptions{}, []string{"cjk"}},
		{"CJKNoMatch", "中文", SearchOptions{}, []string{}},
		{"Miss", "nonexistentword", SearchOptions{}, []string{}},
		{"NoQuery", "?!", SearchOptions{}, []string{}},
		{"EngineSyntaxIsText", `^kubectl* (logs)`, oldest, []string{"logs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := f.s.Search(t.Context(), tt.query, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.opts.Sort == SortRelevance {
				hits = rankedEventually(t, f, tt.query, tt.opts, tt.want, hits)
			}
			if diff := cmp.Diff(tt.want, f.keys(hits)); diff != "" {
				t.Errorf("Search(%q) hits (-want +got):\n%s", tt.query, diff)
			}
			for _, h := range hits {
				if len(h.Marks) == 0 {
					t.Errorf("hit %s: snippet %q has no marks", f.key[h.MessageID], h.Snippet)
				}
				for _, m := range h.Marks {
					if m.Start < 0 || m.End > len(h.Snippet) || m.Start >= m.End {
						t.Errorf("hit %s: mark %+v outside snippet %q", f.key[h.MessageID], m, h.Snippet)
					}
				}
			}
		})
	}
}

// rankedEventually waits for an engine that indexes in the background to
// rank: messages it has not indexed yet come first, newest first (see
// SortRelevance), so relevance is asserted on the order the engine gives
// once it has caught up, within a few seconds.
func rankedEventually(t *testing.T, f *searchFixture, query string, opts SearchOptions, want []string, hits []SearchHit) []SearchHit {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !cmp.Equal(want, f.keys(hits)); {
		time.Sleep(20 * time.Millisecond)
		var err error
		if hits, err = f.s.Search(t.Context(), query, opts); err != nil {
			t.Fatal(err)
		}
	}
	return hits
}

func testSearch_HitFields(t *testing.T, open Opener) {
	f := conversationFixture(t, open)
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
	hits, err = f.s.Search(t.Context(), "kubectl", SearchOptions{SessionID: "s2"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("hits %v, %v", hits, err)
	}
	if want := "...heck the logs of the crashing pods with >>>kubectl<<< logs"; hits[0].Snippet != want {
		t.Errorf("snippet %q, want %q", hits[0].Snippet, want)
	}
}

func testSearch_Paging(t *testing.T, open Opener) {
	f := newSearchFixture(t, open)
	var ms []keyedMessage
	for i := range 7 {
		ms = append(ms, userSays(fmt.Sprint("p", i), fmt.Sprintf("page alpha %d", i)))
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
		hits, err := f.s.Search(t.Context(), "alpha", SearchOptions{Sort: SortOldest, Limit: tt.limit, Offset: tt.offset})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, f.keys(hits)); diff != "" {
			t.Errorf("limit %d offset %d (-want +got):\n%s", tt.limit, tt.offset, diff)
		}
	}
	// Past the last page of word hits is the end, not substring hits.
	hits, err := f.s.Search(t.Context(), "page", SearchOptions{Limit: 5, Offset: 7})
	if err != nil || len(hits) != 0 {
		t.Errorf("past the last page: %v, %v", f.keys(hits), err)
	}
}

func testSearch_Context(t *testing.T, open Opener) {
	f := newSearchFixture(t, open)
	long := strings.Repeat("é", 300)
	f.session(t, NewSession{ID: "c"},
		userSays("c0", "first"), assistantSays("c1", "second"), userSays("c3", "the needle"),
		userSays("c4", long), assistantSays("c5", "sixth"), userSays("c6", "seventh"))
	f.session(t, NewSession{ID: "other"}, userSays("o0", "another session"))
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

func testSearch_InvalidInput(t *testing.T, open Opener) {
	s := open(t, Options{})
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
