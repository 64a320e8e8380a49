package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// Bloat is what the reference's prepare-host.sh deletes from a hosted runner: toolchains an
// export never uses, about 30 GiB on ubuntu-24.04 images. Each is a glob; missing ones are
// skipped.
var Bloat = []string{
	"/usr/share/dotnet", "/usr/local/lib/android", "/opt/ghc", "/usr/local/.ghcup",
	"/opt/hostedtoolcache/CodeQL", "/usr/share/swift", "/usr/local/share/boost",
	"/usr/local/share/chromium", "/usr/local/share/powershell", "/opt/microsoft", "/opt/google",
	"/usr/local/julia*",
}

// Freed is what freeing disk did.
type Freed struct {
	Paths []string
	// Bytes is the growth of the root file system's free space (0 when it shrank).
	Bytes int64
}

// FreeDisk deletes Bloat and prunes docker images. It is best effort: a failure is a
// warning, because a runner with less free space may still hold the export.
func FreeDisk(ctx context.Context, env Env, log Logger) Freed {
	before, berr := env.Stat("/")
	var res Freed
	for _, pat := range Bloat {
		m, err := env.Glob(pat)
		if err != nil {
			log.Warningf("free disk: %s is not a valid pattern: %v", pat, err)
			continue
		}
		res.Paths = append(res.Paths, m...)
	}
	if len(res.Paths) > 0 {
		c := Cmd{Argv: append([]string{"sudo", "rm", "-rf", "--"}, res.Paths...)}
		log.Infof("$ %s", c)
		if err := env.Run(ctx, c); err != nil {
			log.Warningf("free disk: deleting the preinstalled toolchains failed (%v); continuing with the space there is", err)
		}
	}
	if _, err := env.LookPath("docker"); err == nil {
		c := Cmd{Argv: []string{"docker", "image", "prune", "--all", "--force"}}
		log.Infof("$ %s", c)
		if err := env.Run(ctx, c); err != nil {
			log.Warningf("free disk: pruning docker images failed (%v)", err)
		}
	}
	after, aerr := env.Stat("/")
	if berr == nil && aerr == nil && after.Free > before.Free {
		res.Bytes = after.Free - before.Free
	}
	log.Infof("free disk: deleted %d folders, %s more free on /", len(res.Paths), human(res.Bytes))
	return res
}

// Place is one file system setup may use: the work folder goes to Work, a swap file to
// Mount/exe-expo.swap.
type Place struct {
	Work, Mount string
	FS
}

// Candidates are the places the work folder may go: $RUNNER_TEMP on the root file system
// (writable without sudo) and /mnt, the hosted runners' second disk, when it exists; or
// only the work-root input when it is set.
func Candidates(env Env, workRoot string) ([]Place, error) {
	if workRoot != "" {
		f, err := env.Stat(workRoot)
		if err != nil {
			return nil, fmt.Errorf("input work-root: %w", err)
		}
		return []Place{{Work: workRoot, Mount: workRoot, FS: f}}, nil
	}
	temp := runnerTemp(env)
	root, err := env.Stat(temp)
	if err != nil {
		return nil, err
	}
	places := []Place{{Work: temp, Mount: "/", FS: root}}
	if mnt, err := env.Stat("/mnt"); err == nil && mnt.Dev != root.Dev {
		places = append(places, Place{Work: "/mnt", Mount: "/mnt", FS: mnt})
	}
	return places, nil
}

// runnerTemp is $RUNNER_TEMP, the job's own temporary folder, or the system's outside a job.
func runnerTemp(env Env) string {
	if temp := env.Getenv("RUNNER_TEMP"); temp != "" {
		return temp
	}
	return os.TempDir()
}

// WorkPlace picks the place with the most free space; on a tie the first, which needs no sudo.
func WorkPlace(places []Place) Place {
	best := places[0]
	for _, p := range places[1:] {
		if p.Free > best.Free {
			best = p
		}
	}
	return best
}

// SwapPlace keeps the swap file off the work file system when another one holds it with
// 2 GiB to spare, as the reference did: the export writes gigabytes to the work folder.
func SwapPlace(places []Place, work Place, swapGiB int) Place {
	for _, p := range places {
		if p.Dev != work.Dev && p.Free >= (int64(swapGiB)+2)*gib {
			return p
		}
	}
	return work
}

// MakeWorkDir creates dir, through sudo when the parent is root's (/mnt on hosted runners),
// and gives it to this user.
func MakeWorkDir(ctx context.Context, env Env, log Logger, dir string) error {
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrPermission) {
		return fileutil.Error("create the work folder", dir, err)
	}
	owner := strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	for _, c := range []Cmd{{Argv: []string{"sudo", "mkdir", "-p", dir}}, {Argv: []string{"sudo", "chown", owner, dir}}} {
		log.Infof("$ %s", c)
		if err := env.Run(ctx, c); err != nil {
			return fmt.Errorf("cannot create the work folder %s: %w", dir, err)
		}
	}
	return nil
}

// Swap is what adding swap did.
type Swap struct {
	GiB   int
	Path  string
	Added bool
	// Refused is why the runner refused it (containers often do).
	Refused string
}

// AddSwap adds a swap file of gib GiB at path. A runner that refuses it is a warning, never
// a failure: the export's memory gate then counts what the runner has and skips a window
// that does not fit with exit 4.
func AddSwap(ctx context.Context, env Env, log Logger, path string, gibs int) Swap {
	res := Swap{GiB: gibs, Path: path}
	if gibs <= 0 {
		return res
	}
	// A second setup in one job finds its swap file on; fallocate would fail on it and the
	// clean-up remove it.
	if on, err := env.Swaps(); err == nil && slices.Contains(on, path) {
		log.Infof("swap: %s is on already", path)
		res.Added = true
		return res
	}
	cmds := []Cmd{
		{Argv: []string{"sudo", "fallocate", "-l", strconv.Itoa(gibs) + "G", path}},
		{Argv: []string{"sudo", "chmod", "600", path}},
		{Argv: []string{"sudo", "mkswap", path}},
		{Argv: []string{"sudo", "swapon", path}},
	}
	for _, c := range cmds {
		log.Infof("$ %s", c)
		if err := env.Run(ctx, c); err != nil {
			res.Refused = fmt.Sprintf("%s failed: %v", c.Argv[1], err)
			log.Warningf("could not add %d GiB of swap at %s (%s); the export's memory gate counts what the runner has", gibs, path, res.Refused)
			rm := Cmd{Argv: []string{"sudo", "rm", "-f", path}}
			log.Infof("$ %s", rm)
			if err := env.Run(ctx, rm); err != nil {
				log.Warningf("the unused swap file %s is left behind: %v", path, err)
			}
			return res
		}
	}
	res.Added = true
	return res
}

// WorkDirs are the folders setup exports: the work folder and the Hugging Face cache in it.
func WorkDirs(p Place) (work, hfHome string) {
	work = filepath.Join(p.Work, "exe-expo-work")
	return work, filepath.Join(work, "hf-home")
}
