// Package powerloss is a test harness that cuts the power under a live
// sessiondb store.
//
// A [Disk] is a SQLite VFS over the operating system's. Every write reaches
// the real file at once (as the OS page cache would serve it), but the
// Disk remembers each write made since the file's last Sync. [Disk.Cut]
// "loses power": from then on every write, sync and delete fails with an
// I/O error. [Disk.Restore], once the store is closed, rewinds each file to
// what the drive had made durable — its state at its last Sync — and then
// lets a random subset of the unsynced writes survive, optionally tearing
// the last survivor part-way through a sector, as real drives do.
//
// A Disk can also fail chosen writes and syncs with EIO or ENOSPC, a
// failed sync dropping the file's unsynced writes (faults.go).
//
// A Disk with LyingSync acknowledges Sync without making anything durable:
// what synchronous=OFF (or a drive that ignores flushes) amounts to. The
// harness must detect lost acknowledged writes on such a disk — the proof
// that it can fail.
package powerloss

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/util/vfsutil"
	"github.com/ncruces/go-sqlite3/vfs"
)

// Disk is a VFS that can lose power. Register it with New.
type Disk struct {
	name string
	base vfs.VFS
	// +checklocks:mu
	lyingSync bool

	mu sync.Mutex
	// +checklocks:mu
	cut bool
	// +checklocks:mu
	files map[string][]op // unsynced writes per path, oldest first
	// +checklocks:mu
	mainFiles map[string]bool // databases opened, whose -shm Restore drops
	// +checklocks:mu
	stats Stats
	// +checklocks:mu
	faults faultState
}

// Stats counts what the disk saw.
type Stats struct {
	Writes, Syncs int
	// At Restore: unsynced writes dropped, kept whole, and torn.
	Dropped, Kept, Torn int
	// Faults injected (see Inject); Doomed counts the writes a failed
	// sync dropped, which no Restore brings back.
	Faults, Doomed int
}

// op is one change since the file's last clean sync and what it
// overwrote.
type op struct {
	state    opState
	truncate bool
	off      int64  // write offset, or truncate size
	data     []byte // bytes written
	oldSize  int64  // file size before
	old      []byte // bytes overwritten (write) or cut off (truncate)
}

var seq struct {
	sync.Mutex
	// +checklocks:Mutex
	n int
}

// New registers a fresh Disk under a unique VFS name.
func New(lyingSync bool) *Disk {
	seq.Lock()
	seq.n++
	name := fmt.Sprintf("powerloss-%d", seq.n)
	seq.Unlock()
	d := &Disk{name: name, base: vfs.Find(""), lyingSync: lyingSync, files: map[string][]op{}, mainFiles: map[string]bool{}}
	vfs.Register(name, d)
	return d
}

// Name is the VFS name to pass to the store (db.Options.VFS).
func (d *Disk) Name() string { return d.name }

// Close unregisters the VFS.
func (d *Disk) Close() { vfs.Unregister(d.name) }

// Cut loses power: every later write, sync, truncate and delete fails.
func (d *Disk) Cut() {
	d.mu.Lock()
	d.cut = true
	d.mu.Unlock()
}

// Restore rewinds every file to its durable state, then replays each
// unsynced write with probability keep, tearing the last one replayed at a
// random sector boundary when tear is set. Call it after every connection
// on the disk is closed. The shared-memory files are deleted: they are
// memory, not storage.
func (d *Disk) Restore(rng *rand.Rand, keep float64, tear bool) (Stats, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for path, ops := range d.files {
		if err := d.restoreFile(path, ops, rng, keep, tear); err != nil {
			return d.stats, fmt.Errorf("restore %s: %w", path, err)
		}
	}
	d.files = map[string][]op{}
	for path := range d.mainFiles {
		if err := os.Remove(path + "-shm"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return d.stats, err
		}
	}
	return d.stats, nil
}

// +checklocks:d.mu
func (d *Disk) restoreFile(path string, ops []op, rng *rand.Rand, keep float64, tear bool) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // deleted before the cut: deletion is durable here
	}
	if err != nil {
		return err
	}
	defer f.Close()
	for i := len(ops) - 1; i >= 0; i-- { // undo, newest first
		o := ops[i]
		if o.truncate {
			if err := f.Truncate(o.oldSize); err != nil {
				return err
			}
			if _, err := f.WriteAt(o.old, o.off); err != nil {
				return err
			}
			continue
		}
		if _, err := f.WriteAt(o.old, o.off); err != nil {
			return err
		}
		if err := f.Truncate(o.oldSize); err != nil {
			return err
		}
	}
	var kept []op
	for _, o := range ops {
		switch {
		case o.state == durable:
			kept = append(kept, o)
		case o.state == doomed:
		case rng.Float64() < keep:
			kept = append(kept, o)
		default:
			d.stats.Dropped++
		}
	}
	for i, o := range kept {
		data := o.data
		if tear && i == len(kept)-1 && o.state == pending && !o.truncate && len(data) > 512 {
			data = data[:512*rng.IntN(len(data)/512)]
			d.stats.Torn++
		} else if o.state == pending {
			d.stats.Kept++
		}
		if o.truncate {
			if err := f.Truncate(o.off); err != nil {
				return err
			}
		} else if _, err := f.WriteAt(data, o.off); err != nil {
			return err
		}
	}
	return nil
}

