package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/sessiondb/sessiondb/store"
)

// ResponseToStore converts a Responses API response's output — the turn a
// gateway keeps — into the messages to append: its items become the input
// items the next request sends back (an output message with its msg_ id,
// a function call with its fc_ id, a reasoning item as given), kept as
// ResponsesToStore keeps them, each message with the model that wrote it
// (Model) and the last with why the response stopped (FinishReason: its
// incomplete_details reason, else its status). Output text logprobs, a
// function call's "completed" status and the response's own id, usage and
// settings are not part of the turn and are not kept. A message's phase,
// status (a message cut off by max_output_tokens is incomplete) and
// annotations are kept in its text parts' Attributes. Refusals, hosted
// tool calls, a call a program made and a function call still in progress
// or incomplete are refused with an *UnsupportedError whose Message is the
// output item's index: the store does not model them.
func ResponseToStore(r *responses.Response) ([]store.NewMessage, error) {
	items := make(responses.ResponseInputParam, 0, len(r.Output))
	for j, o := range r.Output {
		it, err := outputItem(o)
		if err != nil {
			if u, ok := err.(*UnsupportedError); ok {
				u.Message = j
			}
			return nil, err
		}
		items = append(items, it)
	}
	ns, err := ResponsesToStore(items)
	if err != nil {
		return nil, err
	}
	for i := range ns {
		ns[i].Model = string(r.Model)
	}
	if len(ns) > 0 {
		reason := r.IncompleteDetails.Reason
		if reason == "" {
			reason = string(r.Status)
		}
		ns[len(ns)-1].FinishReason = reason
	}
	return ns, nil
}

// outputItem is an output item as the input item that sends it back.
// What the input item has no place for is refused here; what it does
// (a status, a phase) is passed on, for ResponsesToStore's check to
// refuse what the store cannot keep.
func outputItem(o responses.ResponseOutputItemUnion) (responses.ResponseInputItemUnionParam, error) {
	switch o.Type {
	case "message":
		m := o.AsMessage()
		p := &responses.ResponseOutputMessageParam{ID: m.ID, Status: m.Status, Phase: m.Phase}
		for k, c := range m.Content {
			if c.Type != "output_text" {
				return responses.ResponseInputItemUnionParam{}, &UnsupportedError{Part: fmt.Sprintf("content[%d] (a %s: the store has no refusals)", k, c.Type)}
			}
			text := &responses.ResponseOutputTextParam{Text: c.Text, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}
			for n, a := range c.Annotations {
				var ap responses.ResponseOutputTextAnnotationUnionParam
				if err := json.Unmarshal([]byte(a.RawJSON()), &ap); err != nil {
					return responses.ResponseInputItemUnionParam{}, &UnsupportedError{Part: fmt.Sprintf("content[%d].annotations[%d] (%v)", k, n, err)}
				}
				text.Annotations = append(text.Annotations, ap)
			}
			p.Content = append(p.Content, responses.ResponseOutputMessageContentUnionParam{OfOutputText: text})
		}
		return responses.ResponseInputItemUnionParam{OfOutputMessage: p}, nil
	case "function_call":
		f := o.AsFunctionCall()
		if caller := f.Caller.Type; caller != "" && caller != "direct" {
			return responses.ResponseInputItemUnionParam{}, &UnsupportedError{Part: fmt.Sprintf("caller (a call made by a %s)", caller)}
		}
		p := &responses.ResponseFunctionToolCallParam{Arguments: f.Arguments, CallID: f.CallID, Name: f.Name,
			ID: optional(f.ID), Namespace: optional(f.Namespace)}
		if f.Async {
			p.Async = openai.Bool(true)
		}
		if f.Status != "completed" {
			p.Status = f.Status
		}
		return responses.ResponseInputItemUnionParam{OfFunctionCall: p}, nil
	case "reasoning":
		rs := o.AsReasoning()
		p := &responses.ResponseReasoningItemParam{ID: rs.ID, EncryptedContent: optional(rs.EncryptedContent),
			Summary: []responses.ResponseReasoningItemSummaryParam{}, Status: rs.Status}
		for _, s := range rs.Summary {
			p.Summary = append(p.Summary, responses.ResponseReasoningItemSummaryParam{Text: s.Text})
		}
		for _, c := range rs.Content {
			p.Content = append(p.Content, responses.ResponseReasoningItemContentParam{Text: c.Text})
		}
		return responses.ResponseInputItemUnionParam{OfReasoning: p}, nil
	}
	return responses.ResponseInputItemUnionParam{}, &UnsupportedError{Part: "a " + typeOf(&o.Type) + " item"}
}
