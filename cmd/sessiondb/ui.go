package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os/exec"
	"runtime"

	"github.com/sessiondb/sessiondb/cmd/sessiondb/internal/ui"
)

// runUI serves the read-only viewer (internal/ui) until interrupted. On a
// loopback address it needs no token; bound anywhere else it makes a
// random one, which the printed URL carries.
func runUI(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("ui", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "`host:port` to listen on (port 0: any free one); any address but a loopback one requires the printed token")
	open := fs.Bool("open", false, "open the URL in the default browser")
	if _, err := e.parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	s, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	o := ui.Options{Where: e.opened.where}
	url := "http://" + ln.Addr().String() + "/"
	if !ui.IsLoopback(ln.Addr()) {
		o.Token = ui.NewToken()
		url += "?token=" + o.Token
	}
	h, err := ui.New(s, o)
	if err != nil {
		ln.Close()
		return err
	}
	if e.json {
		err = writeJSON(e.stdout, map[string]string{"url": url, "store": e.opened.where})
	} else {
		_, err = fmt.Fprintf(e.stdout, "sessiondb ui: %s (read-only) at\n%s\n(interrupt to stop)\n", e.opened.where, url)
	}
	if err != nil {
		ln.Close()
		return err
	}
	if *open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintln(e.stderr, "sessiondb ui: could not open a browser:", err)
		}
	}
	return ui.Serve(ctx, ln, h)
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap it; its exit says nothing about the page
	return nil
}
