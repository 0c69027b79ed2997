package tests

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/sessiondb/sessiondb/db"
)

// The torture suite's shape: processes × goroutines appending to shared
// sessions.
const (
	tortureProcs      = 4
	tortureGoroutines = 8
	tortureSessions   = 4
)

// tortureWriter is the body of a torture process: 8 goroutines append with
// idempotency keys "<session>/<prefix>-g<G>-<N>" until killed, after first
// re-sending the keys a killed predecessor left in flight.
func tortureWriter(ctx context.Context, path, prefix, retry string) int {
	s, err := db.Open(ctx, path, db.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	var out sync.Mutex
	say := func(verb, key string) {
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(os.Stdout, "%s %s\n", verb, key)
	}
	send := func(key string) error {
		sid, _, _ := strings.Cut(key, "/")
		say("send", key)
		if _, err := s.AppendMessage(ctx, sid, db.NewMessage{Role: db.RoleUser, Content: "turn " + key, IdempotencyKey: key}); err != nil {
			return err
		}
		if n := s.Stats().StrayTransactions; n > 0 { // rolled back and logged, but a bug
			return fmt.Errorf("%d stray transactions on the writer", n)
		}
		say("ack", key)
		return nil
	}
	errs := make(chan error, tortureGoroutines+1)
	if retry != "" {
		for _, k := range strings.Split(retry, ",") {
			if err := send(k); err != nil {
				errs <- err
			}
		}
	}
	for g := range tortureGoroutines {
		go func() {
			for n := 0; ; n++ {
				key := fmt.Sprintf("t%d/%s-g%d-%d", (g+n)%tortureSessions, prefix, g, n)
				if err := send(key); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	fmt.Fprintln(os.Stderr, "append:", <-errs)
	return 1
}
