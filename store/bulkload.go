package store

import (
	"context"

	"github.com/sessiondb/sessiondb/store/driver"
)

// BulkLoad runs load, which writes many messages in a row (history
// brought in from elsewhere through AppendMessages, say), with the engine
// told that a bulk load is under way; Import, `sessiondb copy` and the
// Hermes import run inside it already. It changes no write's contract:
// every append still commits durably when it returns, is found by the
// next Search and counted on its session. What changes is derived work:
// SQLite indexes the new messages in large transactions (about half the
// CPU a message: docs/PERFORMANCE.md, "Bulk load") and, before BulkLoad
// returns, indexes what is left, unless ctx ends or another process holds
// the write lock (its background indexer then finishes). Meanwhile other
// callers' appends may wait longer (up to one large indexing transaction)
// and searches read up to a few thousand not-yet-indexed messages. On
// PostgreSQL, while an import's COPYs stream, a second server process
// merges the search indexes' pending lists (so the COPY no longer stops
// to do it), and the last merge is done before BulkLoad returns; a store
// that does not own its indexes loads as usual. It returns load's error.
func (s *Store) BulkLoad(ctx context.Context, load func(ctx context.Context) error) error {
	b, ok := s.drv.(driver.BulkLoader)
	if !ok || s.closed.Load() {
		return load(ctx)
	}
	end := b.BeginBulk()
	defer end(ctx)
	return load(ctx)
}
