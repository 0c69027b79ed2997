//go:build unix

package fsx

import "syscall"

// CanWrite reports whether this user may open the existing file p for
// reading and writing, without opening it (closing a descriptor drops the
// process's POSIX locks on the file).
func CanWrite(p string) bool { return syscall.Access(p, 0x4|0x2) == nil } // R_OK|W_OK
