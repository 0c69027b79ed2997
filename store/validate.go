package store

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// newSessionID returns a readable, time-sortable, unique id:
// 20261129-211500-3f9a1c0b7d2e.
func newSessionID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405-") + hex.EncodeToString(b[:])
}
