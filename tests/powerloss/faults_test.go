package powerloss

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/storetest"
)

var (
	faultSeed   = flag.Uint64("faults.seed", 9, "seed choosing the fault points of TestFaults")
	faultPoints = flag.Int("faults.points", 0, "fault points per fault class (default 2; 1 with -short; 40 with -long)")
	long        = flag.Bool("long", false, "try many more fault points")
)

// The ranges the fault points are drawn from: about what a run of
// faultWriters x faultBatches issues of each call (a point past the run's
// calls injects nothing, and the table says so).
var faultRange = map[callKey]int{
	{Write, WAL}:  1300,
	{Sync, WAL}:   50,
	{Write, Main}: 230,
	{Sync, Main}:  5,
}

const (
	faultWriters = 3
	faultBatches = 16
)

// faultOpts is the store under fault: frequent checkpoints, so faults hit
// the main file too.
func faultOpts(vfs string) db.Options {
	return db.Options{VFS: vfs, CheckpointEvery: 2, FTSMergeEvery: 7, Logger: quiet,
		WritePatience: 2 * time.Second, TranscriptPatience: 5 * time.Second}
}

// faultOutcome is one run of the fault harness.
type faultOutcome struct {
	fault    Fault
	sameBoot bool           // reopened before the page cache was lost
	hits     int            // faults injected
	failed   map[string]int // failed calls by the sentinel they matched
	acked    int            // acknowledged messages, before and after the reopen
	// resumed counts acknowledgements after a failed write on the same
	// store: writes go on once the fault clears.
	resumed int
	// Violations, all zero on a sound store (phantom: refused, yet
	// written).
	unclear, lost, duplicated, phantom, ackedAfterFailedSync, badCounters int
	verify                                                                db.Health
}

func (o faultOutcome) bad() bool {
	return o.unclear+o.lost+o.duplicated+o.phantom+o.ackedAfterFailedSync+o.badCounters > 0 || o.verify != db.HealthVerified
}

func (o faultOutcome) failedString() string {
	if len(o.failed) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o.failed)) {
		parts = append(parts, fmt.Sprintf("%s x%d", k, o.failed[k]))
	}
	return strings.Join(parts, ", ")
}

func (o faultOutcome) row() string {
	reopen := "after a crash"
	if o.sameBoot {
		reopen = "same boot"
	}
	return fmt.Sprintf("| %s | %s | %s | %d | %d | %s | %d | %d | %d | %d | %d | %d | %s |",
		o.fault.Kind, o.fault.Call, o.fault.Target, o.fault.At, o.hits, o.failedString(), o.acked, o.resumed,
		o.lost+o.duplicated, o.phantom, o.ackedAfterFailedSync, o.unclear, verdict(o, reopen))
}

func verdict(o faultOutcome, reopen string) string {
	return fmt.Sprintf("%s (reopened %s)", o.verify, reopen)
}

const faultTableHeader = "| errno | call | file | at call | injected | failed calls (error) | acked | acked after a failed write | lost or duplicated | refused but written | acked after a failed fsync | unclear errors | verify |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|"

// TestFaults injects EIO and ENOSPC on writes and fsyncs of the WAL and
// the main file, at points drawn from -faults.seed, under concurrent
// appends with idempotency keys and a reader, then reopens the store once
// the fault has cleared — in the same boot (the page cache still serving
// what a failed fsync dropped) or after a crash — writes again, crashes
// once more and checks: every failing call returned a clear sentinel,
// nothing acknowledged is lost or doubled, nothing refused is written,
// nothing was acknowledged after a failed fsync, counters match rows, and
// the file verifies.
func TestFaults(t *testing.T) {
	points := *faultPoints
	if points == 0 {
		points = 2
		if testing.Short() {
			points = 1
		}
		if *long {
			points = 40
		}
	}
	rng := rand.New(rand.NewPCG(*faultSeed, 0xfa17))
	var rows []string
	var total, bad int
	for _, kind := range []FaultKind{EIO, ENOSPC} {
		for _, call := range []Call{Write, Sync} {
			for _, target := range []Target{WAL, Main} {
				for range points {
					f := Fault{Kind: kind, Call: call, Target: target, At: 1 + rng.IntN(faultRange[callKey{call, target}])}
					if kind == ENOSPC && call == Write {
						f.Times = 1 + rng.IntN(6) // full until a few writes later
					}
					sameBoot := rng.IntN(2) == 0
					o, err := faultOnce(t, f, sameBoot, rng)
					if err != nil {
						t.Fatalf("%s: %v", f, err)
					}
					rows = append(rows, o.row())
					total += o.hits
					if o.bad() {
						bad++
						t.Errorf("%s: %s", f, o.row())
					}
					if kind == ENOSPC && call == Write && o.failed["ErrDiskFull"] > 0 && o.resumed == 0 {
						t.Errorf("%s: writes did not resume once the disk had room again: %s", f, o.row())
					}
					if o.hits > 0 && call == Sync && o.failed["ErrIO"] == 0 && o.failed["ErrCommitUnknown"] == 0 {
						t.Logf("%s: the failed fsync ran after the last write (close or maintenance)", f)
					}
				}
			}
		}
	}
	t.Logf("fault injection (seed %d, %d points per class): %d faults injected in %d runs, %d runs with a violation\n%s\n%s",
		*faultSeed, points, total, len(rows), bad, faultTableHeader, strings.Join(rows, "\n"))
	if total == 0 {
		t.Error("no fault was injected: the harness tested nothing")
	}
}

