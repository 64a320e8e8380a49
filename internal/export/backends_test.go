package export_test

// The tests see every backend the commands offer: the registry holds the backend folders a
// program links, and the commands link internal/backend/all.
import _ "github.com/experimentalmachines/exe-expo/internal/backend/all"
