package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sessiondb/sessiondb/cmd/sessiondb/internal/ui/uitest"
	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/pg"
	"github.com/sessiondb/sessiondb/store"
)

// The browser tests drive `sessiondb ui` in headless Chromium (Debian's
// chromium; $SESSIONDB_CHROMIUM names another binary) through chromedp.
// They skip locally when no Chromium is installed, and fail under
// CI=true, where CI installs it. Each page's screenshot is written to
// $SESSIONDB_ARTIFACTS/ui/ when that is set, else to
// cmd/sessiondb/testdata-out/ui/ (ignored by git): CI keeps that
// directory as an artifact. Nothing is compared pixel by pixel.

// chromiumPath finds the browser, or skips (fails in CI).
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SESSIONDB_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const how = "no Chromium for the browser tests: apt-get install chromium (scripts/test.sh does), " +
		"or set SESSIONDB_CHROMIUM to a Chrome or Chromium binary"
	if os.Getenv("CI") == "true" {
		t.Fatal(how)
	}
	t.Skip(how)
	return ""
}

// artifactDir is where the screenshots go (see above).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("testdata-out", "ui")
	if a := os.Getenv("SESSIONDB_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "ui")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startUI runs `sessiondb --db location ui [flags]` as the CLI would, and
// returns the URL it printed (as text, or with --json in its JSON); the
// server stops (and must exit cleanly) when the test ends.
func startUI(t *testing.T, location string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr lockedBuffer
	exited := make(chan int, 1)
	go func() {
		args := append([]string{"--db", location, "ui"}, flags...)
		if !slices.Contains(flags, "--addr") {
			args = append(args, "--addr", "127.0.0.1:0")
		}
		code := run(ctx, args, strings.NewReader(""), pw, &stderr)
		pw.Close()
		exited <- code
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-exited:
			if code != exitOK {
				t.Errorf("sessiondb ui exited %d: %s", code, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Error("sessiondb ui did not stop within 10 s of the interrupt")
		}
	})
	found := make(chan string, 1)
	go func() {
		defer io.Copy(io.Discard, pr) // never block the server on its stdout
		var printed strings.Builder   // --json prints an indented object over several lines
		for sc := bufio.NewScanner(pr); sc.Scan(); {
			line := sc.Text()
			printed.WriteString(line)
			var j struct{ URL string }
			if json.Unmarshal([]byte(printed.String()), &j) == nil && j.URL != "" {
				line = j.URL
			}
			if strings.HasPrefix(line, "http://") {
				found <- strings.TrimSuffix(line, "/")
				return
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if ok {
			return u
		}
	case <-time.After(30 * time.Second):
	}
	t.Fatalf("sessiondb ui printed no URL; stderr: %s", stderr.String())
	return ""
}

// lockedBuffer is a strings.Builder a server goroutine writes while the
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	// +checklocks:mu
	b strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// browser is one headless Chromium tab that records every dialog, script
// exception, console error and browser-log error (a CSP violation is one).
type browser struct {
	ctx  context.Context
	base string
	dir  string
	mu   sync.Mutex
	// +checklocks:mu
	problems []string
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath(t)),
		chromedp.WindowSize(1280, 800), chromedp.NoSandbox) // no sandbox: CI and this machine run as root
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTime(); cancel(); cancelAlloc() })
	b := &browser{ctx: ctx, base: base, dir: artifactDir(t)}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			b.problems = append(b.problems, fmt.Sprintf("a %s dialog opened: %q", ev.Type, ev.Message))
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+ev.ExceptionDetails.Text+" "+fmt.Sprint(ev.ExceptionDetails.Exception))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == "error" || ev.Type == "assert" {
				b.problems = append(b.problems, fmt.Sprintf("console.%s %v", ev.Type, ev.Args))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				b.problems = append(b.problems, fmt.Sprintf("browser log (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// open navigates to a path of the viewer and waits until the page is
// loaded (its script included).
func (b *browser) open(t *testing.T, path string) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(b.base+path), chromedp.WaitReady(chromedp.CSS("footer.site"))); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// text is the page's visible text.
func (b *browser) text(t *testing.T) string {
	t.Helper()
	return eval[string](t, b, `document.body.innerText`)
}

// shot saves a screenshot of the whole page as name.png.
func (b *browser) shot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// noProblems fails for every dialog, exception or console error since the
// last call.
func (b *browser) noProblems(t *testing.T, where string) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // let late events (an image's error, a dialog) arrive
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		t.Errorf("%s: %s", where, p)
	}
	b.problems = nil
}

