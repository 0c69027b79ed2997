package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// lineReader reads JSON Lines with a cap on each line, keeping the line
// number and the byte offset where each line starts.
type lineReader struct {
	br     *bufio.Reader
	max    int
	line   int   // number of the line last read (1-based)
	offset int64 // byte offset of the next line
	start  int64 // byte offset of the line last read
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<16), max: max}
}

// errLineTooLong marks a line over the cap; the reader has skipped it.
var errLineTooLong = errors.New("line too long")

// next returns the next line without its newline, io.EOF at the end. A
// line over the cap is skipped whole and reported with errLineTooLong, so
// the lines after it are still read.
func (lr *lineReader) next() ([]byte, error) {
	var buf []byte
	long := false
	lr.start = lr.offset
	for {
		chunk, err := lr.br.ReadSlice('\n')
		lr.offset += int64(len(chunk))
		if !long {
			if len(buf)+len(chunk) > lr.max+1 { // +1: the newline
				long, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && lr.offset == lr.start:
			return nil, io.EOF
		case err != nil && !errors.Is(err, io.EOF):
			return nil, err
		}
		lr.line++
		if long {
			return nil, errLineTooLong
		}
		return bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r")), nil
	}
}

// recordType reads a line's "type" after checking the line is UTF-8 JSON.
func recordType(line []byte) (string, error) {
	if !utf8.Valid(line) {
		return "", invalid("not valid UTF-8")
	}
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return "", invalid("not a JSON object: %v", err)
	}
	return probe.Type, nil
}

// messagePrefix starts every message line an export writes
// (messageRecord's first field).
var messagePrefix = []byte(`{"type":"message",`)

// decodeMessage decodes a line that starts as an export's message lines do
// into rec in one pass, and says whether it did. Every other line — and
// one that is not UTF-8, not a strict messageRecord, or whose "type" a
// later key of the same name overrides (encoding/json keeps the last) — is
// left to recordType and decodeStrict, so every line gets the outcome, and
// the error, the two of them give; a message line is parsed once instead
// of twice (about 5% of an import's CPU on SQLite, docs/PERFORMANCE.md).
func decodeMessage(line []byte, rec *messageRecord) bool {
	if !bytes.HasPrefix(line, messagePrefix) || !utf8.Valid(line) {
		return false
	}
	if decodeStrict(line, rec) != nil || rec.Type != "message" {
		*rec = messageRecord{}
		return false
	}
	return true
}

// decodeStrict decodes a record refusing fields the format does not have:
// a typo or a newer format's field is an error, never silently dropped.
func decodeStrict(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return invalid("%v", err)
	}
	if d.More() {
		return invalid("more than one JSON value on the line")
	}
	return nil
}

// ImportError is one problem found in an import file.
type ImportError struct {
	Line int // 1-based line number
	Err  error
}

func (e ImportError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e ImportError) Unwrap() error { return e.Err }
