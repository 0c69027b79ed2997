// Package changefeed fans one engine's change signal out to any number of
// watchers. An engine has one source per store handle — SQLite polls
// PRAGMA data_version on one read connection, PostgreSQL LISTENs on one
// connection — however many watchers there are, and the source runs only
// while someone watches.
//
// A watcher subscribes before it reads, then waits: every change after the
// subscription wakes it, and changes that come while it reads coalesce
// into one wake, so no commit is missed and none costs more than one read.
package changefeed

import (
	"context"
	"sync"
)

// Source watches the store until ctx ends, calling changed after every
// commit it learns of (more often is harmless: a wake only costs a read).
// It returns nil when ctx ended, or the error that stopped it, which ends
// every subscription with that error.
type Source func(ctx context.Context, changed func()) error

// Hub is one store handle's change signal. The zero value is not usable:
// make one with New.
type Hub struct {
	source Source

	mu sync.Mutex
	// wake is closed at the next change, then replaced.
	// +checklocks:mu
	wake chan struct{}
	// +checklocks:mu
	subs int
	// stop ends the running source; nil when none runs.
	// +checklocks:mu
	stop context.CancelFunc
	// done is closed when the running source returned.
	// +checklocks:mu
	done chan struct{}
	// err is why the source stopped, or why the hub closed.
	// +checklocks:mu
	err error
	// +checklocks:mu
	closed bool
}

// New returns a hub over source; the source starts with the first
// subscription and stops with the last.
func New(source Source) *Hub {
	return &Hub{source: source, wake: make(chan struct{})}
}

// Changed wakes every watcher: for a commit made through this handle, which
// its engine knows of at once.
func (h *Hub) Changed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.changedLocked()
}

// +checklocks:h.mu
func (h *Hub) changedLocked() {
	close(h.wake)
	h.wake = make(chan struct{})
}

// Subscribe starts a subscription: its first Wait returns after the next
// change. err is the hub's error when it is closed or its source failed.
func (h *Hub) Subscribe() (*Sub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil && !h.closed && h.subs == 0 {
		h.err = nil // the failure ended every watcher; a new one tries again
	}
	if h.err != nil {
		return nil, h.err
	}
	h.subs++
	if h.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop, h.done = cancel, make(chan struct{})
		go h.run(ctx, h.done)
	}
	return &Sub{h: h, wake: h.wake}, nil
}

func (h *Hub) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	err := h.source(ctx, h.Changed)
	if err == nil || ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.err = err
	}
	if h.stop != nil && h.done == done {
		h.stop() // releases the context; the source has returned
		h.stop = nil
	}
	h.changedLocked()
}

// Close ends every subscription with err (the engine's ErrClosed) and
// stops the source, waiting for it to return.
func (h *Hub) Close(err error) {
	h.mu.Lock()
	h.closed = true
	if h.err == nil {
		h.err = err
	}
	stop, done := h.stop, h.done
	h.stop = nil
	h.changedLocked()
	h.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// Sub is one watcher's subscription.
type Sub struct {
	h    *Hub
	wake chan struct{}
	once sync.Once
}

// Wait returns nil after a change since the subscription began or Wait
// last returned, ctx's error when it ends first, and the hub's error when
// the store closed or its source failed.
func (s *Sub) Wait(ctx context.Context) error {
	select {
	case <-s.wake:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if s.h.err != nil {
		return s.h.err
	}
	s.wake = s.h.wake
	return nil
}

// Close ends the subscription; the last one stops the source.
func (s *Sub) Close() {
	s.once.Do(func() {
		h := s.h
		h.mu.Lock()
		h.subs--
		var stop context.CancelFunc
		if h.subs == 0 {
			stop, h.stop = h.stop, nil
		}
		h.mu.Unlock()
		if stop != nil {
			stop() // the source notices at its next poll; no need to wait
		}
	})
}