// tabReachesAll presses Tab through the page and checks that focus
// visits every visible link, button, field and <summary>, in document
// order (no positive tabindex reorders it), and that each shows a focus
// ring.
func (b *browser) tabReachesAll(t *testing.T, where string) {
	t.Helper()
	n := eval[int](t, b, `(() => {
		const els = [...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex="-1"])')]
			.filter(e => e.checkVisibility() && !e.disabled);
		els.forEach((e, i) => e.dataset.kb = i);
		document.activeElement && document.activeElement.blur();
		window.__kbSeen = [];
		document.addEventListener('focusin', e => window.__kbSeen.push(e.target.dataset.kb === undefined ? 'x' : +e.target.dataset.kb));
		return els.length;
	})()`)
	if n == 0 {
		t.Fatalf("%s: no focusable controls", where)
	}
	for range n {
		if err := chromedp.Do(b.ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
	}
	seen := eval[[]any](t, b, `window.__kbSeen`)
	got := make([]string, len(seen))
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprint(i)
	}
	for i, s := range seen {
		got[i] = fmt.Sprint(s)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: %d presses of Tab focused %v, want each of the %d controls in order", where, n, got, n)
	}
	if outline := eval[string](t, b, `getComputedStyle(document.activeElement).outlineStyle`); outline == "none" {
		t.Errorf("%s: the focused control shows no focus ring", where)
	}
}

// noHorizontalScroll: the page fits the viewport's width.
func (b *browser) noHorizontalScroll(t *testing.T, where string) {
	t.Helper()
	if w := eval[[]int](t, b, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
		t.Errorf("%s: the page is %d px wide in a %d px viewport", where, w[0], w[1])
	}
}

// seedDemo fills location with `sessiondb demo` and the uitest fixture.
func seedDemo(t *testing.T, location string, open func() (*store.Store, func() error), long bool) uitest.Fixture {
	t.Helper()
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"--db", location, "demo"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Fatalf("sessiondb demo: exit %d: %s", code, errOut.String())
	}
	s, closeStore := open()
	defer closeStore()
	f, err := uitest.Seed(context.Background(), s, long)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestUI_Browser serves the demo store and the fixture from a SQLite file
