package store

import (
	"fmt"
	"testing"
)

// BenchmarkPrepareMessages_ToolExchange is the CPU an append spends on
// its messages before the transaction (checks, JSON, UIDs) for one tool
// exchange: issue 35's call UIDs are minted here, with no statement.
func BenchmarkPrepareMessages_ToolExchange(b *testing.B) {
	for i := range b.N {
		ms := []NewMessage{
			{Role: RoleUser, Content: fmt.Sprintf("message %d: the quick brown fox jumps over the lazy dog", i)},
			{Role: RoleAssistant, ToolCalls: []ToolCall{
				{ID: "call_a", Name: "grep", Arguments: `{"q":"fox"}`},
				{ID: "call_b", Name: "cat", Arguments: `{"path":"dog.txt"}`}}},
			{Role: RoleTool, ToolCallID: "call_a", ToolName: "grep", Content: "dog.txt:1: the lazy dog"},
			{Role: RoleTool, ToolCallID: "call_b", ToolName: "cat", Content: "the quick brown fox jumps over the lazy dog"},
			{Role: RoleAssistant, Content: "The fox jumps over the dog."},
		}
		if _, err := prepareMessages("s", ms, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
