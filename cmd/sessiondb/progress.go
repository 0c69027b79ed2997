package main

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// showProgress reports whether long commands draw progress: only for a
// person watching — stderr is a terminal and --json is not set. Scripts,
// pipes and CI logs get no bars.
func (e *env) showProgress() bool {
	f, ok := e.stderr.(*os.File)
	return ok && !e.json && term.IsTerminal(int(f.Fd()))
}

// bar returns a progress bar of total steps on stderr (total -1: a spinner
// with a count), or an invisible one when progress is not shown. It is
// cleared when finished, so the command's own output stands alone.
func (e *env) bar(total int64, what string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetVisibility(e.showProgress()),
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionFullWidth(),
	)
}

// spinner shows that a step with no measurable progress (a VACUUM) is
// running; the returned stop clears it.
func (e *env) spinner(what string) (stop func()) {
	b := e.bar(-1, what)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				b.Finish()
				return
			case <-t.C:
				b.Add(0)
			}
		}
	}()
	return func() { close(done); <-finished }
}
