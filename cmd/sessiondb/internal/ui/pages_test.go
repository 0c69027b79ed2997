package ui

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/cmd/sessiondb/internal/ui/uitest"
)

// TestPages_Conversation: a conversation page renders every part of the
// message shape, marks rewound, compacted and summary rows, and walks its
// lineage; tool calls, tool output and reasoning are folded.
func TestPages_Conversation(t *testing.T) {
	s, f := seededStore(t)
	ts := serve(t, s, Options{})
	resp, body := get(t, nil, ts.URL+"/s/"+uitest.Rich+"?after=0")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /s/%s: %d\n%s", uitest.Rich, resp.StatusCode, body)
	}
	mustContain(t, "rich conversation", body,
		"<h1><bdi>Every part of a message</bdi></h1>",
		`<pre class="code" data-lang="go"><span class="lang">go</span>`, "for _, p := range items {\n\tt &#43;= p\n}",
		`<img src="`+strings.ReplaceAll(uitest.PNG, "+", "&#43;")+`" alt="image from the transcript (image/png)">`,
		`<a href="https://example.com/remote.png" rel="noopener noreferrer nofollow" target="_blank">image (not loaded)`,
		"image: data:image/svg&#43;xml;base64,PHN2Zy8&#43;",
		`File <strong>build.log</strong> (text/plain): <a href="https://example.com/build.log"`,
		"File <strong>spec.pdf</strong> (application/pdf): blob blob-42",
		`<details class="tool-call"><summary>Tool call <strong>read_file</strong> (call_1)</summary>`,
		"&#34;path&#34;: &#34;checkout/total.go&#34;",
		`<details class="tool-result"><summary>Tool result for call_1</summary>`,
		`<details class="reasoning"><summary>Reasoning</summary><p class="prose">The map order varies between runs.</p>`,
		"Check total.go first.", "&#34;signature&#34;: &#34;sig&#34;",
		"model gpt-5", "321 tokens", "finish: tool_calls", "model claude-sonnet",
		fmt.Sprintf(`id="m%d"`, f.Rewound), `<span class="flag">rewound</span>`,
		`<span class="flag">compacted</span>`, `<span class="flag">compaction summary</span>`,
		"Lineage", `href="/s/`+uitest.RichTip+`"`, "(this session)",
		"Usage by model and task", "<svg viewBox=", "gpt-5-mini · title", "12,000",
	)
	// The image message was compacted and carried over: its original and
	// its copy both show the data: PNG, and nothing else is an <img>.
	if n := strings.Count(body, "<img "); n != 2 {
		t.Errorf("rich conversation has %d <img>, want 2 (only the data: PNG is shown inline)", n)
	}
	mustContain(t, "rich conversation", body, `<span class="flag">copy of #`, `<span class="flag">carried over to <a href="#m`)
	if n := strings.Count(body, `<span class="flag">rewound</span>`); n != 2 {
		t.Errorf("%d rows marked rewound, want the 2 of the rewind (the carried-over originals are marked so)", n)
	}
	if strings.Contains(body, "<details open") {
		t.Error("something is unfolded by default")
	}

	_, tip := get(t, nil, ts.URL+"/s/"+uitest.RichTip)
	mustContain(t, "compression tip", tip, "compression of", `href="/s/`+uitest.Rich+`"`,
		"Child sessions:", `href="/s/`+uitest.Branch+`"`, "(branch, 0 messages)",
		"<dt>Handoff</dt><dd>pending to telegram</dd>", `<span class="flag">pinned</span>`,
		"Summary: switch Total to integer cents.", "Done? Run the tests again.",
		`data-live="/s/`+uitest.RichTip+`/after?after=`)
}

