package ui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sessiondb/sessiondb/cmd/sessiondb/internal/ui/uitest"
	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/store"
)

// seeded is a SQLite store with the uitest fixture, the long session
// included, built once for the package's tests (they only read it).
var seeded struct {
	once sync.Once
	s    *store.Store
	db   *db.Store
	f    uitest.Fixture
	err  error
}

func seededStore(t *testing.T) (*store.Store, uitest.Fixture) {
	t.Helper()
	seeded.once.Do(func() {
		dir, err := tempDir()
		if err != nil {
			seeded.err = err
			return
		}
		d, err := db.Open(context.Background(), filepath.Join(dir, "ui.db"), db.Options{})
		if err != nil {
			seeded.err = err
			return
		}
		seeded.s, seeded.db = d.Store, d
		seeded.f, seeded.err = uitest.Seed(context.Background(), d.Store, true)
	})
	if seeded.err != nil {
		t.Fatal(seeded.err)
	}
	return seeded.s, seeded.f
}

// serve starts the viewer of s on a loopback test server.
func serve(t *testing.T, s *store.Store, o Options) *httptest.Server {
	t.Helper()
	h, err := New(s, o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// get fetches a path of the viewer and returns the response and its body.
func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	if c == nil {
		c = noRedirect()
	}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// noRedirect is a client that shows redirects rather than following them.
func noRedirect() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// mustContain fails for each want missing from body.
func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s: missing %q", what, w)
		}
	}
}

// mustNotContain fails for each unwanted text found in body.
func mustNotContain(t *testing.T, what, body string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(body, u) {
			t.Errorf("%s: has %q", what, u)
		}
	}
}
