// Package eino makes sessiondb a drop-in for agents built on
// github.com/cloudwego/eino: ToStore and FromStore convert between eino's
// *schema.Message and the store's messages, and CheckPoints is a
// compose.CheckPointStore over a store's key/values, so an interrupted
// graph resumes from the same store its conversation lives in, from any
// process. It is its own module, so a store user who does not use eino
// never has eino's dependency graph in theirs; it imports only package
// store.
//
// A message maps field by field: Role (system, user, assistant, tool),
// Content, ReasoningContent as Reasoning, ToolCalls (function calls: ids,
// names and arguments byte-exact), ToolCallID and ToolName for a tool
// result, ResponseMeta.FinishReason as FinishReason, and Extra as the
// message's Metadata (a JSON object). FromStore gives back what ToStore
// took, and skips notes (store.RoleNote), which are never a model's input.
//
// Refused, never dropped — an *UnsupportedError matching
// store.ErrInvalidInput that names the message and the field: Name,
// multimodal content (MultiContent, UserInputMultiContent,
// AssistantGenMultiContent), a tool call's Index or Extra or a type other
// than "function", ResponseMeta.LogProbs, and ResponseMeta.Usage, which is
// a turn's cost and not a message's: record it with Store.RecordUsage
// (UsageOf converts it) and clear it before converting. FromStore refuses
// a stored message with parts its Content does not say (images, files,
// structured tool results written by another converter).
//
// Why not genkit (firebase/genkit Go v1.4.0): its session store,
// core/x/session.Store[S] (Get and Save of a typed state value by session
// id), is experimental — its package says it "may change in any minor
// version release" — and it keeps an application's state, not its
// conversation. An adapter would be a few lines over the store's
// key/values, as CheckPoints is, but would pin users to an API announced
// to move; it waits for the package to leave x/. google/adk-go and the
// OpenAI Agents Go port are not served
// here; an adapter for either needs the same two halves: a message
// converter (their Content/Event types to store.NewMessage) and their
// session service over Store's sessions, messages and key/values.
package eino
