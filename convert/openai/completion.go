package openai

import (
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/sessiondb/sessiondb/store"
)

// ChatCompletionToStore converts the choice a gateway keeps of a chat
// completion into the assistant message to append, with the model that
// wrote it (Model) and why it stopped (FinishReason). A refusal,
// annotations, audio or a deprecated function_call are refused with an *UnsupportedError: the store
// does not model them.
func ChatCompletionToStore(c *openai.ChatCompletion, choice int) (store.NewMessage, error) {
	if choice < 0 || choice >= len(c.Choices) {
		return store.NewMessage{}, fmt.Errorf("openai: choice %d of %d: %w", choice, len(c.Choices), store.ErrInvalidInput)
	}
	ch := c.Choices[choice]
	msg := ch.Message
	switch {
	case msg.Refusal != "":
		return store.NewMessage{}, &UnsupportedError{Part: "refusal"}
	case len(msg.Annotations) > 0:
		return store.NewMessage{}, &UnsupportedError{Part: "annotations"}
	case msg.Audio.ID != "":
		return store.NewMessage{}, &UnsupportedError{Part: "audio"}
	case msg.FunctionCall.Name != "":
		return store.NewMessage{}, &UnsupportedError{Part: "function_call (deprecated; tool_calls are kept)"}
	}
	a := openai.ChatCompletionAssistantMessageParam{}
	if msg.Content != "" || len(msg.ToolCalls) == 0 {
		a.Content.OfString = openai.String(msg.Content)
	}
	for j, tc := range msg.ToolCalls {
		if tc.Type != "function" {
			return store.NewMessage{}, &UnsupportedError{Part: fmt.Sprintf("tool_calls[%d] (a %s tool call: the store keeps function calls)", j, tc.Type)}
		}
		f := tc.AsFunction()
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
			ID: f.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: f.Function.Name, Arguments: f.Function.Arguments}}})
	}
	ns, err := ChatToStore([]openai.ChatCompletionMessageParamUnion{{OfAssistant: &a}})
	if err != nil {
		return store.NewMessage{}, err
	}
	ns[0].Model, ns[0].FinishReason = c.Model, ch.FinishReason
	return ns[0], nil
}
