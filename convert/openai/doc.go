// Package openai converts between sessiondb's messages and the message
// types of github.com/openai/openai-go/v3: chat completion message params
// (ChatToStore, ChatFromStore, and ChatCompletionToStore for a response's
// choice) and Responses API input items (ResponsesToStore,
// ResponsesFromStore). It is its own module, so a store user who does not
// talk to OpenAI never has the SDK's dependency graph in theirs; it
// imports only package store.
//
// Chat completions: system, user and assistant messages with string
// content map to the store's roles as Content; content given as parts is
// kept as ordered Parts (the string and the one-part forms stay apart):
// text; image_url as a store.PartImage with its detail; input_audio as a
// store.PartFile of audio/wav or audio/mpeg in a data: URL; a file as a
// store.PartFile — file_data (a data: URL) as its URL, file_id as BlobID,
// filename as Name. An assistant message's function tool calls are
// ToolCalls (ids, names and arguments byte-exact), or tool_use parts after
// its text parts. A tool message is a RoleTool message answering
// ToolCallID (ToolName is filled from the call it answers, so the store
// can search it); text parts are a store.PartToolResult holding the first,
// then the rest. ChatCompletionToStore keeps the completion's model as
// Model and the choice's finish reason as FinishReason.
//
// Responses: an easy input message (user, assistant or system) or an input
// message item (user or system) is a message of that role, string content
// as Content, a content list as Parts (input_text, input_image with its
// detail and a URL or file id, input_file with file_data, file_url or
// file_id and its filename); the reasoning items, assistant message and
// function calls of one model turn are one assistant message, the
// reasoning items kept as a JSON array in ReasoningDetails exactly as the
// SDK encodes them (encrypted_content byte-exact), their summary text in
// Reasoning; a function_call_output is a RoleTool message, its output list
// as parts as for a chat tool message. ResponsesFromStore gives a turn
// back as reasoning items, then the message, then the function calls.
//
// References whose OpenAI value names no media type (an image or file by
// URL or file id) get "image/*" and "application/octet-stream"; BlobID
// holds an OpenAI file id as given, which only OpenAI can resolve.
//
// Model: the message params carry none, so the ToStore functions leave
// Model empty; ChatCompletionToStore sets it from the completion. Nor do
// they carry a timestamp, platform id or metadata: CreatedAt,
// PlatformMessageID and Metadata are the caller's to set, and the
// FromStore functions have nowhere to put them. A
// Responses turn's model is responses.Response.Model: set it yourself
// (the response's output items carry ids, below, which the store does not
// keep).
//
// ToStore refuses, with an *UnsupportedError matching store.ErrInvalidInput,
// what the store does not model: the developer role, names, refusals,
// assistant audio, custom tool calls, output messages and item ids or
// statuses (a reasoning model pairs its reasoning with the ids of the
// items after it, so they are not dropped silently), an assistant content
// list (the API takes assistant text as a string), hosted tool calls,
// audio other than wav or mp3, file_data that is not a data: URL. Each
// conversion is proved: its result is converted back (as the store
// returns it) and compared with the input, and the first field that would
// be lost is named.
//
// The FromStore functions leave out what OpenAI cannot take back:
// reasoning details of another provider (Anthropic thinking blocks), a
// tool result's is_error, and, for chat completions, all reasoning
// details. An assistant message's parts are sent as its text (all text
// parts, before its calls); a part OpenAI has no place for — an image in a
// tool message or from the assistant in chat, a chat image by blob id, a
// chat file by URL — is an error matching store.ErrInvalidInput, not a
// silent drop.
package openai
