//go:build !unix

package benchcorpus

import "time"

// processCPU is not measured here (no getrusage): the growth benchmark
// reports 0 for CPU time on this platform.
func processCPU() time.Duration { return 0 }
