package ui

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

// csp is the Content-Security-Policy of every response: only this
// origin's script and style (no inline either), images from here or data:
// URLs, nothing framed, no plugins, forms only to here.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// tokenCookie holds the token after the first request gave it.
const tokenCookie = "sessiondb_ui_token"

// guard wraps every route: the security headers, then read-only methods,
// then the token or (without one) a loopback Host.
func (srv *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the viewer is read-only: only GET and HEAD are allowed", http.StatusMethodNotAllowed)
			return
		}
		if srv.opts.Token == "" {
			if !loopbackHost(r.Host) {
				http.Error(w, "this viewer answers only to localhost, 127.0.0.1 or [::1]", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query(); q.Has("token") {
			if !srv.tokenOK(q.Get("token")) {
				http.Error(w, "wrong token: open the URL `sessiondb ui` printed", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: srv.opts.Token, Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
			// The same page without the token, so it stays out of the
			// address bar and the history.
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(tokenCookie); err != nil || !srv.tokenOK(c.Value) {
			http.Error(w, "token required: open the URL `sessiondb ui` printed", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (srv *Server) tokenOK(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(srv.opts.Token)) == 1
}

// loopbackHost reports whether a Host header names this machine's
// loopback: localhost or a loopback IP, with any port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
