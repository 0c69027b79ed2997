package storetest

import (
	"errors"
	"fmt"
	"testing"

	. "github.com/sessiondb/sessiondb/store"

	"github.com/google/go-cmp/cmp"
)

func testResolveSessionID(t *testing.T, open Opener) {
	s := open(t, Options{})
	for _, id := range []string{"20261101-a1", "20261101-a2", "20261101-b1", "a", "ab", "会话-1"} {
		newTestSession(t, s, id)
	}
	for i := range 12 {
		newTestSession(t, s, fmt.Sprintf("many-%02d", i))
	}
	tests := []struct {
		in, want   string
		err        error
		candidates []string
		more       bool
	}{
		{in: "20261101-b1", want: "20261101-b1"},
		{in: "20261101-b", want: "20261101-b1"},
		{in: "a", want: "a"}, // an exact id wins over the ids it starts
		{in: "会话", want: "会话-1"},
		{in: "20261101-a", err: ErrInvalidInput, candidates: []string{"20261101-a1", "20261101-a2"}},
		{in: "2026", err: ErrInvalidInput, candidates: []string{"20261101-a1", "20261101-a2", "20261101-b1"}},
		{in: "many-", err: ErrInvalidInput, more: true, candidates: []string{
			"many-00", "many-01", "many-02", "many-03", "many-04", "many-05", "many-06", "many-07", "many-08", "many-09"}},
		{in: "zzz", err: ErrNotFound},
		{in: "", err: ErrInvalidInput},
		{in: "bad\xff", err: ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := s.ResolveSessionID(t.Context(), tt.in)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Fatalf("ResolveSessionID(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
			}
			var amb *AmbiguousIDError
			if errors.As(err, &amb) != (tt.candidates != nil) {
				t.Fatalf("ResolveSessionID(%q) error %v: ambiguous %v, want %v", tt.in, err, amb != nil, tt.candidates != nil)
			}
			if amb != nil {
				if diff := cmp.Diff(tt.candidates, amb.Candidates); diff != "" || amb.More != tt.more {
					t.Errorf("candidates (-want +got):\n%s more %v, want %v", diff, amb.More, tt.more)
				}
			}
		})
	}
}