// TestPages_HostileTextIsInert: stored HTML, script, ANSI escapes and
// bidirectional overrides arrive escaped or shown as symbols; javascript:
// URLs are never linked.
func TestPages_HostileTextIsInert(t *testing.T) {
	s, _ := seededStore(t)
	ts := serve(t, s, Options{})
	for _, path := range []string{"/s/" + uitest.Hostile, "/?source=gateway", "/search?q=" + uitest.SearchWord,
		"/search?q=onerror", "/s/" + uitest.Hostile + "/after?after=0"} {
		resp, body := get(t, nil, ts.URL+path)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		mustNotContain(t, path, body, "<script>", "<img src=x", "<iframe", "<svg onload", "<b>tool</b>", "<i>t</i>",
			`href="javascript:`, `src="javascript:`, "\x1b", "\u202E")
		if n := strings.Count(body, "<script"); path != "/s/"+uitest.Hostile+"/after?after=0" && n != 1 {
			t.Errorf("%s: %d <script> tags, want only app.js", path, n)
		}
		if tags := regexp.MustCompile(`(?i)\son[a-z]+=`).FindAllString(stripText(body), -1); len(tags) > 0 {
			t.Errorf("%s: event handler attributes %q", path, tags)
		}
	}
	_, body := get(t, nil, ts.URL+"/s/"+uitest.Hostile)
	mustContain(t, "hostile conversation", body,
		"&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt; Evil title",
		"&lt;img src=x onerror=alert(1)&gt;",
		"&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;",
		"␛[31mred␛[0m and ⟨U&#43;202E⟩evil⟨U&#43;202C⟩",
		"image: javascript:alert(3)", "(text/html): javascript:alert(8)",
		"&lt;iframe src=javascript:alert(6)&gt;&lt;/iframe&gt;",
		`<details class="tool-output"><summary>Tool output from &lt;i&gt;t&lt;/i&gt;</summary>`)
}

// TestPages_OddSessionID: a session id that is a path, a query and markup
// is linked escaped, and the link opens it (and its live refresh).
func TestPages_OddSessionID(t *testing.T) {
	s, _ := seededStore(t)
	ts := serve(t, s, Options{})
	_, list := get(t, nil, ts.URL+"/?source=gateway")
	href := regexp.MustCompile(`<a href="(/s/[^"]*)"><bdi>An odd id</bdi>`).FindStringSubmatch(list)
	if href == nil {
		t.Fatalf("no link to the odd session in:\n%s", list)
	}
	link := strings.ReplaceAll(href[1], "&amp;", "&")
	if strings.ContainsAny(link, "?#<> \"") || strings.Contains(link, "/../") {
		t.Errorf("the link %q is not escaped", link)
	}
	resp, body := get(t, nil, ts.URL+link)
	if resp.StatusCode != 200 || !strings.Contains(body, "in the session with the odd id") {
		t.Fatalf("GET %s: %d", link, resp.StatusCode)
	}
	live := regexp.MustCompile(`data-live="([^"]+)"`).FindStringSubmatch(body)
	if live == nil {
		t.Fatal("no live refresh link")
	}
	if resp, after := get(t, nil, ts.URL+strings.ReplaceAll(live[1], "&amp;", "&")); resp.StatusCode != 200 || strings.TrimSpace(after) != "" {
		t.Errorf("live refresh of the odd session: %d %q", resp.StatusCode, after)
	}
}

// stripText drops the text between tags, leaving the markup, so an
// escaped "onerror=" in a message is not mistaken for an attribute.
func stripText(html string) string {
	return regexp.MustCompile(`>[^<]*<`).ReplaceAllString(html, "><")
}

// TestPages_SessionList: the picker lists sessions pinned first with
// title, preview, flags and last activity; filters narrow it; a bad
// filter or cursor is a 400.
func TestPages_SessionList(t *testing.T) {
	s, _ := seededStore(t)
	ts := serve(t, s, Options{})
	_, body := get(t, nil, ts.URL+"/")
	mustContain(t, "session list", body, "sessions match", `<span class="flag">pinned</span>`,
		`href="/s/`+uitest.RichTip+`"`, `href="/s/`+uitest.Long+`"`, "turn 1 of the long conversation",
		`<option value="cron">cron (2)</option>`, `<option value="ada">ada (`)
	if strings.Index(body, `href="/s/`+uitest.RichTip+`"`) > strings.Index(body, `href="/s/`+uitest.Long+`"`) {
		t.Error("the pinned session is not listed first")
	}
	_, cron := get(t, nil, ts.URL+"/?source=cron")
	mustContain(t, "cron sessions", cron, `href="/s/`+uitest.Long+`"`, `<option value="cron" selected>`)
	mustNotContain(t, "cron sessions", cron, `href="/s/`+uitest.RichTip+`"`)
	_, child := get(t, nil, ts.URL+"/?children=on")
	mustContain(t, "with children", child, `href="/s/`+uitest.Branch+`"`, "branch of ui-rich-2")
	for _, path := range []string{"/?archived=maybe", "/?cursor=not-a-cursor"} {
		if resp, _ := get(t, nil, ts.URL+path); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, resp.StatusCode)
		}
	}
}

