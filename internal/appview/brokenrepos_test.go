package appview

import (
	"fmt"
)

// brokenGB is the size of each .pte in TestBrokenRepos' repos.
const brokenGB = int64(1e9)

// brokenGoodRepo is the repo TestBrokenRepos breaks one rule of at a time: one XNNPACK file
// listed in its config.json, the tokenizer at the root.
func brokenGoodRepo() Repo {
	return Repo{ID: "experimentalmachines/Qwen3-1.7B-ExecuTorch",
		Files:   []File{{"tokenizer.json", 1}, {"xnnpack/Qwen3-1.7B-8da4w-2k.pte", brokenGB}, {"xnnpack/config.json", 1}},
		Configs: map[string][]byte{"xnnpack": xnnpackConfig("xnnpack", "Qwen3-1.7B-8da4w-2k.pte", 2048)}}
}

// brokenRenamedRepo is the good repo with its .pte renamed, config.json listing the new name.
func brokenRenamedRepo(name string) Repo {
	r := brokenGoodRepo()
	r.Files[1].Path = "xnnpack/" + name
	r.Configs["xnnpack"] = xnnpackConfig("xnnpack", name, 2048)
	return r
}

// brokenManyRepo is the good repo with 41 windows, one more than the app lists.
func brokenManyRepo() Repo {
	r := brokenGoodRepo()
	r.Files = r.Files[:1]
	var vs []any
	for i := range 41 {
		name := fmt.Sprintf("Qwen3-1.7B-8da4w-%dk.pte", i+1)
		r.Files = append(r.Files, File{"xnnpack/" + name, brokenGB + int64(i)})
		vs = append(vs, name, (i+1)*1024)
	}
	r.Configs = map[string][]byte{"xnnpack": xnnpackConfig("xnnpack", vs...)}
	return r
}
