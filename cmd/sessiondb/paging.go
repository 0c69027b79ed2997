package main

// paging.go keeps the list commands (sessions, messages, search) from
// truncating silently: a page that stops at its limit is followed by a
// notice on stderr (text, or one JSON object under --json) saying that
// more follow and which flag fetches the next page, so standard output
// stays exactly the records (a JSON array stays one array). --all pages
// internally and streams every record in constant memory.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
)

// moreJSON is the cursor printed on stderr under --json when a page
// stopped at its limit: more is always true, remaining is set when it was
// cheap to count, and one of next_after, next_before, next_offset is the
// value for the flag of the same name that fetches the next page.
type moreJSON struct {
	More       bool   `json:"more"`
	Remaining  int64  `json:"remaining,omitempty"`
	NextAfter  int64  `json:"next_after,omitempty"`
	NextBefore int64  `json:"next_before,omitempty"`
	NextOffset int    `json:"next_offset,omitempty"`
	Next       string `json:"next"` // the flag and value, e.g. "--after 1000"
}

// cursorAfter, cursorBefore and cursorOffset build the cursor of a page.
func cursorAfter(id int64) moreJSON {
	return moreJSON{More: true, NextAfter: id, Next: fmt.Sprintf("--after %d", id)}
}

func cursorBefore(id int64) moreJSON {
	return moreJSON{More: true, NextBefore: id, Next: fmt.Sprintf("--before %d", id)}
}

func cursorOffset(off int) moreJSON {
	return moreJSON{More: true, NextOffset: off, Next: fmt.Sprintf("--offset %d", off)}
}

// printMore tells that a page of what (a plural noun: "sessions") stopped
// at its limit.
func (e *env) printMore(what string, c moreJSON) error {
	if e.json {
		enc := json.NewEncoder(e.stderr)
		enc.SetEscapeHTML(false)
		return enc.Encode(c)
	}
	count := "more " + what
	if c.Remaining > 0 {
		count = fmt.Sprintf("%d more %s", c.Remaining, what)
		if c.Remaining == 1 {
			count = fmt.Sprintf("1 more %s", singular(what))
		}
	}
	_, err := fmt.Fprintf(e.stderr, "(%s: next page with %s, all with --all)\n", count, c.Next)
	return err
}

// jsonStream writes a JSON array one element at a time, indented as
// writeJSON indents a whole array, so --all never holds the list.
type jsonStream struct {
	w   io.Writer
	n   int
	err error
}

func (j *jsonStream) add(v any) {
	if j.err != nil {
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(v); err != nil {
		j.err = err
		return
	}
	sep := ",\n  "
	if j.n == 0 {
		sep = "[\n  "
	}
	j.n++
	_, j.err = fmt.Fprintf(j.w, "%s%s", sep, bytes.TrimRight(b.Bytes(), "\n"))
}

func (j *jsonStream) close() error {
	if j.err != nil {
		return j.err
	}
	end := "\n]\n"
	if j.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(j.w, end)
	return err
}

// streamPages calls fetch for successive pages until one comes back short
// of pageSize, passing each to emit: what --all does.
func streamPages[T any](pageSize int, fetch func(prev []T) ([]T, error), emit func(page []T, first bool) error) error {
	var page []T
	for first := true; ; first = false {
		next, err := fetch(page)
		if err != nil {
			return err
		}
		if len(next) > 0 || first {
			if err := emit(next, first); err != nil {
				return err
			}
		}
		if len(next) < pageSize {
			return nil
		}
		page = next
	}
}

// streamSeq emits a stream in pages of pageSize (the first page even when
// the stream is empty, so a header or "[" is written once), stopping at
// the stream's first error.
func streamSeq[T any](pageSize int, seq iter.Seq2[T, error], emit func(page []T, first bool) error) error {
	page := make([]T, 0, pageSize)
	first := true
	for v, err := range seq {
		if err != nil {
			return err
		}
		if page = append(page, v); len(page) == pageSize {
			if err := emit(page, first); err != nil {
				return err
			}
			page, first = page[:0], false
		}
	}
	if len(page) > 0 || first {
		return emit(page, first)
	}
	return nil
}