// record notes an unsynced change, reading what it overwrites first.
//
// +checklocks:d.mu
func (d *Disk) record(path string, base vfs.File, o op) error {
	size, err := base.Size()
	if err != nil {
		return err
	}
	o.oldSize = size
	from, to := o.off, o.off+int64(len(o.data))
	if o.truncate {
		from, to = o.off, size
	}
	if to > size {
		to = size
	}
	if from < to {
		o.old = make([]byte, to-from)
		if _, err := base.ReadAt(o.old, from); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	if !o.truncate {
		o.data = append([]byte(nil), o.data...)
	}
	d.files[path] = append(d.files[path], o)
	return nil
}

// The vfs.VFS methods.

func (d *Disk) Open(name string, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	return d.OpenFilename(nil, flags)
}

func (d *Disk) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, flags, err := vfsutil.WrapOpenFilename(d.base, name, flags)
	if err != nil || name == nil || flags&(vfs.OPEN_MAIN_DB|vfs.OPEN_WAL|vfs.OPEN_MAIN_JOURNAL) == 0 {
		return f, flags, err
	}
	path := name.String()
	d.mu.Lock()
	defer d.mu.Unlock()
	if flags&vfs.OPEN_MAIN_DB != 0 {
		d.mainFiles[path] = true
	}
	tracked := &file{File: f, disk: d, path: path}
	d.faults.told(tracked)
	return tracked, flags, nil
}

func (d *Disk) Delete(name string, syncDir bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return sqlite3.IOERR_DELETE
	}
	delete(d.files, name)
	return d.base.Delete(name, syncDir)
}

func (d *Disk) Access(name string, flags vfs.AccessFlag) (bool, error) {
	return d.base.Access(name, flags)
}

func (d *Disk) FullPathname(name string) (string, error) { return d.base.FullPathname(name) }

// file tracks one open file's writes.
type file struct {
	vfs.File
	disk *Disk
	path string
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	d := f.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return 0, sqlite3.IOERR_WRITE
	}
	if err := f.fault(Write); err != nil {
		return 0, err
	}
	if err := d.record(f.path, f.File, op{off: off, data: p}); err != nil {
		return 0, err
	}
	d.stats.Writes++
	return f.File.WriteAt(p, off)
}

func (f *file) Truncate(size int64) error {
	d := f.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return sqlite3.IOERR_TRUNCATE
	}
	if err := d.record(f.path, f.File, op{truncate: true, off: size}); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

// Sync makes the file's writes durable — unless the disk lies. The real
// fsync is skipped: durability here is the Disk's model, not the host's.
func (f *file) Sync(flags vfs.SyncFlag) error {
	d := f.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return sqlite3.IOERR_FSYNC
	}
	if err := f.fault(Sync); err != nil {
		return err
	}
	d.stats.Syncs++
	if !d.lyingSync {
		d.synced(f.path)
	}
	return nil
}

// synced makes a file's pending writes durable. While a failed sync's
// dropped writes are still in the log, the log is kept (Restore undoes
// everything and replays the durable writes without them).
//
// +checklocks:d.mu
func (d *Disk) synced(path string) {
	ops := d.files[path]
	for _, o := range ops {
		if o.state == doomed {
			for i := range ops {
				if ops[i].state == pending {
					ops[i].state = durable
				}
			}
			return
		}
	}
	delete(d.files, path)
}

// DeviceCharacteristics promises nothing that would let SQLite skip a
// sync: no atomic or sequential writes.
func (f *file) DeviceCharacteristics() vfs.DeviceCharacteristic {
	return f.File.DeviceCharacteristics() & (vfs.IOCAP_POWERSAFE_OVERWRITE | vfs.IOCAP_UNDELETABLE_WHEN_OPEN | vfs.IOCAP_SUBPAGE_READ)
}

// Optional interfaces the OS VFS implements and SQLite relies on (locks
// and WAL shared memory) are forwarded; size hints are not, so every
// change to a file goes through WriteAt or Truncate.

func (f *file) Unwrap() vfs.File               { return f.File }
func (f *file) SharedMemory() vfs.SharedMemory { return vfsutil.WrapSharedMemory(f.File) }
func (f *file) LockState() vfs.LockLevel       { return vfsutil.WrapLockState(f.File) }
func (f *file) HasMoved() (bool, error)        { return vfsutil.WrapHasMoved(f.File) }
func (f *file) BusyHandler(h func() bool)      { vfsutil.WrapBusyHandler(f.File, h) }
