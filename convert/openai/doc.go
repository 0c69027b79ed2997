// Package openai converts between sessiondb's messages and the message
// types of github.com/openai/openai-go/v3: chat completion message params
// (ChatToStore, ChatFromStore, and ChatCompletionToStore for a response's
// choice) and Responses API input items (ResponsesToStore,
// ResponsesFromStore, and ResponseToStore for a response's output). It is
// its own module, so a store user who does not talk to OpenAI never has
// the SDK's dependency graph in theirs; it imports only package store.
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
// SDK encodes them (their rs_ ids and encrypted_content byte-exact), their
// summary text in Reasoning; an output message (assistant text as the API
// returned it) is text Parts each carrying its msg_ id as Part.ItemID and,
// in Part.Attributes (a JSON object), its phase, a status other than
// completed (a message cut off by max_output_tokens) and the text's
// annotations and logprobs; an assistant easy input message with a phase
// is a text part of it; a function call keeps its fc_ id as
// ToolCall.ItemID; a
// function_call_output is a RoleTool message, its output list as parts as
// for a chat tool message. ResponsesFromStore gives a turn back as
// reasoning items, then the message, then the function calls, ids and
// all: a reasoning model pairs its reasoning with the items after it.
// Items out of that order (reasoning after a call, a second message)
// start the next assistant message, so the order survives without
// reasoning parts; ResponsesFromStore sends a store.PartReasoning holding
// an OpenAI reasoning item with the turn's reasoning.
//
// References whose OpenAI value names no media type (an image or file by
// URL or file id) get "image/*" and "application/octet-stream"; BlobID
// holds an OpenAI file id as given, which only OpenAI can resolve.
//
// Model: the message params carry none, so ChatToStore and
// ResponsesToStore leave Model empty; ChatCompletionToStore sets it from
// the completion, ResponseToStore from the response (and FinishReason from
// why it stopped). Nor do they carry a timestamp, platform id or metadata:
// CreatedAt, PlatformMessageID and Metadata are the caller's to set, and
// the FromStore functions have nowhere to put them.
//
// ToStore refuses, with an *UnsupportedError matching store.ErrInvalidInput,
// what the store does not model: the developer role, names, refusals,
// chat annotations, assistant audio, custom tool calls, a user or system
// message's phase, a function call's status, namespace or caller (a tool
// call has no attributes), a function_call_output's id, an
// assistant content list (the API takes assistant text as a string),
// hosted tool calls, audio other than wav or mp3, file_data that is not a
// data: URL. Each conversion is proved: its result is converted back (as
// the store returns it) and compared with the input, and the first field
// that would be lost is named.
//
// The FromStore functions skip notes (store.RoleNote): a note kept with a
// conversation is nobody's words and is never given to the model, so a
// session read with its notes converts as the same session without them.
//
// The FromStore functions leave out what OpenAI cannot take back:
// reasoning of another provider (Anthropic thinking blocks, in
// ReasoningDetails or reasoning parts), another provider's part
// attributes (cache_control, citations), a tool result's is_error, and,
// for chat completions, all reasoning, item ids and attributes. An assistant message's
// parts are sent as its text (all text parts, before its calls; for
// Responses, text parts with an item id as their output messages); a part
// OpenAI has no place for — an image in a tool message or from the
// assistant in chat, a chat image by blob id, a chat file by URL — is an
// error matching store.ErrInvalidInput, not a silent drop.
package openai
