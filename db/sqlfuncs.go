package db

import (
	"errors"

	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/internal/searchtext"
)

// SQL functions sessiondb's queries call, registered on every connection
// (registerExtensions). Only sessiondb's own queries may use them: a
// trigger, view or index that named one would fail with "no such
// function" in every other program that opens the file (the sqlite3
// shell, Python), so the schema never does.
//
//   - sessiondb_trigram_match(content, tool_text, terms): 1 when each of
//     terms (a JSON array of folded long terms, Terms.TrigramMatch) is a
//     substring of the folded content or tool text, else 0. The trigram
//     index keeps no positions (migration 13): it finds candidates, this
//     decides.
//   - sessiondb_trigram_score(content, tool_text, terms, avg_len): the
//     score that ranks them (searchtext.TrigramTerms.Score; 0: no match).
//   - sessiondb_trigram_length(content, tool_text): their length in
//     trigrams, whose average over the ranked window avg_len is.
func registerFunctions(c *sqlite3.Conn) error {
	const flags = sqlite3.DETERMINISTIC | sqlite3.INNOCUOUS
	return errors.Join(
		c.CreateFunction("sessiondb_trigram_match", 3, flags, func(ctx sqlite3.Context, arg ...sqlite3.Value) {
			if m := trigramTerms(ctx, arg[2]); m != nil {
				ctx.ResultBool(m.Matches(arg[0].RawText(), arg[1].RawText))
			}
		}),
		c.CreateFunction("sessiondb_trigram_score", 4, flags, func(ctx sqlite3.Context, arg ...sqlite3.Value) {
			if m := trigramTerms(ctx, arg[2]); m != nil {
				ctx.ResultFloat(m.Score(arg[0].RawText(), arg[1].RawText, arg[3].Float()))
			}
		}),
		c.CreateFunction("sessiondb_trigram_length", 2, flags, func(ctx sqlite3.Context, arg ...sqlite3.Value) {
			n := searchtext.TrigramLength(arg[0].RawText())
			ctx.ResultInt(n + searchtext.TrigramLength(arg[1].RawText()))
		}),
	)
}

// trigramTerms parses the terms argument once per statement (SQLite keeps
// the parse beside a bound argument between rows), or sets the error.
func trigramTerms(ctx sqlite3.Context, arg sqlite3.Value) *searchtext.TrigramTerms {
	const termsArg = 2
	if m, ok := ctx.GetAuxData(termsArg).(*searchtext.TrigramTerms); ok {
		return m
	}
	m, err := searchtext.ParseTrigramTerms(arg.Text())
	if err != nil {
		ctx.ResultError(err)
		return nil
	}
	ctx.SetAuxData(termsArg, m)
	return m
}
