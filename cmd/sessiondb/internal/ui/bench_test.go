package ui

import (
	"io"
	"net/http"
	"testing"

	"github.com/sessiondb/sessiondb/cmd/sessiondb/internal/ui/uitest"
)

// BenchmarkConversationPage serves the newest page of a 20,000-message
// conversation and of a 200-message one, exactly a page (the baseline):
// paging makes the long one cost about what the baseline does. Alternate
// them, one run each at a time:
//
//	for i in 1 2 3 4; do go test -run '^$' -bench ConversationPage -count 1 ./internal/ui/; done
func BenchmarkConversationPage(b *testing.B) {
	s, _ := seededStore(&testing.T{})
	if s == nil {
		b.Fatal(seeded.err)
	}
	h, err := New(s, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, id string }{{"onepage200", uitest.OnePage}, {"long20000", uitest.Long}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest("GET", "http://127.0.0.1/s/"+c.id, nil)
				w := discard{h: http.Header{}}
				h.ServeHTTP(&w, req)
				if w.status != 0 && w.status != 200 {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// discard is a ResponseWriter that keeps only the status.
type discard struct {
	h      http.Header
	status int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return io.Discard.Write(p) }
func (d *discard) WriteHeader(s int)           { d.status = s }
