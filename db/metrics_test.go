package db

import (
	"fmt"
	"sync"
	"testing"
)

// TestMetricsMatchStats: concurrent appenders' writes, batches and
// replays reach Metrics as Stats counts them, with one commit duration
// per batch and every message appended counted.
func TestMetricsMatchStats(t *testing.T) {
	s := openTestStore(t, Options{})
	newTestSession(t, s, "m")
	before := s.Metrics()
	const appenders, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, appenders)
	for a := range appenders {
		wg.Go(func() {
			for i := range each {
				if _, err := s.AppendMessages(t.Context(), "m", []NewMessage{
					{Role: RoleUser, Content: fmt.Sprintf("%d/%d", a, i)}, {Role: RoleAssistant, Content: "ok"}}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	m, st := s.Metrics(), s.Stats()
	if m.Engine != "sqlite" || !m.HasLockWait || !m.HasIndexLag || !m.HasWAL {
		t.Errorf("Metrics = %+v: want the SQLite engine with lock waits, index lag and WAL", m)
	}
	if got := m.WritesCommitted - before.WritesCommitted; got != appenders*each {
		t.Errorf("WritesCommitted moved by %d, want %d", got, appenders*each)
	}
	if got := m.MessagesAppended - before.MessagesAppended; got != 2*appenders*each {
		t.Errorf("MessagesAppended moved by %d, want %d", got, 2*appenders*each)
	}
	batches := m.Transactions - before.Transactions
	if batches < 1 || batches > appenders*each {
		t.Errorf("Transactions moved by %d for %d writes", batches, appenders*each)
	}
	if got := m.CommitDuration.Count() - before.CommitDuration.Count(); got != batches {
		t.Errorf("commit durations observed: %d, want one per batch (%d)", got, batches)
	}
	if m.Transactions != st.Transactions || m.Reruns != st.BatchReplays || m.LockRetries != st.LockRetries ||
		m.LockWait != st.LockWait || m.LockTimeouts != st.PatienceExhausted {
		t.Errorf("Metrics %+v disagree with Stats %+v", m, st)
	}
	if m.WALBytes <= 0 {
		t.Errorf("WALBytes = %d after commits", m.WALBytes)
	}
}
