// Package anthropic converts between sessiondb's messages and the message
// params of github.com/anthropics/anthropic-sdk-go/v2. It is its own
// module, so a store user who does not talk to Anthropic never has the
// SDK's dependency graph in theirs; it imports only package store.
//
// The mapping:
//
//   - a system message (one text block) is a RoleSystem message;
//   - a user message's tool_result blocks are RoleTool messages (ToolCallID
//     is tool_use_id, Content the result's text, ToolName the name of the
//     tool_use it answers), its text block a RoleUser message; FromStore
//     puts tool results and the user text after them back into one user
//     message, tool results first, as the API wants them;
//   - an assistant message's thinking and redacted_thinking blocks are kept
//     as a JSON array in ReasoningDetails, exactly as the SDK encodes them
//     (signatures and redacted data byte-exact), with the thinking text
//     in Reasoning for search; its text block is Content; its tool_use
//     blocks are ToolCalls (ids, names, and input as JSON text, verbatim
//     when the input is a json.RawMessage).
//
// ToStore refuses, with an *UnsupportedError matching store.ErrInvalidInput,
// anything the store cannot keep yet: images, documents, search results,
// server tool blocks, a second text block in a message, a tool result
// marked is_error, cache_control breakpoints, citations. It proves it:
// the messages it returns are converted back and compared with the input,
// and the first difference is named. The store's coming content parts,
// per-message metadata and model will carry these; until then nothing is
// dropped silently.
//
// FromStore leaves out what Anthropic cannot take back: reasoning details
// of another provider (an OpenAI reasoning item) and plain Reasoning text
// without a signed block.
package anthropic