// and drives every page in Chromium: rendering, navigation, search
// jumping to a message, hostile text executing nothing, keyboard reach,
// the live refresh, a 20,000-message conversation, and a phone's width.
func TestUI_Browser(t *testing.T) {
	chromiumPath(t) // skip before seeding when there is no browser
	path := filepath.Join(t.TempDir(), "ui.db")
	seedDemo(t, path, func() (*store.Store, func() error) {
		d, err := db.Open(context.Background(), path, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Store, d.Close
	}, true)
	b := newBrowser(t, startUI(t, path))

	// The watchers must see what the hostile pages are checked for: a
	// dialog, an exception, a console error, and script the CSP blocks.
	t.Run("WatchersSeeProblems", func(t *testing.T) {
		b.open(t, "/")
		for _, js := range []string{`alert("probe")`, `setTimeout(() => { throw new Error("probe") })`, `console.error("probe")`,
			`(() => { const s = document.createElement("script"); s.textContent = "window.__ran = 1"; document.body.append(s) })()`,
		} {
			if err := chromedp.Do(b.ctx, chromedp.Evaluate[chromedp.Void](js)); err != nil {
				t.Fatalf("%s: %v", js, err)
			}
			time.Sleep(300 * time.Millisecond)
			b.mu.Lock()
			seen := b.problems
			b.problems = nil
			b.mu.Unlock()
			if len(seen) == 0 {
				t.Errorf("%s: the watchers saw nothing", js)
			}
		}
		if ran := eval[bool](t, b, `window.__ran === 1`); ran {
			t.Error("an inline script ran: the CSP is not enforced")
		}
	})

	t.Run("SessionList", func(t *testing.T) {
		b.open(t, "/")
		text := b.text(t)
		for _, want := range []string{"Fix the flaky checkout test", "Plan a weekend in Lisbon", "Summarise the WAL paper", "PINNED", "sessions match"} {
			if !strings.Contains(text, want) {
				t.Errorf("session list lacks %q", want)
			}
		}
		b.shot(t, "sessions")
		b.tabReachesAll(t, "session list")
		b.noProblems(t, "session list")
	})

	t.Run("NavigateAndSearch", func(t *testing.T) {
		b.open(t, "/")
		if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`a[href="/s/demo-flaky-test"]`)),
			chromedp.WaitVisible(chromedp.CSS(`li.msg`))); err != nil {
			t.Fatal(err)
		}
		if h1 := eval[string](t, b, `document.querySelector('h1').innerText`); h1 != "Fix the flaky checkout test" {
			t.Errorf("clicked into %q", h1)
		}
		b.shot(t, "conversation-demo")
		b.tabReachesAll(t, "demo conversation")
		// Unfold a tool call by keyboard: its arguments show.
		if err := chromedp.Do(b.ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('details.tool-call summary').focus()`),
			chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatal(err)
		}
		if !eval[bool](t, b, `document.querySelector('details.tool-call').open`) {
			t.Error("Enter on a tool call's summary did not unfold it")
		}
		// Search from the header box; the hit jumps to its message.
		if err := chromedp.Do(b.ctx, chromedp.SendKeys(chromedp.ID("site-q"), "nata"+kb.Enter),
			chromedp.WaitVisible(chromedp.CSS(`ol.hits mark`))); err != nil {
			t.Fatal(err)
		}
		if m := eval[string](t, b, `document.querySelector('ol.hits mark').innerText`); !strings.EqualFold(m, "nata") {
			t.Errorf("the highlighted match is %q", m)
		}
		b.shot(t, "search")
		b.tabReachesAll(t, "search results")
		if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`ol.hits h2 a`)), chromedp.WaitVisible(chromedp.CSS(`li.msg:target`))); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, b, `document.querySelector('li.msg:target').innerText`); !strings.Contains(got, "pastéis de nata") {
			t.Errorf("the search hit opened on %q", got)
		}
		if inView := eval[bool](t, b, `(r => r.top >= 0 && r.top < innerHeight)(document.querySelector('li.msg:target').getBoundingClientRect())`); !inView {
			t.Error("the message the hit named is not scrolled into view")
		}
		b.noProblems(t, "navigation and search")
	})

	t.Run("RichConversation", func(t *testing.T) {
		b.open(t, "/s/"+uitest.Rich+"?after=0")
		if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`button[data-fold="open"]`))); err != nil {
			t.Fatal(err)
		}
		if closed := eval[int](t, b, `document.querySelectorAll('#messages details:not([open])').length`); closed != 0 {
			t.Errorf("Unfold all left %d folded", closed)
		}
		loaded := eval[bool](t, b, `[...document.images].every(i => i.complete && i.naturalWidth === 1)`)
		if !loaded {
			t.Error("the data: PNG did not load")
		}
		text := b.text(t)
		for _, want := range []string{"REWOUND", "COMPACTED", "COMPACTION SUMMARY", "Tool call read_file", "Reasoning", "image (not loaded)", "spec.pdf", "Lineage", "Usage by model and task"} {
			if !strings.Contains(text, want) {
				t.Errorf("rich conversation lacks %q", want)
			}
		}
		b.shot(t, "conversation-rich")
		b.noProblems(t, "rich conversation")
		b.open(t, "/s/"+uitest.RichTip)
		b.shot(t, "conversation-lineage")
		b.noProblems(t, "compression tip")
	})

	t.Run("HostileTextExecutesNothing", func(t *testing.T) {
		for _, path := range []string{"/s/" + uitest.Hostile, "/?source=gateway", "/search?q=" + uitest.SearchWord, "/search?q=onerror"} {
			b.open(t, path)
			chromedp.Do(b.ctx, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details').forEach(d => d.open = true)`))
			if n := eval[int](t, b, `document.scripts.length`); n != 1 {
				t.Errorf("%s: %d scripts in the page, want only app.js", path, n)
			}
			if n := eval[int](t, b, `document.querySelectorAll('img, iframe, svg[onload], [onerror], [onload], [onclick]').length`); n != 0 {
				t.Errorf("%s: %d images, frames or handlers made from stored text", path, n)
			}
			b.noProblems(t, path)
		}
		b.open(t, "/s/"+uitest.Hostile)
		if title := eval[string](t, b, `document.title`); !strings.Contains(title, `<script>alert("title")</script>`) {
			t.Errorf("the hostile title is not shown as text: %q", title)
		}
		if text := b.text(t); !strings.Contains(text, uitest.HostileImg) || !strings.Contains(text, "␛[31mred") {
			t.Error("the hostile content is not shown as text")
		}
		b.shot(t, "conversation-hostile")
		b.noProblems(t, "hostile conversation")
	})

	t.Run("Usage", func(t *testing.T) {
		b.open(t, "/usage")
		if n := eval[int](t, b, `document.querySelectorAll('figure.chart svg rect.seg').length`); n < 3 {
			t.Errorf("usage chart has %d bar segments", n)
		}
		b.shot(t, "usage")
		b.tabReachesAll(t, "usage")
		b.noProblems(t, "usage")
	})

	t.Run("LongConversationOpensFast", func(t *testing.T) {
		start := time.Now()
		b.open(t, "/s/"+uitest.Long)
		took := time.Since(start)
		load := eval[float64](t, b, `performance.getEntriesByType('navigation')[0].loadEventEnd`)
		t.Logf("20,000-message conversation: newest page loaded in %.0f ms (navigation timing), %v round trip", load, took)
		if took > 5*time.Second { // a loose sanity bound on a shared machine; the target is under 1 s
			t.Errorf("the long conversation took %v to open", took)
		}
		if n := eval[int](t, b, `document.querySelectorAll('li.msg').length`); n != 200 {
			t.Errorf("%d messages on the page, want a page of 200", n)
		}
		if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`a[rel="prev"]`)), chromedp.WaitVisible(chromedp.CSS(`a[rel="next"]`))); err != nil {
			t.Fatal(err)
		}
		if first := eval[string](t, b, `document.querySelector('li.msg .prose').innerText`); first != "turn 19601 of the long conversation" {
			t.Errorf("Earlier messages opened at %q", first)
		}
		b.shot(t, "conversation-long")
		b.noProblems(t, "long conversation")
	})

	t.Run("LiveRefresh", func(t *testing.T) {
		b.open(t, "/s/demo-trip")
		d, err := db.Open(context.Background(), path, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		id, err := d.AppendMessage(context.Background(), "demo-trip", db.NewMessage{Role: db.RoleUser, Content: "And <b>one</b> more thing, live."})
		if err != nil {
			t.Fatal(err)
		}
		wait, cancel := context.WithTimeout(b.ctx, 15*time.Second)
		defer cancel()
		if err := chromedp.Do(wait, chromedp.WaitVisible(chromedp.ID(fmt.Sprintf("m%d", id)))); err != nil {
			t.Fatalf("the message appended at %d did not appear within 15 s: %v", id, err)
		}
		if got := eval[string](t, b, fmt.Sprintf(`document.getElementById('m%d').querySelector('.prose').innerText`, id)); got != "And <b>one</b> more thing, live." {
			t.Errorf("the live message shows %q", got)
		}
		if status := eval[string](t, b, `document.getElementById('live-status').innerText`); !strings.Contains(status, "1 new message") {
			t.Errorf("live status says %q", status)
		}
		b.noProblems(t, "live refresh")
	})

	t.Run("PhoneWidth", func(t *testing.T) {
		if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844)); err != nil {
			t.Fatal(err)
		}
		defer chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 800))
		for name, path := range map[string]string{"phone-sessions": "/", "phone-conversation": "/s/" + uitest.Rich + "?after=0",
			"phone-search": "/search?q=" + uitest.CodeWord, "phone-usage": "/usage"} {
			b.open(t, path)
			chromedp.Do(b.ctx, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details').forEach(d => d.open = true)`))
			b.noHorizontalScroll(t, name)
			b.shot(t, name)
		}
		b.noProblems(t, "phone width")
	})

	t.Run("Desktop fits", func(t *testing.T) {
		for _, path := range []string{"/", "/s/" + uitest.Rich + "?after=0", "/usage", "/search?q=" + uitest.CodeWord} {
			b.open(t, path)
			b.noHorizontalScroll(t, path)
		}
	})

	t.Run("ErrorPage", func(t *testing.T) {
		b.open(t, "/s/no-such-session")
		if h1 := eval[string](t, b, `document.querySelector('h1').innerText`); !regexp.MustCompile(`^404`).MatchString(h1) {
			t.Errorf("unknown session shows %q", h1)
		}
		b.mu.Lock()
		b.problems = nil // the 404 itself is logged by the browser as a failed load
		b.mu.Unlock()
	})
}

