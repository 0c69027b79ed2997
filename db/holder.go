package db

import (
	"github.com/sessiondb/sessiondb/internal/proc"
	"github.com/sessiondb/sessiondb/store"
)

// NewHolder returns a lease holder string naming this process: see
// store.NewHolder.
func NewHolder(agent string) string { return store.NewHolder(agent) }

// holderIsDead reports whether holder names a process that is provably
// gone (proc.HolderIsDead with probeProcess).
func holderIsDead(holder string) bool { return proc.HolderIsDead(holder, probeProcess) }

// probeProcess is the liveness probe (a variable so a test can make it fail).
var probeProcess = processAlive

// The lease code and its tests speak these names; internal/proc holds the
// mechanics.
type probeResult = proc.Probe

const probeUnknown = proc.ProbeUnknown

var (
	processAlive = proc.Alive
	processStart = proc.StartTime
	hostName     = proc.HostName
)
