package store

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sessiondb/sessiondb/internal/rules"
)

// lineageNumber matches the " #N" a continuation's title carries.
var lineageNumber = regexp.MustCompile(` #([0-9]{1,9})$`)

// titleBase splits a title into the conversation's name and the number of
// the continuation it names: "Fix the build #3" is ("Fix the build", 3);
// a title without a number is number 1.
func titleBase(title string) (base string, n int) {
	m := lineageNumber.FindStringSubmatchIndex(title)
	if m == nil || m[0] == 0 {
		return title, 1
	}
	n, _ = strconv.Atoi(title[m[2]:m[3]])
	return title[:m[0]], n
}

// numberedTitle is the title of a lineage's n-th session: the base alone
// for the first, "base #n" after. The number always fits: the base is cut
// so the whole stays within rules.MaxTitleLen.
func numberedTitle(base string, n int) string {
	if n <= 1 {
		return base
	}
	suffix := " #" + strconv.Itoa(n)
	if room := rules.MaxTitleLen - utf8.RuneCountInString(suffix); utf8.RuneCountInString(base) > room {
		base = strings.TrimRight(string([]rune(base)[:room]), " ")
	}
	return base + suffix
}