// TestUI_BrowserPostgres serves a PostgreSQL store (the demo and the
// fixture) and checks in Chromium that its pages render, navigation and
// search work, and hostile text executes nothing.
func TestUI_BrowserPostgres(t *testing.T) {
	chromiumPath(t)
	location := serverURL(t)
	f := seedDemo(t, location, func() (*store.Store, func() error) {
		s, err := pg.Open(context.Background(), location, pg.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Store, s.Close
	}, false)
	b := newBrowser(t, startUI(t, location))

	b.open(t, "/")
	if text := b.text(t); !strings.Contains(text, "Plan a weekend in Lisbon") || !strings.Contains(text, "PINNED") {
		t.Errorf("PostgreSQL session list: %.300q", text)
	}
	if footer := eval[string](t, b, `document.querySelector('footer').innerText`); !strings.Contains(footer, "postgres://") {
		t.Errorf("footer names %q, not the server", footer)
	}
	b.shot(t, "pg-sessions")
	b.noProblems(t, "pg session list")

	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`a[href="/s/`+uitest.RichTip+`"]`)), chromedp.WaitVisible(chromedp.CSS(`nav.lineage`))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`ol.chain a`)), chromedp.WaitVisible(chromedp.CSS(`li.msg`))); err != nil {
		t.Fatal(err)
	}
	if text := b.text(t); !strings.Contains(text, "COMPACTED") || !strings.Contains(text, "REWOUND") {
		t.Error("the lineage's root does not mark its compacted and rewound rows")
	}
	b.shot(t, "pg-conversation")

	if err := chromedp.Do(b.ctx, chromedp.SendKeys(chromedp.ID("site-q"), uitest.SearchWord+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`ol.hits mark`))); err != nil {
		t.Fatal(err)
	}
	b.shot(t, "pg-search")
	link := fmt.Sprintf(`a[href="/s/%s?at=%d#m%d"]`, uitest.Rich, f.Hit, f.Hit)
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(link)), chromedp.WaitVisible(chromedp.CSS(`li.msg:target`))); err != nil {
		t.Fatalf("the hit on %s: %v", link, err)
	}
	b.noProblems(t, "pg navigation and search")

	b.open(t, "/s/"+uitest.Hostile)
	chromedp.Do(b.ctx, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details').forEach(d => d.open = true)`))
	if n := eval[int](t, b, `document.scripts.length + document.images.length`); n != 1 {
		t.Errorf("hostile conversation on PostgreSQL: %d scripts and images, want only app.js", n)
	}
	b.noProblems(t, "pg hostile conversation")
}
