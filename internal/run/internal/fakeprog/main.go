// Command fakeprog stands in for an export tool in internal/run's tests. It runs a small script
// given as arguments, one step each:
//
//	p:TEXT     print TEXT and a newline to stdout
//	e:TEXT     print TEXT and a newline to stderr
//	r:TEXT     write "\r" + TEXT to stderr without a newline (a progress bar redraw)
//	n          write a newline to stderr (a progress bar closing)
//	s:DUR      sleep DUR (time.ParseDuration)
//	w:PATH     wait until PATH exists (the test creates it when it has seen the lines
//	           before), so a test orders the tool's steps after its own by events, not sleeps
//	alloc:MIB  allocate MIB MiB and write to every page, so it is resident
//	child:DUR  start a copy of itself sleeping DUR and print "child <pid>"
//	env:KEY    print KEY=<value> or KEY unset
//	x:CODE     exit with CODE
//	term:TEXT  from now on, on SIGTERM print TEXT to stdout and exit 143 (a tool that
//	           cleans up when asked to stop)
//	termok:TEXT  like term, but exit 0 (a tool that reports success when stopped)
//	noterm     ignore SIGTERM from now on (a tool that must be killed)
//
// Any other step exits 99, so a typo in a test fails loudly.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var hold [][]byte

func main() {
	for _, step := range os.Args[1:] {
		op, arg, _ := strings.Cut(step, ":")
		if err := do(op, arg); err != nil {
			fmt.Fprintf(os.Stderr, "fakeprog: %s: %v\n", step, err)
			os.Exit(99)
		}
	}
}

func do(op, arg string) error {
	switch op {
	case "p":
		fmt.Println(arg)
	case "e":
		fmt.Fprintln(os.Stderr, arg)
	case "r":
		fmt.Fprint(os.Stderr, "\r"+arg)
	case "n":
		fmt.Fprint(os.Stderr, "\n")
	case "s":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return err
		}
		time.Sleep(d)
	case "w":
		return waitFor(arg)
	case "alloc":
		mib, err := strconv.Atoi(arg)
		if err != nil {
			return err
		}
		b := make([]byte, mib<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hold = append(hold, b)
		fmt.Printf("allocated %d MiB\n", mib)
	case "child":
		c := exec.Command(os.Args[0], "s:"+arg)
		if err := c.Start(); err != nil {
			return err
		}
		fmt.Printf("child %d\n", c.Process.Pid)
	case "env":
		if v, ok := os.LookupEnv(arg); ok {
			fmt.Printf("%s=%s\n", arg, v)
		} else {
			fmt.Printf("%s unset\n", arg)
		}
	case "term":
		onTerm(arg, 143)
	case "termok":
		onTerm(arg, 0)
	case "noterm":
		signal.Ignore(syscall.SIGTERM)
	case "x":
		code, err := strconv.Atoi(arg)
		if err != nil {
			return err
		}
		os.Exit(code)
	default:
		return fmt.Errorf("unknown step %q", op)
	}
	return nil
}

// waitFor polls for path. The limit only ends a test whose release never comes; a test
// that releases its tool does so as soon as it has read the line before.
func waitFor(path string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("%s did not appear within a minute", path)
}

// onTerm makes the next SIGTERM print text and exit with code.
func onTerm(text string, code int) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM)
	go func() {
		<-c
		fmt.Println(text)
		os.Exit(code)
	}()
}
