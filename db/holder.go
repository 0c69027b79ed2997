package db

import "github.com/sessiondb/sessiondb/internal/proc"

// NewHolder returns a lease holder string naming this process:
//
//	host=build-7:pid=4242:start=918273:nonce=3f9a1c0b7d2e:agent=compressor
//
// A lease normally lives until its TTL runs out. A holder in this form lets
// a waiting process reclaim it early when the holder's process is provably
// gone: same host, and no process with that pid, or one started at another
// time (the pid was recycled). Any other holder string is valid too — it is
// simply never reclaimed before it expires. agent is optional; ':' and '='
// in it are replaced with '_'.
func NewHolder(agent string) string { return proc.NewHolder(agent) }

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
