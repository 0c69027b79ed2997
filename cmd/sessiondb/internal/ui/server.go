package ui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// Options configure a viewer.
type Options struct {
	// Token, when set, is required on every request: as ?token= once,
	// then as the cookie that answer sets. Required when the server is
	// bound to anything but a loopback address (NewToken makes one).
	Token string
	// Where names the store in the page footer (a path, or a URL without
	// its password).
	Where string
	// Poll is how often an open conversation asks for new messages
	// (default 2s).
	Poll time.Duration
	// PageSize is how many messages a conversation page shows (default
	// 200): a 20,000-message conversation opens as fast as a short one.
	PageSize int
	// Logger reports failed requests (default slog.Default()).
	Logger *slog.Logger
}

// Server is the viewer: an http.Handler over one store.
type Server struct {
	store *store.Store
	opts  Options
	pages pages
	mux   *http.ServeMux
}

// New returns a viewer of s.
func New(s *store.Store, o Options) (*Server, error) {
	if s == nil {
		return nil, errors.New("ui: no store")
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.PageSize <= 0 {
		o.PageSize = 200
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	srv := &Server{store: s, opts: o, pages: p, mux: http.NewServeMux()}
	// GET patterns match HEAD too; guard refuses every other method.
	srv.mux.HandleFunc("GET /{$}", srv.handleSessions)
	srv.mux.HandleFunc("GET /s/{id}", srv.handleConversation)
	srv.mux.HandleFunc("GET /s/{id}/after", srv.handleAfter)
	srv.mux.HandleFunc("GET /search", srv.handleSearch)
	srv.mux.HandleFunc("GET /usage", srv.handleUsage)
	srv.mux.HandleFunc("GET /static/{name}", handleStatic)
	srv.mux.HandleFunc("/", srv.handleNotFound)
	return srv, nil
}

// ServeHTTP answers one request, through the guard (methods, headers,
// token, host).
func (srv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	srv.guard(srv.mux).ServeHTTP(w, r)
}

// NewToken returns a random token for Options.Token (128 bits, hex).
func NewToken() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// IsLoopback reports whether a listener's address is a loopback one, where
// the viewer needs no token.
func IsLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// Serve serves h on ln until ctx is done, then shuts down, giving
// requests in flight a few seconds.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := hs.Shutdown(sctx)
		<-done
		return err
	}
}
