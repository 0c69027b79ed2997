package proc

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
)

func TestParseHolder(t *testing.T) {
	cases := []struct {
		holder string
		want   holderProcess
		ok     bool
	}{
		{"host=a:pid=42:start=7:nonce=x", holderProcess{host: "a", pid: 42, start: 7, hasStart: true}, true},
		{"pid=42:tid=1:agent=py:nonce=x", holderProcess{pid: 42}, true}, // the Python store's form
		{"worker-1", holderProcess{}, false},
		{"pid=42:pid=43", holderProcess{}, false},
		{"pid=-1", holderProcess{}, false},
		{"pid=42:start=soon", holderProcess{}, false},
	}
	for _, c := range cases {
		got, ok := parseHolder(c.holder)
		if ok != c.ok || got != c.want {
			t.Errorf("parseHolder(%q) = %+v, %v; want %+v, %v", c.holder, got, ok, c.want, c.ok)
		}
	}
}

// A holder naming an exited process is dead; one naming this process, or
// one a probe cannot answer for, is not.
func TestHolderIsDead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows cannot prove a process gone (Alive is always unknown there)")
	}
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	holder := "host=" + HostName() + ":pid=" + strconv.Itoa(dead.Process.Pid) + ":nonce=x"
	if !HolderIsDead(holder, Alive) {
		t.Errorf("holder of exited pid %d is not dead", dead.Process.Pid)
	}
	if HolderIsDead(holder, func(int) Probe { return ProbeUnknown }) {
		t.Error("a probe that cannot tell proved the holder dead")
	}
	if HolderIsDead(NewHolder("me"), Alive) {
		t.Error("this process's own holder is dead")
	}
	if HolderIsDead("host=elsewhere:pid="+strconv.Itoa(dead.Process.Pid), Alive) {
		t.Error("a holder on another host was proved dead")
	}
}
