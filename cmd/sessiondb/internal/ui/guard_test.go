package ui

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestGuard_MethodsAreRefused: the viewer is read-only; every method but
// GET and HEAD gets 405 with Allow, on every path, before any handler.
func TestGuard_MethodsAreRefused(t *testing.T) {
	s, _ := seededStore(t)
	ts := serve(t, s, Options{})
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"} {
		for _, path := range []string{"/", "/s/ui-rich", "/search?q=x", "/static/app.js", "/nowhere"} {
			req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader("archived=true"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d, Allow %q; want 405, GET, HEAD", method, path, resp.StatusCode, resp.Header.Get("Allow"))
			}
			if resp.Header.Get("Content-Security-Policy") != csp {
				t.Errorf("%s %s: no CSP", method, path)
			}
		}
	}
	for _, method := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(method, ts.URL+"/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s /: %d, want 200", method, resp.StatusCode)
		}
	}
}

// TestGuard_SecurityHeaders: every answer (a page, an asset, a 404, a 400)
// carries the strict CSP and its companions.
func TestGuard_SecurityHeaders(t *testing.T) {
	s, _ := seededStore(t)
	ts := serve(t, s, Options{})
	for path, status := range map[string]int{"/": 200, "/s/ui-rich": 200, "/static/app.css": 200,
		"/usage": 200, "/s/no-such-session": 404, "/search?q=x&sort=sideways": 400, "/s/ui-rich?at=x": 400} {
		resp, _ := get(t, nil, ts.URL+path)
		if resp.StatusCode != status {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, status)
		}
		h := resp.Header
		for k, want := range map[string]string{"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff",
			"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"} {
			if got := h.Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, want)
			}
		}
	}
	for _, part := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, part) {
			t.Errorf("CSP lacks %q", part)
		}
	}
	if strings.Contains(csp, "unsafe-") {
		t.Errorf("CSP allows something unsafe: %s", csp)
	}
}

// TestGuard_Token: bound off loopback the viewer needs its token: none or
// a wrong one gets 401; the right one in the URL becomes a cookie (and a
// redirect to the page without it), which then opens every page.
func TestGuard_Token(t *testing.T) {
	s, _ := seededStore(t)
	tok := NewToken()
	if len(tok) != 32 || tok == NewToken() {
		t.Fatalf("NewToken = %q: want 32 random hex digits", tok)
	}
	ts := serve(t, s, Options{Token: tok})
	for _, path := range []string{"/", "/s/ui-rich", "/static/app.js", "/?token=wrong", "/?token="} {
		if resp, _ := get(t, nil, ts.URL+path); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, resp.StatusCode)
		}
	}
	resp, _ := get(t, nil, ts.URL+"/s/ui-rich?at=3&token="+tok)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/s/ui-rich?at=3" {
		t.Fatalf("GET with the token: %d to %q, want 303 to /s/ui-rich?at=3", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == tokenCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value != tok {
		t.Fatalf("token cookie = %+v, want HttpOnly, SameSite=Strict, the token", cookie)
	}
	for _, path := range []string{"/", "/s/ui-rich", "/static/app.js"} {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.AddCookie(cookie)
		r, err := noRedirect().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the cookie: %d, want 200", path, r.StatusCode)
		}
		req.Header.Del("Cookie")
		req.AddCookie(&http.Cookie{Name: tokenCookie, Value: strings.ToUpper(tok)})
		if r, err = noRedirect().Do(req); err == nil {
			r.Body.Close()
			if r.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with a wrong cookie: %d, want 401", path, r.StatusCode)
			}
		}
	}
}

// TestGuard_LoopbackHost: without a token the viewer answers only to a
// loopback Host, so a web page cannot reach it by DNS rebinding.
func TestGuard_LoopbackHost(t *testing.T) {
	s, _ := seededStore(t)
	ts := serve(t, s, Options{})
	u, _ := url.Parse(ts.URL)
	for host, want := range map[string]int{"evil.example": 403, "evil.example:80": 403, "127.0.0.1.nip.io": 403,
		u.Host: 200, "localhost:" + u.Port(): 200, "[::1]:" + u.Port(): 200, "127.0.0.2": 200} {
		req, _ := http.NewRequest("GET", ts.URL+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestGuard_OnlyEmbeddedAssets: /static serves its three files and
// nothing else; no path, however encoded, reaches the disk or another
// embedded file.
func TestGuard_OnlyEmbeddedAssets(t *testing.T) {
	s, _ := seededStore(t)
	ts := serve(t, s, Options{})
	for path, ctype := range map[string]string{"/static/app.js": "text/javascript; charset=utf-8",
		"/static/app.css": "text/css; charset=utf-8", "/static/favicon.svg": "image/svg+xml"} {
		resp, body := get(t, nil, ts.URL+path)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ctype || body == "" {
			t.Errorf("GET %s: %d %q (%d bytes)", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
	}
	for _, path := range []string{
		"/static/../../../../etc/passwd", "/static/..%2f..%2f..%2fetc%2fpasswd", "/static/%2e%2e/server.go",
		"/static/..%5c..%5cserver.go", "/static/templates/layout.html", "/static/", "/static/app.js%00",
		"/assets/static/app.js", "/assets/templates/layout.html", "/etc/passwd", "/server.go", "/static//etc/passwd",
		"/static/app.js/..", "/static/APP.JS", "/../go.mod",
	} {
		req, _ := http.NewRequest("GET", ts.URL+"/", nil)
		req.URL.RawPath, req.URL.Path = "", ""
		req.URL.Opaque = path // sent as written, not cleaned by the client
		resp, err := noRedirect().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusMovedPermanently || resp.StatusCode == http.StatusTemporaryRedirect:
			// The mux cleans "." and "..": following it must land nowhere.
			loc := resp.Header.Get("Location")
			if r, _ := get(t, nil, ts.URL+loc); r.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s → %s: %d, want 404", path, loc, r.StatusCode)
			}
		case resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusBadRequest:
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
}
