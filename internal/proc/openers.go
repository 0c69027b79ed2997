package proc

// Alias is a process holding a file open under another name (FindAlias).
type Alias struct {
	PID     int
	Process string // its command line
	Other   string // its name for the file ("" when it cannot be read)
}
