package pg

// maxMessageBytes is the largest message the PostgreSQL engine keeps
// (Store.MaxMessageBytes): 64 MiB of text columns together, the SQLite
// engine's limit, so a message one engine takes the other takes too. The
// server itself allows a field up to 1 GB. Measured in
// docs/RELIABILITY.md, with the limit it does not yet cover: the word
// index's tsvector holds at most 1 MB, so a message of some 20,000
// distinct words (about 700 KB of hex ids) is refused by the server with
// "string is too long for tsvector".
const maxMessageBytes = 64 << 20

// MaxMessageBytes is the PostgreSQL engine's limit (see maxMessageBytes).
func (pgDriver) MaxMessageBytes() int64 { return maxMessageBytes }
