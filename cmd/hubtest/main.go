// Command hubtest runs the local Hugging Face Hub of pkg/hub/hubtest as its own process,
// for the workflow end-to-end test and local runs. It prints its URL on the first line of
// stdout (use it as HF_ENDPOINT) and serves until interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	dir := flag.String("dir", "", "folder for the server's files (required)")
	token := flag.String("token", "", "accept only this token, as user --user with write access (default: any hf_ token)")
	user := flag.String("user", "hubtest", "user the --token stands for")
	seed := flag.String("seed", "", "seed a repo from a local folder: org/name=path (repeatable by commas)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "hubtest: --dir is required")
		os.Exit(2)
	}
	// The handler goes in before anything can see the URL: a caller that reads the URL and
	// stops the server at once must get a clean exit, not the default SIGTERM death.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := hubtest.Listen(*dir, *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *token != "" {
		srv.AddToken(*token, hubtest.Token{User: *user, Write: true})
	}
	if err := seedRepos(srv, *seed); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(srv.URL)
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
