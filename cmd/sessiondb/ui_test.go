package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sessiondb/sessiondb/db"
)

// uiStore is a SQLite store made by `sessiondb demo`.
func uiStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ui.db")
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"--db", path, "demo"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Fatalf("demo: exit %d: %s", code, errOut.String())
	}
	return path
}

// TestUI_CommandOnLoopback: by default the viewer listens on a loopback
// port, prints a URL without a token, and serves the store there.
func TestUI_CommandOnLoopback(t *testing.T) {
	base := startUI(t, uiStore(t))
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(base) {
		t.Fatalf("printed URL %q, want http://127.0.0.1:PORT/", base)
	}
	resp, err := http.Get(base + "/s/demo-trip")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Plan a weekend in Lisbon") {
		t.Errorf("GET /s/demo-trip: %d %.200q", resp.StatusCode, body)
	}
}

// TestUI_CommandOffLoopbackNeedsToken: bound to every address, the viewer
// makes a random token, prints it in the URL (and in --json), and refuses
// requests without it.
func TestUI_CommandOffLoopbackNeedsToken(t *testing.T) {
	printed := startUI(t, uiStore(t), "--addr", "0.0.0.0:0", "--json")
	u, err := url.Parse(printed)
	if err != nil {
		t.Fatal(err)
	}
	tok := u.Query().Get("token")
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(tok) {
		t.Fatalf("printed %q: want a 32-hex-digit token in the URL", printed)
	}
	local := "http://127.0.0.1:" + u.Port()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]int{"/": 401, "/?token=" + strings.Repeat("0", 32): 401, "/?token=" + tok: 303} {
		resp, err := client.Get(local + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// TestUI_CommandNoDatabase: pointed at nothing, ui exits 3 and creates
// nothing, like the other reading commands.
func TestUI_CommandNoDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "none.db")
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"--db", path, "ui"}, strings.NewReader(""), &out, &errOut)
	if code != exitNotFound || !strings.Contains(errOut.String(), "no database at") {
		t.Errorf("ui on no database: exit %d, %q; want 3, no database at", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ui created %s: %v", filepath.Join(dir, "sub"), err)
	}
	if code := run(context.Background(), []string{"--db", uiStore(t), "ui", "--addr", "not an address"}, strings.NewReader(""), &out, &errOut); code != exitError {
		t.Errorf("ui --addr 'not an address': exit %d, want 1", code)
	}
}

// TestUI_SessionPagesReachEverySession: the picker's "Older sessions"
// links, followed to the end, list every session exactly once.
func TestUI_SessionPagesReachEverySession(t *testing.T) {
	path := uiStore(t)
	d, err := db.Open(context.Background(), path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const extra = 180
	for i := range extra {
		if _, err := d.CreateSession(context.Background(), db.NewSession{ID: fmt.Sprintf("page-%03d", i), Source: "cli"}); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	base := startUI(t, path)
	seen := map[string]int{}
	link := regexp.MustCompile(`<h2 id="s-[^"]*"><a href="/s/([^"]+)">`)
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">Older sessions</a>`)
	pages := 0
	for at := "/"; at != ""; pages++ {
		resp, err := http.Get(base + at)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", at, resp.StatusCode)
		}
		for _, m := range link.FindAllStringSubmatch(string(body), -1) {
			seen[m[1]]++
		}
		at = ""
		if m := next.FindStringSubmatch(string(body)); m != nil {
			at = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		if pages > 20 {
			t.Fatal("the pages do not end")
		}
	}
	if want := extra + 3; len(seen) != want || pages != 4 {
		t.Errorf("%d pages listed %d sessions, want 4 pages of 50 listing %d", pages, len(seen), want)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("session %s listed %d times", id, n)
		}
	}
}
