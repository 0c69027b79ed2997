package db

// When the disk fills, the background indexer stands aside until a write
// commits again, so that the space a user frees goes to the writes first.
// The index work is never lost by waiting — its rows stay past the mark,
// or queued, and Search finds them all the same — but a catch-up slice of
// long messages writes index segments (and their copy in the WAL) that
// can take all of what was freed: the next append would fail again with
// the disk still "full" after the user made room for it.

import "errors"

// noteSpace records what a caller's write found: no room (the indexer
// stands aside), or room again (it goes on). It runs as the outcome is
// given, under the writer lock, so the indexer's next look (also under
// the lock) sees it.
func (w *writer) noteSpace(err error) {
	switch {
	case err == nil:
		w.spaceShort.Store(false)
	case errors.Is(resourceCause(w.path, err), ErrDiskFull):
		w.spaceShort.Store(true)
	}
}
