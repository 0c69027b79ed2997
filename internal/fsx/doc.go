// Package fsx answers the file-system questions the SQLite engine asks
// before and after it lets SQLite at a file: may this user write the file
// or its directory, who owns it, how many names it has, how much room is
// left, whether the process has run out of descriptors; and it creates a
// new file without following a planted symlink. Where a platform cannot
// tell, the answer leaves the check to SQLite.
package fsx
