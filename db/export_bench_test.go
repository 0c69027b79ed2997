package db

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkExport streams a store of 100k messages (1M with
// SESSIONDB_BENCH_1M=1) to io.Discard and reports the export's peak heap:
// it must not grow with the store (memory is a page of rows, not the
// file). Sessions of 1,000 messages each.
func BenchmarkExport(b *testing.B) {
	sizes := []int{100_000}
	if os.Getenv("SESSIONDB_BENCH_1M") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			s := openTestStore(b, Options{})
			fillSessions(b, s, n/1000, 1000)
			ctx := context.Background()
			var peak uint64
			b.ResetTimer()
			for range b.N {
				runtime.GC()
				var base runtime.MemStats
				runtime.ReadMemStats(&base)
				p := samplePeakHeap(func() {
					if _, err := s.Export(ctx, io.Discard, ExportOptions{}); err != nil {
						b.Fatal(err)
					}
				})
				if p > base.HeapInuse && p-base.HeapInuse > peak {
					peak = p - base.HeapInuse
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// fillSessions writes sessions × perSession benchmark messages in batches.
func fillSessions(b *testing.B, s *Store, sessions, perSession int) {
	b.Helper()
	ctx := context.Background()
	batch := make([]NewMessage, perSession)
	for k := range sessions {
		id := fmt.Sprintf("s%05d", k)
		if _, err := s.CreateSession(ctx, NewSession{ID: id, Source: "bench"}); err != nil {
			b.Fatal(err)
		}
		for i := range batch {
			batch[i] = benchMessage(k*perSession + i)
		}
		if _, err := s.AppendMessages(ctx, id, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// samplePeakHeap runs fn and returns the highest HeapInuse seen while it
// ran, sampled every millisecond.
func samplePeakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	return peak.Load()
}
