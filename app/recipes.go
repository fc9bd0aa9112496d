package app

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"cnntime/app/charts"
	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/recipe"
)

// recipeBook is the built-in recipes, read once.
var recipeBook = sync.OnceValues(func() (recipe.Book, error) { return recipe.Parse(assets.Recipes) })

// Recipes is the built-in recipe book (assets/recipes/recipes.yaml).
func Recipes() (recipe.Book, error) { return recipeBook() }

// RecipeNames lists the built-in recipes' names (each network's recipe of that name),
// sorted: the choices of --recipe and of the Run tab besides each CNN's own default.
func RecipeNames() []string {
	b, err := Recipes()
	if err != nil {
		return nil
	}
	return b.Names()
}

// RecipeHelp is one line on a built-in recipe name: what it is, from its recipes.
func RecipeHelp(name string) string {
	b, err := Recipes()
	if err != nil {
		return ""
	}
	var models []string
	var first recipe.Recipe
	for _, r := range b.All() {
		if r.Name == name {
			if len(models) == 0 {
				first = r
			}
			models = append(models, r.Model)
		}
	}
	if len(models) == 0 {
		return ""
	}
	on := strings.Join(models, ", ")
	if len(models) > 3 {
		on = fmt.Sprintf("%s, %s and %d more", models[0], models[1], len(models)-2)
	}
	return fmt.Sprintf("%s (%s, %s) for %s", first.Script, first.Opt, first.Dataset, on)
}

// LooksLikeRecipeFile says whether a --recipe value names a file rather than a
// built-in recipe: it ends in .yaml, .yml or .json, or holds a path separator.
func LooksLikeRecipeFile(s string) bool {
	l := strings.ToLower(s)
	return strings.HasSuffix(l, ".yaml") || strings.HasSuffix(l, ".yml") || strings.HasSuffix(l, ".json") || strings.ContainsRune(s, os.PathSeparator)
}

// LoadRecipeFile reads a user's recipe file (YAML or JSON, at most
// recipe.MaxFileBytes): a missing, unreadable, too large or wrong file is an error that
// says which and what to fix.
func LoadRecipeFile(path string) (recipe.Recipe, error) {
	f, err := os.Open(path)
	if err != nil {
		return recipe.Recipe{}, fmt.Errorf("read recipe file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, recipe.MaxFileBytes+1))
	if err != nil {
		return recipe.Recipe{}, fmt.Errorf("read recipe file %s: %w", path, err)
	}
	return recipe.ParseFile(data, path)
}

// RunRecipe is what a launch file needs of the recipe a curve's run trains with, at one
// global batch: the recipe as the run uses it there (Recipe.AtBatch: the learning rate
// by its scaling rule, a warm-up where it grows), the epochs to the target at that batch
// (with their band, regime and, when extrapolated, why), the target in words, and
// Header, the line a launch file's header says it in.
type RunRecipe struct {
	Recipe recipe.Recipe
	Epochs recipe.Epochs
	Target string
	Header string
}

// RecipeForRun is curve c's recipe at global batch b; false when c trains for fixed
// epochs (its CNN's default recipe is then DefaultRecipe's).
func RecipeForRun(c *predictor.Curve, b int) (RunRecipe, bool) {
	m := c.Recipe
	if m == nil {
		return RunRecipe{}, false
	}
	r := m.Recipe.AtBatch(b)
	at := m.At(b)
	out := RunRecipe{Recipe: r, Epochs: at, Target: m.TargetName()}
	if r.Name == recipe.CustomName {
		out.Header = fmt.Sprintf("your figures: %.1f epochs ±%.0f%% at batch %s to your target", at.Epochs, at.ErrorPct, charts.FormatCount(int64(b)))
		return out, true
	}
	out.Header = fmt.Sprintf("recipe %s at batch %s (%s, lr %s, %s", m.Recipe.ID(), charts.FormatCount(int64(b)), r.Opt,
		strconv.FormatFloat(r.LR, 'g', 4, 64), r.LRScheduler)
	if r.LRWarmupEpochs > 0 {
		out.Header += fmt.Sprintf(", %g warm-up epochs", r.LRWarmupEpochs)
	}
	out.Header += fmt.Sprintf("): %.1f epochs ±%.0f%% to %s", at.Epochs, at.ErrorPct, out.Target)
	if at.Extrapolated {
		out.Header += "; extrapolated: " + at.Why
	}
	return out, true
}

// DefaultRecipe is the recipe network trains with on d when none is chosen (its own,
// else the dataset's fallback, another network's: own false); false when d has none.
func DefaultRecipe(network string, d RunData) (r recipe.Recipe, own, ok bool) {
	b, err := Recipes()
	if err != nil {
		return recipe.Recipe{}, false, false
	}
	r, own, err = b.Default(network, d.Dataset)
	return r, own, err == nil
}
