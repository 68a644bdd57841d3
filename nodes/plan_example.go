package nodes

// PlanExample is a complete operator plan (lemmings run --plan FILE): what
// lemmings run --plan-example prints and docs/plans.md shows. A test keeps
// it loadable by LoadPlan.
const PlanExample = `# An operator plan for lemmings run --plan plan.yaml: your milestones and
# tasks instead of the ScopeAgent's. Milestones run in order; each task is
# planned, implemented, checked by the gates and reviewed like any other.
milestones:
  - goal: Fix the average word length          # required: what the milestone achieves
    themes: [statistics, rounding]             # optional: topics that pick knowledge documents
    tasks:                                     # required: at least one
      - title: Fix MeanWordLength integer division       # required
        instructions: |                                    # optional: how to go about it
          MeanWordLength divides two ints, so 7/2 gives 3. Convert to
          float64 before dividing.
        acceptance_criteria:                               # required: at least one
          - MeanWordLength("ab abc") returns 2.5
          - go test ./... passes
        target_files: [stats.go, stats_test.go]           # optional: where to look first
  - goal: Report the most frequent words
    tasks:
      - title: Add TopWords(text string, n int) []string
        acceptance_criteria:
          - TopWords returns the n most frequent words, ties in alphabetical order
          - a table test covers an empty text, ties and n larger than the word count
`
