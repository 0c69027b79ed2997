package db

// An index that forgot its segments: FTS5 keeps the list of its segments
// in one structure record (row 10 of the _data shadow table). Damaged so
// that it still decodes — zeroed, say — it reads as an empty index: no
// error, every query through the index answers nothing, and the next
// segment written takes an id the forgotten ones still hold. Only a full
// integrity check (Verify) would find it, so Open looks for it: segment
// pages in the table while the record lists no segment.

import (
	"context"
	"fmt"

	"github.com/sessiondb/sessiondb/db/gen"
)

// ftsForgotten reports the first index whose structure record lists no
// segment although its segment pages are there ("" when none did).
func ftsForgotten(ctx context.Context, q gen.DBTX) (string, error) {
	// A dropped index is not this check's, and the rebuild needs both:
	// Open goes on, Search scans without it, Verify reports it.
	for _, table := range ftsIndexes {
		if ok, err := hasTable(ctx, q, table+"_data"); err != nil || !ok {
			return "", err
		}
	}
	for _, table := range ftsIndexes {
		// Hand-written: sqlc cannot see FTS5's shadow tables. Every row
		// above 10 (the structure record; 1 holds the averages) belongs to
		// a segment: its leaf and doclist-index pages and its tombstone
		// pages carry the segment id shifted past their page bits
		// (fts5_index.c: FTS5_SEGMENT_ROWID, FTS5_DLIDX_ROWID,
		// FTS5_TOMBSTONE_ROWID), and FTS5 deletes them with the segment.
		var (
			block []byte
			pages bool
		)
		err := q.QueryRowContext(ctx, fmt.Sprintf(
			"SELECT (SELECT block FROM %[1]s_data WHERE id = 10), EXISTS (SELECT 1 FROM %[1]s_data WHERE id > 10)", table)).
			Scan(&block, &pages)
		if err != nil {
			return "", fmt.Errorf("read the structure of %s: %w", table, err)
		}
		if pages && structureSegments(block) == 0 {
			return table, nil
		}
	}
	return "", nil
}

// structureSegments decodes the segment count of an FTS5 structure record
// (fts5_index.c: fts5StructureDecode): a 4-byte cookie, an optional 4-byte
// version-2 marker, then the number of levels and of segments as SQLite
// varints. A record too short to hold them counts as none.
func structureSegments(rec []byte) uint64 {
	i := 4
	if len(rec) >= 8 && string(rec[4:8]) == "\xff\x00\x00\x01" {
		i = 8
	}
	_, n := sqliteVarint(rec[min(i, len(rec)):])
	if n == 0 {
		return 0
	}
	segments, m := sqliteVarint(rec[i+n:])
	if m == 0 {
		return 0
	}
	return segments
}

// sqliteVarint decodes a SQLite varint (big-endian groups of 7 bits, the
// high bit set on every byte but the last; a ninth byte carries 8 bits)
// and returns it with its length, or 0, 0 when b ends first.
func sqliteVarint(b []byte) (v uint64, n int) {
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// rebuildForgotten is the write that mends an index that forgot its
// segments: it looks again inside the transaction (another process opening
// the same file may have mended it since the read that found it), then
// marks the index stale and rebuilds it. rebuilt says whether it did.
func rebuildForgotten(rebuilt *string) txFunc {
	return func(ctx context.Context, tx gen.DBTX) error {
		table, err := ftsForgotten(ctx, tx)
		*rebuilt = table
		if err != nil || table == "" {
			return err
		}
		if err := markFTSStale(ctx, tx); err != nil {
			return err
		}
		return rebuildFTSIfStale(ctx, tx)
	}
}
