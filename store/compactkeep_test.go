package store

import (
	"strings"
	"testing"
)

func TestKeepPolicy_Cut(t *testing.T) {
	tests := []struct {
		name string
		keep KeepPolicy
		rows []Message
		want int // index of the first kept row
	}{
		{"last turn", KeepPolicy{Turns: 1}, rows("u", "a", "u", "a"), 2},
		{"last two turns", KeepPolicy{Turns: 2}, rows("s", "u", "a", "u", "a", "u", "a"), 3},
		{"fewer turns than asked keeps all", KeepPolicy{Turns: 3}, rows("u", "a", "u", "a"), 0},
		{"exactly as many turns keeps all", KeepPolicy{Turns: 2}, rows("u", "a", "u", "a"), 0},
		{"a turn keeps its tool exchange", KeepPolicy{Turns: 1}, rows("u", "a", "u", "a>x", "t<x", "a"), 2},
		// A user message between a call and its result does not start a
		// turn that could be kept without the call.
		{"user inside an exchange is no cut", KeepPolicy{Turns: 1}, rows("u", "a>x", "u", "t<x", "a", "u", "a"), 5},
		{"user inside an exchange, two turns", KeepPolicy{Turns: 2}, rows("u", "a>x", "u", "t<x", "a", "u", "a"), 0},
		{"budget fits three rows", KeepPolicy{TokenBudget: 30}, rows("u", "a", "u", "a", "u", "a"), 3},
		{"budget never splits a call from its results", KeepPolicy{TokenBudget: 30},
			rows("u", "a>x,y", "t<x", "t<y", "a"), 4},
		{"budget takes the whole exchange when it fits", KeepPolicy{TokenBudget: 40},
			rows("u", "a>x,y", "t<x", "t<y", "a"), 1},
		{"results answered late stay with their call", KeepPolicy{TokenBudget: 40},
			rows("u", "a>x", "t<x", "a>y", "u", "a", "t<y", "a"), 7},
		{"reused call id answers the latest call", KeepPolicy{TokenBudget: 30},
			rows("u", "a>x", "t<x", "u", "a>x", "t<x"), 3},
		{"never starts at an orphan result", KeepPolicy{TokenBudget: 20}, rows("u", "a", "t<q", "a"), 3},
		{"the newest group is kept over budget", KeepPolicy{TokenBudget: 5}, rows("u", "a", "u", "a>x", "t<x"), 3},
		{"both limits: the shorter tail", KeepPolicy{Turns: 2, TokenBudget: 20}, rows("u", "a", "u", "a", "u", "a"), 4},
		{"both limits: turns shorter", KeepPolicy{Turns: 1, TokenBudget: 1000}, rows("u", "a", "u", "a", "u", "a"), 4},
		{"empty", KeepPolicy{Turns: 1}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.keep.cut(tt.rows); got != tt.want {
				t.Errorf("cut = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestKeepPolicy_UnknownTokenCountsAreEstimated(t *testing.T) {
	long := Message{Role: RoleUser, Content: strings.Repeat("x", 4000)} // ~1000 tokens
	short := Message{Role: RoleAssistant, Content: "ok"}
	rs := []Message{{Role: RoleUser, Content: "hi"}, short, long, short}
	if got := (KeepPolicy{TokenBudget: 500}).cut(rs); got != 3 {
		t.Errorf("cut = %d, want 3: a row without a count still costs its size", got)
	}
}

// row builds a message for the pure cut tests: "u" user, "a" assistant,
// "a>x,y" assistant calling x and y, "t<x" the result of call x, "s" system.
func row(spec string, tokens int64) Message {
	m := Message{TokenCount: tokens, Content: spec}
	switch {
	case spec == "u":
		m.Role = RoleUser
	case spec == "s":
		m.Role = RoleSystem
	case strings.HasPrefix(spec, "a>"):
		m.Role = RoleAssistant
		for _, id := range strings.Split(spec[2:], ",") {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: "f"})
		}
	case strings.HasPrefix(spec, "t<"):
		m.Role, m.ToolCallID = RoleTool, spec[2:]
	default:
		m.Role = RoleAssistant
	}
	return m
}

func rows(specs ...string) []Message {
	out := make([]Message, len(specs))
	for i, s := range specs {
		out[i] = row(s, 10)
	}
	return out
}
