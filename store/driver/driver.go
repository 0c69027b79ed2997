// Package driver is the seam between the domain (package store) and the
// engines that keep its data: the SQLite engine in package db, PostgreSQL
// in module pg. The domain holds every rule — validation, counters, state
// machines, exactly-once keys, lineage walks — and reaches storage only
// through these interfaces; an engine owns connections, transactions,
// patience, error mapping and search.
//
// The interfaces are UNSTABLE. They change with the domain, in any
// release, without notice: implement them only inside this repository.
// (They are exported so engines can live in modules of their own, which
// keeps each engine's dependencies out of the others' builds.)
package driver

import (
	"context"
	"strconv"
	"time"

	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// Driver is an engine: one store's storage.
type Driver interface {
	// Write runs fn as one write transaction, atomically, waiting up to
	// patience for the engine's write lock (after which it returns an
	// error matching ErrLocked). fn may run more than once when the
	// engine retries a transaction that rolled back; it must have no
	// effect outside tx. A commit whose outcome the engine cannot know
	// returns ErrCommitUnknown, never a retry. A store opened for reading
	// only returns ErrReadOnly without running fn.
	Write(ctx context.Context, patience time.Duration, fn func(ctx context.Context, tx Executor) error) error
	// Read runs fn on a read connection: each statement sees committed
	// data, and statements may see different commits.
	Read(ctx context.Context, fn func(ctx context.Context, q Executor) error) error
	// Snapshot runs fn inside one read-only transaction: every statement
	// sees the same committed state.
	Snapshot(ctx context.Context, fn func(ctx context.Context, q Executor) error) error
	// Search finds the messages matching req and, within the same snapshot
	// where the engine can, calls withHits to read what the domain adds to
	// them (a hit's neighbours).
	Search(ctx context.Context, req SearchRequest, withHits func(ctx context.Context, q Executor, hits []SearchHit) error) error
	// Changes subscribes to the store's commits, through this handle and
	// any other (another process, another machine): the Feed wakes after
	// each. The domain subscribes before it reads, so a commit between its
	// read and its wait still wakes it. A store closed or an engine that
	// cannot watch returns an error.
	Changes(ctx context.Context) (Feed, error)
	// MaxMessageBytes is the largest message the engine keeps, in bytes
	// of its text columns together (store.MaxMessageBytes): what it can
	// write, read back and index without failing. The domain refuses a
	// larger one with ErrTooLarge before any write.
	MaxMessageBytes() int64
	// Close releases the engine. The store calls it once.
	Close() error
}

// Feed is one subscription to a store's commits.
type Feed interface {
	// Wait returns nil once a commit may have happened since the
	// subscription began or Wait last returned (a spurious wake is
	// allowed; a missed commit is not), ctx's error when ctx ends first,
	// and ErrClosed or the engine's error when the store closed or can no
	// longer watch.
	Wait(ctx context.Context) error
	// Close ends the subscription.
	Close()
}

// Executor runs queries on one connection or transaction.
type Executor interface {
	Queries
	// HolderGone reports whether the lease holder named holder is
	// provably gone (its process ended), so its lease may be taken before
	// it expires. Anything short of proof is false: such a lease waits
	// for its TTL.
	HolderGone(ctx context.Context, holder string) (bool, error)
}

// SearchRequest is a validated search: the store has checked every field
// and sanitised the query.
type SearchRequest struct {
	// Terms are the query's words and phrases (a phrase is one term with
	// spaces inside), as the shared sanitiser made them: never empty,
	// never engine syntax. A message matches when it holds every term.
	Terms     []string
	Source    string   // "" for any
	SessionID string   // "" for any
	Roles     []string // empty for any
	// ExcludeSources leaves out the sessions of these sources (empty for
	// none); filtered in the query, so that Limit and Offset hold.
	ExcludeSources []string
	Sort           SearchSort
	Limit          int // 1 to 200
	Offset         int
}

// SearchSort is the order of a search's hits; see store.SearchSort for
// what each order promises.
type SearchSort int

func (s SearchSort) String() string {
	switch s {
	case SortRelevance:
		return "relevance"
	case SortNewest:
		return "newest"
	case SortOldest:
		return "oldest"
	}
	return "SearchSort(" + strconv.Itoa(int(s)) + ")"
}

const (
	SortRelevance SearchSort = iota
	SortNewest
	SortOldest
)

// SearchHit is a message that matched, as an engine returns it.
type SearchHit struct {
	MessageID        int64
	SessionID        string
	Role             string
	ToolName         string
	Snippet          string // see store.SearchHit
	Marks            []Mark
	CreatedAt        int64 // Unix ms
	Source           string
	Model            string
	SessionStartedAt int64 // Unix ms
}

// Mark is a matched run of a snippet: Snippet[Start:End].
type Mark = searchtext.Mark
