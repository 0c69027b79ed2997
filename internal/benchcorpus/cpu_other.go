//go:build !unix

package benchcorpus

import "time"

// ProcessCPU is not measured here (no getrusage): the growth benchmark
// reports 0 for CPU time on this platform.
func ProcessCPU() time.Duration { return 0 }
