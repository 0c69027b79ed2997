// Package rowcast reuses a slice of sqlc's rows as a slice of their twins
// in store/driver, without copying: an engine's executor returns a list
// query's rows to the domain as they came from the database.
package rowcast

import "unsafe"

// Same returns rows as a []To. It is sound only when From and To are
// struct types with identical fields — which a plain conversion To(From{})
// proves at compile time; every generated executor carries that proof for
// each type it passes here. An empty result is an empty, non-nil slice.
func Same[From, To any](rows []From) []To {
	if len(rows) == 0 {
		return []To{}
	}
	return unsafe.Slice((*To)(unsafe.Pointer(unsafe.SliceData(rows))), len(rows))
}
