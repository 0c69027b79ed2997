package db_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"

	"github.com/sessiondb/sessiondb/db"
)

func ExampleStore_SetTitle() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	for _, id := range []string{"s1", "s2"} {
		if _, err := store.CreateSession(ctx, db.NewSession{ID: id, Source: "cli"}); err != nil {
			log.Fatal(err)
		}
	}

	// A model names the session; the user renames it; a later automatic
	// title no longer applies.
	applied, _ := store.SetAutoTitle(ctx, "s1", "Build failure", db.TitleGenerated)
	fmt.Println("generated title applied:", applied)
	if err := store.SetTitle(ctx, "s1", "Fix the build"); err != nil {
		log.Fatal(err)
	}
	applied, _ = store.SetAutoTitle(ctx, "s1", "Compiler errors", db.TitleGenerated)
	fmt.Println("second generated title applied:", applied)

	// Titles are unique per user (these sessions have none: one scope).
	err := store.SetTitle(ctx, "s2", "Fix the build")
	var inUse *db.TitleInUseError
	if errors.Is(err, db.ErrExists) && errors.As(err, &inUse) {
		fmt.Println("taken by", inUse.SessionID)
	}
	sess, _ := store.Session(ctx, "s1")
	fmt.Printf("%q (%v)\n", sess.Title, sess.TitleRank)
	// Output:
	// generated title applied: true
	// second generated title applied: false
	// taken by s1
	// "Fix the build" (user)
}

func ExampleStore_RecordUsage() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	if _, err := store.CreateSession(ctx, db.NewSession{ID: "s1", Source: "cli"}); err != nil {
		log.Fatal(err)
	}

	// Two main-loop API calls, and one auxiliary call that titled the
	// session with a small model: the session totals count the main loop
	// only, the per-model rows count everything.
	for _, up := range []db.UsageUpdate{
		{Model: "large", Usage: db.Usage{InputTokens: 1200, OutputTokens: 300, APICalls: 1, EstimatedCostUSD: 0.0125}},
		{Model: "large", Usage: db.Usage{InputTokens: 1800, OutputTokens: 200, APICalls: 1, EstimatedCostUSD: 0.0150}},
		{Model: "small", Task: "title", Usage: db.Usage{InputTokens: 400, OutputTokens: 8, APICalls: 1}},
	} {
		if err := store.RecordUsage(ctx, "s1", up); err != nil {
			log.Fatal(err)
		}
	}
	total, models, err := store.SessionUsage(ctx, "s1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("session: %d in, %d out, %d calls, $%.4f\n",
		total.InputTokens, total.OutputTokens, total.APICalls, total.EstimatedCostUSD)
	for _, m := range models {
		fmt.Printf("%s %q: %d in, %d calls\n", m.Model, m.Task, m.InputTokens, m.APICalls)
	}
	// Output:
	// session: 3000 in, 500 out, 2 calls, $0.0275
	// large "": 3000 in, 2 calls
	// small "title": 400 in, 1 calls
}

func ExampleStore_ClaimHandoff() {
	ctx := context.Background()
	store, done := openExample(ctx)
	defer done()
	if _, err := store.CreateSession(ctx, db.NewSession{ID: "s1", Source: "cli"}); err != nil {
		log.Fatal(err)
	}
	if err := store.RequestHandoff(ctx, "s1", "telegram"); err != nil {
		log.Fatal(err)
	}

	// Three gateway workers race for the pending handoff: exactly one
	// wins; the others see false and move on.
	var mu sync.Mutex
	var winner string
	var wg sync.WaitGroup
	for _, w := range []string{"worker-a", "worker-b", "worker-c"} {
		wg.Go(func() {
			ok, err := store.ClaimHandoff(ctx, "s1", w)
			if err != nil {
				log.Fatal(err)
			}
			if ok {
				mu.Lock()
				winner = w
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := store.CompleteHandoff(ctx, "s1", winner); err != nil {
		log.Fatal(err)
	}
	h, _ := store.Handoff(ctx, "s1")
	fmt.Println(h.State, h.Platform, h.Holder == winner)

	// Finishing it twice is a lost compare-and-set.
	err := store.CompleteHandoff(ctx, "s1", winner)
	fmt.Println(errors.Is(err, db.ErrConflict))
	// Output:
	// completed telegram true
	// true
}
