package check

import (
	"fmt"
	"slices"
)

// MediaTekChunk names one chunk file as MediaTek's export scripts write it: methods
// <Exp>_<PromptTokens>t<Window>c_<Chunk> and <Exp>_1t<Window>c_<Chunk>, Chunk 0-based. It
// is part of what an export requests (Expect, as its report records it); the MediaTek
// backend's check (internal/backend/mediatek) holds a chunk file to it.
type MediaTekChunk struct {
	Exp          string `json:"exp"`
	PromptTokens int    `json:"prompt_tokens"`
	Window       int    `json:"window"`
	Chunk        int    `json:"chunk"`
}

// MethodNames returns the chunk's two method names, sorted.
func (c MediaTekChunk) MethodNames() []string {
	names := []string{
		fmt.Sprintf("%s_%dt%dc_%d", c.Exp, c.PromptTokens, c.Window, c.Chunk),
		fmt.Sprintf("%s_1t%dc_%d", c.Exp, c.Window, c.Chunk),
	}
	slices.Sort(names)
	return names
}
