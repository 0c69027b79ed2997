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
	var logs bytes.Buffer
	s, err := Open(t.Context(), path, Options{FTSMergeEvery: 1, Logger: testLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	// The structure record (id 10) too: indexing reads it on every insert,
	// while the segments (above 10) are read only by a merge that may or
	// may not come. Damaged while the store is open: Open would find it
	// (ftsstructure.go) and rebuild the index.
	damage(t, path, "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id >= 10")
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

// An index whose structure record lists no segment while its segment
// pages are there reads as empty, without an error: Open finds it, rebuilds
// the index (one warning), and searches answer through it again. A healthy
// index, an emptied one, a dropped one and one damaged otherwise are left
// to the other checks: no rebuild, no warning.
func TestFTSState_OpenRebuildsAnIndexThatForgotItsSegments(t *testing.T) {
	tests := []struct {
		name    string
		stmts   []string // none leaves the file alone
		index   string   // the index Open names, "" for no rebuild
		q       string
		route   searchRoute
		rebuilt bool
	}{
		{"Healthy", nil, "", "fado", routeWords, false},
		{"WordsStructureZeroed", []string{"UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id = 10"}, "messages_fts", "fado", routeWords, true},
		{"WordsStructureDeleted", []string{"DELETE FROM messages_fts_data WHERE id = 10"}, "messages_fts", "fado", routeWords, true},
		{"WordsStructureTruncated", []string{"UPDATE messages_fts_data SET block = X'00000001' WHERE id = 10"}, "messages_fts", "fado", routeWords, true},
		{"TrigramStructureZeroed", []string{"UPDATE messages_fts_trigram_data SET block = zeroblob(length(block)) WHERE id = 10"}, "messages_fts_trigram", "lfam", routeTrigram, true},
		// Segments gone with their pages: FTS5 reports the damage itself.
		{"SegmentsDeleted", []string{"DELETE FROM messages_fts_data WHERE id > 10"}, "", "", 0, false},
		// Emptied by FTS5 itself: no segment pages left, a consistent empty
		// index (out of step with the messages: Verify's to report).
		{"WordsDeleteAll", []string{"INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')"}, "", "", 0, false},
		// An index dropped whole: Open goes on (Search scans, Verify
		// reports), and rebuilds neither, which needs both.
		{"WordsIndexDropped", []string{"DROP TABLE messages_fts"}, "", "", 0, false},
		{"TrigramIndexDropped", []string{"DROP TABLE messages_fts_trigram"}, "", "", 0, false},
		{"WordsZeroedTrigramDropped", []string{"DROP TABLE messages_fts_trigram", "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id = 10"}, "", "", 0, false},
		{"WordsDroppedTrigramZeroed", []string{"DROP TABLE messages_fts", "UPDATE messages_fts_trigram_data SET block = zeroblob(length(block)) WHERE id = 10"}, "", "", 0, false},
	}
	filled := filledStore(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := copyStore(t, filled)
			damage(t, path, tt.stmts...)
			var logs bytes.Buffer
			s, err := Open(t.Context(), path, Options{Logger: testLogger(&logs)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			warned := strings.Contains(logs.String(), "structure record listed none of its segments")
			if warned != tt.rebuilt || tt.rebuilt && !strings.Contains(logs.String(), "index="+tt.index+"\n") {
				t.Errorf("Open logged %q; want a rebuild of %q: %v", logs.String(), tt.index, tt.rebuilt)
			}
			if !tt.rebuilt {
				return
			}
			hits, route, err := s.search(t.Context(), tt.q, SearchOptions{Limit: MaxSearchLimit})
			if err != nil || route != tt.route || len(hits) != MaxSearchLimit {
				t.Errorf("search %q after the rebuild: %d hits by route %d, %v; want %d by route %d", tt.q, len(hits), route, err, MaxSearchLimit, tt.route)
			}
			ftsConsistent(t, s)
		})
	}
}

func TestStructureSegments(t *testing.T) {
	tests := []struct {
		name string
		rec  []byte
		want uint64
	}{
		{"Nil", nil, 0},
		{"CookieOnly", []byte{0, 0, 0, 7}, 0},
		{"NoSegmentCount", []byte{0, 0, 0, 7, 1}, 0},
		{"Empty", []byte{0, 0, 0, 7, 0, 0, 0}, 0},
		{"ThreeSegments", []byte{0, 0, 0, 7, 2, 3, 9}, 3},
		{"V2Marker", []byte{0, 0, 0, 7, 0xff, 0, 0, 1, 1, 2, 0}, 2},
		{"TwoByteCount", []byte{0, 0, 0, 7, 5, 0x81, 0x00, 0}, 128},
		{"CountCutShort", []byte{0, 0, 0, 7, 5, 0x81}, 0},
	}
	for _, tt := range tests {
		if got := structureSegments(tt.rec); got != tt.want {
			t.Errorf("%s: structureSegments(% x) = %d, want %d", tt.name, tt.rec, got, tt.want)
		}
	}
}
