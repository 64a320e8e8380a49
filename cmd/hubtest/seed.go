package main

import (
	"fmt"
	"strings"

	"github.com/experimentalmachines/exe-expo/pkg/hub/hubtest"
)

// seedRepos parses "org/a=dir1,org/b=dir2" and commits each folder to its repo.
func seedRepos(srv *hubtest.Server, spec string) error {
	if spec == "" {
		return nil
	}
	for _, item := range strings.Split(spec, ",") {
		id, dir, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("hubtest: --seed %q: want org/name=path", item)
		}
		if _, err := srv.AddModelDir(id, dir); err != nil {
			return err
		}
	}
	return nil
}
