package app

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"cnntime/assets"
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
