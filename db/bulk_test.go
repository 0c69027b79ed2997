package db

import (
	"testing"
	"time"

	"github.com/sessiondb/sessiondb/storetest"

	"github.com/google/go-cmp/cmp"
)

// A bulk dry run reads only: the database file and its WAL are the same
// bytes afterwards. (The suite proves the store's content is unchanged on
// every engine; this is the file's own, stricter, promise.)
func TestBulk_DryRunLeavesTheFileAsItWas(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, Options{ManualIndexing: true}) // no indexer writing meanwhile
	for _, id := range []string{"a", "b", "c"} {
		newTestSession(t, s, id)
		storetest.AppendTexts(t, s.Store, id, "hello", "world")
		s.EndSession(ctx, id, "done")
	}
	if err := s.IndexNow(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // older than the prune age below
	before := fileHashes(t, s.Path(), s.Path()+"-wal")
	ops := map[string]func() (BulkResult, error){
		"prune": func() (BulkResult, error) {
			return s.PruneSessions(ctx, BulkFilter{OlderThan: time.Millisecond, EndedOnly: true}, BulkOptions{DryRun: true})
		},
		"delete": func() (BulkResult, error) {
			return s.DeleteSessions(ctx, BulkFilter{IDs: []string{"a", "b"}}, BulkOptions{DryRun: true})
		},
		"archive": func() (BulkResult, error) {
			return s.ArchiveSessions(ctx, BulkFilter{IDs: []string{"c"}}, BulkOptions{DryRun: true})
		},
	}
	for name, op := range ops {
		res, err := op()
		if err != nil || len(res.IDs) == 0 {
			t.Fatalf("%s dry run = %+v, %v; want some sessions named", name, res, err)
		}
		if diff := cmp.Diff(before, fileHashes(t, s.Path(), s.Path()+"-wal")); diff != "" {
			t.Errorf("the %s dry run changed the file (-before +after):\n%s", name, diff)
		}
	}
}
