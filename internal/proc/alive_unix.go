//go:build unix

package proc

import (
	"errors"
	"syscall"
)

// Alive probes pid with signal 0: ESRCH proves it gone; EPERM means it
// exists under another user.
func Alive(pid int) Probe {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return ProbeAlive
	case errors.Is(err, syscall.ESRCH):
		return ProbeDead
	}
	return ProbeUnknown
}
