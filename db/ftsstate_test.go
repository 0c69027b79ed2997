package db

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestWrite_FTSDamageKeepsWritesGoing(t *testing.T) {
	path := filledStore(t)
	// The structure record (id 10) too: indexing reads it on every insert,
	// while the segments (above 10) are read only by a merge that may or
	// may not come.
	damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id >= 10")
	var logs bytes.Buffer
	s, err := Open(t.Context(), path, Options{FTSMergeEvery: 1, Logger: testLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := s.AppendMessage(t.Context(), "a", NewMessage{Role: RoleUser, Content: fmt.Sprint("zanzibar ", i)}); err != nil {
			t.Fatalf("append %d with a damaged index: %v", i, err)
		}
	}
	// The appends do not touch the index; the indexer meets the damage.
	if err := s.IndexNow(t.Context()); err != nil {
		t.Fatalf("IndexNow with a damaged index: %v", err)
	}
	if _, err := s.Meta(t.Context(), metaFTSStale); err != nil {
		t.Errorf("the index was not marked stale: %v", err)
	}
	if !strings.Contains(logs.String(), "full-text index is damaged") {
		t.Errorf("the damage was not logged: %q", logs.String())
	}
	s.Close()

	// The next open rebuilds the index: the file verifies and the messages
	// written while it was off are found.
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Meta(t.Context(), metaFTSStale); !errors.Is(err, ErrNotFound) {
		t.Errorf("stale mark after the rebuild: %v", err)
	}
	var hits int64
	err = s.read(t.Context(), "probe", "", func(q genDBTX) error {
		var err error
		hits, err = queries.FTSProbe(context.Background(), q, "zanzibar")
		return err
	})
	if err != nil || hits != 50 {
		t.Errorf("search after the rebuild: %d hits, %v; want 50", hits, err)
	}
	if r, _ := Verify(t.Context(), path); r.Health != HealthVerified {
		t.Errorf("verify after the rebuild: %s %v", r.Health, r.Details)
	}
}
