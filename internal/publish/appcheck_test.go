package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/experimentalmachines/exe-expo/internal/config"
	"github.com/experimentalmachines/exe-expo/internal/report"
	"github.com/experimentalmachines/exe-expo/pkg/pte"
)

// TestPublishRefusesWhatTheAppMisreads publishes one XNNPACK window into repos that
// already hold files breaking one of the app's rules for it, and expects the refusal to
// name the rule (appview's) and the window not to be committed.
func TestPublishRefusesWhatTheAppMisreads(t *testing.T) {
	for _, tc := range []struct {
		name string
		// repo are the files the repo holds before the publish; edit changes the report.
		repo map[string][]byte
		edit func(*report.Report)
		rule string
	}{
		{name: "forty smaller files push it past the 40", rule: "[first-40]", repo: func() map[string][]byte {
			m := map[string][]byte{}
			for i := range 40 {
				m[fmt.Sprintf("vulkan/SmolLM2-360M-Instruct-vulkan-8da4w-%dk.pte", i+1)] = []byte("small program")
			}
			return m
		}()},
		{name: "a tokenizer in its own folder", rule: "[tokenizer] xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte: the app pairs it with xnnpack/tokenizer.json",
			repo: map[string][]byte{"xnnpack/tokenizer.json": []byte("{}")}},
		{name: "a tokenizer in another folder", rule: "[tokenizer] xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte: no tokenizer pairs with it",
			repo: map[string][]byte{"vulkan/tokenizer.json": []byte("{}")}},
		{name: "a report that records no window", rule: "[window] xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte",
			edit: func(r *report.Report) { r.Metadata = pte.Metadata{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newHub(t)
			if tc.repo != nil {
				srv.MustAddModel(t, testRepo, tc.repo)
			}
			dir := t.TempDir()
			rp := writeWindow(t, dir, win{backend: "xnnpack", window: 2048, seed: 1})
			if tc.edit != nil {
				r, err := report.Read(rp)
				require.NoError(t, err)
				tc.edit(r)
				require.NoError(t, report.Write(rp, r))
			}
			_, err := publishDir(context.Background(), c, dir, rp)
			require.ErrorContains(t, err, tc.rule)
			require.ErrorContains(t, err, "would not be read right by the app")
			require.NotContains(t, srv.Files(testRepo, "main"), "xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte", "the window is not committed")
		})
	}
}

// TestPublishWarnsOfAWindowThePhoneCannotHold publishes a small file whose window the app
// offers a 4 GB phone (it sizes the file without its KV cache) while the phone cannot hold
// it: publish goes ahead and says so, and the card's phone table is the one to pick by.
func TestPublishWarnsOfAWindowThePhoneCannotHold(t *testing.T) {
	srv, c := newHub(t)
	dir := t.TempDir()
	rp := writeWindow(t, dir, win{backend: "xnnpack", window: 32768, seed: 1})
	r, err := report.Read(rp)
	require.NoError(t, err)
	r.Window.PhoneClasses = []config.PhoneClass{{RAMGiB: 4, AppBytes: 2_576_980_378}, {RAMGiB: 8, AppBytes: 5_153_960_755}}
	r.Window.DeviceResident = 3_500_000_000
	r.Window.FitsPhonesGiB = []int{8}
	require.NoError(t, report.Write(rp, r))

	res, err := publishDir(context.Background(), c, dir, rp)
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	require.Contains(t, res.Warnings[0], "xnnpack/SmolLM2-360M-Instruct-8da4w-32k.pte: kill trap: the app offers it on 4 GB phones, which cannot hold its 32768-token KV cache")
	card := string(readRepo(t, srv, testRepo).files["README.md"])
	require.Contains(t, card, "The openweights app sizes a .pte without its KV cache")
}

// appNoTokenizer is the app's refusal of a repo without a tokenizer it pairs.
const appNoTokenizer = "[tokenizer] the repo holds no tokenizer.json or tokenizer.model, so the app lists none of its .pte files"

// TestPublishRefusesARepoWithNoTokenizer: the app lists no .pte of a repo that holds no
// tokenizer.json or tokenizer.model, so a window whose commit would leave the repo without
// one is refused, naming the repo and the files it lacks, and nothing is committed; a repo
// that holds only tokenizer.model suits the app but not ExecuServe (tokenizer.json only), so
// it is refused for ExecuServe; tokenizer.json passes both.
func TestPublishRefusesARepoWithNoTokenizer(t *testing.T) {
	const file = "xnnpack/SmolLM2-360M-Instruct-8da4w-2k.pte"
	for _, tc := range []struct {
		name string
		repo map[string][]byte // the repo before the publish, nil for none
		// tokenizer is the root file the report names as its tokenizer ("" for none).
		tokenizer string
		// refused is the refusal's text; "" for a publish that goes through.
		refused string
	}{
		{name: "the report names no tokenizer, a new repo", refused: appNoTokenizer},
		{name: "the report names no tokenizer, a repo with a README only", repo: map[string][]byte{"README.md": []byte("# x\n")}, refused: appNoTokenizer},
		{name: "the report's tokenizer is one the app never pairs", tokenizer: "tokenizer_config.json", refused: appNoTokenizer},
		// The app pairs tokenizer.model; ExecuServe reads tokenizer.json only, so it drops the
		// folder and publish refuses it for ExecuServe.
		{name: "the repo already holds tokenizer.model at the root", repo: map[string][]byte{"tokenizer.model": []byte("spm")},
			refused: "ExecuServe would drop " + file + ": [execuserve-config] " + file + ": xnnpack/: no tokenizer.json in the folder or at the root"},
		{name: "the report's tokenizer.json", tokenizer: "tokenizer.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newHub(t)
			if tc.repo != nil {
				srv.MustAddModel(t, testRepo, tc.repo)
			}
			dir := t.TempDir()
			rp := writeWindow(t, dir, win{backend: "xnnpack", window: 2048, seed: 1})
			r, err := report.Read(rp)
			require.NoError(t, err)
			r.Tokenizer = tc.tokenizer
			if tc.tokenizer != "" && tc.tokenizer != "tokenizer.json" {
				data := []byte(`{"model_max_length": 8192}`)
				writeFile(t, filepath.Join(dir, tc.tokenizer), data)
				sum := sha256.Sum256(data)
				r.RootFiles = append(r.RootFiles, report.File{Path: tc.tokenizer, Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
			}
			require.NoError(t, report.Write(rp, r))

			_, err = publishDir(context.Background(), c, dir, rp)
			if tc.refused == "" {
				require.NoError(t, err)
				require.Contains(t, srv.Files(testRepo, "main"), file)
				return
			}
			require.ErrorContains(t, err, "to "+testRepo+": ")
			require.ErrorContains(t, err, tc.refused)
			require.NotContains(t, srv.Files(testRepo, "main"), file, "the window is not committed")
		})
	}
}
