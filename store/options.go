package store

import (
	"log/slog"
	"time"
)

// Default patience budgets. Patience is time, not attempts: a shared
// store is legitimately held for seconds at a time by sibling processes
// (a VACUUM, a large checkpoint, a long transaction), and a budget of N
// quick retries gives up in a second or two while the database is
// perfectly healthy.
const (
	DefaultWritePatience      = 20 * time.Second
	DefaultTranscriptPatience = 60 * time.Second
	DefaultActivityPatience   = 500 * time.Millisecond
)

// Options are the domain's settings, the same on every engine. The zero
// value is the recommended configuration. Each engine's Open takes its own
// options and fills these from them.
type Options struct {
	// WritePatience bounds how long a routine write (sessions, meta) waits
	// for another writer's lock. Default 20 s.
	WritePatience time.Duration
	// TranscriptPatience bounds how long AppendMessage and AppendMessages
	// wait. It must be larger than WritePatience: losing a turn costs more
	// than a late heartbeat. Default 60 s.
	TranscriptPatience time.Duration
	// ActivityPatience bounds how long TouchActivity and
	// ClearActivityLabels wait for another writer's lock. It is short on
	// purpose: they are heartbeats sent during a turn, and a heartbeat
	// must never stall the turn — a missed one is replaced by the next.
	// Default 500 ms.
	ActivityPatience time.Duration
	// SpoolDir is where Import spools its input before writing it (so a
	// bad line late in a file is found before anything is written).
	// Default: the engine's choice (the SQLite engine uses the
	// database's directory), or the system's temporary directory.
	SpoolDir string
	// Logger receives warnings. Default slog.Default().
	Logger *slog.Logger
}

// WithDefaults fills the zero fields and checks the rest.
func (o Options) WithDefaults() (Options, error) {
	if o.WritePatience == 0 {
		o.WritePatience = DefaultWritePatience
	}
	if o.TranscriptPatience == 0 {
		o.TranscriptPatience = max(DefaultTranscriptPatience, 3*o.WritePatience)
	}
	if o.ActivityPatience == 0 {
		o.ActivityPatience = DefaultActivityPatience
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.WritePatience < 0 || o.TranscriptPatience < 0 || o.ActivityPatience < 0:
		return o, invalid("patience must not be negative")
	case o.TranscriptPatience <= o.WritePatience:
		return o, invalid("transcript patience (%v) must be larger than write patience (%v)",
			o.TranscriptPatience, o.WritePatience)
	}
	return o, nil
}
