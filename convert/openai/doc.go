// Package openai converts between sessiondb's messages and the message
// types of github.com/openai/openai-go/v3: chat completion message params
// (ChatToStore, ChatFromStore) and Responses API input items
// (ResponsesToStore, ResponsesFromStore). It is its own module, so a store
// user who does not talk to OpenAI never has the SDK's dependency graph in
// theirs; it imports only package store.
//
// Chat completions: system, user and assistant messages with string
// content map to the store's roles; an assistant message's function tool
// calls are ToolCalls (ids, names and arguments byte-exact); a tool
// message is a RoleTool message answering ToolCallID (ToolName is filled
// from the call it answers, so the store can search it).
//
// Responses: an easy input message (user, assistant or system, string
// content) is a message of that role; the reasoning items, assistant
// message and function calls of one model turn are one assistant message,
// the reasoning items kept as a JSON array in ReasoningDetails exactly as
// the SDK encodes them (encrypted_content byte-exact), their summary text
// in Reasoning; a function_call_output is a RoleTool message.
// ResponsesFromStore gives a turn back as reasoning items, then the
// message, then the function calls.
//
// ToStore refuses, with an *UnsupportedError matching store.ErrInvalidInput,
// what the store cannot keep yet: content parts (images, files, audio,
// text parts), the developer role, names, refusals, custom tool calls,
// output messages and item ids or statuses, hosted tool calls. Each
// conversion is proved: its result is converted back and compared with
// the input, and the first field that would be lost is named. The store's
// coming content parts and per-message metadata will carry these; until
// then nothing is dropped silently.
//
// The FromStore functions leave out what OpenAI cannot take back:
// reasoning details of another provider (Anthropic thinking blocks), and,
// for chat completions, all reasoning details.
package openai
