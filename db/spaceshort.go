package db

// When the disk fills, the background indexer stands aside until a write
// commits again, so that the space a user frees goes to the writes first.
// The index work is never lost by waiting — its rows stay past the mark,
// or queued, and Search finds them all the same — but a catch-up slice of
// long messages writes index segments (and their copy in the WAL) that
// can take all of what was freed: the next append would fail again with
// the disk still "full" after the user made room for it. A process that
// writes nothing more gets its index back all the same: the indexer tries
// again once spaceShortWait has passed (and stands aside again if the
// disk is still full), and IndexNow and Close never stand aside.

import (
	"errors"
	"time"
)

// spaceShortWait bounds how long the background indexer stands aside
// without a write committing.
const spaceShortWait = 10 * time.Second

// noteSpace records what a write or an index slice found: no room (the
// background indexer stands aside), or room again (it goes on). It runs
// as the outcome is given, under the writer lock (request.outcome), so the
// indexer's look under the lock sees it. Only a write that failed with an
// I/O error costs system calls here (resourceCause asks the filesystem
// for its free space).
func (w *writer) noteSpace(err error) {
	switch {
	case err == nil:
		if w.spaceShortSince.Load() != 0 { // every write: read, write only on a change
			w.spaceShortSince.Store(0)
		}
	case errors.Is(resourceCause(w.path, err), ErrDiskFull):
		w.spaceShortSince.Store(time.Now().UnixNano())
	}
}

// standingAside reports whether the background indexer leaves the disk's
// space to the writes.
func (w *writer) standingAside(now time.Time) bool {
	since := w.spaceShortSince.Load()
	return since != 0 && now.Sub(time.Unix(0, since)) < spaceShortWait
}
