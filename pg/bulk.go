package pg

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/sessiondb/sessiondb/store/driver"
)

// A bulk load on PostgreSQL (Store.BulkLoad: Import, `sessiondb copy`,
// the Hermes import, a caller's own AppendMessages loop). An import's
// messages go by COPY (importbatch.go): one server process inserts them
// as fast as it can, and half of its work a row is the GIN indexes
// (words and trigrams), a third of that merging each index's pending list
// into the index proper, which the inserting process does itself
// whenever a list passes gin_pending_list_limit (4 MB) — while the
// machine's other cores idle. So while a load's COPYs stream, a cleaner
// on a connection of its own merges the lists (gin_clean_pending_list)
// in pieces of about that size, and the store's writes let a list grow
// to bulkPendingLimit before merging it themselves, which they then no
// longer need to: the merging moves to a second server process, beside
// the inserts. An import ran 1.2-1.45x as fast, for -8% to +19% of the
// machine's CPU by pair (docs/PERFORMANCE.md, "PostgreSQL: the
// pending-list cleaner"). A load of AppendMessages calls gained nothing
// the machine could resolve for 17-52% more of the server's CPU (with
// one statement a row, and again with an append's rows in one statement,
// insertbatch.go): the cleaner waits for a COPY (an import's, the Hermes
// import's) before it merges anything.
//
// Nothing of a write's contract changes: a row in a pending list is in
// its index (every index scan reads the list), so Search finds every
// acknowledged message as before. The lists stay short while the cleaner
// keeps up; bulkPendingLimit bounds them when it does not (the writes
// merge then, as they always did). When the last load ends, the cleaner
// stops and one last pass merges what is left before BulkLoad returns, a
// load of statements too: the indexes are caught up.
//
// gin_clean_pending_list needs the indexes' owner. A store opened by a
// role that does not own them (migrations run as a deploy step by
// another role) gets no cleaner and writes as always; so does a read-only
// store.

// bulkPendingLimit is gin_pending_list_limit (kB) for writes while a bulk
// load's cleaner works: well above what a cleaner pass leaves, small
// enough that a search scanning a list the cleaner fell behind on still
// answers in milliseconds.
const bulkPendingLimit = 64 * 1024

// The cleaner's pause between passes adapts so that a pass merges about
// bulkMergePages: the 4 MB (gin_pending_list_limit's default) at which a
// write merges a list itself. Each merge touches every key its rows hold,
// so merging in smaller pieces costs more CPU in all: a pass every 300 ms
// whatever was pending took ~10% more of the machine's CPU than the
// writes' own merges under an import's ~5,000 messages a second, and
// 37-42% more of the server's under AppendMessages' ~2,400. A pass with nothing pending costs a few catalog
// lookups.
const (
	bulkMergePages = 512
	bulkCleanFirst = 300 * time.Millisecond
	bulkCleanMin   = 100 * time.Millisecond
	bulkCleanMax   = 5 * time.Second
)

// nextPause is the pause after a pass that merged pages, given the pause
// before it: doubled when the pass merged under half of bulkMergePages,
// halved when over twice, within [bulkCleanMin, bulkCleanMax].
func nextPause(pause time.Duration, pages int64) time.Duration {
	switch {
	case pages < bulkMergePages/2:
		return min(pause*2, bulkCleanMax)
	case pages > bulkMergePages*2:
		return max(pause/2, bulkCleanMin)
	}
	return pause
}

// cleanPendingLists merges the pending list of every GIN index in the
// store's schema into its index and returns the list pages it freed.
// Hand-written: an engine's maintenance call on its catalog, which the
// two engines' query sets (matched one for one) have no place for.
const cleanPendingLists = `SELECT COALESCE(SUM(gin_clean_pending_list(c.oid::regclass)), 0)::bigint
	FROM pg_class c JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE a.amname = 'gin' AND n.nspname = $1`

// bulkLoads is the engine's record of the bulk loads under way and their
// cleaner.
type bulkLoads struct {
	mu    sync.Mutex
	loads int
	stop  context.CancelFunc // ends the cleaner
	done  chan struct{}      // closed when the cleaner has ended
	// cleaning is set while the cleaner's passes succeed: writes then
	// raise gin_pending_list_limit (pendingLimit).
	cleaning atomic.Bool
	// refused is set when the server refused a pass for want of
	// ownership: no cleaner, and no last pass, for this store again.
	refused atomic.Bool
	// copied counts the rows the store's write transactions sent by COPY
	// (MessageImportBatch): the cleaner merges only while it grows.
	copied atomic.Int64
}

