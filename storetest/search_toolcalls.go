package storetest

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

// TestSearch_ToolCalls: a tool call is found by its function's name and
// by the words, phrases and substrings (CJK included) of its arguments,
// with the filters and snippets of any hit — both while the engine has not
// indexed it yet and once it has; an imported call and a compression
// child's copy likewise; no longer after a rewind or a delete.
func testSearch_ToolCalls(t *testing.T, e Engine) {
	f := newSearchFixture(t, e.Open)
	var release func() int
	if e.HoldIndexing != nil {
		release = e.HoldIndexing(t, f.s)
	}
	f.session(t, NewSession{ID: "tc", Source: "cli"},
		userSays("ask", "please fix the helper and check the weather"),
		keyedMessage{"patch", NewMessage{Role: RoleAssistant, Content: "On it.", ToolCalls: []ToolCall{
			{ID: "c1", Name: "apply_patch", Arguments: `{"path":"src/walrus.go","patch":"replace the frobnicate helper"}`},
			{ID: "c2", Name: "weather_lookup", Arguments: `{"query":"東京の天気予報"}`},
		}}},
		keyedMessage{"result", NewMessage{Role: RoleTool, ToolName: "apply_patch", ToolCallID: "c1", Content: "patched 1 file"}},
		keyedMessage{"plain-call", NewMessage{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "c3", Name: "run_shell", Arguments: "make quokka-build"},
		}}},
	)
	oldest := SearchOptions{Sort: SortOldest}
	tests := []struct {
		name, query string
		opts        SearchOptions
		want        []string
		mark        string // the text a snippet of the tool call marks
	}{
		{"FunctionName", "apply_patch", oldest, []string{"patch", "result"}, "apply_patch"},
		{"FunctionNameOnly", "weather_lookup", oldest, []string{"patch"}, "weather_lookup"},
		{"ArgumentWord", "frobnicate", oldest, []string{"patch"}, "frobnicate"},
		{"ArgumentKeyAndPath", "walrus.go", oldest, []string{"patch"}, "walrus"},
		{"ArgumentPhrase", `"frobnicate helper"`, oldest, []string{"patch"}, "frobnicate"},
		{"ArgumentPhraseReversed", `"helper frobnicate"`, oldest, []string{}, ""},
		{"ContentAndArgument", "fix frobnicate", oldest, []string{}, ""},
		{"EveryTermInTheMessage", "frobnicate walrus", oldest, []string{"patch"}, "walrus"},
		{"ArgumentsNotJSON", "quokka", oldest, []string{"plain-call"}, "quokka"},
		{"ArgumentSubstring", "robnicat", oldest, []string{"patch"}, "robnicat"},
		{"ArgumentCJK", "天気予報", oldest, []string{"patch"}, "天気予報"},
		{"ArgumentCJKShort", "天気", oldest, []string{"patch"}, "天気"},
		{"RoleFilter", "apply_patch", SearchOptions{Roles: []Role{RoleAssistant}}, []string{"patch"}, "apply_patch"},
		{"RoleFilterExcludes", "frobnicate", SearchOptions{Roles: []Role{RoleUser, RoleTool}}, []string{}, ""},
		{"SourceFilter", "frobnicate", SearchOptions{Source: "gateway"}, []string{}, ""},
		{"NewestFirst", "helper", SearchOptions{Sort: SortNewest}, []string{"patch", "ask"}, "helper"},
		{"CallIDNotIndexed", "c1", oldest, []string{}, ""},
	}
	check := func(t *testing.T, stage string) {
		for _, tt := range tests {
			t.Run(stage+"/"+tt.name, func(t *testing.T) {
				hits, err := f.s.Search(t.Context(), tt.query, tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, f.keys(hits)); diff != "" {
					t.Errorf("Search(%q) hits (-want +got):\n%s", tt.query, diff)
				}
				for _, h := range hits {
					if f.key[h.MessageID] != "patch" && f.key[h.MessageID] != "plain-call" {
						continue
					}
					// A hit in the tool text alone is cut from it, marked.
					var marked []string
					for _, m := range h.Marks {
						marked = append(marked, h.Snippet[m.Start:m.End])
					}
					if !strings.Contains(strings.ToLower(strings.Join(marked, " ")), strings.ToLower(tt.mark)) {
						t.Errorf("hit %s: snippet %q marks %q, want %q marked", f.key[h.MessageID], h.Snippet, marked, tt.mark)
					}
				}
			})
		}
	}
	check(t, "Queued")
	if release != nil {
		if n := release(); n == 0 {
			t.Fatal("nothing was waiting to be indexed: the first searches did not test the queue")
		}
		check(t, "Indexed")
	}
	findsOnly := func(what, query string, want ...string) {
		t.Helper()
		hits, err := f.s.Search(t.Context(), query, SearchOptions{Sort: SortOldest})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.SessionID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Search(%q) sessions (-want +got):\n%s", what, query, diff)
		}
	}
	// An imported call is searchable as an appended one.
	var export bytes.Buffer
	if _, err := f.s.Export(t.Context(), &export, ExportOptions{SessionID: "tc"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.DeleteSession(t.Context(), "tc", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	findsOnly("deleted", "frobnicate")
	if _, err := f.s.Import(t.Context(), &export, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	findsOnly("imported", "frobnicate", "tc")
	findsOnly("imported, CJK", "天気予報", "tc")
	// A compression child's copy of a call is found, and the ended
	// parent's original.
	newTestSession(t, f.s, "cc")
	h := LockFor(t, f.s, "cc")
	wm, err := f.s.ActiveWatermark(t.Context(), "cc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.AppendMessage(t.Context(), "cc", NewMessage{Role: RoleAssistant, ToolCalls: []ToolCall{
		{ID: "k1", Name: "map_lookup", Arguments: `{"place":"okapi reserve 北京の地図"}`}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.PublishCompressionChild(t.Context(), "cc", Continuation{Holder: h, Watermark: wm, Child: NewSession{ID: "cc-child"},
		Messages: []NewMessage{{Role: RoleAssistant, Content: "summary", Summary: true}}}); err != nil {
		t.Fatal(err)
	}
	findsOnly("continued", "okapi", "cc", "cc-child")
	findsOnly("continued, CJK", "北京の地図", "cc", "cc-child")
	findsOnly("continued, by name", "map_lookup", "cc", "cc-child")
	imported, err := f.s.Messages(t.Context(), "tc", MessageQuery{Limit: 1}) // the imported "ask"
	if err != nil || len(imported) != 1 {
		t.Fatalf("imported messages: %v, %v", imported, err)
	}
	if _, err := f.s.RewindTo(t.Context(), "tc", imported[0].ID, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"frobnicate", "weather_lookup", "天気予報", "天気", "quokka"} {
		hits, err := f.s.Search(t.Context(), q, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 0 {
			t.Errorf("Search(%q) after the rewind finds %v, want nothing", q, f.keys(hits))
		}
	}
	if _, err := f.s.DeleteSession(t.Context(), "tc", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if hits, err := f.s.Search(t.Context(), "apply_patch", SearchOptions{}); err != nil || len(hits) != 0 {
		t.Errorf("Search after the delete: %v, %v; want nothing", f.keys(hits), err)
	}
}

// A NUL byte in a tool call's arguments is stored byte-exact and the call
// stays findable: its searchable text holds a space there (PostgreSQL text
// cannot hold a NUL; to a word index it separates words anyway).
func testSearch_ToolCallWithNUL(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	args := "{\"note\":\"left\x00narwhal\"}"
	id, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "jot", Arguments: args}}})
	if err != nil {
		t.Fatalf("append a call with a NUL in its arguments: %v", err)
	}
	m, err := s.Message(ctx, id)
	if err != nil || len(m.ToolCalls) != 1 || m.ToolCalls[0].Arguments != args {
		t.Fatalf("stored call %+v, %v; want its arguments byte-exact", m.ToolCalls, err)
	}
	hits, err := s.Search(ctx, "narwhal", SearchOptions{})
	if err != nil || len(hits) != 1 || hits[0].MessageID != id {
		t.Fatalf("Search(narwhal) = %v, %v; want message %d", hits, err, id)
	}
}

// A quoted phrase matches within one field — the content, a tool result's
// tool name, or the tool text (calls' names and arguments) — never across
// two, as SQLite's separate FTS5 columns keep it; each word alone matches
// in any field.
func testSearch_PhraseStaysInOneField(t *testing.T, open Opener) {
	ctx := t.Context()
	s := open(t, Options{})
	newTestSession(t, s, "s")
	call, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleAssistant, Content: "checking the alpha",
		ToolCalls: []ToolCall{{ID: "c1", Name: "beta_probe", Arguments: "gamma delta"}}})
	if err != nil {
		t.Fatal(err)
	}
	result, err := s.AppendMessage(ctx, "s", NewMessage{Role: RoleTool, ToolName: "omega_probe", ToolCallID: "c1", Content: "probed zeta"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		want  []int64
	}{
		{`"alpha beta"`, nil},              // content, then the call's name
		{`"zeta omega"`, nil},              // content, then the tool name
		{`"probe gamma"`, []int64{call}},   // within the tool text: name, then arguments
		{`"gamma delta"`, []int64{call}},   // within the arguments
		{`"probed zeta"`, []int64{result}}, // within the content
		{"alpha beta", []int64{call}},      // two words, in two fields
		{"zeta omega", []int64{result}},    // likewise
		{"alpha", []int64{call}},           // each word alone
		{"beta", []int64{call}},
		{"omega", []int64{result}},
	}
	for _, tt := range tests {
		hits, err := s.Search(ctx, tt.query, SearchOptions{Sort: SortOldest})
		if err != nil {
			t.Fatalf("Search(%q): %v", tt.query, err)
		}
		var got []int64
		for _, h := range hits {
			got = append(got, h.MessageID)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Search(%q) message ids (-want +got):\n%s", tt.query, diff)
		}
	}
}
