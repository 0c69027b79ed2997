// Package proc answers questions about processes on this machine: whether
// one is alive, when it started (to tell a recycled pid from the original),
// what it is called, and which processes have a file open. It also makes
// and reads the lease holder strings that name a process, so a waiter can
// prove a holder dead. Answers are best effort: where the platform cannot
// tell, the answer is "unknown", never a guess.
package proc

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync"
)

// NewHolder returns a lease holder string naming this process:
//
//	host=build-7:pid=4242:start=918273:nonce=3f9a1c0b7d2e:agent=compressor
//
// agent is optional; ':' and '=' in it are replaced with '_'.
func NewHolder(agent string) string {
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	var b strings.Builder
	b.WriteString("host=" + HostName())
	b.WriteString(":pid=" + strconv.Itoa(os.Getpid()))
	if start, ok := StartTime(os.Getpid()); ok {
		b.WriteString(":start=" + strconv.FormatUint(start, 10))
	}
	b.WriteString(":nonce=" + hex.EncodeToString(nonce[:]))
	if agent != "" {
		b.WriteString(":agent=" + strings.NewReplacer(":", "_", "=", "_").Replace(agent))
	}
	return b.String()
}

// holderProcess is what a structured holder says about its process.
type holderProcess struct {
	host     string // "" when the holder does not say (taken as this host)
	pid      int
	start    uint64
	hasStart bool
}

// parseHolder reads a holder made by NewHolder (or the Python store's
// "pid=N[:start=S]:tid=..:agent=..:nonce=.." form). ok is false for any
// holder it cannot read with certainty.
func parseHolder(holder string) (p holderProcess, ok bool) {
	seen := map[string]bool{}
	for field := range strings.SplitSeq(holder, ":") {
		k, v, found := strings.Cut(field, "=")
		if !found || seen[k] {
			return holderProcess{}, false
		}
		seen[k] = true
		switch k {
		case "host":
			p.host = v
		case "pid":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return holderProcess{}, false
			}
			p.pid = n
		case "start":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return holderProcess{}, false
			}
			p.start, p.hasStart = n, true
		}
	}
	return p, p.pid > 0
}

// HolderIsDead reports whether holder names a process that is provably
// gone, asking probe whether its pid is alive. Anything short of proof —
// an unstructured holder, another host, this very process, a probe that
// fails or is not supported here — is "not dead": such a lease waits for
// its TTL.
func HolderIsDead(holder string, probe func(pid int) Probe) bool {
	p, ok := parseHolder(holder)
	if !ok || (p.host != "" && p.host != HostName()) || p.pid == os.Getpid() {
		return false
	}
	switch probe(p.pid) {
	case ProbeDead:
		return true
	case ProbeAlive:
		if !p.hasStart {
			return false
		}
		start, ok := StartTime(p.pid)
		return ok && start != p.start // the pid now belongs to another process
	}
	return false
}

// Probe is the answer of a liveness probe.
type Probe int

const (
	ProbeUnknown Probe = iota
	ProbeAlive
	ProbeDead
)

// HostName is this machine's name as a holder carries it (':' and '='
// replaced with '_'; "unknown" when the system does not say).
var HostName = sync.OnceValue(func() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return strings.NewReplacer(":", "_", "=", "_").Replace(h)
})
