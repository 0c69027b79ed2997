package ui

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/sessiondb/sessiondb/store"
)

// messageView is one message as the conversation page shows it.
type messageView struct {
	ID        int64
	SessionID string
	Role      store.Role
	State     store.MessageState
	Summary   bool
	OriginID  int64
	// CarriedTo is the copy that stands in for this row since a
	// compaction carried it over (a retired original is stored as
	// rewound); 0 when no copy is on the page.
	CarriedTo    int64
	Model        string
	FinishReason string
	TokenCount   int64
	CreatedAt    time.Time
	ToolName     string
	ToolCallID   string
	// Blocks are the content: its parts in order, or the plain content
	// with the tool calls after it.
	Blocks []block
	// Fold: a tool's output is folded by default, as tool calls are.
	Fold             bool
	Reasoning        []segment
	ReasoningDetails string
	Metadata         string
	PlatformID       string
}

// block is one piece of a message's content.
type block struct {
	Kind string // text, image, file, tool_use, tool_result, reasoning
	Text []segment
	// Image is set only for a data:image URL of a raster type, the one
	// kind of image the page shows inline (see the package doc).
	Image template.URL
	// Link is an http(s) URL of an image or file, shown as a link and
	// never fetched by the page; Ref is any other reference as text (a
	// file: URL, a blob id, an SVG or malformed data URL, cut short).
	Link      string
	Ref       string
	MediaType string
	Name      string
	Detail    string
	CallID    string
	Input     string
	IsError   bool
	Data      string
}

func viewMessage(m store.Message) messageView {
	v := messageView{ID: m.ID, SessionID: m.SessionID, Role: m.Role, State: m.State, Summary: m.Summary,
		OriginID: m.OriginID, Model: visible(m.Model), FinishReason: visible(m.FinishReason), TokenCount: m.TokenCount,
		CreatedAt: m.CreatedAt, ToolName: visible(m.ToolName), ToolCallID: visible(m.ToolCallID),
		Fold: m.Role == store.RoleTool && !hasPart(m.Parts, store.PartToolResult), Reasoning: segments(m.Reasoning),
		ReasoningDetails: prettyJSON(m.ReasoningDetails), Metadata: prettyJSON(m.Metadata),
		PlatformID: visible(m.PlatformMessageID)}
	if len(m.Parts) > 0 {
		for _, p := range m.Parts {
			v.Blocks = append(v.Blocks, viewPart(p))
		}
		return v // Content and ToolCalls are the parts' own, already shown
	}
	if m.Content != "" {
		v.Blocks = append(v.Blocks, block{Kind: "text", Text: segments(m.Content)})
	}
	for _, c := range m.ToolCalls {
		v.Blocks = append(v.Blocks, block{Kind: "tool_use", Name: visible(c.Name), CallID: visible(c.ID), Input: prettyJSON(c.Arguments)})
	}
	return v
}

// markCarried links each retired original on a page to its copy there:
// the store keeps a compaction's originals as rewound rows, and a reader
// should see "carried over to #N", not a turn taken back.
func markCarried(vs []messageView) {
	latest := map[int64]int64{} // turn (the first original's id) -> its newest row
	for _, v := range vs {
		turn := cmp.Or(v.OriginID, v.ID)
		latest[turn] = max(latest[turn], v.ID)
	}
	for i, v := range vs {
		if v.State != store.StateRewound {
			continue
		}
		if to := latest[cmp.Or(v.OriginID, v.ID)]; to > v.ID {
			vs[i].CarriedTo = to
		}
	}
}

func hasPart(ps []store.Part, t store.PartType) bool {
	for _, p := range ps {
		if p.Type == t {
			return true
		}
	}
	return false
}

func viewPart(p store.Part) block {
	b := block{Kind: string(p.Type), MediaType: visible(p.MediaType), Name: visible(p.Name), Detail: visible(p.Detail),
		CallID: visible(p.ToolCallID), IsError: p.IsError}
	switch p.Type {
	case store.PartText, store.PartToolResult:
		b.Text = segments(p.Text)
	case store.PartImage, store.PartFile:
		switch {
		case p.BlobID != "":
			b.Ref = "blob " + cut(visible(p.BlobID), 200)
		case p.Type == store.PartImage && inlineImage(p.URL):
			b.Image = template.URL(p.URL) // checked by inlineImage: a base64 raster image, nothing else
		case webURL(p.URL):
			b.Link = p.URL
		default:
			b.Ref = cut(visible(p.URL), 200)
		}
	case store.PartToolUse:
		b.Input = prettyJSON(p.Input)
	case store.PartReasoning:
		b.Text = segments(p.Text)
		b.Data = prettyJSON(p.Data)
	default: // a type this viewer does not know yet: show what it has
		b.Kind = "unknown"
		b.Text = segments(p.Text)
		b.Data = visible(string(p.Type))
	}
	return b
}

// inlineImages are the image types shown inline from a data: URL: raster
// formats that cannot carry script (SVG can, and is not among them).
var inlineImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// inlineImage reports whether u is a data: URL of base64 raster image
// bytes, the only URL an <img> of the page ever gets.
func inlineImage(u string) bool {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return false
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return false
	}
	mediaType, ok := strings.CutSuffix(strings.ToLower(meta), ";base64")
	if !ok || !inlineImages[mediaType] {
		return false
	}
	_, err := base64.StdEncoding.DecodeString(data)
	return err == nil
}

// webURL: an absolute http or https URL, the only kind the page links to.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// prettyJSON indents JSON text for reading; anything else is shown as
// written (visible).
func prettyJSON(s string) string {
	if s == "" {
		return ""
	}
	var b bytes.Buffer
	if json.Valid([]byte(s)) && json.Indent(&b, []byte(s), "", "  ") == nil {
		return visible(b.String())
	}
	return visible(s)
}

// cut shortens s to n bytes at a rune boundary, with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
