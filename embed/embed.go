// Package embed turns chunk text into vectors.
//
// Embedder is the interface the rest of recrawl depends on. Two
// implementations ship here:
//
//   - Hashing, the offline default: deterministic signed feature hashing of
//     word unigrams and bigrams. It needs no model, no network and no key,
//     and it is lexical, not semantic: texts sharing words score as similar,
//     synonyms and paraphrases do not.
//   - OpenAI, a client for any OpenAI-compatible POST /v1/embeddings
//     endpoint (OpenAI, Ollama, vLLM, text-embeddings-inference), with
//     batching, retries that honour Retry-After, and strict response checks.
package embed

import "context"

// Embedder maps texts to vectors.
//
// Embed returns exactly one vector per text, in the order of texts, each of
// length Dimensions(). On error it returns no vectors: a partial result is
// never handed out. An empty texts slice returns an empty result and does no
// work. Implementations are safe for concurrent use.
//
// Model and Dimensions together name the vector space: vectors from two
// embedders are comparable only when both are equal, so a caller that stores
// vectors should store both beside them.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dimensions() int
	Model() string
}
