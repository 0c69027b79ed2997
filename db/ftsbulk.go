package db

// ftsbulk.go indexes a bulk load (an import, a copy, history brought in
// through AppendMessages inside Store.BulkLoad) in large slices.
//
// The full-text indexes cost a row far less in a large transaction than
// in a small one: FTS5 writes one segment per transaction and merges
// segments as they pile up, so small slices write and merge the same
// postings many times. Measured on the corpus of internal/benchcorpus
// (docs/PERFORMANCE.md, "Bulk load"), indexing 100,000 messages cost
// ~115 µs of CPU a row in slices of 500 rows (the largest a yielding slice
// takes, to keep an append's wait short), ~70 in slices of 2,000, ~60 in
// slices of 5,000 and ~55 in one transaction. While a bulk load runs, the
// background indexer therefore waits until bulkSliceRows changes are
// queued (or the oldest has waited bulkMaxLag) and indexes them in one
// slice; when the load ends, what is left is indexed before BulkLoad
// returns.
//
// Nothing else changes: appends commit as before (durably, through
// tx.go); the rows past the mark are the queue as before, and Search
// reads them (search_tail.go), so a message is found as soon as its
// append returns; the queue stays bounded by about one slice. What a bulk
// load costs others: an append of another caller may wait for one bulk
// slice (a few hundred ms) instead of one yielding slice, and a search
// reads up to a slice of queued rows besides the index.

import (
	"context"
	"errors"
	"time"

	"github.com/sessiondb/sessiondb/store/driver"
)

const (
	// bulkSliceRows is the size of a slice during a bulk load.
	bulkSliceRows = 5000
	// bulkMaxLag bounds how long a queued row waits for a bulk slice to
	// fill (a slow load: its rows are indexed after this much).
	bulkMaxLag = 2 * time.Second
)

var _ driver.BulkLoader = sqliteDriver{}

// BeginBulk marks a bulk load under way (driver.BulkLoader): the
// background indexer indexes in slices of bulkSliceRows until every load
// has ended. The end it returns indexes what is still queued.
func (d sqliteDriver) BeginBulk() func(ctx context.Context) {
	w := d.w
	if w == nil { // read-only: nothing is written, nothing to index
		return func(context.Context) {}
	}
	w.ix.bulk.Add(1)
	return func(ctx context.Context) {
		w.ix.bulk.Add(-1)
		w.catchUp(ctx)
	}
}

// bulkSliceDue reports whether a bulk slice is due: bulkSliceRows changes
// are queued, or the oldest of them has waited bulkMaxLag.
func bulkSliceDue(queued int64, oldest, now time.Time) bool {
	return queued >= bulkSliceRows || (queued > 0 && now.Sub(oldest) >= bulkMaxLag) || queued == 0
}

// catchUp indexes every queued change in bulk slices, until the queue is
// empty or ctx ends. A failure is the indexer's as in the background
// (indexFailed: a damaged index is switched off, another process's lock
// waited out by the next poll); the load's writes are committed whatever
// happens here, and the background indexer finishes what is left.
func (w *writer) catchUp(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := w.indexUpTo(ctx, false, bulkSliceRows)
		if err != nil {
			if !errors.Is(err, ctx.Err()) {
				w.indexFailed(err)
			}
			w.kickIndexer()
			return
		}
		if n == 0 {
			return
		}
	}
}
