package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
)

// BenchmarkDeleteSession_WhileAppending deletes b.N sessions of 1,000
// indexed 300-byte messages, one after another, while 16 appenders
// append, and reports how long each delete took and the appends' latency.
// A delete holds the writer for as long as its transaction takes, and
// every append waits behind it: whatever of the indexes' work it does in
// that transaction is the appends' wait too.
func BenchmarkDeleteSession_WhileAppending(b *testing.B) {
	const perSession, appenders = 1000, 16
	s := benchStore(b)
	ctx := context.Background()
	batch := make([]db.NewMessage, perSession)
	for k := range b.N {
		id := fmt.Sprint("old", k)
		if _, err := s.CreateSession(ctx, db.NewSession{ID: id, Source: "bench"}); err != nil {
			b.Fatal(err)
		}
		for i := range batch {
			batch[i] = paddedMessage(k*perSession+i, 300)
		}
		if _, err := s.AppendMessages(ctx, id, batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.IndexNow(ctx); err != nil {
		b.Fatal(err)
	}
	var stop atomic.Bool
	var appended atomic.Int64
	lat := make([][]time.Duration, appenders)
	errs := make([]error, appenders)
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range appenders {
		wg.Go(func() {
			for i := w; !stop.Load(); i += appenders {
				t := time.Now()
				if _, err := s.AppendMessage(ctx, "bench", paddedMessage(i, 300)); err != nil {
					errs[w] = err
					return
				}
				lat[w] = append(lat[w], time.Since(t))
				appended.Add(1)
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // the appenders run before the first delete
	deletes := make([]time.Duration, b.N)
	for k := range b.N {
		id := fmt.Sprint("old", k)
		t := time.Now()
		if _, err := s.DeleteSession(ctx, id, db.DeleteOptions{ExpectedIDs: []string{id}}); err != nil {
			b.Fatal(err)
		}
		deletes[k] = time.Since(t)
	}
	time.Sleep(50 * time.Millisecond) // and after the last
	stop.Store(true)
	wg.Wait()
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	slices.Sort(deletes)
	b.ReportMetric(ms(deletes[len(deletes)/2]), "delete-p50-ms")
	b.ReportMetric(ms(deletes[len(deletes)-1]), "delete-max-ms")
	b.ReportMetric(ms(all[len(all)/2]), "append-p50-ms")
	b.ReportMetric(ms(all[len(all)*99/100]), "append-p99-ms")
	b.ReportMetric(ms(all[len(all)-1]), "append-max-ms")
	b.ReportMetric(float64(appended.Load())/b.Elapsed().Seconds(), "msgs/s")
}
