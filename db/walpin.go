package db

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sessiondb/sessiondb/db/internal/forensics"
)

// A reader that never ends its snapshot keeps the WAL from starting over:
// SQLite cannot restart a log a reader may still need, so every restart
// (restartWAL) it outlasts leaves the log growing past walBoundBytes, as
// far as the writes go (a reader frozen mid-snapshot let it reach 3.3 GB
// in a minute). sessiondb cannot end another process's read, so it makes
// the pin visible — Stats.WALBytes and Stats.WALRestartsOutlasted, and a
// warning naming the processes that may hold it — and keeps its own long
// reads short (Export reads each page in a snapshot of its own).

// walPinWarnEvery spaces the warnings: a pinned log is outlasted at every
// try, one every few seconds.
const walPinWarnEvery = time.Minute

// walPinWatch counts the restarts readers outlasted and warns about them.
type walPinWatch struct {
	outlasted atomic.Uint64
	lastWarn  atomic.Int64 // Unix nanoseconds of the last warning
	// readers is this process's read pool, when the Store has one: its
	// connections in use are reads in flight that may be the pin.
	readers atomic.Pointer[sql.DB]
}

// noteOutlasted counts a restart the readers outlasted and, at most once
// per walPinWarnEvery, warns naming who may hold the log. The /proc scan
// runs in its own goroutine: the caller holds the writer lock.
func (w *writer) noteOutlasted(frames int64, waited time.Duration) {
	n := w.pin.outlasted.Add(1)
	now := time.Now().UnixNano()
	last := w.pin.lastWarn.Load()
	if last != 0 && now-last < int64(walPinWarnEvery) || !w.pin.lastWarn.CompareAndSwap(last, now) {
		return
	}
	go func() {
		w.log.Warn("sessiondb: a read has outlasted WAL restarts; the log cannot start over until it ends, so it grows past its bound — "+
			"end long-lived read transactions (one of the readers listed holds it: a reader frozen mid-snapshot, or one that never commits)",
			"path", w.path, "wal_bytes", forensics.WALSize(w.path), "frames", frames, "waited", waited,
			"outlasted", n, "readers", strings.Join(w.pinSuspects(), "; "))
	}()
}

// pinSuspects names the readers that may pin the log: other processes
// with the shared memory open (Linux), and this process's reads in flight.
func (w *writer) pinSuspects() []string {
	var who []string
	if d := w.pin.readers.Load(); d != nil {
		if inUse := d.Stats().InUse; inUse > 0 {
			who = append(who, fmt.Sprintf("this process (pid %d): %d of its reads in flight", os.Getpid(), inUse))
		}
	}
	others, known := shmOpeners(w.path)
	who = append(who, others...)
	if !known {
		who = append(who, "other processes cannot be named on this OS")
	}
	if len(who) == 0 {
		who = append(who, "none seen (a process of another user cannot be seen)")
	}
	return who
}
