//go:build unix

package db

import (
	"errors"
	"syscall"
)

// processAlive probes pid with signal 0: ESRCH proves it gone; EPERM means
// it exists under another user.
func processAlive(pid int) probeResult {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return probeAlive
	case errors.Is(err, syscall.ESRCH):
		return probeDead
	}
	return probeUnknown
}
