package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
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

// legacyUID is the UID a message written before UIDs existed (schema
// version 19 on SQLite, 8 on PostgreSQL) reads with: derived from the id
// of the turn's first original (position: origin_id, else its own id), so
// the row and every copy made of it read the same UID, every read of it
// gives the same one, and no migration rewrites the table to fill them.
// Export writes it and import stores it, so it travels like a minted one.
func legacyUID(position int64) string {
	return uidOf("sessiondb message", strconv.FormatInt(position, 10))
}

// legacyCallUID is the UID of the i-th tool call of a message stored
// without call UIDs (before they were minted), derived as legacyUID is.
func legacyCallUID(position int64, i int) string {
	return uidOf("sessiondb tool call", strconv.FormatInt(position, 10), strconv.Itoa(i))
}

// position is the id a message's legacy UIDs derive from: its original's.
func (m *Message) position() int64 {
	if m.OriginID != 0 {
		return m.OriginID
	}
	return m.ID
}

// fillLegacyUIDs gives a message read from a row stored without UIDs the
// derived ones (legacyUID, legacyCallUID). Reads never write them back.
func (m *Message) fillLegacyUIDs() {
	if m.UID == "" {
		m.UID = legacyUID(m.position())
	}
	for i := range m.ToolCalls {
		if m.ToolCalls[i].UID == "" {
			m.ToolCalls[i].UID = legacyCallUID(m.position(), i)
		}
	}
}

// mintCallUIDs gives each call without a UID a new one, in place.
func mintCallUIDs(calls []ToolCall) {
	for i := range calls {
		if calls[i].UID == "" {
			calls[i].UID = newUID()
		}
	}
}

// withCallUIDs is stored tool calls as export writes them: as stored when
// every call has its UID; else with the derived ones (legacyCallUID) a
// read gives, so an import keeps the identity the source store reads.
func withCallUIDs(raw string, position int64) json.RawMessage {
	var calls []ToolCall
	if json.Unmarshal([]byte(raw), &calls) != nil {
		return json.RawMessage(raw) // not sessiondb's shape: the import's check decides
	}
	missing := false
	for i := range calls {
		if calls[i].UID == "" {
			calls[i].UID, missing = legacyCallUID(position, i), true
		}
	}
	if !missing {
		return json.RawMessage(raw)
	}
	b, err := json.Marshal(calls)
	if err != nil {
		return json.RawMessage(raw)
	}
	return b
}
