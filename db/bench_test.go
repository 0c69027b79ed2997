package db

// Helpers of the benchmarks of this package (search, export, import).
// The append, read and open workloads and their raw-driver baselines are
// in bench/.

import (
	"fmt"
	"time"
)

// benchMessage is the i-th message a benchmark appends.
func benchMessage(i int) NewMessage {
	return NewMessage{Role: RoleUser, Content: fmt.Sprintf("message %d: the quick brown fox jumps over the lazy dog", i)}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