// sentinelOf names the store sentinel an error matches ("" for none).
func sentinelOf(err error) string {
	for _, s := range []struct {
		name string
		err  error
	}{{"ErrCommitUnknown", db.ErrCommitUnknown}, {"ErrDiskFull", db.ErrDiskFull}, {"ErrIO", db.ErrIO}, {"ErrLocked", db.ErrLocked}} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return ""
}

// faultOnce runs one fault point: appenders and a reader on a fresh
// store, the reopen, more appends, a crash, and the checks.
func faultOnce(t *testing.T, f Fault, sameBoot bool, rng *rand.Rand) (faultOutcome, error) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	disk := New(false)
	defer disk.Close()
	o := faultOutcome{fault: f, sameBoot: sameBoot, failed: map[string]int{}}
	s, err := db.Open(ctx, path, faultOpts(disk.Name()))
	if err != nil {
		return o, fmt.Errorf("open: %w", err)
	}
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "p", Source: "faults"}); err != nil {
		s.Close()
		return o, fmt.Errorf("create session: %w", err)
	}
	// Points count from here: the store is open and serving (faults during
	// Open: TestFaults_OpenFailsOnFailedSync).
	f.At += disk.Calls(f.Call, f.Target)
	disk.Inject(f)
	var mu sync.Mutex
	acked := map[string]string{}          // key → content
	unknown := map[string]db.NewMessage{} // a retry resends the same message: a key names one message
	refused := map[string]bool{}          // failed cleanly and not retried
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() { // a reader: its snapshots hold checkpoints short
		for {
			select {
			case <-done:
				return
			default:
			}
			_, _ = s.Messages(ctx, "p", db.MessageQuery{Limit: 50})
		}
	})
	var writers sync.WaitGroup
	for w := range faultWriters {
		writers.Go(func() {
			failedWrite := false
			for n := 0; n < faultBatches; n++ {
				batch := faultBatch(fmt.Sprintf("w%d-%d", w, n), n)
				for try := 0; ; try++ {
					syncFailedBefore := disk.SyncFailures() > 0
					_, err := s.AppendMessages(ctx, "p", batch)
					mu.Lock()
					if err == nil {
						for _, m := range batch {
							acked[m.IdempotencyKey] = m.Content
							delete(unknown, m.IdempotencyKey)
							delete(refused, m.IdempotencyKey)
						}
						if syncFailedBefore {
							o.ackedAfterFailedSync++
						}
						if failedWrite {
							o.resumed++
						}
						mu.Unlock()
						break
					}
					name := sentinelOf(err)
					if name == "" {
						o.unclear++
						t.Logf("%s: unclear error: %v", f, err)
						name = "unclear"
					}
					o.failed[name]++
					for _, m := range batch {
						if name == "ErrCommitUnknown" {
							unknown[m.IdempotencyKey] = m
							delete(refused, m.IdempotencyKey)
						} else if _, maybe := unknown[m.IdempotencyKey]; !maybe {
							refused[m.IdempotencyKey] = true
						}
					}
					mu.Unlock()
					if disk.SyncFailures() > 0 {
						if !errors.Is(err, db.ErrIO) && !errors.Is(err, db.ErrCommitUnknown) {
							mu.Lock()
							o.unclear++
							mu.Unlock()
							t.Logf("%s: a write after a failed fsync failed without ErrIO: %v", f, err)
						}
						return // halted until reopen
					}
					failedWrite = true
					if try == 20 {
						return
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	writers.Wait()
	close(done)
	wg.Wait()
	s.Close()
	o.hits = disk.Stats().Faults
	disk.ClearFaults()

	// The fault has cleared (it fired its Times). Reopen — with the page
	// cache as the failure left it, or after losing it in a crash.
	if !sameBoot {
		if _, err := disk.Restore(rng, 0.5, true); err != nil {
			return o, err
		}
	}
	// No checkpoint of its own after the reopen: what it acknowledges
	// must survive on the log's fsyncs alone.
	reopen := faultOpts(disk.Name())
	reopen.CheckpointEvery = -1
	s, err = db.Open(ctx, path, reopen)
	if err != nil {
		return o, fmt.Errorf("reopen after the fault: %w", err)
	}
	// Retry what was left unknown (exactly once by key), then write more.
	for key, m := range unknown {
		if _, err := s.AppendMessage(ctx, "p", m); err != nil {
			s.Close()
			return o, fmt.Errorf("retry %s after the reopen: %w", key, err)
		}
		acked[key] = m.Content
	}
	for n := range 8 {
		batch := faultBatch(fmt.Sprintf("after-%d", n), n)
		if _, err := s.AppendMessages(ctx, "p", batch); err != nil {
			s.Close()
			return o, fmt.Errorf("append after the reopen: %w", err)
		}
		for _, m := range batch {
			acked[m.IdempotencyKey] = m.Content
		}
	}
	// The power fails before the store closes (its close-time checkpoint
	// fails): what the reopened store acknowledged must survive too — a
	// log recovered from the page cache with a hole on the disk would
	// lose it here.
	disk.Cut()
	s.Close()
	if _, err := disk.Restore(rng, 0.5, true); err != nil {
		return o, err
	}
	o.acked = len(acked)
	report, err := db.Verify(ctx, path)
	if err != nil {
		return o, fmt.Errorf("verify: %w", err)
	}
	o.verify = report.Health
	if report.Health != db.HealthVerified {
		t.Logf("%s: verify: %s %v", f, report.Health, report.Details)
	}
	c := checkAcked(ctx, path, acked, refused)
	o.lost, o.duplicated, o.badCounters, o.phantom = c.lost, c.dup, c.badCounters, c.phantom
	return o, nil
}

// faultBatch is one append: a user turn, every third a tool call and its
// answer, every fifth long enough for overflow pages (written once, never
// rewritten: what a dropped checkpoint write loses for good).
func faultBatch(key string, n int) []db.NewMessage {
	content := "turn " + key
	if n%5 == 4 {
		content += strings.Repeat(" "+key, 12_000/len(key))
	}
	batch := []db.NewMessage{{Role: db.RoleUser, Content: content, IdempotencyKey: key}}
	if n%3 == 2 {
		batch = append(batch, db.NewMessage{Role: db.RoleTool, ToolName: "shell", Content: "output " + key, IdempotencyKey: key + "-tool"})
	}
	return batch
}

// ackCheck is what a reopened file says about the writes a run made.
type ackCheck struct {
	lost, dup, badCounters int
	// phantom counts refused writes (failed cleanly, never retried) that
	// are present: reported as not written, yet written.
	phantom int
}

// checkAcked opens the file on the OS VFS and counts acknowledged
// messages missing or changed, present more than once, refused ones
// present, and sessions whose counter disagrees with their rows. A file
// that no longer reads loses everything.
func checkAcked(ctx context.Context, path string, acked map[string]string, refused map[string]bool) ackCheck {
	s, err := db.Open(ctx, path, db.Options{Logger: quiet})
	if err != nil {
		return ackCheck{lost: len(acked)}
	}
	defer s.Close()
	msgs, err := storetest.ReadWholeSession(ctx, s.Store, "p")
	if err != nil && !errors.Is(err, storetest.ErrNotWholeSession) {
		return ackCheck{lost: len(acked)}
	}
	seen := map[string]int{}
	content := map[string]string{}
	for _, m := range msgs {
		seen[m.IdempotencyKey]++
		content[m.IdempotencyKey] = m.Content
	}
	var c ackCheck
	for key, want := range acked {
		switch {
		case seen[key] == 0 || content[key] != want:
			c.lost++
		case seen[key] > 1:
			c.dup++
		}
	}
	for key := range refused {
		if seen[key] > 0 {
			c.phantom++
		}
	}
	if err != nil { // the counter disagrees with the rows it counts
		c.badCounters++
	}
	return c
}