// TestPages_SearchJumpsToMessage: a hit's snippet marks the match and
// links to the message on a page of its conversation that holds it.
func TestPages_SearchJumpsToMessage(t *testing.T) {
	s, f := seededStore(t)
	ts := serve(t, s, Options{})
	_, body := get(t, nil, ts.URL+"/search?q="+uitest.SearchWord+"&sort=oldest")
	link := fmt.Sprintf(`/s/%s?at=%d#m%d`, uitest.Rich, f.Hit, f.Hit)
	mustContain(t, "search", body, "<mark>"+uitest.SearchWord+"</mark>", `href="`+link+`"`, "Every part of a message")
	_, conv := get(t, nil, ts.URL+strings.Split(link, "#")[0])
	mustContain(t, "the hit in context", conv, fmt.Sprintf(`id="m%d"`, f.Hit))
	_, role := get(t, nil, ts.URL+"/search?q="+uitest.SearchWord+"&role=assistant")
	mustContain(t, "search by role", role, "No messages match.")
	for _, path := range []string{"/search?q=x&role=god", "/search?q=x&offset=-1", "/search?q=x&sort=up"} {
		if resp, _ := get(t, nil, ts.URL+path); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, resp.StatusCode)
		}
	}
}

// TestPages_Usage: usage across the store per model, as a chart and a
// table.
func TestPages_Usage(t *testing.T) {
	s, _ := seededStore(t)
	ts := serve(t, s, Options{})
	_, body := get(t, nil, ts.URL+"/usage")
	mustContain(t, "usage", body, `role="img"`, "<title>input: 12,000 tokens</title>", "claude-sonnet", "gpt-5-mini · title",
		"Usage by billing provider", "$0.2100")
	if resp, _ := get(t, nil, ts.URL+"/usage?since=forever"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET /usage?since=forever: %d, want 400", resp.StatusCode)
	}
}

// TestPages_LongConversationIsPaged: a 20,000-message conversation opens
// at its newest page of 200, pages back and forth, opens around any
// message, and the live refresh returns only what is new.
func TestPages_LongConversationIsPaged(t *testing.T) {
	s, f := seededStore(t)
	ts := serve(t, s, Options{})
	start := time.Now()
	resp, body := get(t, nil, ts.URL+"/s/"+uitest.Long)
	took := time.Since(start)
	t.Logf("newest page of %d messages served in %v", uitest.LongCount, took)
	if took > 5*time.Second { // a loose sanity bound on a shared machine; the target is well under 1 s
		t.Errorf("the long conversation took %v to open", took)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	if n := strings.Count(body, `<li class="msg`); n != 200 {
		t.Errorf("newest page shows %d messages, want 200", n)
	}
	mustContain(t, "newest page", body, "turn 20000 of", "turn 19801 of", "Earlier messages",
		fmt.Sprintf(`data-live="/s/%s/after?after=%d"`, uitest.Long, f.LongLast))
	mustNotContain(t, "newest page", body, "turn 19800 of", "Later messages")

	mid := f.LongLast - 10000
	_, around := get(t, nil, fmt.Sprintf("%s/s/%s?at=%d", ts.URL, uitest.Long, mid))
	mustContain(t, "page around", around, fmt.Sprintf(`id="m%d"`, mid), fmt.Sprintf(`id="m%d"`, mid-100),
		fmt.Sprintf(`id="m%d"`, mid+99), "Earlier messages", "Later messages")
	mustNotContain(t, "page around", around, "data-live=")

	_, first := get(t, nil, ts.URL+"/s/"+uitest.Long+"?after=0")
	mustContain(t, "first page", first, "turn 1 of", "turn 200 of", "Later messages")
	mustNotContain(t, "first page", first, "turn 201 of", "Earlier messages")

	_, after := get(t, nil, fmt.Sprintf("%s/s/%s/after?after=%d", ts.URL, uitest.Long, f.LongLast-1))
	if n := strings.Count(after, `<li class="msg`); n != 1 || strings.Contains(after, "<html") {
		t.Errorf("live refresh after the last but one: %d messages (want 1, as a fragment):\n%s", n, after)
	}
	_, none := get(t, nil, fmt.Sprintf("%s/s/%s/after?after=%d", ts.URL, uitest.Long, f.LongLast))
	if strings.TrimSpace(none) != "" {
		t.Errorf("live refresh after the last: %q, want nothing", none)
	}
	for path, want := range map[string]int{"/s/" + uitest.Long + "/after?after=x": 400, "/s/nope/after?after=0": 404,
		"/s/" + uitest.Long + "?before=-1": 400} {
		if resp, _ := get(t, nil, ts.URL+path); resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
