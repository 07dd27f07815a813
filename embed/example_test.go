package embed_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/recrawl/recrawl/embed"
)

func ExampleHashing_Embed() {
	h, err := embed.NewHashing(256)
	if err != nil {
		log.Fatal(err)
	}
	vs, err := h.Embed(context.Background(), []string{
		"The crawler refetches changed pages.",
		"Changed pages are refetched by the crawler.",
		"Bake the bread for forty minutes.",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(h.Model(), len(vs), len(vs[0]))
	fmt.Printf("same words: %.2f\n", cosine(vs[0], vs[1]))
	fmt.Printf("unrelated text: %.2f\n", cosine(vs[0], vs[2]))
	// Output:
	// hashing-v1-256 3 256
	// same words: 0.55
	// unrelated text: 0.18
}

func ExampleNewOpenAI() {
	key, err := embed.APIKeyFromEnv("") // OPENAI_API_KEY; the package never reads it by itself
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	e, err := embed.NewOpenAI(embed.OpenAIConfig{
		BaseURL:        "https://api.openai.com/v1", // or http://localhost:11434/v1 for Ollama
		Model:          "text-embedding-3-small",
		APIKey:         key,
		Dimensions:     512,
		SendDimensions: true, // text-embedding-3 models can shorten their vectors
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vs, err := e.Embed(ctx, []string{"first chunk", "second chunk"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(vs), len(vs[0]))
}

func ExampleAPIKeyFromEnv() {
	os.Setenv("MY_EMBEDDINGS_KEY", "sk-example")
	key, err := embed.APIKeyFromEnv("MY_EMBEDDINGS_KEY")
	fmt.Println(key != "", err)
	os.Unsetenv("MY_EMBEDDINGS_KEY")
	_, err = embed.APIKeyFromEnv("MY_EMBEDDINGS_KEY")
	fmt.Println(err)
	// Output:
	// true <nil>
	// embed: no API key in the environment: set MY_EMBEDDINGS_KEY
}
