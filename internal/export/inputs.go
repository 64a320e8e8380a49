package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/experimentalmachines/exe-expo/internal/fileutil"
	"github.com/experimentalmachines/exe-expo/internal/model"
	"github.com/experimentalmachines/exe-expo/internal/recipe"
	"github.com/experimentalmachines/exe-expo/internal/report"
)

// inputsRecord is what a launcher writes of what its tool read (drivers/qnn_launch.py's
// --record): the repo it served, the model files read, and the calibration rows.
type inputsRecord struct {
	Repo        *string             `json:"repo"`
	Read        []report.InputFile  `json:"read"`
	Calibration *report.Calibration `json:"calibration"`
	// CalibrationFile is set when the launcher loaded a calibration (--load-calibration).
	CalibrationFile *report.CalibrationFile `json:"calibration_file"`
}

// loadedFiles are what every record must account for: without them the report could not
// say which revision the file was built from.
var loadedFiles = []string{"checkpoint", "tokenizer"}

// readInputs holds the launcher's record to the download (every checkpoint and tokenizer
// read from the source folder, the calibration rows recorded) and puts it in the report.
func (o *Options) readInputs(src *model.Source, r *recipe.Recipe, rep *report.Report) error {
	tool := fmt.Sprintf("the %s tool", r.Backend)
	b, err := os.ReadFile(r.Inputs)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s finished but wrote no record of what it read (%s)", tool, r.Inputs)
	}
	if err != nil {
		return report.FileError("read", r.Inputs, err)
	}
	var rec inputsRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return fmt.Errorf("%s's record of what it read, %s, is not the launcher's JSON", tool, r.Inputs)
	}
	if rec.Repo != nil && *rec.Repo != src.ID {
		return fmt.Errorf("%s was served %s, and this export is of %s", tool, *rec.Repo, src.ID)
	}
	in := &report.Inputs{Model: src.ID, Revision: src.SHA, Read: []report.InputFile{}}
	seen := map[report.InputFile]bool{}
	for _, f := range rec.Read {
		rel, inside := within(o.srcDir, f.Path)
		if !inside && f.What != "params" {
			return fmt.Errorf("%s read its %s from %s, not from the download of %s", tool, f.What, f.Path, src.ID)
		}
		if inside {
			f.Path = rel
		}
		if !seen[f] {
			seen[f] = true
			in.Read = append(in.Read, f)
		}
	}
	for _, what := range loadedFiles {
		if !seenWhat(seen, what) {
			return fmt.Errorf("%s's record names no %s it read, so the revision it built from is unknown", tool, what)
		}
	}
	if rec.Calibration == nil {
		return fmt.Errorf("%s's record names no calibration data", tool)
	}
	in.Calibration = *rec.Calibration
	if err := o.checkCalibrationFile(tool, rec.CalibrationFile); err != nil {
		return err
	}
	in.CalibrationFile = rec.CalibrationFile
	rep.Inputs = in
	return nil
}

func seenWhat(seen map[report.InputFile]bool, what string) bool {
	for f := range seen {
		if f.What == what {
			return true
		}
	}
	return false
}

// within says whether path lies in dir, and if so its path relative to dir.
func within(dir, path string) (string, bool) {
	d, err1 := filepath.Abs(dir)
	p, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return "", false
	}
	rel, err := filepath.Rel(d, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// checkCalibrationFile holds the record's calibration file to the one the export was given:
// the same digest, or none when none was given.
func (o *Options) checkCalibrationFile(tool string, f *report.CalibrationFile) error {
	switch {
	case o.Calibration == "" && f == nil:
		return nil
	case o.Calibration == "":
		return fmt.Errorf("%s loaded the calibration file %s, and this export was given none", tool, f.Path)
	case f == nil:
		return fmt.Errorf("%s's record names no calibration file, and this export was given %s", tool, o.Calibration)
	}
	d, err := fileutil.Hash(o.Calibration)
	if err != nil {
		return fmt.Errorf("the calibration file %s cannot be read after the export: %w", o.Calibration, err)
	}
	if f.SHA256 != d.SHA256 {
		return fmt.Errorf("%s loaded a calibration file of sha256 %s, and %s has %s", tool, f.SHA256, o.Calibration, d.SHA256)
	}
	f.Path = filepath.Base(o.Calibration)
	return nil
}
