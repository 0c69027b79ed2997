package ui

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

//go:embed assets/templates/*.html
var templateFS embed.FS

//go:embed assets/static
var staticFS embed.FS

// staticFiles are the only files the viewer serves, by name, with their
// content types; nothing else is looked up, so no request path reaches
// the disk or another embedded file.
var staticFiles = map[string]string{
	"app.css":     "text/css; charset=utf-8",
	"app.js":      "text/javascript; charset=utf-8",
	"favicon.svg": "image/svg+xml",
}

func handleStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ctype, ok := staticFiles[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := staticFS.ReadFile(path.Join("assets/static", name))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Write(b)
}

// pages are the parsed page templates, by name: each is the shared
// layout and parts with the page's own "main".
type pages map[string]*template.Template

// pageNames are the templates under assets/templates that are pages; the
// rest (layout.html, parts.html) are shared by all of them.
var pageNames = []string{"sessions", "conversation", "search", "usage", "error", "after"}

func parsePages() (pages, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "assets/templates/layout.html", "assets/templates/parts.html")
	if err != nil {
		return nil, fmt.Errorf("ui: templates: %w", err)
	}
	p := pages{}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "assets/templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("ui: template %s: %w", name, err)
		}
		p[name] = t
	}
	return p, nil
}

var funcs = template.FuncMap{
	"when":      formatTime,
	"iso":       func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"num":       formatCount,
	"usd":       func(v float64) string { return fmt.Sprintf("$%.4f", v) },
	"visible":   visible,
	"session":   sessionURL,
	"msgURL":    messageURL,
	"kindName":  kindName,
	"routeText": routeText,
	"table": func(caption string, rows []store.ModelUsage) usageTable {
		return usageTable{Caption: caption, Rows: rows}
	},
}

// routeText is a usage row's billing route in one cell: provider, mode and
// base URL as far as known ("" for none). A session's rows are one per
// (model, task, route); store totals sum the routes and have none.
func routeText(b store.Billing) string {
	var parts []string
	for _, p := range []string{b.Provider, b.Mode, b.BaseURL} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// usageTable is the "usage-table" template's data.
type usageTable struct {
	Caption string
	Rows    []store.ModelUsage
}

// page is what every page's layout reads beside the page's own data.
type page struct {
	Title string
	Where string
	Nav   string // the site link that is the current page
	Query string // the search box's text
	Data  any
}

// render writes a page whole, or a 500 when its template fails (never half
// a page).
func (srv *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.Where = srv.opts.Where
	var buf bytes.Buffer
	tmpl := "layout.html"
	if name == "after" {
		tmpl = "after"
	}
	if err := srv.pages[name].ExecuteTemplate(&buf, tmpl, p); err != nil {
		srv.opts.Logger.Error("ui: render", "page", name, "path", r.URL.Path, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail answers a store error with a page saying what went wrong: 404 for
// a session or message that is not there, 400 for input the store
// refuses, 500 otherwise.
func (srv *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, store.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, store.ErrInvalidInput), errors.Is(err, errBadParam):
		status = http.StatusBadRequest
	case r.Context().Err() != nil:
		return // the browser went away
	default:
		srv.opts.Logger.Error("ui: request", "path", r.URL.Path, "err", err)
	}
	srv.render(w, r, status, "error", page{Title: http.StatusText(status),
		Data: struct {
			Status int
			Text   string
			Err    string
		}{status, http.StatusText(status), err.Error()}})
}

func (srv *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	srv.fail(w, r, fmt.Errorf("no page at %s: %w", r.URL.Path, store.ErrNotFound))
}

// errBadParam marks a query parameter the viewer cannot read (400).
var errBadParam = errors.New("bad parameter")

// badParam is a query parameter that is none of its choices.
func badParam(name, value string) error {
	return fmt.Errorf("%s=%q is not one of the choices: %w", name, value, errBadParam)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// formatCount writes n with thin groupings: 1234567 is "1,234,567".
func formatCount(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func kindName(k store.ChildKind) string {
	if k == "" {
		return "child"
	}
	return string(k)
}
