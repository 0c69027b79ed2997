package store

import (
	"strings"
	"testing"
)

func TestTitleBase(t *testing.T) {
	tests := []struct {
		in   string
		base string
		n    int
	}{
		{"Fix the build", "Fix the build", 1},
		{"Fix the build #2", "Fix the build", 2},
		{"Fix the build #12", "Fix the build", 12},
		{"Fix the build#2", "Fix the build#2", 1},
		{"#2", "#2", 1},
		{"Issue #2 #3", "Issue #2", 3},
		{"Fix the build #", "Fix the build #", 1},
	}
	for _, tt := range tests {
		if base, n := titleBase(tt.in); base != tt.base || n != tt.n {
			t.Errorf("titleBase(%q) = %q, %d; want %q, %d", tt.in, base, n, tt.base, tt.n)
		}
	}
	if got := numberedTitle(strings.Repeat("a", 100), 10); len(got) != 100 || !strings.HasSuffix(got, " #10") {
		t.Errorf("numberedTitle of a full-length base = %q (%d), want 100 characters ending in #10", got, len(got))
	}
}
