package powerloss

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/db"
	"github.com/sessiondb/sessiondb/storetest"
)

// quiet drops the store's warnings: after a cut, every checkpoint fails.
var quiet = slog.New(slog.DiscardHandler)

var cutsFlag = flag.Int("powerloss.cuts", 0, "cut points to try (default 200; 60 with -short)")

// outcome totals one harness run.
type outcome struct {
	cuts, acked, lost, duplicated, corrupt, unopenable int
	disk                                               Stats
}

func (o outcome) String() string {
	return fmt.Sprintf("cut points %d, acknowledged writes checked %d, lost %d, duplicated %d, corrupt files %d, unopenable %d (disk: %d writes, %d syncs; at the cuts %d unsynced writes dropped, %d kept, %d torn)",
		o.cuts, o.acked, o.lost, o.duplicated, o.corrupt, o.unopenable,
		o.disk.Writes, o.disk.Syncs, o.disk.Dropped, o.disk.Kept, o.disk.Torn)
}

// TestPowerLoss cuts the power at random points under concurrent appends
// and checks, after each cut, that every acknowledged message is present
// exactly once and the file verifies.
func TestPowerLoss(t *testing.T) {
	o := harness(t, false, 1)
	t.Log("synchronous=FULL: " + o.String())
	if o.lost != 0 || o.duplicated != 0 || o.corrupt != 0 || o.unopenable != 0 {
		t.Errorf("acknowledged writes were lost or damaged: %s", o)
	}
	if o.acked == 0 || o.disk.Dropped == 0 {
		t.Errorf("the run tested nothing: %s", o)
	}
}

// TestPowerLoss_DetectsLostWritesWhenSyncLies runs the same harness on a
// disk that acknowledges fsync without flushing (what synchronous=OFF
// amounts to): the harness must see acknowledged writes disappear.
func TestPowerLoss_DetectsLostWritesWhenSyncLies(t *testing.T) {
	o := harness(t, true, 2) // a fifth of the cut points: every one loses writes
	t.Log("sync ignored (synchronous=OFF equivalent): " + o.String())
	if o.lost == 0 {
		t.Errorf("the harness saw no lost acknowledged writes on a lying disk: it cannot fail: %s", o)
	}
}

func harness(t *testing.T, lyingSync bool, seed uint64) outcome {
	cuts := *cutsFlag
	if cuts == 0 {
		cuts = 200
		if testing.Short() {
			cuts = 60
		}
	}
	if lyingSync {
		cuts = max(20, cuts/5)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5e55))
	var total outcome
	for i := range cuts {
		o, err := cutOnce(t, lyingSync, rng)
		if err != nil {
			t.Fatalf("cut %d: %v", i, err)
		}
		total.cuts++
		total.acked += o.acked
		total.lost += o.lost
		total.duplicated += o.duplicated
		total.corrupt += o.corrupt
		total.unopenable += o.unopenable
		total.disk.Writes += o.disk.Writes
		total.disk.Syncs += o.disk.Syncs
		total.disk.Dropped += o.disk.Dropped
		total.disk.Kept += o.disk.Kept
		total.disk.Torn += o.disk.Torn
	}
	return total
}

// cutOnce runs appenders on a fresh store, cuts the power after a random
// moment, restores the disk and checks the acknowledged writes.
func cutOnce(t *testing.T, lyingSync bool, rng *rand.Rand) (outcome, error) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	disk := New(lyingSync)
	defer disk.Close()
	s, err := db.Open(ctx, path, db.Options{
		VFS: disk.Name(), CheckpointEvery: 4, FTSMergeEvery: 9, Logger: quiet,
		WritePatience: 2 * time.Second, TranscriptPatience: 5 * time.Second,
	})
	if err != nil {
		return outcome{}, err
	}
	if _, err := s.CreateSession(ctx, db.NewSession{ID: "p", Source: "powerloss"}); err != nil {
		return outcome{}, err
	}
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for n := 0; ; n++ {
				key := fmt.Sprintf("w%d-%d", w, n)
				batch := []db.NewMessage{{Role: db.RoleUser, Content: "turn " + key, IdempotencyKey: key}}
				if n%3 == 2 { // some batches: a tool call and its answer
					batch = append(batch, db.NewMessage{Role: db.RoleTool, ToolName: "shell", Content: "output " + key, IdempotencyKey: key + "-tool"})
				}
				if _, err := s.AppendMessages(ctx, "p", batch); err != nil {
					return // the power is gone (or the disk failed): stop
				}
				mu.Lock()
				for _, m := range batch {
					acked[m.IdempotencyKey] = true
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Duration(rng.IntN(25_000)) * time.Microsecond)
	disk.Cut()
	wg.Wait()
	s.Close() // fails to checkpoint: the disk is gone
	stats, err := disk.Restore(rng, 0.5, true)
	if err != nil {
		return outcome{}, err
	}
	o := outcome{acked: len(acked), disk: stats}

	report, err := db.Verify(ctx, path)
	if err != nil {
		return o, err
	}
	if report.Health != db.HealthVerified {
		o.corrupt++
	}
	after, err := db.Open(ctx, path, db.Options{Logger: quiet})
	if err != nil {
		if lyingSync { // a lying disk may leave a file that no longer opens

			o.unopenable++
			o.lost += len(acked)
			return o, nil
		}
		return o, fmt.Errorf("reopen after the cut: %w (verify: %s %v)", err, report.Health, report.Details)
	}
	defer after.Close()
	msgs, err := storetest.ReadWholeSession(ctx, after.Store, "p")
	if errors.Is(err, storetest.ErrNotWholeSession) {
		o.corrupt++ // counters must match the rows they count
	} else if err != nil {
		if lyingSync {
			o.lost += len(acked)
			return o, nil
		}
		return o, fmt.Errorf("read after the cut: %w", err)
	}
	seen := map[string]int{}
	for _, m := range msgs {
		seen[m.IdempotencyKey]++
	}
	for key := range acked {
		switch seen[key] {
		case 0:
			o.lost++
		case 1:
		default:
			o.duplicated++
		}
	}
	return o, nil
}
