package drivers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
)

// Names of a Hugging Face checkpoint's weight files.
const (
	singleShard = "model.safetensors"
	shardIndex  = "model.safetensors.index.json"
)

// ShardFiles lists a local model folder's safetensors files: the files of
// model.safetensors.index.json's weight_map, sorted, or model.safetensors alone.
func ShardFiles(dir string) ([]string, error) {
	idx := filepath.Join(dir, shardIndex)
	b, err := os.ReadFile(idx)
	if errors.Is(err, fs.ErrNotExist) {
		single := filepath.Join(dir, singleShard)
		if _, err := os.Stat(single); err != nil {
			return nil, fmt.Errorf("model folder %s has neither %s nor %s: %w", dir, shardIndex, singleShard, err)
		}
		return []string{single}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", idx, err)
	}
	var index struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &index); err != nil {
		return nil, fmt.Errorf("%s is not a safetensors index: %s", idx, fileutil.Reason(err))
	}
	if len(index.WeightMap) == 0 {
		return nil, fmt.Errorf("%s: empty weight_map", idx)
	}
	seen := map[string]bool{}
	var files []string
	for tensor, file := range index.WeightMap {
		if !fs.ValidPath(file) {
			return nil, fmt.Errorf("%s: tensor %s is in %q, not a file inside the model folder", idx, tensor, file)
		}
		if !seen[file] {
			seen[file] = true
			files = append(files, filepath.Join(dir, filepath.FromSlash(file)))
		}
	}
	sort.Strings(files)
	return files, nil
}
