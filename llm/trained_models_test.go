package llm

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// The contract with trained models, beside the random model's table (contract_test.go):
// SmolLM2-135M, Gemma 3 270M and all-MiniLM-L6-v2 on the real server (make models). Replies
// are read as a model that learned language writes them; the schema contract of every role's
// reply type is in nodes/trained_schemas_test.go. See docs/testing-real-models.md.

// paraphrases are (sentence, paraphrase, unrelated sentence) triples: an embedding model
// that carries meaning puts the paraphrase nearer.
var paraphrases = [][3]string{
	{"The function returns the sum of two integers.", "This routine adds two whole numbers and gives back the result.", "The weather in the mountains was cold and windy."},
	{"Open the configuration file and read the port number.", "Load the settings file to get which port to use.", "She planted tomatoes in the garden last spring."},
	{"The test fails because the server never answers.", "The check breaks since the server does not respond.", "Fresh bread smells wonderful in the morning."},
	{"Retry the request after a short delay.", "Wait a little and send the request again.", "The museum closes early on Sundays."},
	{"The cache stores results so they are not computed twice.", "Results are kept in memory to avoid recomputing them.", "The river flooded the village after the storm."},
	{"Parse the command line flags before running.", "Read the command-line options first, then start.", "A cat slept on the warm windowsill."},
	{"The user is not allowed to delete this file.", "This account lacks permission to remove the file.", "The orchestra played a symphony by Brahms."},
	{"Sort the list of names alphabetically.", "Put the names in alphabetical order.", "The car needs new tires before winter."},
	{"The program crashed with an out of memory error.", "The application ran out of memory and stopped.", "We watched the sunset from the beach."},
	{"Write the log messages to standard error.", "Send the logging output to stderr.", "He bought apples and pears at the market."},
	{"Convert the temperature from Celsius to Fahrenheit.", "Change degrees Celsius into degrees Fahrenheit.", "The novel is set in nineteenth-century Paris."},
	{"The database connection timed out.", "Connecting to the database took too long and failed.", "Children were playing football in the park."},
	{"Count the words in a text.", "Find how many words a piece of text has.", "The airplane landed safely despite the fog."},
	{"Encrypt the password before saving it.", "Store the password only in encrypted form.", "The baby laughed at the puppy."},
	{"Download the file from the remote server.", "Fetch the file over the network from the server.", "A violin has four strings."},
	{"The loop never terminates.", "This loop runs forever without stopping.", "Tea is grown on hillsides in India."},
	{"Split the string on commas.", "Break the text into parts at each comma.", "The volcano erupted last year."},
	{"Check that the input is not empty.", "Verify the input has some content.", "Penguins live in the southern hemisphere."},
	{"Merge the two branches of the repository.", "Combine both git branches into one.", "The chef seasoned the soup with salt."},
	{"Compress the images to save disk space.", "Make the pictures smaller so they use less storage.", "The election results were announced at midnight."},
	{"Handle the error instead of ignoring it.", "Deal with the failure rather than discarding it.", "Our neighbours adopted a grey kitten."},
	{"The web page loads slowly on mobile phones.", "On phones the site takes a long time to load.", "Glaciers carve deep valleys over millennia."},
	{"Remove duplicate entries from the list.", "Delete repeated items so each appears once.", "The train to Berlin leaves at nine."},
	{"Translate the error messages into French.", "Provide the error texts in the French language.", "Bees collect nectar from flowers."},
}

func trainedServer(t *testing.T) *realollama.Server {
	return realollama.Start(t, realollama.WithTrainedModels())
}

func TestRealTrainedContract(t *testing.T) {
	s := trainedServer(t)
	zero := 0.0
	// Each clause has its own deadline, so one slow answer does not fail the ones after it.
	deadline := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		t.Cleanup(cancel)
		return ctx
	}

	for _, model := range []string{s.Trained.Chat, s.Trained.Gemma} {
		for _, noStream := range []bool{false, true} {
			r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": {Provider: ProviderOllama, BaseURL: s.URL,
				Model: model, MaxTokens: 12, Temperature: &zero, NoStream: noStream, Options: map[string]any{"seed": 7}}},
				Retry: RetryPolicy{MaxAttempts: 2}})
			name := model + map[bool]string{false: "/stream", true: "/whole"}[noStream]

			t.Run(name+"/a reply stopped at the length limit is reported as such", func(t *testing.T) {
				ctx := deadline(t)
				resp, err := r.Chat(ctx, Request{Role: "primary", Messages: userMsg("Write a long story about a lighthouse keeper and his dog.")})
				if err != nil {
					t.Fatal(err)
				}
				if resp.DoneReason != "length" || resp.Usage.CompletionTokens != 12 || strings.TrimSpace(resp.Content) == "" {
					t.Errorf("done_reason %q, %d tokens, %q", resp.DoneReason, resp.Usage.CompletionTokens, resp.Content)
				}
			})

			t.Run(name+"/structured JSON cut at the limit is a StructuredError, after one re-ask", func(t *testing.T) {
				ctx := deadline(t)
				type story struct {
					Title string `json:"title" jsonschema:"minLength=40,maxLength=200"`
					Text  string `json:"text" jsonschema:"minLength=200"`
				}
				_, resp, err := Structured[story](ctx, r, Request{Role: "primary", Messages: userMsg("Write a story as JSON.")})
				var se *StructuredError
				if !errors.As(err, &se) || se.Attempts != 2 || resp.DoneReason != "length" || resp.Usage.Calls != 2 {
					t.Fatalf("err %v, done_reason %q, %d calls", err, resp.DoneReason, resp.Usage.Calls)
				}
				if !strings.HasPrefix(strings.TrimSpace(se.Raw), "{") {
					t.Errorf("the cut reply is not the start of a JSON object: %q", se.Raw)
				}
			})
		}
	}

	t.Run("embeddings carry meaning: a sentence is nearer its paraphrase than an unrelated one", func(t *testing.T) {
		ctx := deadline(t)
		r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{EmbeddingRole: {Provider: ProviderOllama, BaseURL: s.URL, Model: s.Trained.Embed}}})
		var texts []string
		for _, p := range paraphrases {
			texts = append(texts, p[0], p[1], p[2])
		}
		vecs, err := r.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != len(texts) || len(vecs[0]) != 384 {
			t.Fatalf("%d vectors of %d dimensions", len(vecs), len(vecs[0]))
		}
		wins := 0
		var margin float64
		for i, p := range paraphrases {
			near, far := cosine32(vecs[3*i], vecs[3*i+1]), cosine32(vecs[3*i], vecs[3*i+2])
			margin += near - far
			if near > far {
				wins++
			} else {
				t.Errorf("%q: paraphrase %.3f, unrelated %.3f", p[0], near, far)
			}
		}
		t.Logf("paraphrase nearer on %d of %d triples; mean margin %.3f", wins, len(paraphrases), margin/float64(len(paraphrases)))
		if len(paraphrases) < 20 {
			t.Fatalf("only %d triples", len(paraphrases))
		}
	})
}

func cosine32(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