var _ driver.BulkLoader = pgDriver{}

// BeginBulk starts the cleaner for the first of overlapping loads; end
// stops it after the last and merges what is left, within ctx.
func (d pgDriver) BeginBulk() (end func(ctx context.Context)) {
	if d.readOnly != nil || d.refused() {
		return func(context.Context) {}
	}
	b := &d.bulk
	b.mu.Lock()
	if b.loads++; b.loads == 1 && !d.closed.Load() {
		ctx, cancel := context.WithCancel(context.Background())
		b.stop, b.done = cancel, make(chan struct{})
		go d.cleanWhileLoading(ctx, b.done)
	}
	b.mu.Unlock()
	var once sync.Once
	return func(ctx context.Context) {
		once.Do(func() {
			b.mu.Lock()
			b.loads--
			last := b.loads == 0
			if last {
				b.halt()
			}
			b.mu.Unlock()
			if last && !d.refused() && !d.closed.Load() {
				if _, err := d.cleanPending(ctx); err != nil && !d.refused() && ctx.Err() == nil {
					// Autovacuum, or the next insert past the limit, merges
					// the lists instead; nothing is lost either way.
					d.logger.Log(ctx, slog.LevelWarn, "sessiondb: bulk load: the search indexes' last merge failed", "schema", d.schema, "err", err)
				}
			}
		})
	}
}

// halt stops the cleaner and waits for it; b.mu is held.
func (b *bulkLoads) halt() {
	if b.stop == nil {
		return
	}
	b.stop()
	<-b.done
	b.stop, b.done = nil, nil
	b.cleaning.Store(false)
}

// close stops the cleaner for Close, so nothing of the store runs on
// its pool once Close returns.
func (b *bulkLoads) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.halt()
}

func (d pgDriver) refused() bool { return d.bulk.refused.Load() }

// cleanWhileLoading is the cleaner: while COPYs stream, passes paced by
// nextPause, until ctx ends. A pass that fails (the server restarting)
// lowers the writes' limit again until one succeeds; a refusal for want
// of ownership ends it.
func (d pgDriver) cleanWhileLoading(ctx context.Context, done chan struct{}) {
	defer close(done)
	pause := bulkCleanFirst
	copied := d.bulk.copied.Load()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		n := d.bulk.copied.Load()
		if n == copied { // no COPY since the last look: the writes merge as always
			d.bulk.cleaning.Store(false)
			pause = bulkCleanFirst
			continue
		}
		copied = n
		pages, err := d.cleanPending(ctx)
		d.bulk.cleaning.Store(err == nil)
		switch {
		case ctx.Err() != nil, d.refused():
			return
		case err != nil:
			d.logger.Log(ctx, slog.LevelDebug, "sessiondb: bulk load: merging the search indexes' pending lists", "schema", d.schema, "err", err)
		default:
			pause = nextPause(pause, pages)
		}
	}
}

// cleanPending runs one pass of cleanPendingLists on a pooled connection.
// A refusal for want of ownership (insufficient_privilege) is logged
// once and marks the store refused.
func (d pgDriver) cleanPending(ctx context.Context) (pages int64, err error) {
	err = d.pool.QueryRow(ctx, cleanPendingLists, d.schema).Scan(&pages)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" && d.bulk.refused.CompareAndSwap(false, true) {
		d.logger.Log(ctx, slog.LevelInfo, "sessiondb: bulk load: not the owner of the search indexes; their pending lists are merged by the writes themselves",
			"schema", d.schema, "err", err)
	}
	return pages, err
}

// raisePendingLimit is the statement a write sends with its BEGIN while a
// bulk load's cleaner works.
var raisePendingLimit = "SET LOCAL gin_pending_list_limit = " + strconv.Itoa(bulkPendingLimit)

// pendingLimit is raisePendingLimit while a bulk load's cleaner works,
// else "".
func (d *engine) pendingLimit() string {
	if d.bulk.cleaning.Load() {
		return raisePendingLimit
	}
	return ""
}
