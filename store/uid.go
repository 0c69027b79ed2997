package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// newUID mints a message's identity (Message.UID): 128 random bits as 32
// lowercase hex digits, like the reference store's message_uid, so an id
// read from either store looks the same. Random rather than derived from
// the row: a copy keeps its original's, and an import into another store
// must not collide with that store's own.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// uidOf is the UID of a row imported from another program's store, made
// from what names that row there (its session and its import key): the
// same row imported twice, or by a resumed import, gets the same UID.
func uidOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
