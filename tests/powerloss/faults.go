package powerloss

import (
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/vfs"
)

// Fault injection. A Disk can fail chosen calls the way the operating
// system does: the Nth write or sync of a database's WAL or main file
// returns EIO or ENOSPC, as an *fs.PathError like the one os.File returns,
// so the store meets the error the OS VFS would hand it (ENOSPC on a
// write: see fault).
//
// A failed sync also drops the file's unsynced writes, as Linux may
// after a writeback error: it marks the pages clean and keeps serving
// their new contents from the page cache, so everything still reads back
// — but the writes never reached the disk, and a later successful sync
// does not bring them back. Restore then rewinds the file without them.
// The model is byte-granular: stricter than the kernel's pages, since a
// later write to the same page would also carry the dropped bytes of that
// page to the disk.

// FaultKind is the errno a fault returns.
type FaultKind int

const (
	EIO FaultKind = iota
	ENOSPC
)

func (k FaultKind) String() string { return [...]string{"EIO", "ENOSPC"}[k] }

func (k FaultKind) errno() syscall.Errno {
	return [...]syscall.Errno{syscall.EIO, syscall.ENOSPC}[k]
}

// Call is the file operation a fault fails.
type Call int

const (
	Write Call = iota
	Sync
)

func (c Call) String() string { return [...]string{"write", "fsync"}[c] }

// Target is the file of a database a fault fails.
type Target int

const (
	WAL Target = iota
	Main
)

func (t Target) String() string { return [...]string{"WAL", "main"}[t] }

// Fault fails the At-th call (1-based, counted from the Disk's creation;
// see Calls) of a kind on a target, and the Times-1 such calls after it (a full
// disk stays full for a while; 0 means 1).
type Fault struct {
	Kind   FaultKind
	Call   Call
	Target Target
	At     int
	Times  int
}

func (f Fault) String() string {
	return fmt.Sprintf("%s on %s of %s, call %d (x%d)", f.Kind, f.Call, f.Target, f.At, max(f.Times, 1))
}

func (f Fault) covers(n int) bool { return n >= f.At && n < f.At+max(f.Times, 1) }

// opState is where an op stands: written, synced, or dropped by a failed
// sync.
type opState int

const (
	pending opState = iota
	durable
	doomed
)

type callKey struct {
	call   Call
	target Target
}

type faultState struct {
	plan  []Fault
	calls map[callKey]int
	// errSeq counts each file's failed syncs: every handle hears of
	// each once (see fault); seen is how many each handle has heard of.
	errSeq map[string]int
	seen   map[*file]int
	// syncFailures counts the syncs failed so far.
	syncFailures int
}

// told marks a handle as having heard of every failed sync of its file
// so far (a handle opened later never hears of them).
func (s *faultState) told(f *file) {
	if s.seen == nil {
		s.seen = map[*file]int{}
	}
	s.seen[f] = s.errSeq[f.path]
}

// Inject adds a fault to the disk's plan.
func (d *Disk) Inject(f Fault) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faults.plan = append(d.faults.plan, f)
}

// ClearFaults empties the plan: the faults have cleared.
func (d *Disk) ClearFaults() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faults.plan = nil
}

// Calls is how many calls of a kind the disk has seen on a target, over
// every database it holds.
func (d *Disk) Calls(c Call, t Target) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.faults.calls[callKey{c, t}]
}

// SyncFailures is how many syncs the disk has failed so far.
func (d *Disk) SyncFailures() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.faults.syncFailures
}

// Stats is what the disk has seen so far.
func (d *Disk) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// fault counts a call and returns the planned fault's error for it, if
// any. A failed sync drops the file's unsynced writes and, as Linux
// reports a writeback error once to every file description open at the
// time, the next sync of every other handle then open on the file fails
// too (with EIO, dropping nothing more).
//
// +checklocks:f.disk.mu
func (f *file) fault(c Call) error {
	path := f.path
	t, ok := f.disk.targetOf(path)
	if !ok {
		return nil
	}
	if c == Sync && f.disk.faults.seen[f] < f.disk.faults.errSeq[path] {
		f.disk.faults.told(f)
		f.disk.stats.Faults++
		f.disk.faults.syncFailures++
		return &fs.PathError{Op: c.String(), Path: path, Err: syscall.EIO}
	}
	if f.disk.faults.calls == nil {
		f.disk.faults.calls = map[callKey]int{}
	}
	k := callKey{c, t}
	f.disk.faults.calls[k]++
	n := f.disk.faults.calls[k]
	for _, fl := range f.disk.faults.plan {
		if fl.Call != c || fl.Target != t || !fl.covers(n) {
			continue
		}
		f.disk.stats.Faults++
		if c == Sync {
			if f.disk.faults.errSeq == nil {
				f.disk.faults.errSeq = map[string]int{}
			}
			f.disk.faults.errSeq[path]++
			f.disk.faults.told(f)
			f.disk.faults.syncFailures++
			ops := f.disk.files[path]
			for i := range ops {
				if ops[i].state == pending {
					ops[i].state = doomed
					f.disk.stats.Doomed++
				}
			}
		}
		err := &fs.PathError{Op: c.String(), Path: path, Err: fl.Kind.errno()}
		if c == Write && fl.Kind == ENOSPC {
			// SQLITE_FULL, as the OS VFS means to answer a full disk
			// (vfs/os_unix.go osWriteAt; its errno check misses the
			// *fs.PathError that os.File returns, so today the OS VFS
			// reports a generic IOERR_WRITE and, once SQLite has rolled
			// back, no errno).
			return vfs.SystemError(err, sqlite3.FULL)
		}
		return err
	}
	return nil
}

// targetOf names the file's role: a database's main file or its WAL.
//
// +checklocks:d.mu
func (d *Disk) targetOf(path string) (Target, bool) {
	if d.mainFiles[path] {
		return Main, true
	}
	if main, ok := strings.CutSuffix(path, "-wal"); ok && d.mainFiles[main] {
		return WAL, true
	}
	return 0, false
}
