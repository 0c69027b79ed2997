// Package anthropic converts between sessiondb's messages and the message
// params of github.com/anthropics/anthropic-sdk-go/v2. It is its own
// module, so a store user who does not talk to Anthropic never has the
// SDK's dependency graph in theirs; it imports only package store.
//
// The mapping:
//
//   - a system message is a RoleSystem message: one text block as Content,
//     several as text Parts;
//   - a user message's tool_result blocks are RoleTool messages (ToolCallID
//     is tool_use_id, ToolName the name of the tool_use it answers), its
//     other blocks one RoleUser message — Content for a single text block,
//     ordered Parts otherwise (text, images, documents); FromStore puts
//     tool results and the user content after them back into one user
//     message, tool results first, as the API wants them;
//   - a tool result of one text block (or none) is the RoleTool message's
//     Content; one marked is_error or holding several blocks, images or
//     documents is Parts: a store.PartToolResult first (is_error, and the
//     first block's text when it is text), then the other blocks;
//   - an assistant message's thinking and redacted_thinking blocks, when
//     they all come first, are kept as a JSON array in ReasoningDetails,
//     exactly as the SDK encodes them (signatures and redacted data
//     byte-exact); the rest is Content and ToolCalls when it is one text
//     block followed by tool_use blocks (ids, names, and input as JSON
//     text, verbatim when the input is a json.RawMessage), and ordered
//     Parts otherwise — text and tool_use interleaved keep their order;
//   - thinking after other content (interleaved thinking, between tool
//     calls) makes the whole message ordered Parts, each thinking block a
//     store.PartReasoning whose Data is the block's JSON as the SDK
//     encodes it and whose Text is its thinking; either way the thinking
//     text is also in Reasoning, for search;
//   - an image is a store.PartImage: a base64 source as a data: URL
//     ("data:image/png;base64,…", the base64 text as sent), a URL source
//     as its URL, a file source as its file id in BlobID; the two last name
//     no media type and get "image/*";
//   - a document is a store.PartFile named by its title: a base64 PDF as
//     a data: URL, a URL (always a PDF) as its URL with "application/pdf",
//     a plain text source as a "data:text/plain;base64,…" URL (its text
//     base64-encoded, so the file stays a reference and the text is not
//     searched as the message's), a file source as BlobID with
//     "application/octet-stream";
//   - a block's fields the store does not model are kept in its part's
//     Attributes (a JSON object) and sent back: cache_control breakpoints
//     (on text, image, document, tool_use and tool_result blocks; a
//     tool_result's on its store.PartToolResult), a text's citations, a
//     document's citations config and context. A block with any of them is
//     a part, never Content: a system or user message of one cached text
//     block is one text part, an assistant message with a cited text or a
//     cached call ordered Parts.
//
// Anthropic's message params carry no model, timestamp, platform id or
// metadata, so ToStore leaves Model, CreatedAt, PlatformMessageID and
// Metadata empty and FromStore has nowhere to put them. MessageToStore
// converts a response (anthropic.Message), which names its model: Model
// is set from it, FinishReason from its stop reason. The others are the
// caller's to set from their platform.
//
// ToStore refuses, with an *UnsupportedError matching store.ErrInvalidInput,
// anything the store does not model: a document made of content blocks,
// an image's transformations, search results, server tool blocks, a
// tool_use of a toolset or made by code execution (its caller), thinking
// from the user, tool results after user text, a tool_use from the user.
// It proves it: the messages it returns are converted back (as the store
// returns them) and compared with the input, and the first difference is
// named. It also
// refuses what the store would (a store.ErrInvalidInput from
// NewMessage.Validate: an image of no media type).
//
// FromStore skips notes (store.RoleNote): a note kept with a conversation
// is nobody's words and is never given to the model, so a session read
// with its notes converts as the same session without them.
//
// FromStore leaves out what Anthropic cannot take back: reasoning of
// another provider (an OpenAI reasoning item, in ReasoningDetails or a
// reasoning part), plain Reasoning text without a signed block, item ids
// (Part.ItemID, ToolCall.ItemID: OpenAI's), OpenAI's part attributes (a
// message's phase and status, annotations) and an image's Detail. A part
// Anthropic has no block for — a file other than a PDF or plain text, a
// non-PDF file by URL, an image in a system message — is an error
// matching store.ErrInvalidInput, not a silent drop.
package anthropic
