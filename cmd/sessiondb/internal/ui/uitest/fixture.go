// Package uitest seeds a store with what the viewer must show: every part
// of the message shape, rewound and compacted turns, lineage (a
// compression child, a branch, a handoff), usage, and hostile text. The
// viewer's HTTP tests and the CLI's browser tests both read it; it is
// imported only by tests.
package uitest

import (
	"context"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// The fixture's sessions and texts, for tests to look for.
const (
	// Rich holds every kind of part, a rewound turn and a compaction.
	Rich = "ui-rich"
	// RichTip is Rich's compression child, where its conversation goes on.
	RichTip = "ui-rich-2"
	// Branch is a branch of Rich.
	Branch = "ui-branch"
	// Hostile has a title and messages made to run script.
	Hostile = "ui-hostile"
	// Long holds LongCount messages.
	Long      = "ui-long"
	LongCount = 20000
	// OnePage holds exactly one conversation page (200 messages) of the
	// same turns: the baseline Long's page is measured against.
	OnePage = "ui-one-page"

	// HostileID is a session id that is a path, a query and markup.
	HostileID      = `../../etc/<b>x</b>?a=1&b=2#frag "q" %2e`
	HostileTitle   = `<script>alert("title")</script> Evil title`
	HostileImg     = `<img src=x onerror=alert(1)>`
	HostileScript  = `</code></pre><script>alert(2)</script>`
	HostileANSI    = "\x1b[31mred\x1b[0m and \u202Eevil\u202C"
	HostileImgPart = "javascript:alert(3)"
	CodeWord       = "deterministic"
	SearchWord     = "flamingo"
	// PNG is a 1×1 PNG as a data: URL, an image the page shows inline.
	PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

// Fixture is what Seed wrote.
type Fixture struct {
	// Rewound is Rich's rewound user message; Hit the message SearchWord
	// finds.
	Rewound, Hit int64
	// LongLast is the newest message of Long.
	LongLast int64
}

// Seed writes the fixture; long adds the 20,000-message session (a few
// seconds on SQLite).
func Seed(ctx context.Context, s *store.Store, long bool) (Fixture, error) {
	var f Fixture
	if err := seedRich(ctx, s, &f); err != nil {
		return f, fmt.Errorf("seed %s: %w", Rich, err)
	}
	if err := seedHostile(ctx, s); err != nil {
		return f, fmt.Errorf("seed %s: %w", Hostile, err)
	}
	if long {
		if err := seedLong(ctx, s, &f); err != nil {
			return f, fmt.Errorf("seed %s: %w", Long, err)
		}
	}
	return f, nil
}

func seedRich(ctx context.Context, s *store.Store, f *Fixture) error {
	if _, err := s.CreateSession(ctx, store.NewSession{ID: Rich, Source: "cli", UserID: "ada", Model: "gpt-5",
		Title: "Every part of a message", Cwd: "/src/shop", SystemPrompt: "You are a careful agent."}); err != nil {
		return err
	}
	msgs := []store.NewMessage{
		{Role: store.RoleUser, Content: "Why is the total not " + CodeWord + "? The " + SearchWord + " test fails."},
		{Role: store.RoleAssistant, Model: "gpt-5", TokenCount: 321, FinishReason: "tool_calls",
			Reasoning: "The map order varies between runs.",
			Parts: []store.Part{
				{Type: store.PartText, Text: "Summing a map is not " + CodeWord + ":\n\n```go\nfor _, p := range items {\n\tt += p\n}\n```\n\nI will read the file."},
				{Type: store.PartReasoning, Text: "Check total.go first.", Data: `{"type":"thinking","signature":"sig"}`},
				{Type: store.PartToolUse, ToolCallID: "call_1", Name: "read_file", Input: `{"path":"checkout/total.go"}`},
			}},
		{Role: store.RoleTool, ToolName: "read_file", ToolCallID: "call_1",
			Parts: []store.Part{{Type: store.PartToolResult, ToolCallID: "call_1", Text: "func Total(items map[string]float64) float64"}}},
		{Role: store.RoleUser, Parts: []store.Part{
			{Type: store.PartText, Text: "Here is the screenshot and the log."},
			{Type: store.PartImage, MediaType: "image/png", URL: PNG},
			{Type: store.PartImage, MediaType: "image/png", URL: "https://example.com/remote.png"},
			{Type: store.PartImage, MediaType: "image/svg+xml", URL: "data:image/svg+xml;base64,PHN2Zy8+"},
			{Type: store.PartFile, MediaType: "text/plain", Name: "build.log", URL: "https://example.com/build.log"},
			{Type: store.PartFile, MediaType: "application/pdf", Name: "spec.pdf", BlobID: "blob-42"},
		}},
		{Role: store.RoleAssistant, Model: "claude-sonnet", Content: "Switch to integer cents.", FinishReason: "stop", TokenCount: 55},
	}
	ids, err := s.AppendMessages(ctx, Rich, msgs)
	if err != nil {
		return err
	}
	// A turn taken back: appended, then rewound.
	rid, err := s.AppendMessage(ctx, Rich, store.NewMessage{Role: store.RoleUser, Content: "Actually, delete the test instead."})
	if err != nil {
		return err
	}
	if _, err := s.AppendMessage(ctx, Rich, store.NewMessage{Role: store.RoleAssistant, Content: "Deleting it."}); err != nil {
		return err
	}
	if _, err := s.RewindTo(ctx, Rich, rid, store.RewindOptions{}); err != nil {
		return err
	}
	f.Rewound, f.Hit = rid, ids[0]
	for _, u := range []store.UsageUpdate{
		{Model: "gpt-5", Usage: store.Usage{InputTokens: 12000, OutputTokens: 3400, CacheReadTokens: 8000, APICalls: 3, EstimatedCostUSD: 0.21}},
		{Model: "claude-sonnet", Usage: store.Usage{InputTokens: 5000, OutputTokens: 900, APICalls: 1, EstimatedCostUSD: 0.04}},
		{Model: "gpt-5-mini", Task: "title", Usage: store.Usage{InputTokens: 300, OutputTokens: 12, APICalls: 1, EstimatedCostUSD: 0.001}},
	} {
		if err := s.RecordUsage(ctx, Rich, u); err != nil {
			return err
		}
	}
	// Compaction: the first turns summarised in place, then the
	// conversation continued in a compression child.
	const holder = "uitest"
	if _, ok, err := s.AcquireCompressionLock(ctx, Rich, holder, time.Minute); err != nil || !ok {
		return fmt.Errorf("compression lock: %v %v", ok, err)
	}
	w, err := s.ActiveWatermark(ctx, Rich)
	if err != nil {
		return err
	}
	if _, err := s.CompactSession(ctx, Rich, store.Compaction{Holder: holder, Watermark: ids[2],
		Messages: []store.NewMessage{{Role: store.RoleUser, Summary: true, Content: "Summary: the total sums a map in random order."}}}); err != nil {
		return err
	}
	if w, err = s.ActiveWatermark(ctx, Rich); err != nil {
		return err
	}
	if _, err := s.PublishCompressionChild(ctx, Rich, store.Continuation{Holder: holder, Watermark: w,
		Child:    store.NewSession{ID: RichTip},
		Messages: []store.NewMessage{{Role: store.RoleUser, Summary: true, Content: "Summary: switch Total to integer cents."}}}); err != nil {
		return err
	}
	if _, err := s.ReleaseCompressionLock(ctx, Rich, holder); err != nil {
		return err
	}
	if _, err := s.AppendMessage(ctx, RichTip, store.NewMessage{Role: store.RoleUser, Content: "Done? Run the tests again."}); err != nil {
		return err
	}
	if _, err := s.CreateSession(ctx, store.NewSession{ID: Branch, Source: "cli", ParentID: RichTip, Kind: store.ChildBranch, Title: "Try decimal instead"}); err != nil {
		return err
	}
	if err := s.RequestHandoff(ctx, RichTip, "telegram"); err != nil {
		return err
	}
	_, err = s.SetPinned(ctx, RichTip, true)
	return err
}

func seedHostile(ctx context.Context, s *store.Store) error {
	if _, err := s.CreateSession(ctx, store.NewSession{ID: HostileID, Source: "gateway", Title: "An odd id"}); err != nil {
		return err
	}
	if _, err := s.AppendMessage(ctx, HostileID, store.NewMessage{Role: store.RoleUser, Content: "in the session with the odd id"}); err != nil {
		return err
	}
	if _, err := s.CreateSession(ctx, store.NewSession{ID: Hostile, Source: "gateway", UserID: "mallory", Title: HostileTitle}); err != nil {
		return err
	}
	_, err := s.AppendMessages(ctx, Hostile, []store.NewMessage{
		{Role: store.RoleUser, Content: HostileImg},
		{Role: store.RoleAssistant, Content: "```" + HostileScript + "\n" + HostileScript + "\n```\n" + HostileANSI,
			ToolCalls: []store.ToolCall{{ID: "x\"><script>alert(4)</script>", Name: "<b>tool</b>", Arguments: `{"q":"<img src=x onerror=alert(5)>"}`}}},
		{Role: store.RoleTool, ToolName: "<i>t</i>", ToolCallID: "x", Content: "<iframe src=javascript:alert(6)></iframe>"},
		{Role: store.RoleUser, Parts: []store.Part{
			{Type: store.PartImage, MediaType: "image/png", URL: HostileImgPart},
			{Type: store.PartFile, MediaType: "text/html", Name: "<svg onload=alert(7)>", URL: "javascript:alert(8)"},
			{Type: store.PartText, Text: "onerror=alert(9) " + SearchWord + " <img src=x onerror=alert(10)>"},
		}},
	})
	return err
}

func seedLong(ctx context.Context, s *store.Store, f *Fixture) error {
	if err := seedTurns(ctx, s, OnePage, 200, nil); err != nil {
		return err
	}
	return seedTurns(ctx, s, Long, LongCount, &f.LongLast)
}

// seedTurns writes a session of n alternating user and assistant turns.
func seedTurns(ctx context.Context, s *store.Store, id string, n int, last *int64) error {
	title := fmt.Sprintf("A conversation of %d turns", n)
	if id == Long {
		title = "A very long conversation"
	}
	if _, err := s.CreateSession(ctx, store.NewSession{ID: id, Source: "cron", Title: title}); err != nil {
		return err
	}
	batch := min(n, 1000)
	for i := 0; i < n; i += batch {
		ms := make([]store.NewMessage, batch)
		for j := range ms {
			role := store.RoleUser
			if (i+j)%2 == 1 {
				role = store.RoleAssistant
			}
			ms[j] = store.NewMessage{Role: role, Content: fmt.Sprintf("turn %d of the long conversation", i+j+1)}
		}
		ids, err := s.AppendMessages(ctx, id, ms)
		if err != nil {
			return err
		}
		if last != nil {
			*last = ids[len(ids)-1]
		}
	}
	return nil
}
